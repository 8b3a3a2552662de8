import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { IAlarmActionStrategy } from './alarm-actions.ts';
import { pascalCase } from './construct-names.ts';
import type { RouteQueues } from './event-routing.ts';
import { mapRecord } from './map-members.ts';
import { ORDER_BROKEN, type PollerMetrics, SEQUENCE_JUMPS_HELD } from './poller-metrics.ts';

export interface PollerAlarmsProps {
  /** Program names: every custom-metric alarm exists once per program (its `Program` dimension). */
  readonly programs: string[];
  readonly metrics: PollerMetrics;
  readonly pollerFunction: lambda.IFunction;
  readonly scheduleDeadLetterQueue: sqs.IQueue;
  readonly routes: RouteQueues[];
  /**
   * How often each program's schedule fires (whole minutes). The handler writes each metric once
   * per invocation, so this is the period of every alarm on a per-invocation metric.
   */
  readonly scheduleInterval: Duration;
  /** `LagSeconds` above this for `lagPeriods` consecutive schedule intervals raises the lag alarm. */
  readonly lagThreshold: Duration;
  /** Consecutive schedule intervals (one `LagSeconds` data point each) over the lag threshold. */
  readonly lagPeriods: number;
  /**
   * Whether the handler repairs gaps. With repair, a skipped number pages only once its grace is
   * over and no event filled it (`GapsUnfilled`); without, as soon as it is skipped (`SequenceGaps`).
   */
  readonly gapRepair: boolean;
  /** No completed cycle (`CycleDurationMs` SampleCount 0) for this long raises the stall alarm. */
  readonly stallAfter: Duration;
  readonly alarmActions: IAlarmActionStrategy;
  /** Where the runbook lives; each alarm description links `<runbookUrl>#alarm-<name>`. */
  readonly runbookUrl: string;
  /**
   * The poller publishes to the Custom Event Bus: its order-broken alarms exist.
   *
   * @default false
   */
  readonly customBus?: boolean;
}

const ONE_MINUTE = Duration.minutes(1);
/** Failing or throttled ticks in 3 of the last 5: a single bad tick is covered by the next one. */
const FAILURE_DATAPOINTS = 3;
const FAILURE_WINDOW = 5;

/*
 * Periods. The handler flushes its metrics once per invocation, and Lambda reports Errors and
 * Throttles per invocation too: one data point per program and schedule interval. With
 * one-minute periods and a 5-minute schedule, 4 periods in 5 would be empty; CloudWatch fills
 * those with "missing data", not breaching here, so "3 consecutive breaching periods" could never
 * happen. Alarms on these metrics therefore use the schedule interval as their period (one
 * minute, as before, for the default schedule).
 *
 * The stall alarm is the exception: it counts missing data as breaching, over one-minute periods
 * for the whole `stallAfter` window, so it fires when `stallAfter` consecutive minutes held no
 * `CycleDurationMs`. A run sends one, in the minute it ends, and runs end about one interval apart,
 * but not exactly: on a 1-minute schedule, runs ending at 0:59.9 and 2:00.1 leave the minute 1:00 to
 * 2:00 empty. Two ends less than `interval` + 1 minute apart leave at most `interval` empty periods
 * between them, so a window of `interval` + 1 minutes or more (the construct refuses less) raises no
 * false alarm as long as completed cycles end less than that far apart. The default,
 * max(5 min, 2 × interval), also rides out one failed or skipped tick.
 */

/**
 * The alarms the person on call needs, and nothing that pages for a blip. What each one means and
 * what to do is in docs/runbook.md; every description points there.
 */
