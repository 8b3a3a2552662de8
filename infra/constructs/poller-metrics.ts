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

/**
 * Builds the handler's custom (EMF) metrics. The dimensions must match the handler's exactly,
 * `{ service, Program }`, or CloudWatch shows no data and the stall alarm fires on nothing.
 */
export class PollerMetrics {
  constructor(private readonly namespace: string) {}

  /**
   * One metric of one program, one-minute periods unless overridden. Alarms leave `label` out so
   * CloudFormation gets the plain metric form; dashboards label by program.
   */
  metric(
    name: MetricName,
    program: string,
    options: { readonly statistic: string; readonly period?: Duration; readonly label?: string },
  ): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: this.namespace,
      metricName: name,
      dimensionsMap: { service: POLLER_SERVICE_NAME, Program: program },
      statistic: options.statistic,
      period: options.period ?? Duration.minutes(1),
      label: options.label,
    });
  }
}
