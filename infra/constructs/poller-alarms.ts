import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { MetricName } from '../../functions/core/ports.ts';
import type { IAlarmActionStrategy } from './alarm-actions.ts';
import { pascalCase } from './construct-names.ts';
import type { RouteQueues } from './event-routing.ts';
import { mapRecord } from './map-members.ts';
import { ORDER_BROKEN, OVERSIZE_PAGES, type PollerMetrics, SEQUENCE_JUMPS_HELD } from './poller-metrics.ts';

export interface PollerAlarmsProps {
  /** Program names: with `perProgramAlarms`, every custom-metric alarm exists once per program (its `Program` dimension). */
  readonly programs: string[];
  /**
   * One set of alarms per program of `programs`, each on its `Program` dimension: clear for a few
   * programs; seven resources per program (eight on the custom bus).
   *
   * @default true
   */
  readonly perProgramAlarms?: boolean;
  /**
   * One alarm per condition (lag, stall, rejected entries, unfilled gaps, sequence jumps held,
   * oversize pages, lease busy, broken order) over every program but those of `programs` with alarms of their own (`perProgramAlarms`): a
   * Metrics Insights query grouped by `Program`, each program a contributor with its own state,
   * named in the notification. Needs the handler's metrics of each program (`PROGRAM_METRICS`,
   * either plan).
   *
   * @default false
   */
  readonly perConditionAlarms?: boolean;
  /**
   * Worker schedules (`{"worker": i}`, 0 ≤ i < workers): with `perConditionAlarms`, each worker has
   * a stall alarm (no run finished for `stallAfter`), since a program no run reaches sends nothing.
   *
   * @default 0
   */
  readonly workers?: number;
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
/** The data a Metrics Insights alarm evaluates, at most (CloudWatch's limit). */
const METRICS_INSIGHTS_WINDOW = Duration.hours(3);
/** Failing or throttled ticks in 3 of the last 5: a single bad tick is covered by the next one. */
const FAILURE_DATAPOINTS = 3;
const FAILURE_WINDOW = 5;

/**
 * One oversize page in one schedule interval. A bank that ignores `limit` answers more than asked
 * for only while more is waiting (a backlog, a catch-up), which may be a single poll: a pattern
 * over several intervals would miss it. Nothing is lost meanwhile, so it goes back to OK with the
 * next interval without one.
 */
const OVERSIZE_PAGES_ALARM = {
  threshold: 1,
  comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
  evaluationPeriods: 1,
  treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
} as const;
const OVERSIZE_PAGES_MEANS =
  'feed answered a page with more events than the poll asked for, or one too long to read at once';

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
 * The per-condition alarms: one each, every program a contributor (CloudWatch names it in the
 * notification, and `aws cloudwatch describe-alarm-contributors` lists those in ALARM).
 */
export interface ProgramConditionAlarms {
  /** A program's newest published event is older than the lag threshold. */
  readonly lag: cloudwatch.Alarm;
  /** A program's runs completed no healthy cycle for about `stallAfter` (`StalledRuns`). */
  readonly stall: cloudwatch.Alarm;
  /** PutEvents entries the bus kept rejecting. */
  readonly failedEntries: cloudwatch.Alarm;
  /** Skipped sequence numbers no event filled. */
  readonly sequenceGaps: cloudwatch.Alarm;
  /** Runs that waited for the lease in vain, repeatedly. */
  readonly leaseBusy: cloudwatch.Alarm;
  /** Events held past an implausible sequence jump, awaiting an operator's decision. */
  readonly sequenceJumps: cloudwatch.Alarm;
  /** Pages of the feed with more events than asked for, or too long to read at once. */
  readonly oversizePages: cloudwatch.Alarm;
  /** Custom bus only: a group's order broken by a partial failure; `undefined` on the classic bus. */
  readonly orderBroken?: cloudwatch.Alarm;
}

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
  /**
   * Per program: the feed answered a page with more events than the poll asked for (a bank that
   * ignores `limit`, or a `pollLimitParam` that is not its name), or one too long to read at once
   * in the function's memory (`OversizePages`). At once, on one such page: nothing is lost (the
   * page is read in parts), but the bank is not keeping to the page size the memory was sized for.
   *
   * A `Map`, for TypeScript; every language has `oversizePagesAlarmsByProgram`.
   *
   * @jsii ignore
   */
  public readonly oversizePagesAlarms: ReadonlyMap<string, cloudwatch.Alarm>;
  /** With `perConditionAlarms`: one alarm per condition over every program; `undefined` without. */
  public readonly conditionAlarms: ProgramConditionAlarms | undefined;
  /** With `perConditionAlarms`: worker `i`'s stall alarm at index `i` (no run finished for `stallAfter`). */
  public readonly workerStallAlarms: cloudwatch.Alarm[];
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
  /** `oversizePagesAlarms` as a plain object: program → alarm. */
  get oversizePagesAlarmsByProgram(): { readonly [program: string]: cloudwatch.Alarm } {
    return mapRecord(this.oversizePagesAlarms);
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

    /**
     * Nothing finished for `stallAfter`: one-minute periods whatever the interval (see "Periods"
     * above), and no data is exactly the failure this alarm exists for.
     */
    const noRunFor = (id: string, metric: cloudwatch.IMetric, alarmDescription: string) =>
      this.alarm(id, {
        metric,
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        evaluationPeriods: stallMinutes,
        datapointsToAlarm: stallMinutes,
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
        alarmDescription,
      });

    const perProgram = props.perProgramAlarms ?? true;
    for (const program of perProgram ? props.programs : []) {
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
        noRunFor(
          `Stall${suffix}`,
          props.metrics.metric('CycleDurationMs', program, { statistic: 'SampleCount', period: ONE_MINUTE }),
          `Program ${program}: no poll cycle completed for ${stallMinutes} minutes. ` +
            `Runbook: ${runbook('stall')}`,
        ),
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
    for (const program of props.customBus === true && perProgram ? props.programs : []) {
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
    for (const program of perProgram ? props.programs : []) {
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
    const oversizePages = new Map<string, cloudwatch.Alarm>();
    // After every other per-program alarm, so the alarms before it keep their order in the template.
    for (const program of perProgram ? props.programs : []) {
      oversizePages.set(
        program,
        this.alarm(`OversizePages${pascalCase(program)}`, {
          metric: props.metrics.metric(OVERSIZE_PAGES, program, { statistic: 'Sum', period: tick }),
          ...OVERSIZE_PAGES_ALARM,
          alarmDescription:
            `Program ${program}: the ${OVERSIZE_PAGES_MEANS}; it was read in parts and nothing is lost, but the ` +
            `bank ignores the page size or the function's memory is too small for its pages. Runbook: ${runbook('oversize-pages')}`,
        }),
      );
    }
    this.oversizePagesAlarms = oversizePages;
    this.lagAlarms = lag;
    this.leaseBusyAlarms = leaseBusy;
    this.stallAlarms = stall;
    this.failedEntriesAlarms = failedEntries;
    this.sequenceGapsAlarms = sequenceGaps;

    this.conditionAlarms =
      props.perConditionAlarms === true
        ? this.conditionAlarmsOf(props, { runbook, recurringFailure, recurrence, periods })
        : undefined;
    this.workerStallAlarms =
      props.perConditionAlarms === true
        ? Array.from({ length: props.workers ?? 0 }, (_, worker) =>
            noRunFor(
              `WorkerStall${worker}`,
              props.metrics.workerMetric('WorkerDurationMs', worker, {
                statistic: 'SampleCount',
                period: ONE_MINUTE,
              }),
              `Worker ${worker}: no run finished for ${stallMinutes} minutes; none of its programs is polled. ` +
                `Runbook: ${runbook('worker-stall')}`,
            ),
          )
        : [];

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

  /**
   * One alarm per condition, on the programs' own metrics as the handler sends them under either
   * plan, with the same thresholds and periods as a program's own alarm of that condition. Stall
   * is the one that differs: a contributor exists only while its series has data (CloudWatch
   * never counts missing data against one), so a program's stall is counted where it happens, in
   * `StalledRuns` (a run of it without a healthy cycle), and a worker that stops running at all
   * has its own alarm (`workerStallAlarms`).
   */
  private conditionAlarmsOf(
    props: PollerAlarmsProps,
    words: {
      readonly runbook: (alarm: string) => string;
      readonly recurringFailure: (
        id: string,
        metric: cloudwatch.IMetric,
        description: string,
      ) => cloudwatch.Alarm;
      readonly recurrence: string;
      readonly periods: string;
    },
  ): ProgramConditionAlarms {
    const { runbook, recurringFailure, recurrence, periods } = words;
    const tick = props.scheduleInterval;
    const lagSeconds = props.lagThreshold.toSeconds();
    // A program with alarms of its own is left out: one condition of one program pages once.
    const excludedPrograms = (props.perProgramAlarms ?? true) ? [...props.programs] : [];
    const query = (name: MetricName, aggregate: 'MAX' | 'SUM') =>
      props.metrics.programsQuery(name, { aggregate, period: tick, excludedPrograms });
    const named = 'Each program is a contributor, named in the notification (Program)';
    // Runs end about one interval apart; an interval whose run ended just past its edge holds none,
    // so one period short of the window may lack its data point. A Metrics Insights alarm reads the
    // last 3 hours at most: a longer stallAfter counts 3 hours of stalled runs.
    const stallMinutes = Math.min(props.stallAfter.toMinutes(), METRICS_INSIGHTS_WINDOW.toMinutes());
    const stallPeriods = Math.max(1, Math.floor(stallMinutes / tick.toMinutes()));
    const stallDatapoints = stallPeriods >= 3 ? stallPeriods - 1 : stallPeriods;
    const gapMetric: MetricName = props.gapRepair ? 'GapsUnfilled' : 'SequenceGaps';
    return {
      lag: this.alarm('ProgramsLag', {
        metric: query('LagSeconds', 'MAX'),
        threshold: lagSeconds,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: props.lagPeriods,
        datapointsToAlarm: props.lagPeriods,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription:
          `A program's newest published event was more than ${lagSeconds} s old for ${props.lagPeriods} consecutive ` +
          `${periods}. ${named}. Runbook: ${runbook('lag')}`,
      }),
      stall: this.alarm('ProgramsStall', {
        metric: query('StalledRuns', 'SUM'),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: stallPeriods,
        datapointsToAlarm: stallDatapoints,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription:
          `A program's runs completed no healthy poll cycle in ${stallDatapoints} of the last ${stallPeriods} ` +
          `${periods}. ${named}. Runbook: ${runbook('stall')}`,
      }),
      failedEntries: recurringFailure(
        'ProgramsFailedEntries',
        query('FailedEntries', 'SUM'),
        `EventBridge rejected a program's PutEvents entries in ${recurrence}. ${named}. ` +
          `Runbook: ${runbook('failed-entries')}`,
      ),
      sequenceGaps: this.alarm('ProgramsSequenceGaps', {
        metric: query(gapMetric, 'SUM'),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription:
          (props.gapRepair
            ? "A program's feed skipped sequence numbers and no event turned up for them within the gap-repair grace period"
            : "A program's feed skipped sequence numbers; their events were not published if the banking service fills them in late") +
          `. ${named}. Runbook: ${runbook('sequence-gaps')}`,
      }),
      leaseBusy: recurringFailure(
        'ProgramsLeaseBusy',
        query('LeaseBusy', 'SUM'),
        `A program's runs waited for the lease and could not take it over in ${recurrence}. ${named}. ` +
          `Runbook: ${runbook('lease-busy')}`,
      ),
      sequenceJumps: this.alarm('ProgramsSequenceJumps', {
        // A gauge every run of the program writes while a jump awaits a decision.
        metric: query(SEQUENCE_JUMPS_HELD, 'MAX'),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription:
          "A program's feed sent an event numbered implausibly far past the numbers before it; it is held and " +
          'quarantined, and the checkpoint stays below it until an operator accepts or rejects the jump. ' +
          `${named}. Runbook: ${runbook('sequence-jumps')}`,
      }),
      oversizePages: this.alarm('ProgramsOversizePages', {
        metric: query(OVERSIZE_PAGES, 'SUM'),
        ...OVERSIZE_PAGES_ALARM,
        alarmDescription:
          `A program's ${OVERSIZE_PAGES_MEANS}; it was read in parts and nothing is lost, but ` +
          "the bank ignores the page size or the function's memory is too small for its pages. " +
          `${named}. Runbook: ${runbook('oversize-pages')}`,
      }),
      orderBroken:
        props.customBus === true
          ? this.alarm('ProgramsOrderBroken', {
              metric: query(ORDER_BROKEN, 'SUM'),
              threshold: 0,
              comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
              evaluationPeriods: 1,
              treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
              alarmDescription:
                'The custom bus accepted an event of a group while rejecting an earlier one of the same group; FIFO ' +
                `subscribers received that group out of order. ${named}. Runbook: ${runbook('order-broken')}`,
            })
          : undefined,
    };
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