export class PollerAlarms extends Construct {
  /**
   * Per program: the newest published event is older than the lag threshold.
   *
   * A `Map`, for TypeScript; every language has `lagAlarmsByProgram`.
   *
   * @jsii ignore
   */
  public readonly lagAlarms: ReadonlyMap<string, cloudwatch.Alarm>;
  /**
   * Per program: no poll cycle completed for `stallAfter` (missing data breaches).
   *
   * A `Map`, for TypeScript; every language has `stallAlarmsByProgram`.
   *
   * @jsii ignore
   */
  public readonly stallAlarms: ReadonlyMap<string, cloudwatch.Alarm>;
  /**
   * Per program: PutEvents entries the bus kept rejecting.
   *
   * A `Map`, for TypeScript; every language has `failedEntriesAlarmsByProgram`.
   *
   * @jsii ignore
   */
  public readonly failedEntriesAlarms: ReadonlyMap<string, cloudwatch.Alarm>;
  /**
   * Per program: skipped sequence numbers that no event filled: `GapsUnfilled` (after the grace
   * period) with gap repair on, `SequenceGaps` (at once) with it off.
   *
   * A `Map`, for TypeScript; every language has `sequenceGapsAlarmsByProgram`.
   *
   * @jsii ignore
   */
  public readonly sequenceGapsAlarms: ReadonlyMap<string, cloudwatch.Alarm>;
  /**
   * Per program: runs that waited for the lease and could not take it over (`LeaseBusy`), repeatedly.
   *
   * A `Map`, for TypeScript; every language has `leaseBusyAlarmsByProgram`.
   *
   * @jsii ignore
   */
  public readonly leaseBusyAlarms: ReadonlyMap<string, cloudwatch.Alarm>;
  /**
   * Custom bus only, per program: the bus accepted an event of a group while rejecting an earlier
   * one of the same group (`OrderBroken`): a FIFO subscriber sees that group out of order. Empty on
   * the classic bus.
   *
   * A `Map`, for TypeScript; every language has `orderBrokenAlarmsByProgram`.
   *
   * @jsii ignore
   */
  public readonly orderBrokenAlarms: ReadonlyMap<string, cloudwatch.Alarm>;
  /**
   * Per program: an event was held for a sequence number implausibly far past the one before it
   * (`SequenceJumpsHeld`), and awaits an operator's decision; in alarm while it does.
   *
   * A `Map`, for TypeScript; every language has `sequenceJumpsAlarmsByProgram`.
   *
   * @jsii ignore
   */
  public readonly sequenceJumpsAlarms: ReadonlyMap<string, cloudwatch.Alarm>;
  public readonly errorsAlarm: cloudwatch.Alarm;
  public readonly throttlesAlarm: cloudwatch.Alarm;
  /** EventBridge Scheduler could not invoke the function. */
  public readonly scheduleDeadLetterAlarm: cloudwatch.Alarm;
  /**
   * Per route (detail-type or `unrouted`): its dead-letter queue holds messages.
   *
   * A `Map`, for TypeScript; every language has `deadLetterAlarmsByRoute`.
   *
   * @jsii ignore
   */
  public readonly deadLetterAlarms: ReadonlyMap<string, cloudwatch.Alarm>;
  /** An event type arrived that no route names (only when the catch-all has a queue). */
  public readonly unroutedEventsAlarm: cloudwatch.Alarm | undefined;
  /** An event failed validation and waits in the quarantine queue (only when the quarantine has a queue). */
  public readonly quarantineAlarm: cloudwatch.Alarm | undefined;
  /** Every alarm above, for dashboards and composite alarms. */
  public readonly alarms: cloudwatch.Alarm[];

  /** `lagAlarms` as a plain object: program → alarm. */
  get lagAlarmsByProgram(): { readonly [program: string]: cloudwatch.Alarm } {
    return mapRecord(this.lagAlarms);
  }
  /** `stallAlarms` as a plain object: program → alarm. */
  get stallAlarmsByProgram(): { readonly [program: string]: cloudwatch.Alarm } {
    return mapRecord(this.stallAlarms);
  }
  /** `failedEntriesAlarms` as a plain object: program → alarm. */
  get failedEntriesAlarmsByProgram(): { readonly [program: string]: cloudwatch.Alarm } {
    return mapRecord(this.failedEntriesAlarms);
  }
  /** `sequenceGapsAlarms` as a plain object: program → alarm. */
  get sequenceGapsAlarmsByProgram(): { readonly [program: string]: cloudwatch.Alarm } {
    return mapRecord(this.sequenceGapsAlarms);
  }
  /** `leaseBusyAlarms` as a plain object: program → alarm. */
  get leaseBusyAlarmsByProgram(): { readonly [program: string]: cloudwatch.Alarm } {
    return mapRecord(this.leaseBusyAlarms);
  }
  /** `orderBrokenAlarms` as a plain object: program → alarm (empty on the classic bus). */
  get orderBrokenAlarmsByProgram(): { readonly [program: string]: cloudwatch.Alarm } {
    return mapRecord(this.orderBrokenAlarms);
  }
  /** `sequenceJumpsAlarms` as a plain object: program → alarm. */
  get sequenceJumpsAlarmsByProgram(): { readonly [program: string]: cloudwatch.Alarm } {
    return mapRecord(this.sequenceJumpsAlarms);
  }
  /** `deadLetterAlarms` as a plain object: route name → alarm. */
  get deadLetterAlarmsByRoute(): { readonly [route: string]: cloudwatch.Alarm } {
    return mapRecord(this.deadLetterAlarms);
  }

