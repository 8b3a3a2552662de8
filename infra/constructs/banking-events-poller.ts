import { Aws, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as schedulerTargets from 'aws-cdk-lib/aws-scheduler-targets';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ConfigurationError } from '../../functions/core/errors.ts';
import { KNOWN_EVENT_TYPES } from '../../functions/core/event-model.ts';
import {
  isProgramName,
  isQueryParameterName,
  PROGRAM_NAME_EXPECTED,
  QUERY_PARAMETER_EXPECTED,
} from '../../functions/core/name-rules.ts';
import { formatStartPosition, parseStartPosition } from '../../functions/core/start-position.ts';
import { AlarmActions, type IAlarmActionStrategy } from './alarm-actions.ts';
import { pascalCase } from './construct-names.ts';
import { type EventRouteOptions, EventRouting } from './event-routing.ts';
import { EventSchemas } from './event-schemas.ts';
import { leaseWait, overlappingTimeout, pollingStopsAfterMs } from './handover-timing.ts';
import { PollerAlarms } from './poller-alarms.ts';
import {
  POLLER_ARCHITECTURE,
  POLLER_BUNDLING,
  POLLER_HANDLER_ENTRY,
  POLLER_NODE_OPTIONS,
  POLLER_RUNTIME,
} from './poller-bundling.ts';
import { PollerDashboard } from './poller-dashboard.ts';
import { POLLER_SERVICE_NAME, PollerMetrics } from './poller-metrics.ts';

/** One feed of the banking service: its own credentials, its own checkpoint row, its own schedule. */
export interface PollerProgram {
  /**
   * The program's name: the checkpoint row key, the `Program` metric dimension and the schedule
   * payload's `program`. Letters, digits, `.`, `_` and `-`, at most 64 characters.
   */
  readonly name: string;
  /**
   * A secret that already holds `{"base_url", "client_id", "client_secret"}`.
   *
   * @default - a secret is created with a placeholder value; set it before the first tick
   */
  readonly existingSecret?: secretsmanager.ISecret;
}

