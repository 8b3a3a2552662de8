import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MetricName, MetricsSink, MetricUnit as SinkUnit } from '../../core/ports.ts';

const UNITS: Readonly<Record<SinkUnit, (typeof MetricUnit)[keyof typeof MetricUnit]>> = {
  Count: MetricUnit.Count,
  Seconds: MetricUnit.Seconds,
  Milliseconds: MetricUnit.Milliseconds,
  None: MetricUnit.NoUnit,
};

/**
 * `MetricsSink` over Powertools Metrics (EMF). Counts are summed and written once per flush, so
 * an invocation of hundreds of polls emits one `PollRequests` value, not hundreds; gauges
 * (lag, checkpoint, duration) keep every value so `Maximum` alarms see the worst one.
 */
export class PowertoolsMetricsSink implements MetricsSink {
  readonly #metrics: Metrics;
  readonly #counts = new Map<MetricName, number>();

  constructor(metrics: Metrics) {
    this.#metrics = metrics;
  }

  add(name: MetricName, unit: SinkUnit, value: number): void {
    if (unit === 'Count') {
      this.#counts.set(name, (this.#counts.get(name) ?? 0) + value);
      return;
    }
    this.#metrics.addMetric(name, UNITS[unit], value);
  }

  /** Writes the summed counts and flushes; dimensions added for this invocation are cleared. */
  flush(): void {
    for (const [name, value] of this.#counts) this.#metrics.addMetric(name, MetricUnit.Count, value);
    this.#counts.clear();
    this.#metrics.publishStoredMetrics();
  }
}