  private readonly actions: IAlarmActionStrategy;
  private readonly all: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: PollerAlarmsProps) {
    super(scope, id);
    this.actions = props.alarmActions;
    const runbook = (alarm: string): string => `${props.runbookUrl}#alarm-${alarm}`;
    const lagSeconds = props.lagThreshold.toSeconds();
    const stallMinutes = props.stallAfter.toMinutes();
    const tick = props.scheduleInterval;
    const tickMinutes = tick.toMinutes();
    /** One period in words: "minutes" on the default schedule, "5-minute periods" otherwise. */
    const periods = tickMinutes === 1 ? 'minutes' : `${tickMinutes}-minute periods`;

    const lag = new Map<string, cloudwatch.Alarm>();
    const stall = new Map<string, cloudwatch.Alarm>();
    const failedEntries = new Map<string, cloudwatch.Alarm>();
    const sequenceGaps = new Map<string, cloudwatch.Alarm>();
    const leaseBusy = new Map<string, cloudwatch.Alarm>();
    const recurrence = `${FAILURE_DATAPOINTS} of the last ${FAILURE_WINDOW} ${periods}`;
    /** Failures counted once per run: one is not paged (the next tick retries), a pattern is. */
    const recurringFailure = (id: string, metric: cloudwatch.IMetric, alarmDescription: string) =>
      this.alarm(id, {
        metric,
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: FAILURE_WINDOW,
        datapointsToAlarm: FAILURE_DATAPOINTS,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription,
      });

    for (const program of props.programs) {
      const suffix = pascalCase(program);
      lag.set(
        program,
        this.alarm(`Lag${suffix}`, {
          metric: props.metrics.metric('LagSeconds', program, { statistic: 'Maximum', period: tick }),
          threshold: lagSeconds,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: props.lagPeriods,
          datapointsToAlarm: props.lagPeriods,
          // A poller that publishes nothing emits no lag; the stall alarm covers that case.
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          alarmDescription:
            `Program ${program}: the newest published event was more than ${lagSeconds} s old for ` +
            `${props.lagPeriods} consecutive ${periods}. Runbook: ${runbook('lag')}`,
        }),
      );
      stall.set(
        program,
        this.alarm(`Stall${suffix}`, {
          // One-minute periods whatever the interval: see "Periods" above.
          metric: props.metrics.metric('CycleDurationMs', program, {
            statistic: 'SampleCount',
            period: ONE_MINUTE,
          }),
          threshold: 1,
          comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
          evaluationPeriods: stallMinutes,
          datapointsToAlarm: stallMinutes,
          // No data is exactly the failure this alarm exists for.
          treatMissingData: cloudwatch.TreatMissingData.BREACHING,
          alarmDescription:
            `Program ${program}: no poll cycle completed for ${stallMinutes} minutes. ` +
            `Runbook: ${runbook('stall')}`,
        }),
      );
      failedEntries.set(
        program,
        // The handler counts every rejected attempt, also those a retry then gets through.
        recurringFailure(
          `FailedEntries${suffix}`,
          props.metrics.metric('FailedEntries', program, { statistic: 'Sum', period: tick }),
          `Program ${program}: EventBridge rejected PutEvents entries in ${recurrence}. ` +
            `Runbook: ${runbook('failed-entries')}`,
        ),
      );
      sequenceGaps.set(
        program,
        this.alarm(`SequenceGaps${suffix}`, {
          metric: props.metrics.metric(props.gapRepair ? 'GapsUnfilled' : 'SequenceGaps', program, {
            statistic: 'Sum',
            period: tick,
          }),
          threshold: 1,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          // One number is worth a look: its event may exist upstream and was not published.
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          alarmDescription: props.gapRepair
            ? `Program ${program}: the feed skipped sequence numbers and no event turned up for them within ` +
              `the gap-repair grace period; one the banking service fills in later is not published. ` +
              `Runbook: ${runbook('sequence-gaps')}`
            : `Program ${program}: the feed skipped sequence numbers; their events were not published if the ` +
              `banking service fills them in late. Runbook: ${runbook('sequence-gaps')}`,
        }),
      );
      leaseBusy.set(
        program,
        // A tick waits for the run before it to hand the lease over; failing that once is covered
        // by the next tick, failing it as a pattern means runs overrun or a lease is stuck.
        recurringFailure(
          `LeaseBusy${suffix}`,
          props.metrics.metric('LeaseBusy', program, { statistic: 'Sum', period: tick }),
          `Program ${program}: runs waited for the lease and could not take it over in ${recurrence}. ` +
            `Runbook: ${runbook('lease-busy')}`,
        ),
      );
    }
    const orderBroken = new Map<string, cloudwatch.Alarm>();
    // After the per-program alarms of every program, so the classic bus's alarms keep their order.
    for (const program of props.customBus === true ? props.programs : []) {
      orderBroken.set(
        program,
        this.alarm(`OrderBroken${pascalCase(program)}`, {
          metric: props.metrics.metric(ORDER_BROKEN, program, { statistic: 'Sum', period: tick }),
          threshold: 0,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          // One is worth a person: a FIFO subscriber has already seen that group out of order.
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          alarmDescription:
            `Program ${program}: the custom bus accepted an event of a group while rejecting an earlier one of ` +
            `the same group; FIFO subscribers received that group out of order. Runbook: ${runbook('order-broken')}`,
        }),
      );
    }
    this.orderBrokenAlarms = orderBroken;
    const sequenceJumps = new Map<string, cloudwatch.Alarm>();
    for (const program of props.programs) {
      sequenceJumps.set(
        program,
        this.alarm(`SequenceJumps${pascalCase(program)}`, {
          // A gauge every run writes while a jump awaits a decision: in alarm until it is decided.
          metric: props.metrics.metric(SEQUENCE_JUMPS_HELD, program, { statistic: 'Maximum', period: tick }),
          threshold: 1,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          alarmDescription:
            `Program ${program}: the feed sent an event numbered implausibly far past the numbers before it; ` +
            'it is held and quarantined, and the checkpoint stays below it until an operator accepts or rejects ' +
            `the jump. Runbook: ${runbook('sequence-jumps')}`,
        }),
      );
    }
    this.sequenceJumpsAlarms = sequenceJumps;
    this.lagAlarms = lag;
    this.leaseBusyAlarms = leaseBusy;
    this.stallAlarms = stall;
    this.failedEntriesAlarms = failedEntries;
    this.sequenceGapsAlarms = sequenceGaps;

    // Lambda reports both once per invocation.
    this.errorsAlarm = recurringFailure(
      'Errors',
      props.pollerFunction.metricErrors({ period: tick, statistic: 'Sum' }),
      `The poller function failed in ${recurrence}. Runbook: ${runbook('errors')}`,
    );
    this.throttlesAlarm = recurringFailure(
      'Throttles',
      props.pollerFunction.metricThrottles({ period: tick, statistic: 'Sum' }),
      `The poller function was throttled in ${recurrence}. Runbook: ${runbook('throttles')}`,
    );
    this.scheduleDeadLetterAlarm = this.notEmpty(
      'ScheduleDeadLetter',
      props.scheduleDeadLetterQueue,
      `EventBridge Scheduler could not invoke the poller function. Runbook: ${runbook('schedule-dlq')}`,
    );

    const deadLetters = new Map<string, cloudwatch.Alarm>();
    for (const route of props.routes) {
      const id = route.isCatchAll
        ? 'UnroutedDeadLetter'
        : route.isQuarantine
          ? 'QuarantineDeadLetter'
          : `DeadLetter${pascalCase(route.name)}`;
      deadLetters.set(
        route.name,
        this.notEmpty(
          id,
          route.deadLetterQueue,
          `Route ${route.name}: deliveries EventBridge gave up on, or messages consumers failed repeatedly. ` +
            `Runbook: ${runbook('route-dlq')}`,
        ),
      );
    }
    this.deadLetterAlarms = deadLetters;

    const unroutedQueue = props.routes.find((route) => route.isCatchAll)?.queue;
    this.unroutedEventsAlarm =
      unroutedQueue === undefined
        ? undefined
        : this.notEmpty(
            'UnroutedEvents',
            unroutedQueue,
            'Events of a type no route names reached the catch-all queue: the banking service added a type. ' +
              `Runbook: ${runbook('unrouted')}`,
          );
    const quarantineQueue = props.routes.find((route) => route.isQuarantine)?.queue;
    this.quarantineAlarm =
      quarantineQueue === undefined
        ? undefined
        : this.notEmpty(
            'QuarantineEvents',
            quarantineQueue,
            'An event from the banking service failed validation and was published as invalid_event to the ' +
              `quarantine queue: it needs a person. Runbook: ${runbook('quarantine')}`,
          );
    this.alarms = this.all;
  }

  private notEmpty(id: string, queue: sqs.IQueue, description: string): cloudwatch.Alarm {
    return this.alarm(id, {
      metric: queue.metricApproximateNumberOfMessagesVisible({ period: ONE_MINUTE, statistic: 'Maximum' }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: description,
    });
  }

  private alarm(id: string, props: cloudwatch.AlarmProps): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(this, id, props);
    this.actions.addActions(alarm);
    this.all.push(alarm);
    return alarm;
  }
}