export interface BankingEventsPollerProps {
  /**
   * The programs to poll. One function serves them all; each gets a schedule.
   *
   * @default [{ name: 'default' }]
   */
  readonly programs?: readonly PollerProgram[];
  /**
   * The `source` of every published event.
   *
   * @default 'banking.events'
   */
  readonly eventSource?: string;
  /**
   * How often each program's schedule fires: whole minutes, 1 to 14.
   *
   * @default Duration.minutes(1)
   */
  readonly scheduleInterval?: Duration;
  /**
   * How long before its timeout the handler stops polling to publish and commit
   * (`SAFETY_MARGIN_MS`; the handler uses a quarter of the remaining time when that is smaller).
   *
   * @default Duration.seconds(10)
   */
  readonly safetyMargin?: Duration;
  /**
   * Function timeout. The default makes each run poll until `handoverOverlap` after the next tick,
   * while the next run waits for the lease, so the feed is polled without a break. A timeout that
   * would stop polling before the next tick (a gap every interval), or more than half an
   * interval after it, is refused.
   *
   * @default - the shortest whole-second timeout that polls until `handoverOverlap` after the next
   * tick: scheduleInterval + handoverOverlap + safetyMargin while the margin is at most a quarter of
   * it (75 s with the defaults)
   */
  readonly functionTimeout?: Duration;
  /**
   * How long each run keeps polling after the next tick has arrived. The next run waits for the
   * lease meanwhile and takes it within a fraction of a second of its release, so tick jitter
   * shorter than this never leaves the feed unpolled. Less than half the schedule interval.
   *
   * @default Duration.seconds(5)
   */
  readonly handoverOverlap?: Duration;
  /**
   * Function memory in MiB.
   *
   * @default 256
   */
  readonly memorySize?: number;
  /**
   * Events asked for per poll request (`POLL_LIMIT`), 1 to 1000.
   *
   * @default 100
   */
  readonly pollLimit?: number;
  /**
   * Name of the `GET /events` query parameter that carries the cursor, the last sequence number
   * seen (`POLL_CURSOR_PARAM`); the feed must answer with the events after it. Set it when the
   * banking service names it differently: a name it ignores makes every run fail with
   * `FEED_CURSOR_IGNORED`. A letter or `_`, then letters, digits, `_`, `.` or `-`; at most 64.
   *
   * @default 'last_sequence_number'
   */
  readonly pollCursorParam?: string;
  /**
   * Name of the `GET /events` query parameter that carries the page size (`POLL_LIMIT_PARAM`).
   * Same form as `pollCursorParam`, and a different name.
   *
   * @default 'limit'
   */
  readonly pollLimitParam?: string;
  /**
   * PutEvents requests in flight at once while a program catches up (`PUBLISH_CONCURRENCY`),
   * 1 to 50. The handler halves it on throttling and grows it back after a run of successes.
   *
   * @default 8
   */
  readonly publishConcurrency?: number;
  /**
   * A cap on PutEvents requests per second per program (`PUBLISH_MAX_REQUESTS_PER_SECOND`): the
   * PutEvents quota is per account and region and shared with your other producers. Each request
   * carries up to 10 events.
   *
   * @default - no cap
   */
  readonly maxPutEventsPerSecond?: number;
  /**
   * Where a program without a checkpoint starts (`START_POSITION`): `'beginning'` (every event the
   * feed still has), `'latest'` (only events created from the first run on: the run passes over the
   * existing ones without publishing them) or a sequence number (the first event to publish). Used
   * only while a program has no checkpoint; `banking-events-poller rewind` moves one that has.
   *
   * @default 'beginning'
   */
  readonly startPosition?: 'beginning' | 'latest' | number;
  /**
   * Active X-Ray tracing on the function.
   *
   * @default false
   */
  readonly tracing?: boolean;
  /**
   * Retention of the function's log group.
   *
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * CloudWatch namespace of the handler's metrics (`POWERTOOLS_METRICS_NAMESPACE`).
   *
   * @default 'BankingEventsPoller'
   */
  readonly metricsNamespace?: string;
  /**
   * The handler's entry file.
   *
   * @default - functions/poller/handler.ts of this repository
   */
  readonly entry?: string;
  /**
   * A checkpoint table with a string partition key `pk`.
   *
   * @default - an on-demand table with point-in-time recovery, retained on stack deletion
   */
  readonly existingCheckpointTable?: dynamodb.ITable;
  /**
   * The bus to publish to.
   *
   * @default - a custom bus is created
   */
  readonly existingEventBus?: events.IEventBus;
  /**
   * Name of the bus this construct creates. Not allowed with `existingEventBus`.
   *
   * @default - generated by CloudFormation
   */
  readonly eventBusName?: string;
  /**
   * How long the archive keeps events for replay; `Duration.days(0)` keeps them indefinitely.
   *
   * @default Duration.days(30)
   */
  readonly archiveRetention?: Duration;
  /**
   * Name of the schema registry.
   *
   * @default - generated by CloudFormation
   */
  readonly schemaRegistryName?: string;
  /**
   * Event type (lower-case detail-type) → route. A route without `targets` gets a queue.
   *
   * @default - a queue each for `account_status` and `transaction`
   */
  readonly routes?: Readonly<Record<string, EventRouteOptions>>;
  /**
   * The catch-all for types no route names.
   *
   * @default - a queue, with an alarm when anything arrives in it
   */
  readonly unrouted?: EventRouteOptions;
  /**
   * `LagSeconds` above this for 3 consecutive schedule intervals raises a program's lag alarm
   * (at least 1 minute).
   *
   * @default Duration.minutes(5)
   */
  readonly lagThreshold?: Duration;
  /**
   * No completed poll cycle for this long raises a program's stall alarm (whole minutes, at least
   * one schedule interval plus a minute: a window of exactly one interval raises false alarms).
   *
   * @default - 5 minutes or two schedule intervals, whichever is longer
   */
  readonly stallAfter?: Duration;
  /**
   * What alarms do. Not allowed with `alarmTopic` or `alarmEmail`.
   *
   * @default - notify the alarm topic on ALARM and OK
   */
  readonly alarmActions?: IAlarmActionStrategy;
  /**
   * An existing topic for alarm notifications. Not allowed with `alarmEmail`.
   *
   * @default - a KMS-encrypted topic is created
   */
  readonly alarmTopic?: sns.ITopic;
  /**
   * Subscribes this address to the created alarm topic (the recipient confirms by email).
   *
   * @default - no subscription
   */
  readonly alarmEmail?: string;
  /**
   * Dashboard name.
   *
   * @default - generated by CloudFormation
   */
  readonly dashboardName?: string;
  /**
   * The runbook every alarm description links to, as `<runbookUrl>#alarm-<name>`.
   *
   * @default 'docs/deploy.md' (this repository's runbook)
   */
  readonly runbookUrl?: string;
}

