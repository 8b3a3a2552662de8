import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { MetricName } from '../../functions/core/ports.ts';
import { SETTINGS } from '../../functions/settings/settings.ts';

/** The custom bus's broken-order count (Count, per program): graphed and alarmed on that bus only. */
export const ORDER_BROKEN: MetricName = 'OrderBroken';

/** Sequence jumps awaiting a decision (a gauge, per program): graphed and alarmed. */
export const SEQUENCE_JUMPS_HELD: MetricName = 'SequenceJumpsHeld';

/** Pages of the feed larger than asked for or than is read at once (a count, per program): graphed and alarmed. */
export const OVERSIZE_PAGES: MetricName = 'OversizePages';

/** `POWERTOOLS_SERVICE_NAME` of the handler, and so the `service` dimension of every custom metric. */
export const POLLER_SERVICE_NAME = SETTINGS.serviceName.default;

/** How one metric of a program is computed and labelled. */
export interface PollerMetricOptions {
  /** The statistic, e.g. `Maximum`, `Sum`. */
  readonly statistic: string;
  /**
   * The metric's period.
   *
   * @default Duration.minutes(1)
   */
  readonly period?: Duration;
  /**
   * The label a dashboard shows.
   *
   * @default - none: alarms use the plain metric form
   */
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
  /**
   * Programs left out of the query (`"Program" != '<name>'`): those with alarms of their own, so
   * that one condition of theirs pages once. Left out only while the query stays within the
   * 2,048 characters CloudWatch takes; past that every program is queried.
   *
   * @default - none
   */
  readonly excludedPrograms?: string[];
}

/** The longest expression a CloudWatch metric data query takes. */
export const MAX_QUERY_LENGTH = 2048;

/**
 * Builds the handler's custom (EMF) metrics. The dimensions must match the handler's exactly,
 * `{ service, Program }` for a program's, `{ service }` for the deployment's, `{ service, Worker }`
 * for a worker's own (`functions/adapters/observability/powertools-metrics-sink.ts`), or
 * CloudWatch shows no data and the stall alarm fires on nothing.
 */
export class PollerMetrics {
  /** `POLLER_SERVICE_NAME`, for every language: the `service` dimension of every custom metric. */
  static readonly SERVICE_NAME: string = POLLER_SERVICE_NAME;

  // Not `namespace`: a reserved word in C#.
  constructor(private readonly metricsNamespace: string) {}

  /**
   * One metric of one program, one-minute periods unless overridden. Alarms leave `label` out so
   * CloudFormation gets the plain metric form; dashboards label by program.
   */
  metric(name: MetricName, program: string, options: PollerMetricOptions): cloudwatch.Metric {
    return this.dimensioned(name, { Program: program }, options);
  }

  /** A metric of the whole deployment (no `Program`), as the handler sends it under `PROGRAM_METRICS=alarmed`. */
  deploymentMetric(name: MetricName, options: PollerMetricOptions): cloudwatch.Metric {
    return this.dimensioned(name, {}, options);
  }

  /** A worker's own metric (its `Worker`). */
  workerMetric(name: MetricName, worker: number, options: PollerMetricOptions): cloudwatch.Metric {
    return this.dimensioned(name, { Worker: String(worker) }, options);
  }

  /**
   * Every program's own copy of `name` as a Metrics Insights query: one series per program
   * (`GROUP BY Program`), the highest first. On an alarm, each series is a contributor with its own
   * state, and the notification names its `Program`. At most 500 series are returned (Metrics
   * Insights' limit; the highest by `fn`, which are the ones an alarm is about).
   */
  programsQuery(name: MetricName, options: ProgramsQueryOptions): cloudwatch.MathExpression {
    return this.groupedQuery(name, 'Program', options);
  }

  /** Every worker's own copy of `name`, one series per worker (`GROUP BY Worker`), the highest first. */
  workersQuery(name: MetricName, options: ProgramsQueryOptions): cloudwatch.MathExpression {
    return this.groupedQuery(name, 'Worker', options);
  }

  private groupedQuery(
    name: MetricName,
    by: 'Program' | 'Worker',
    options: ProgramsQueryOptions,
  ): cloudwatch.MathExpression {
    const fn = options.aggregate;
    const limit = options.limit === undefined ? '' : ` LIMIT ${options.limit}`;
    const query = (where: string) =>
      `SELECT ${fn}(${quoted(name)}) FROM SCHEMA(${quoted(this.metricsNamespace)}, ${quoted(by)}, "service") ` +
      `WHERE "service" = '${POLLER_SERVICE_NAME}'${where} GROUP BY ${quoted(by)} ORDER BY ${fn}() DESC${limit}`;
    // Program names hold letters, digits, `.`, `_` and `-` only (name-rules.ts): nothing to escape.
    const excluding = query(
      (options.excludedPrograms ?? []).map((program) => ` AND ${quoted(by)} != '${program}'`).join(''),
    );
    return new cloudwatch.MathExpression({
      expression: excluding.length <= MAX_QUERY_LENGTH ? excluding : query(''),
      period: options.period,
      label: options.label,
    });
  }

  private dimensioned(
    name: MetricName,
    dimensions: Record<string, string>,
    options: PollerMetricOptions,
  ): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: this.metricsNamespace,
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
