import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MetricName, MetricsSink, MetricUnit as SinkUnit } from '../../core/ports.ts';
import { METRIC_PLANS, type ProgramMetricsPlan, sentForProgram } from './metric-plan.ts';

const UNITS: Readonly<Record<SinkUnit, (typeof MetricUnit)[keyof typeof MetricUnit]>> = {
  Count: MetricUnit.Count,
  Seconds: MetricUnit.Seconds,
  Milliseconds: MetricUnit.Milliseconds,
  None: MetricUnit.NoUnit,
};

/** Whose metrics a flush sends: a program's run, a worker's own, or neither (an invocation refused early). */
export interface MetricsScope {
  /** The program whose run these are: its `Program` dimension, and its `StalledRuns`. */
  readonly program?: string;
  /** The worker whose own metrics these are (no program): its `Worker` dimension. */
  readonly worker?: number;
  /** Which metrics carry `Program` (`metric-plan.ts`). */
  readonly plan: ProgramMetricsPlan;
}

/**
 * `MetricsSink` over Powertools Metrics (EMF). Every metric is reduced to one value per flush:
 * counts are summed, gauges (lag, checkpoint, duration) keep their maximum, which is the
 * statistic the alarms use. One value each also keeps Powertools from flushing on its own at 100
 * values, so the dimensions given at the flush are the only ones its documents carry.
 *
 * What is sent, under which dimensions, follows the metric plan (`metric-plan.ts`): no count of
 * 0; under `alarmed`, a program's own copy only of what the per-condition alarms read, and a copy
 * of everything for the deployment. A program's run that held no healthy cycle (no
 * `CycleDurationMs`) is counted in `StalledRuns`: the stall alarm cannot see a metric that is
 * missing, so its absence is sent as a count.
 *
 * One sink per program in flight: its values are its own until its flush, which is synchronous,
 * so concurrent programs sharing one `Metrics` never mix their dimensions.
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
    else
      current.value =
        METRIC_PLANS[name].kind === 'count' ? current.value + value : Math.max(current.value, value);
  }

  /** Sends the values added since the last flush, for `scope`, and forgets them. */
  flush(scope: MetricsScope): void {
    if (scope.program !== undefined && !this.#values.has('CycleDurationMs'))
      this.add('StalledRuns', 'Count', 1);
    const values = [...this.#values].filter(
      ([name, { value }]) => METRIC_PLANS[name].kind === 'gauge' || value !== 0,
    );
    this.#values.clear();
    if (scope.program === undefined) {
      this.#send(values, scope.worker === undefined ? {} : { Worker: String(scope.worker) });
    } else if (scope.plan === 'all') {
      this.#send(values, { Program: scope.program });
    } else {
      this.#send(
        values.filter(([name]) => METRIC_PLANS[name].ofDeployment),
        {},
      );
      this.#send(
        values.filter(([name, { value }]) => sentForProgram(METRIC_PLANS[name], value)),
        { Program: scope.program },
      );
    }
  }

  /** One EMF document: `values` under the service's dimension and `dimensions`; none when empty. */
  #send(
    values: readonly [MetricName, { unit: SinkUnit; value: number }][],
    dimensions: Record<string, string>,
  ): void {
    if (values.length === 0) return;
    this.#metrics.addDimensions(dimensions);
    for (const [name, { unit, value }] of values) this.#metrics.addMetric(name, UNITS[unit], value);
    this.#metrics.publishStoredMetrics();
  }
}