/** Consecutive schedule intervals (one `LagSeconds` data point each) over the lag threshold. */
const LAG_PERIODS = 3;
const MIN_STALL_AFTER = Duration.minutes(5);
/** Lambda's ceiling; the schedule interval is bounded so the default timeout stays under it. */
const MAX_TIMEOUT = Duration.minutes(15);

/**
 * Polls a banking service's event feed on a schedule and publishes every event to EventBridge,
 * with a DynamoDB checkpoint, type-based routing with DLQs, an archive, schemas, alarms and a
 * dashboard. Holds no business logic: the handler does the polling.
 *
 * @example
 * const poller = new BankingEventsPoller(this, 'Poller', {
 *   programs: [{ name: 'cards' }, { name: 'loans' }],
 *   alarmEmail: 'oncall@example.com',
 * });
 * new events.Rule(this, 'Mine', { eventBus: poller.eventBus, eventPattern: { detailType: ['transaction'] } });
 */
export class BankingEventsPoller extends Construct {
  public readonly pollerFunction: nodejs.NodejsFunction;
  public readonly logGroup: logs.LogGroup;
  public readonly checkpointTable: dynamodb.ITable;
  /** Program name → its credentials secret. */
  public readonly secrets: ReadonlyMap<string, secretsmanager.ISecret>;
  public readonly eventBus: events.IEventBus;
  public readonly archive: events.Archive;
  public readonly schemas: EventSchemas;
  public readonly routing: EventRouting;
  /** Program name → its schedule. */
  public readonly schedules: ReadonlyMap<string, scheduler.Schedule>;
  /** Invocations EventBridge Scheduler could not deliver. */
  public readonly scheduleDeadLetterQueue: sqs.Queue;
  /** The topic alarms notify; `undefined` when `alarmActions` was given. */
  public readonly alarmTopic: sns.ITopic | undefined;
  public readonly alarms: PollerAlarms;
  public readonly dashboard: PollerDashboard;

