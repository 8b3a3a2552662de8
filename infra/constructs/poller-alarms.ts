import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { IAlarmActionStrategy } from './alarm-actions.ts';
import { pascalCase } from './construct-names.ts';
import type { Route } from './event-routing.ts';
import type { PollerMetrics } from './poller-metrics.ts';

export interface PollerAlarmsProps {
  /** Program names: every custom-metric alarm exists once per program (its `Program` dimension). */
  readonly programs: readonly string[];
  readonly metrics: PollerMetrics;
  readonly pollerFunction: lambda.IFunction;
  readonly scheduleDeadLetterQueue: sqs.IQueue;
  readonly routes: readonly Route[];
  /** `LagSeconds` above this for `lagMinutes` consecutive minutes raises the lag alarm. */
  readonly lagThreshold: Duration;
  /** Consecutive one-minute periods over the lag threshold. */
  readonly lagMinutes: number;
  /** No completed cycle (`CycleDurationMs` SampleCount 0) for this long raises the stall alarm. */
  readonly stallAfter: Duration;
  readonly alarmActions: IAlarmActionStrategy;
  /** Where the runbook lives; each alarm description links `<runbookUrl>#alarm-<name>`. */
  readonly runbookUrl: string;
}

const ONE_MINUTE = Duration.minutes(1);
/** Failing or throttled ticks in 3 of the last 5 minutes: a single bad tick is covered by the next one. */
const FAILURE_DATAPOINTS = 3;
const FAILURE_WINDOW = 5;

/**
 * The alarms the person on call needs, and nothing that pages for a blip. What each one means and
 * what to do is in docs/deploy.md; every description points there.
 */
export class PollerAlarms extends Construct {
  /** Per program: the newest published event is older than the lag threshold. */
  public readonly lagAlarms: ReadonlyMap<string, cloudwatch.Alarm>;
  /** Per program: no poll cycle completed for `stallAfter` (missing data breaches). */
  public readonly stallAlarms: ReadonlyMap<string, cloudwatch.Alarm>;
  /** Per program: PutEvents entries the bus kept rejecting. */
  public readonly failedEntriesAlarms: ReadonlyMap<string, cloudwatch.Alarm>;
  public readonly errorsAlarm: cloudwatch.Alarm;
  public readonly throttlesAlarm: cloudwatch.Alarm;
  /** EventBridge Scheduler could not invoke the function. */
  public readonly scheduleDeadLetterAlarm: cloudwatch.Alarm;
  /** Per route (detail-type or `unrouted`): its dead-letter queue holds messages. */
  public readonly deadLetterAlarms: ReadonlyMap<string, cloudwatch.Alarm>;
  /** An event type arrived that no route names (only when the catch-all has a queue). */
  public readonly unroutedEventsAlarm: cloudwatch.Alarm | undefined;
  /** Every alarm above, for dashboards and composite alarms. */
  public readonly alarms: readonly cloudwatch.Alarm[];

  private readonly actions: IAlarmActionStrategy;
  private readonly all: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: PollerAlarmsProps) {
    super(scope, id);
    this.actions = props.alarmActions;
    const runbook = (alarm: string): string => `${props.runbookUrl}#alarm-${alarm}`;
    const lagSeconds = props.lagThreshold.toSeconds();
    const stallMinutes = props.stallAfter.toMinutes();

    const lag = new Map<string, cloudwatch.Alarm>();
    const stall = new Map<string, cloudwatch.Alarm>();
    const failedEntries = new Map<string, cloudwatch.Alarm>();
    for (const program of props.programs) {
      const suffix = pascalCase(program);
      lag.set(
        program,
        this.alarm(`Lag${suffix}`, {
          metric: props.metrics.metric('LagSeconds', program, { statistic: 'Maximum' }),
          threshold: lagSeconds,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: props.lagMinutes,
          datapointsToAlarm: props.lagMinutes,
          // A poller that publishes nothing emits no lag; the stall alarm covers that case.
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          alarmDescription:
            `Program ${program}: the newest published event was more than ${lagSeconds} s old for ` +
            `${props.lagMinutes} consecutive minutes. Runbook: ${runbook('lag')}`,
        }),
      );
      stall.set(
        program,
        this.alarm(`Stall${suffix}`, {
          metric: props.metrics.metric('CycleDurationMs', program, { statistic: 'SampleCount' }),
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
        this.alarm(`FailedEntries${suffix}`, {
          metric: props.metrics.metric('FailedEntries', program, { statistic: 'Sum' }),
          threshold: 1,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          // The handler counts every rejected attempt, also those a retry then gets through.
          evaluationPeriods: FAILURE_WINDOW,
          datapointsToAlarm: FAILURE_DATAPOINTS,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          alarmDescription:
            `Program ${program}: EventBridge rejected PutEvents entries in ${FAILURE_DATAPOINTS} of the last ` +
            `${FAILURE_WINDOW} minutes. Runbook: ${runbook('failed-entries')}`,
        }),
      );
    }
    this.lagAlarms = lag;
    this.stallAlarms = stall;
    this.failedEntriesAlarms = failedEntries;

    this.errorsAlarm = this.alarm('Errors', {
      metric: props.pollerFunction.metricErrors({ period: ONE_MINUTE, statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: FAILURE_WINDOW,
      datapointsToAlarm: FAILURE_DATAPOINTS,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription:
        `The poller function failed in ${FAILURE_DATAPOINTS} of the last ${FAILURE_WINDOW} minutes. ` +
        `Runbook: ${runbook('errors')}`,
    });
    this.throttlesAlarm = this.alarm('Throttles', {
      metric: props.pollerFunction.metricThrottles({ period: ONE_MINUTE, statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: FAILURE_WINDOW,
      datapointsToAlarm: FAILURE_DATAPOINTS,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription:
        `The poller function was throttled in ${FAILURE_DATAPOINTS} of the last ${FAILURE_WINDOW} minutes. ` +
        `Runbook: ${runbook('throttles')}`,
    });
    this.scheduleDeadLetterAlarm = this.notEmpty(
      'ScheduleDeadLetter',
      props.scheduleDeadLetterQueue,
      `EventBridge Scheduler could not invoke the poller function. Runbook: ${runbook('schedule-dlq')}`,
    );

    const deadLetters = new Map<string, cloudwatch.Alarm>();
    for (const route of props.routes) {
      const id = route.isCatchAll ? 'UnroutedDeadLetter' : `DeadLetter${pascalCase(route.name)}`;
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
