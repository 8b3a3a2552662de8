/**
 * Which of the handler's metrics CloudWatch gets, under which dimensions, and when: what a custom
 * metric costs decides it. CloudWatch bills every distinct metric (name and dimension values) for
 * the hours it is sent, $0.30 a month for one sent every hour (the first 10,000; $0.10 after). A
 * metric with a `Program` dimension is one metric per program: at a thousand programs, a program's
 * 27 would cost about $4,700 a month, more than three times all else the programs cost.
 *
 * Two plans, chosen by the deployment (`PROGRAM_METRICS`, which the construct writes with its
 * alarms):
 *
 * - `all` (one program or a few, each with its own alarms): every metric of a program carries its
 *   `Program`, as the per-program alarms and dashboard read them.
 * - `alarmed` (a fleet, alarmed by one alarm per condition over every program): a program's own
 *   copy is sent only for what those alarms and the dashboard's worst programs read, and only
 *   while it says something is wrong (a count above 0, a lag from 60 s). Everything is also sent
 *   once for the whole deployment (no `Program`), whatever the number of programs. A healthy
 *   program then costs no metric of its own.
 *
 * In both, a count of 0 is never sent: a count alarm treats missing data as not breaching, a
 * graph shows nothing for it, and an hour without it is an hour not billed.
 */
import type { MetricName } from '../../core/ports.ts';

/** The values of the setting `programMetrics`. */
export const PROGRAM_METRICS_PLANS = ['all', 'alarmed'] as const;
export type ProgramMetricsPlan = (typeof PROGRAM_METRICS_PLANS)[number];

/**
 * The smallest lag any deployment alarms on (`lagThresholdSeconds`' minimum, which a test holds
 * this to): a program's lag below it can raise no lag alarm, so under `alarmed` it is sent for the
 * deployment only.
 */
export const PROGRAM_LAG_FLOOR_SECONDS = 60;

/** Days before a client certificate expires from which its program's own copy is sent under `alarmed`. */
export const CERTIFICATE_DAYS_NOTICE = 30;

export interface MetricPlan {
  /**
   * `count`: summed over a flush, never sent at 0. `gauge`: one reading per flush, its maximum
   * (the statistic the alarms use), sent whatever its value.
   */
  readonly kind: 'count' | 'gauge';
  /**
   * Under `alarmed`: whether the program's own copy is sent, and for which values (`atLeast`,
   * `atMost`); `false` for metrics no per-condition alarm or worst-programs widget reads.
   */
  readonly ofProgram: false | { readonly atLeast?: number; readonly atMost?: number };
  /** Under `alarmed`: whether the deployment-wide copy is sent (no `Program`). */
  readonly ofDeployment: boolean;
  /** A worker's own metric, sent with its `Worker` under either plan, never of a program. */
  readonly ofWorker?: true;
}

const count = (ofProgram: MetricPlan['ofProgram'] = false): MetricPlan => ({
  kind: 'count',
  ofProgram,
  ofDeployment: true,
});
const gauge = (ofProgram: MetricPlan['ofProgram'] = false): MetricPlan => ({
  kind: 'gauge',
  ofProgram,
  ofDeployment: true,
});
/** A program's own copy whenever it is sent (a count is never sent at 0). */
const ALWAYS = {} as const;

export const METRIC_PLANS: Readonly<Record<MetricName, MetricPlan>> = {
  EventsReceived: count(),
  EventsPublished: count(),
  PublishRetries: count(),
  FailedEntries: count(ALWAYS),
  PollRequests: count(),
  PollErrors: count(),
  PollTimeouts: count(),
  AuthRefreshes: count(),
  LagSeconds: gauge({ atLeast: PROGRAM_LAG_FLOOR_SECONDS }),
  // A sequence number means nothing summed or maximised over programs: `status` shows each one.
  CheckpointSequence: { kind: 'gauge', ofProgram: false, ofDeployment: false },
  LeaseBusy: count(ALWAYS),
  HandoverWaitMs: gauge(),
  CycleDurationMs: gauge(),
  SequenceGaps: count(ALWAYS),
  GapsRepaired: count(),
  GapsUnfilled: count(ALWAYS),
  LateEvents: count(),
  DuplicateEventIds: count(),
  StreamReconnects: count(),
  InvalidEvents: count(),
  ClaimChecks: count(),
  // Days, not a count (its unit is Count for the alarms users made on it): 0 days left is news.
  ClientCertificateDaysLeft: gauge({ atMost: CERTIFICATE_DAYS_NOTICE }),
  OrderBroken: count(ALWAYS),
  // A bank that ignores `limit` is alarmed per program (the alarm over every program reads this).
  OversizePages: count(ALWAYS),
  CycleFailures: count(ALWAYS),
  StalledRuns: count(ALWAYS),
  // Jumps awaiting an operator's decision: sent only while there are some, every run until decided.
  SequenceJumpsHeld: gauge({ atLeast: 1 }),
  // The worker's own: sent with its `Worker`, never with a `Program`.
  ProgramRecordsRefused: { kind: 'count', ofProgram: false, ofDeployment: false, ofWorker: true },
  ProgramsNotReached: { kind: 'count', ofProgram: false, ofDeployment: false, ofWorker: true },
  WorkerDurationMs: { kind: 'gauge', ofProgram: false, ofDeployment: false, ofWorker: true },
};

/** Whether a program's own copy of `value` is sent under `alarmed`. */
export function sentForProgram(plan: MetricPlan, value: number): boolean {
  if (plan.ofProgram === false) return false;
  const { atLeast, atMost } = plan.ofProgram;
  return (atLeast === undefined || value >= atLeast) && (atMost === undefined || value <= atMost);
}