  constructor(scope: Construct, id: string, props: BankingEventsPollerProps = {}) {
    super(scope, id);

    // Every default, resolved once.
    const programs = props.programs ?? [{ name: 'default' }];
    const eventSource = props.eventSource ?? 'banking.events';
    const scheduleInterval = props.scheduleInterval ?? Duration.minutes(1);
    const safetyMargin = props.safetyMargin ?? Duration.seconds(10);
    const handoverOverlap = props.handoverOverlap ?? Duration.seconds(5);
    const functionTimeout =
      props.functionTimeout ?? overlappingTimeout(scheduleInterval, handoverOverlap, safetyMargin);
    const memorySize = props.memorySize ?? 256;
    const pollLimit = props.pollLimit ?? 100;
    // The handler's defaults, set explicitly so the function's configuration shows the names in use.
    const pollCursorParam = props.pollCursorParam ?? 'last_sequence_number';
    const pollLimitParam = props.pollLimitParam ?? 'limit';
    const publishConcurrency = props.publishConcurrency ?? 8;
    const startPosition = props.startPosition ?? 'beginning';
    const tracing = props.tracing ?? false;
    const logRetention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;
    const metricsNamespace = props.metricsNamespace ?? 'BankingEventsPoller';
    const entry = props.entry ?? POLLER_HANDLER_ENTRY;
    const archiveRetention = props.archiveRetention ?? Duration.days(30);
    const routes =
      props.routes ??
      Object.fromEntries(KNOWN_EVENT_TYPES.map((type): [string, EventRouteOptions] => [type, {}]));
    const unrouted = props.unrouted ?? {};
    const lagThreshold = props.lagThreshold ?? Duration.minutes(5);
    // One place for the default, so apps embedding the construct get a window that fits their interval.
    const stallAfter =
      props.stallAfter ??
      Duration.minutes(
        Math.max(MIN_STALL_AFTER.toMinutes(), (2 * scheduleInterval.toSeconds({ integral: false })) / 60),
      );
    const runbookUrl = props.runbookUrl ?? 'docs/deploy.md';

    validateProps(props, {
      programs,
      scheduleInterval,
      safetyMargin,
      handoverOverlap,
      functionTimeout,
      pollLimit,
      publishConcurrency,
      pollCursorParam,
      pollLimitParam,
      startPosition,
      lagThreshold,
      stallAfter,
    });

    this.checkpointTable = props.existingCheckpointTable ?? this.createCheckpointTable();
    this.secrets = new Map(
      programs.map((program) => [program.name, program.existingSecret ?? this.createSecret(program.name)]),
    );
    this.eventBus =
      props.existingEventBus ?? new events.EventBus(this, 'EventBus', { eventBusName: props.eventBusName });
    this.archive = new events.Archive(this, 'Archive', {
      sourceEventBus: this.eventBus,
      description: `Every event from ${eventSource}, for replay`,
      eventPattern: { source: [eventSource] },
      retention: archiveRetention,
    });
    this.schemas = new EventSchemas(this, 'Schemas', {
      eventSource,
      eventTypes: KNOWN_EVENT_TYPES,
      registryName: props.schemaRegistryName,
    });
    this.routing = new EventRouting(this, 'Routing', {
      eventBus: this.eventBus,
      eventSource,
      routes,
      unrouted,
    });

    this.logGroup = new logs.LogGroup(this, 'LogGroup', { retention: logRetention });
    const role = new iam.Role(this, 'FunctionRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description:
        'Banking events poller: its secrets, its checkpoint items, PutEvents on its bus, its log group',
    });
    this.logGroup.grantWrite(role);
    this.pollerFunction = new nodejs.NodejsFunction(this, 'Function', {
      entry,
      handler: 'handler',
      description: `Polls the banking event feed and publishes to EventBridge (source ${eventSource})`,
      runtime: POLLER_RUNTIME,
      architecture: POLLER_ARCHITECTURE,
      memorySize,
      timeout: functionTimeout,
      role,
      logGroup: this.logGroup,
      tracing: tracing ? lambda.Tracing.ACTIVE : lambda.Tracing.DISABLED,
      // Scheduler invokes asynchronously: a failed or stale tick is not retried, the next one covers it.
      retryAttempts: 0,
      maxEventAge: Duration.minutes(1),
      environment: {
        // Each program is bound to its own secret here, never by the invocation event.
        DEFAULT_PROGRAM: programs[0]!.name,
        SECRET_ID: this.secrets.get(programs[0]!.name)!.secretArn,
        ...(programs.length > 1
          ? {
              PROGRAM_SECRETS: Stack.of(this).toJsonString(
                Object.fromEntries(
                  programs
                    .slice(1)
                    .map((program) => [program.name, this.secrets.get(program.name)!.secretArn]),
                ),
              ),
            }
          : {}),
        CHECKPOINT_TABLE: this.checkpointTable.tableName,
        // An imported bus may live in another account: PutEvents needs its ARN then; the name suffices for ours.
        EVENT_BUS_NAME:
          props.existingEventBus === undefined ? this.eventBus.eventBusName : this.eventBus.eventBusArn,
        EVENT_SOURCE: eventSource,
        POWERTOOLS_SERVICE_NAME: POLLER_SERVICE_NAME,
        POWERTOOLS_METRICS_NAMESPACE: metricsNamespace,
        POWERTOOLS_LOG_LEVEL: 'INFO',
        POLL_LIMIT: String(pollLimit),
        POLL_CURSOR_PARAM: pollCursorParam,
        POLL_LIMIT_PARAM: pollLimitParam,
        START_POSITION: formatStartPosition(parseStartPosition(startPosition, 'startPosition')),
        SAFETY_MARGIN_MS: String(safetyMargin.toMilliseconds()),
        // The next tick arrives while this run still polls: it waits for the lease, at most until a
        // crashed holder's lease would expire.
        LEASE_WAIT_MS: String(leaseWait(scheduleInterval, functionTimeout).toMilliseconds()),
        PUBLISH_CONCURRENCY: String(publishConcurrency),
        ...(props.maxPutEventsPerSecond === undefined
          ? {}
          : { PUBLISH_MAX_REQUESTS_PER_SECOND: String(props.maxPutEventsPerSecond) }),
        NODE_OPTIONS: POLLER_NODE_OPTIONS,
      },
      bundling: POLLER_BUNDLING,
    });
    if (tracing) {
      Validations.of(role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'xray:PutTraceSegments and xray:PutTelemetryRecords do not support resource-level permissions.',
      });
    }

    // Least privilege: item-level actions on the table only, its secrets only, PutEvents on its bus only.
    for (const secret of this.secrets.values()) secret.grantRead(role);
    this.checkpointTable.grant(role, 'dynamodb:GetItem', 'dynamodb:UpdateItem');
    this.eventBus.grantPutEventsTo(role);

    this.scheduleDeadLetterQueue = new sqs.Queue(this, 'ScheduleDeadLetterQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.scheduleDeadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is the dead-letter queue of the EventBridge Scheduler schedules; cdk-nag only recognises ' +
        'DLQs named in an SQS redrive policy or a Lambda DeadLetterConfig.',
    });
    this.schedules = this.createSchedules(programs, scheduleInterval);

    const metrics = new PollerMetrics(metricsNamespace);
    this.alarmTopic =
      props.alarmActions === undefined ? (props.alarmTopic ?? this.createAlarmTopic()) : undefined;
    if (props.alarmEmail !== undefined && this.alarmTopic !== undefined) {
      this.alarmTopic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
    }
    const programNames = programs.map((program) => program.name);
    this.alarms = new PollerAlarms(this, 'Alarms', {
      programs: programNames,
      metrics,
      pollerFunction: this.pollerFunction,
      scheduleDeadLetterQueue: this.scheduleDeadLetterQueue,
      routes: this.routing.routes,
      scheduleInterval,
      lagThreshold,
      lagPeriods: LAG_PERIODS,
      stallAfter,
      alarmActions: props.alarmActions ?? AlarmActions.notifySns(this.alarmTopic!),
      runbookUrl,
    });
    this.dashboard = new PollerDashboard(this, 'Dashboard', {
      programs: programNames,
      metrics,
      pollerFunction: this.pollerFunction,
      eventBus: this.eventBus,
      routes: this.routing.routes,
      scheduleDeadLetterQueue: this.scheduleDeadLetterQueue,
      alarms: this.alarms.alarms,
      dashboardName: props.dashboardName,
    });
  }

  /** Console link to the dashboard. */
  get dashboardUrl(): string {
    return this.dashboard.dashboardUrl;
  }

  private createCheckpointTable(): dynamodb.Table {
    return new dynamodb.Table(this, 'CheckpointTable', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      // Losing the checkpoint means republishing the feed from the start.
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }

  /**
   * A placeholder of the right shape: `client_secret` is random and `client_id` is a marker the
   * handler rejects by name, so no credential is ever in the template or the context.
   */
  private createSecret(program: string): secretsmanager.Secret {
    const secret = new secretsmanager.Secret(this, `Secret${pascalCase(program)}`, {
      description:
        `Banking service credentials for program ${program}: {"base_url","client_id","client_secret"}. ` +
        'Set with aws secretsmanager put-secret-value.',
      generateSecretString: {
        secretStringTemplate: JSON.stringify({
          base_url: 'https://<banking-service-host>',
          client_id: '<client-id>',
        }),
        generateStringKey: 'client_secret',
        excludePunctuation: true,
        passwordLength: 32,
      },
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The banking service issues and rotates these client credentials; operators store the new value ' +
        'with put-secret-value and the handler re-reads the secret on a 401.',
    });
    return secret;
  }

  private createSchedules(
    programs: readonly PollerProgram[],
    interval: Duration,
  ): ReadonlyMap<string, scheduler.Schedule> {
    const role = new iam.Role(this, 'SchedulerRole', {
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: {
            'aws:SourceAccount': Aws.ACCOUNT_ID,
            'aws:SourceArn': Stack.of(this).formatArn({
              service: 'scheduler',
              resource: 'schedule-group',
              resourceName: 'default',
            }),
          },
        },
      }),
      description: 'EventBridge Scheduler: invoke the banking events poller, or park the tick in the DLQ',
    });
    const schedules = new Map<string, scheduler.Schedule>();
    for (const program of programs) {
      const target = new InvokeUnqualifiedFunction(this.pollerFunction, {
        role,
        // The function looks the program's secret up itself (SECRET_ID / PROGRAM_SECRETS).
        input: scheduler.ScheduleTargetInput.fromObject({ program: program.name }),
        deadLetterQueue: this.scheduleDeadLetterQueue,
        // No retries: the next tick polls from the same checkpoint.
        retryAttempts: 0,
        maxEventAge: Duration.minutes(1),
      });
      schedules.set(
        program.name,
        new scheduler.Schedule(this, `Schedule${pascalCase(program.name)}`, {
          schedule: scheduler.ScheduleExpression.rate(interval),
          target,
          timeWindow: scheduler.TimeWindow.off(),
          description: `Polls the banking event feed of program ${program.name}`,
        }),
      );
    }
    return schedules;
  }

  private createAlarmTopic(): sns.Topic {
    // CloudWatch can publish to an encrypted topic only if it may use the key; AWS-managed keys
    // cannot grant that, hence a customer-managed key.
    const key = new kms.Key(this, 'AlarmTopicKey', {
      description: 'Encrypts the banking events poller alarm topic',
      enableKeyRotation: true,
    });
    key.grant(new iam.ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
    return new sns.Topic(this, 'AlarmTopic', {
      displayName: 'Banking events poller alarms',
      masterKey: key,
      enforceSSL: true,
    });
  }
}

