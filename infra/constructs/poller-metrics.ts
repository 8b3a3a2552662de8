import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { MetricName } from '../../functions/core/ports.ts';
import { SETTINGS } from '../../functions/settings/settings.ts';

/** The custom bus's broken-order count (Count, per program): graphed and alarmed on that bus only. */
export const ORDER_BROKEN: MetricName = 'OrderBroken';

/** `POWERTOOLS_SERVICE_NAME` of the handler, and so the `service` dimension of every custom metric. */
export const POLLER_SERVICE_NAME = SETTINGS.serviceName.default;

/** How a metric of the poller is read: its statistic, period and graph label. */
export interface PollerMetricOptions {
  readonly statistic: string;
  /** @default one minute */
  readonly period?: Duration;
  /** @default - none (alarms take the plain metric form) */
  readonly label?: string;
}

/** How every program's copy of a metric is queried (Metrics Insights). */
export interface ProgramsQueryOptions {
  /** The aggregate each program's series is reduced to per period: `MAX`, `MIN`, `SUM`, `AVG` or `COUNT`. */
  readonly aggregate: string;
  readonly period: Duration;
  /** @default - the expression */
  readonly label?: string;
  /**
   * The most series returned, the highest first.
   *
   * @default 500, Metrics Insights' limit
   */
  readonly limit?: number;
}

/**
 * Builds the handler's custom (EMF) metrics. The dimensions must match the handler's exactly,
 * `{ service, Program }` for a program's, `{ service }` for the deployment's, `{ service, Worker }`
 * for a worker's own (`functions/adapters/observability/powertools-metrics-sink.ts`), or
 * CloudWatch shows no data and the stall alarm fires on nothing.
 */
export class PollerMetrics {
  constructor(private readonly namespace: string) {}

  /**
   * One metric of one program, one-minute periods unless overridden. Alarms leave `label` out so
   * CloudFormation gets the plain metric form; dashboards label by program.
   */
  metric(name: MetricName, program: string, options: PollerMetricOptions): cloudwatch.Metric {
    return this.#metric(name, { Program: program }, options);
  }

  /** A metric of the whole deployment (no `Program`), as the handler sends it under `PROGRAM_METRICS=alarmed`. */
  deploymentMetric(name: MetricName, options: PollerMetricOptions): cloudwatch.Metric {
    return this.#metric(name, {}, options);
  }

  /** A worker's own metric (its `Worker`). */
  workerMetric(name: MetricName, worker: number, options: PollerMetricOptions): cloudwatch.Metric {
    return this.#metric(name, { Worker: String(worker) }, options);
  }

  /**
   * Every program's own copy of `name` as a Metrics Insights query: one series per program
   * (`GROUP BY Program`), the highest first. On an alarm, each series is a contributor with its own
   * state, and the notification names its `Program`. At most 500 series are returned (Metrics
   * Insights' limit; the highest by `fn`, which are the ones an alarm is about).
   */
  programsQuery(name: MetricName, options: ProgramsQueryOptions): cloudwatch.MathExpression {
    return this.#groupedQuery(name, 'Program', options);
  }

  /** Every worker's own copy of `name`, one series per worker (`GROUP BY Worker`), the highest first. */
  workersQuery(name: MetricName, options: ProgramsQueryOptions): cloudwatch.MathExpression {
    return this.#groupedQuery(name, 'Worker', options);
  }

  #groupedQuery(
    name: MetricName,
    by: 'Program' | 'Worker',
    options: ProgramsQueryOptions,
  ): cloudwatch.MathExpression {
    const fn = options.aggregate;
    const limit = options.limit === undefined ? '' : ` LIMIT ${options.limit}`;
    return new cloudwatch.MathExpression({
      expression:
        `SELECT ${fn}(${quoted(name)}) FROM SCHEMA(${quoted(this.namespace)}, ${quoted(by)}, "service") ` +
        `WHERE "service" = '${POLLER_SERVICE_NAME}' GROUP BY ${quoted(by)} ORDER BY ${fn}() DESC${limit}`,
      period: options.period,
      label: options.label,
    });
  }

  #metric(
    name: MetricName,
    dimensions: Record<string, string>,
    options: PollerMetricOptions,
  ): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: this.namespace,
      metricName: name,
      dimensionsMap: { service: POLLER_SERVICE_NAME, ...dimensions },
      statistic: options.statistic,
      period: options.period ?? Duration.minutes(1),
      label: options.label,
    });
  }
}

/**
 * A name in a Metrics Insights query (namespace, metric, dimension), double-quoted: Metrics Insights
 * reserves hundreds of SQL words, in any case, and a quoted name is never one. None of ours holds a
 * double quote (the namespace setting allows none).
 */
function quoted(name: string): string {
  return `"${name}"`;
}
