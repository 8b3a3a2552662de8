import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { MetricName } from '../../functions/core/ports.ts';
import { SETTINGS } from '../../functions/settings/settings.ts';

/** The custom bus's broken-order count (Count, per program): graphed and alarmed on that bus only. */
export const ORDER_BROKEN: MetricName = 'OrderBroken';

/** Sequence jumps awaiting a decision (a gauge, per program): graphed and alarmed. */
export const SEQUENCE_JUMPS_HELD: MetricName = 'SequenceJumpsHeld';

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

/**
 * Builds the handler's custom (EMF) metrics. The dimensions must match the handler's exactly,
 * `{ service, Program }`, or CloudWatch shows no data and the stall alarm fires on nothing.
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
    return new cloudwatch.Metric({
      namespace: this.metricsNamespace,
      metricName: name,
      dimensionsMap: { service: POLLER_SERVICE_NAME, Program: program },
      statistic: options.statistic,
      period: options.period ?? Duration.minutes(1),
      label: options.label,
    });
  }
}