/**
 * `LambdaInvoke` grants `lambda:InvokeFunction` on `function:*` (every version and alias); the
 * schedule only ever invokes the unqualified function, so grant exactly that.
 */
class InvokeUnqualifiedFunction
  extends schedulerTargets.ScheduleTargetBase
  implements scheduler.IScheduleTarget
{
  private readonly fn: lambda.IFunction;

  constructor(fn: lambda.IFunction, props: schedulerTargets.ScheduleTargetBaseProps) {
    super(props, fn.functionArn);
    this.fn = fn;
  }

  protected addTargetActionToRole(role: iam.IRole): void {
    this.fn.grantInvokeLatestVersion(role);
  }
}

function validateProps(
  props: BankingEventsPollerProps,
  resolved: {
    readonly programs: readonly PollerProgram[];
    readonly scheduleInterval: Duration;
    readonly safetyMargin: Duration;
    readonly handoverOverlap: Duration;
    readonly functionTimeout: Duration;
    readonly pollLimit: number;
    readonly publishConcurrency: number;
    readonly pollCursorParam: string;
    readonly pollLimitParam: string;
    readonly startPosition: 'beginning' | 'latest' | number;
    readonly lagThreshold: Duration;
    readonly stallAfter: Duration;
  },
): void {
  const fail = (message: string, prop: string): never => {
    throw new ConfigurationError(`BankingEventsPoller: ${message}`, { prop });
  };
  if (props.existingEventBus !== undefined && props.eventBusName !== undefined) {
    fail(
      'eventBusName names a bus this construct creates; leave it out when passing existingEventBus',
      'eventBusName',
    );
  }
  if (
    props.alarmActions !== undefined &&
    (props.alarmTopic !== undefined || props.alarmEmail !== undefined)
  ) {
    fail(
      'alarmActions replaces the alarm topic; leave out alarmTopic and alarmEmail, or alarmActions',
      'alarmActions',
    );
  }
  if (props.alarmTopic !== undefined && props.alarmEmail !== undefined) {
    fail(
      'alarmEmail subscribes to the topic this construct creates; subscribe to your own alarmTopic yourself',
      'alarmEmail',
    );
  }
  if (resolved.programs.length === 0) fail('programs must name at least one program', 'programs');
  const ids = new Map<string, string>();
  for (const { name } of resolved.programs) {
    if (!isProgramName(name)) fail(`program name "${name}" must be ${PROGRAM_NAME_EXPECTED}`, 'programs');
    const other = ids.get(pascalCase(name).toLowerCase());
    if (other !== undefined) fail(`programs "${other}" and "${name}" are too alike; rename one`, 'programs');
    ids.set(pascalCase(name).toLowerCase(), name);
  }
  const intervalMinutes = resolved.scheduleInterval.toSeconds() / 60;
  if (!Number.isInteger(intervalMinutes) || intervalMinutes < 1 || intervalMinutes > 14) {
    fail('scheduleInterval must be whole minutes from 1 to 14', 'scheduleInterval');
  }
  const interval = resolved.scheduleInterval.toSeconds();
  const overlap = resolved.handoverOverlap.toSeconds({ integral: false });
  if (overlap <= 0 || overlap >= interval / 2) {
    fail('handoverOverlap must be more than 0 and less than half the scheduleInterval', 'handoverOverlap');
  }
  const timeout = resolved.functionTimeout.toSeconds({ integral: false });
  const margin = resolved.safetyMargin.toSeconds({ integral: false });
  if (timeout > MAX_TIMEOUT.toSeconds())
    fail(`functionTimeout is ${timeout} s; Lambda allows at most 900 s`, 'functionTimeout');
  if (timeout <= margin) {
    fail(
      'functionTimeout must be longer than safetyMargin, the time kept back at its end for the last publish and commit',
      'functionTimeout',
    );
  }
  const stopsPolling = pollingStopsAfterMs(resolved.functionTimeout, resolved.safetyMargin) / 1000;
  const shortest = overlappingTimeout(
    resolved.scheduleInterval,
    resolved.handoverOverlap,
    resolved.safetyMargin,
  ).toSeconds();
  if (stopsPolling <= interval) {
    fail(
      `functionTimeout ${timeout} s with safetyMargin ${margin} s stops polling ${stopsPolling} s after it starts ` +
        `(the handler keeps back the margin, but at most a quarter of the timeout), no later than the next tick at ` +
        `${interval} s: runs would not overlap, and the feed would go unpolled between them. Use a functionTimeout ` +
        `of at least ${shortest} s (leave it out to get that) so each run hands over to the next.`,
      'functionTimeout',
    );
  }
  if (stopsPolling >= interval * 1.5) {
    fail(
      `functionTimeout ${timeout} s keeps polling until ${stopsPolling} s, more than half an interval after the next ` +
        `tick at ${interval} s: the next run would give up waiting for the lease. Use ${shortest} s (leave it out to get that).`,
      'functionTimeout',
    );
  }
  if (!Number.isInteger(resolved.pollLimit) || resolved.pollLimit < 1 || resolved.pollLimit > 1000) {
    fail('pollLimit must be an integer from 1 to 1000 (the handler refuses more)', 'pollLimit');
  }
  if (
    !Number.isInteger(resolved.publishConcurrency) ||
    resolved.publishConcurrency < 1 ||
    resolved.publishConcurrency > 50
  ) {
    fail(
      'publishConcurrency must be an integer from 1 to 50 (the handler refuses more)',
      'publishConcurrency',
    );
  }
  const rate = props.maxPutEventsPerSecond;
  if (rate !== undefined && (!Number.isInteger(rate) || rate < 1 || rate > 10_000)) {
    fail(
      'maxPutEventsPerSecond must be an integer from 1 to 10000, or left out for no cap',
      'maxPutEventsPerSecond',
    );
  }
  for (const [prop, name] of [
    ['pollCursorParam', resolved.pollCursorParam],
    ['pollLimitParam', resolved.pollLimitParam],
  ] as const) {
    if (!isQueryParameterName(name)) {
      fail(`${prop} must be ${QUERY_PARAMETER_EXPECTED}; got ${JSON.stringify(name)}`, prop);
    }
  }
  if (resolved.pollLimitParam === resolved.pollCursorParam) {
    fail(
      `pollLimitParam "${resolved.pollLimitParam}" is also the cursor parameter (pollCursorParam); the two must differ`,
      'pollLimitParam',
    );
  }
  try {
    parseStartPosition(resolved.startPosition, 'startPosition');
  } catch {
    fail(
      `startPosition must be 'beginning', 'latest' or a sequence number of 1 or more; got ${JSON.stringify(resolved.startPosition)}`,
      'startPosition',
    );
  }
  if (resolved.lagThreshold.toSeconds() < 60) fail('lagThreshold must be at least 1 minute', 'lagThreshold');
  // Each completed run sends one CycleDurationMs, in the minute it ends. Ends jitter around one
  // interval apart, so `interval` consecutive minutes can hold none: the window needs a minute
  // more (see "Periods" in poller-alarms.ts).
  const stallMinutes = resolved.stallAfter.toSeconds() / 60;
  if (!Number.isInteger(stallMinutes) || stallMinutes < intervalMinutes + 1) {
    fail(
      `stallAfter must be whole minutes and at least scheduleInterval + 1 minute: set it to ${intervalMinutes + 1} ` +
        'minutes or more, or leave it out for the default, max(5 minutes, 2 × scheduleInterval). A window of ' +
        "exactly one interval misses the run's one data point whenever the run ends a little later than the " +
        'one before across a minute boundary, and raises the stall alarm while the poller is fine.',
      'stallAfter',
    );
  }
}
