import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MetricName, MetricsSink, MetricUnit as SinkUnit } from '../../core/ports.ts';

const UNITS: Readonly<Record<SinkUnit, (typeof MetricUnit)[keyof typeof MetricUnit]>> = {
  Count: MetricUnit.Count,
  Seconds: MetricUnit.Seconds,
  Milliseconds: MetricUnit.Milliseconds,
  None: MetricUnit.NoUnit,
};

/**
 * `MetricsSink` over Powertools Metrics (EMF). Every metric is reduced to one value per flush:
 * counts are summed, gauges (lag, checkpoint, duration) keep their maximum, which is the
 * statistic the alarms use. One value each also keeps Powertools from flushing on its own at 100
 * values, which would clear the invocation's dimensions mid-run.
 */
export class PowertoolsMetricsSink implements MetricsSink {
  readonly #metrics: Metrics;
  readonly #values = new Map<MetricName, { unit: SinkUnit; value: number }>();

  constructor(metrics: Metrics) {
    this.#metrics = metrics;
  }

  add(name: MetricName, unit: SinkUnit, value: number): void {
    const current = this.#values.get(name);
    if (current === undefined) this.#values.set(name, { unit, value });
    else current.value = unit === 'Count' ? current.value + value : Math.max(current.value, value);
  }

  /** Writes one value per metric and flushes. */
  flush(): void {
    for (const [name, { unit, value }] of this.#values) this.#metrics.addMetric(name, UNITS[unit], value);
    this.#values.clear();
    this.#metrics.publishStoredMetrics();
  }
}
