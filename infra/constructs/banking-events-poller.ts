import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as scheduler from 'aws-cdk-lib/aws-scheduler';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { assignedWorker } from '../../functions/core/fleet/assignment.ts';
import { AlarmActions } from './alarm-actions.ts';
import { createAlarmTopic } from './alarm-topic.ts';
import type { CustomBusRouting } from './custom-bus-routing.ts';
import type { CustomEventBus } from './custom-event-bus.ts';
import { admitKeyServices, grantKeyThrough } from './encryption-key.ts';
import type { EventRouting, RouteQueues } from './event-routing.ts';
import type { EventSchemas } from './event-schemas.ts';
import { mapRecord } from './map-members.ts';
import {
  grantOperatorPrograms,
  grantOperatorRead,
  grantOperatorRecovery,
  grantOperatorTail,
  type OperatorResources,
} from './operator-grants.ts';
import { PollerAlarms } from './poller-alarms.ts';
import type { IPollerBus, PollerBusStrategy, SourceGuard } from './poller-bus.ts';
import { POLLER_BUS_KINDS } from './poller-bus-kinds.ts';
import { PollerDashboard } from './poller-dashboard.ts';
import { createPollerFunction } from './poller-function.ts';
import { PollerMetrics } from './poller-metrics.ts';
import { addEgressOutput, natPublicIps, PollerVpcEndpoints } from './poller-network.ts';
import type { BankingEventsPollerProps } from './poller-props.ts';
import { LAG_PERIODS, resolvePollerProps } from './poller-props-resolution.ts';
import { createPollerSchedules } from './poller-schedules.ts';
import {
  acknowledgeBackupPlan,
  createCheckpointTable,
  createClaimCheckBucket,
  tableEncryption,
} from './poller-storage.ts';
import { claimSecretsPrefix, programSecretsOf, resolveSecretsPrefix } from './program-secrets.ts';
import { ProgramSeeding } from './program-seeding.ts';
import { createProgramsTable } from './programs-table.ts';
import { createIdempotencyTable, grantClaimCheckRead, grantIdempotencyRecords } from './subscriber-access.ts';

export type { BankingEventsPollerProps, PollerProgram } from './poller-props.ts';

export interface SubscriberGrantOptions {
  /**
   * The subscriber's own idempotency table (partition key `id`, string; TTL on `expiration`).
   *
   * @default - the construct's `SubscriberIdempotencyTable`, created by the first call and shared
   * by every subscriber granted without one
   */
  readonly idempotencyTable?: dynamodb.ITable;
}

/** What a subscriber was granted: pass the table's name to the kit (`idempotency.tableName`). */
export interface SubscriberGrant {
  readonly idempotencyTable: dynamodb.ITable;
}

/**
 * Polls a banking service's event feed on a schedule and publishes every event to EventBridge,
 * with a DynamoDB checkpoint, type-based routing with DLQs, a quarantine for events that fail
 * validation, a claim-check bucket for events too large for the bus, an archive, schemas, alarms
 * and a dashboard. Holds no business logic: the handler does the polling. Composition only: props
 * are in `poller-props.ts` and resolved in `poller-props-resolution.ts` (the settings' defaults come
 * from the settings table), storage in `poller-storage.ts`, the function and its schedules in
 * `poller-function.ts` and `poller-schedules.ts`.
 *
 * @example
 * const poller = new BankingEventsPoller(this, 'Poller', {
 *   programs: [{ name: 'cards' }, { name: 'loans' }],
 *   alarmEmail: 'oncall@example.com',
 * });
 * new events.Rule(this, 'Mine', { eventBus: poller.eventBus, eventPattern: { detailType: ['transaction'] } });
 */
export class BankingEventsPoller extends Construct {
  /** The poller: the prebuilt handler, or a `NodejsFunction` bundling `entry` when one was given. */
  public readonly pollerFunction: lambda.Function;
  public readonly logGroup: logs.LogGroup;
  public readonly checkpointTable: dynamodb.ITable;
  /**
   * The program records, one item per program (partition key `pk`, the name): the props' programs,
   * seeded at every deploy, and those operators add with `banking-events-poller programs add`.
   * Every worker run scans it, so a change counts from the next run, with no deploy.
   */
  public readonly programsTable: dynamodb.Table;
  /**
   * The name path of the deployment's program secrets (`secretsPrefix`): a program without a
   * secret of the stack's reads `<secretsPrefix><program>`, which `secret set --program` writes.
   */
  public readonly secretsPrefix: string;
  /**
   * Program name → the credentials secret the stack created for it or was given
   * (`existingSecret`). A program whose secret is under `secretsPrefix` has none here.
   *
   * A `Map`, for TypeScript; every language has `secretsByProgram`.
   *
   * @jsii ignore
   */
  public readonly secrets: ReadonlyMap<string, secretsmanager.ISecret>;
  /**
   * The bus the poller publishes to, whichever kind (`eventBusKind`): its name and ARN, and the
   * stack outputs the operator CLI reads about it (`bus.addOutputs(stack)`).
   */
  public readonly bus: IPollerBus;
  /**
   * The classic bus the poller publishes to (created, or `existingEventBus`); `undefined` with
   * `eventBusKind: 'custom'` (see `customBus`). A rule given `eventBus: undefined` lands on the
   * account's default bus: on a construct that may be either kind, check it.
   */
  public readonly eventBus?: events.IEventBus;
  /**
   * The classic bus's archive, for replay; `undefined` with `eventBusKind: 'custom'`, whose replays
   * come from the bus's own retention (`busRetention`).
   */
  public readonly archive?: events.Archive;
  /** The classic bus's rules and their queues; `undefined` with `eventBusKind: 'custom'` (see `subscriberRouting`). */
  public readonly routing?: EventRouting;
  /**
   * With `eventBusKind: 'custom'`: the Custom Event Bus the poller publishes to (its events kept
   * for `busRetention`, which is where replays come from), and its subscribers; `undefined` on the
   * classic bus.
   */
  public readonly customBus?: CustomEventBus;
  /**
   * With `eventBusKind: 'custom'`: one subscriber per route, quarantine and catch-all included;
   * `undefined` on the classic bus (see `routing`).
   */
  public readonly subscriberRouting?: CustomBusRouting;
  /**
   * With `eventBusKind: 'custom'`: the role the bus delivers the CLI's `tail` through (its
   * subscriber is created at run time). It may send only to `bep-tail-*` queues; `grantOperatorTail`
   * lets an operator pass it, and `tail --stack` reads it from the `TailDeliveryRoleArn` output.
   * `undefined` on the classic bus.
   */
  public readonly tailDeliveryRole?: iam.Role;
  public readonly schemas: EventSchemas;
  /**
   * The full text of events too large for the bus; grant consumers read access
   * (`claimCheckBucket.grantRead(consumer)`) to follow the pointer events.
   */
  public readonly claimCheckBucket: s3.Bucket;
  /** The workers' schedules: worker `i`'s at index `i`, sending `{"worker": i}`. */
  public readonly workerSchedules: scheduler.Schedule[];
  /**
   * Program name → the schedule of the worker that polls it, for the props' programs (a program's
   * worker follows from its name and `workers` alone). Disabling it stops every program of that
   * worker: to stop one program, pause it (`banking-events-poller programs pause`).
   *
   * A `Map`, for TypeScript; every language has `schedulesByProgram`.
   *
   * @jsii ignore
   */
  public readonly schedules: ReadonlyMap<string, scheduler.Schedule>;
  /** Invocations EventBridge Scheduler could not deliver. */
  public readonly scheduleDeadLetterQueue: sqs.Queue;
  /** The topic alarms notify; `undefined` when `alarmActions` was given. */
  public readonly alarmTopic: sns.ITopic | undefined;
  public readonly alarms: PollerAlarms;
  public readonly dashboard: PollerDashboard;
  /** The VPC endpoints created with `vpcEndpoints`; `undefined` without. */
  public readonly vpcEndpoints: PollerVpcEndpoints | undefined;
  /**
   * The public addresses the function reaches the banking service from: the Elastic IPs of the NAT
   * gateways of `vpc` when it is in the same stack (also the `EgressPublicIps` output); empty
   * otherwise.
   */
  public readonly egressPublicIps: string[];
  readonly #encryptionKey: kms.IKey | undefined;
  /** The bus's strategy: everything that differs between the kinds of bus. */
  readonly #bus: PollerBusStrategy;
  #subscriberIdempotencyTable: dynamodb.Table | undefined;
  /** The bus policy that keeps the poller's source to the poller; none on an existing bus. */
  readonly #sourceGuard: SourceGuard | undefined;

  constructor(scope: Construct, id: string, props: BankingEventsPollerProps = {}) {
    super(scope, id);
    const resolved = resolvePollerProps(props);
    const { programs, scheduleInterval, settings } = resolved;
    const { eventSource } = settings;
    const { encryptionKey } = resolved;
    this.#encryptionKey = encryptionKey;

    this.checkpointTable = props.existingCheckpointTable ?? createCheckpointTable(this, encryptionKey);
    this.programsTable = createProgramsTable(this, encryptionKey);
    this.secretsPrefix = resolveSecretsPrefix(this, settings.secretsPrefix);
    const programSecrets = programSecretsOf(this, programs, {
      create: settings.createProgramSecrets,
      prefix: this.secretsPrefix,
      encryptionKey,
    });
    this.secrets = new Map(
      programSecrets.flatMap(({ name, secret }) => (secret === undefined ? [] : [[name, secret] as const])),
    );
    // The one place the kind is chosen: the bus, its schema registry and its routing, in that order.
    const bus = new POLLER_BUS_KINDS[settings.eventBusKind](this, { props, resolved });
    this.#bus = bus;
    this.bus = bus;
    ({
      eventBus: this.eventBus,
      archive: this.archive,
      routing: this.routing,
      customBus: this.customBus,
      subscriberRouting: this.subscriberRouting,
      tailDeliveryRole: this.tailDeliveryRole,
    } = bus.members);
    this.schemas = bus.schemas;
    this.claimCheckBucket = createClaimCheckBucket(this, {
      retention: resolved.claimCheckRetention,
      encryptionKey,
      accessLogsBucket: resolved.claimCheckAccessLogsBucket,
    });

    const poller = createPollerFunction(this, resolved, {
      checkpointTable: this.checkpointTable,
      programsTable: this.programsTable,
      programSecrets,
      secretsPrefix: this.secretsPrefix,
      bus,
      claimCheckBucket: this.claimCheckBucket,
    });
    this.pollerFunction = poller.pollerFunction;
    this.logGroup = poller.logGroup;
    const { network } = resolved;
    this.vpcEndpoints =
      network?.vpcEndpoints === true
        ? new PollerVpcEndpoints(this, 'VpcEndpoints', network, this.pollerFunction)
        : undefined;
    this.egressPublicIps = network === undefined ? [] : natPublicIps(this, network.vpc);
    addEgressOutput(this, this.egressPublicIps);
    this.#sourceGuard = bus.guardSource(eventSource, poller.role);

    const seeding = new ProgramSeeding(this, 'ProgramSeeding', {
      table: this.programsTable,
      programs: programSecrets,
      encryptionKey,
      logRetention: settings.logRetentionDays as logs.RetentionDays,
    });
    const workers = settings.workerCount;
    const schedules = createPollerSchedules(
      this,
      this.pollerFunction,
      workers,
      scheduleInterval,
      encryptionKey,
    );
    // A worker's first run finds the props' programs in the table.
    for (const schedule of schedules.schedules) schedule.node.addDependency(seeding.resource);
    this.workerSchedules = [...schedules.schedules];
    this.schedules = new Map(
      programs.map((program) => [program.name, schedules.schedules[assignedWorker(program.name, workers)]!]),
    );
    this.scheduleDeadLetterQueue = schedules.deadLetterQueue;

    const metrics = new PollerMetrics(settings.metricsNamespace);
    this.alarmTopic =
      props.alarmActions === undefined
        ? (props.alarmTopic ?? createAlarmTopic(this, encryptionKey))
        : undefined;
    if (encryptionKey !== undefined) {
      admitKeyServices(this, encryptionKey, {
        ...bus.keyServiceUses(),
        logGroups: true,
        alarms: props.alarmActions === undefined && props.alarmTopic === undefined,
      });
    }
    if (settings.alarmEmail !== undefined && this.alarmTopic !== undefined) {
      this.alarmTopic.addSubscription(new subscriptions.EmailSubscription(settings.alarmEmail));
    }
    const programNames = programs.map((program) => program.name);
    const { alarmPlan } = resolved;
    this.alarms = new PollerAlarms(this, 'Alarms', {
      programs: programNames,
      perProgramAlarms: alarmPlan.perProgram,
      perConditionAlarms: alarmPlan.perCondition,
      workers: settings.workerCount,
      metrics,
      pollerFunction: this.pollerFunction,
      scheduleDeadLetterQueue: this.scheduleDeadLetterQueue,
      routes: this.routes,
      scheduleInterval,
      customBus: bus.reportsBrokenOrder,
      lagThreshold: resolved.lagThreshold,
      lagPeriods: LAG_PERIODS,
      gapRepair: settings.gapRepairMaxLookups > 0,
      stallAfter: resolved.stallAfter,
      alarmActions: props.alarmActions ?? AlarmActions.notifySns(this.alarmTopic!),
      runbookUrl: resolved.runbookUrl,
    });
    this.dashboard = new PollerDashboard(this, 'Dashboard', {
      programs: programNames,
      perProgramMetrics: alarmPlan.programMetrics === 'all',
      metrics,
      pollerFunction: this.pollerFunction,
      eventBus: this.eventBus,
      routes: this.routes,
      customBus: bus.reportsBrokenOrder,
      scheduleDeadLetterQueue: this.scheduleDeadLetterQueue,
      alarms: this.alarms.alarms,
      dashboardName: props.dashboardName,
    });
    claimSecretsPrefix(this, this.secretsPrefix);
  }

  /** Every route's queues, whichever kind of bus: routed types, the quarantine, the catch-all. */
  get routes(): RouteQueues[] {
    return this.#bus.routes;
  }

  /** Program name → its credentials secret (`secrets` as a plain object). */
  get secretsByProgram(): { readonly [program: string]: secretsmanager.ISecret } {
    return mapRecord(this.secrets);
  }

  /** Program name → its schedule (`schedules` as a plain object). */
  get schedulesByProgram(): { readonly [program: string]: scheduler.Schedule } {
    return mapRecord(this.schedules);
  }

  /** Console link to the dashboard. */
  get dashboardUrl(): string {
    return this.dashboard.dashboardUrl;
  }

  /**
   * Lets `grantee` publish events with the poller's `source` on the bus, as the CLI's `replay`
   * does from an operator's credentials: `events:PutEvents` on the bus, and an exception in the
   * bus policy that denies that source to everyone but the poller. `grantee` must be an IAM role,
   * user or ARN principal (the policy matches `aws:PrincipalArn`); the Allow goes to its own IAM
   * policy when it has one in this app (a user or role given by ARN needs its own). With
   * `existingEventBus` only the grant is made: add the principal to the bus owner's statement
   * (docs/security.md).
   *
   * @example
   * poller.allowPublishAsPoller(iam.Role.fromRoleName(this, 'Oncall', 'oncall-recovery'));
   */
  allowPublishAsPoller(grantee: iam.IGrantable): iam.Grant {
    this.#sourceGuard?.allow(grantee);
    return this.#bus.grantPublish(grantee);
  }

  /**
   * Lets `grantee` follow claim-check pointers: `s3:GetObject` on the claim-check bucket's objects
   * (nothing else; no listing).
   */
  grantClaimCheckRead(grantee: iam.IGrantable): iam.Grant {
    const grant = grantClaimCheckRead(this.claimCheckBucket, grantee);
    // Reading an SSE-KMS object decrypts its data key, through S3 only.
    const key = this.claimCheckBucket.encryptionKey;
    if (key !== undefined) grantKeyThrough(key, grantee, 's3', ['kms:Decrypt']);
    return grant;
  }

  /**
   * Everything a subscriber built with the subscriber kit needs: read on the claim-check objects
   * and the item actions of Powertools idempotency on an idempotency table, its own
   * (`options.idempotencyTable`) or the construct's shared one, created on first use.
   *
   * @example
   * const grant = poller.grantSubscriber(fn);
   * fn.addEnvironment('IDEMPOTENCY_TABLE', grant.idempotencyTable.tableName);
   */
  grantSubscriber(grantee: iam.IGrantable, options: SubscriberGrantOptions = {}): SubscriberGrant {
    this.grantClaimCheckRead(grantee);
    const idempotencyTable = options.idempotencyTable ?? this.#sharedIdempotencyTable();
    grantIdempotencyRecords(idempotencyTable, grantee);
    if (idempotencyTable.encryptionKey !== undefined) {
      grantKeyThrough(idempotencyTable.encryptionKey, grantee, 'dynamodb');
    }
    return { idempotencyTable };
  }

  /**
   * What the operator CLI's `status`, `jumps list` and `doctor --no-write-probes` call: describe and read the
   * stack, the checkpoint table, the bus (on a Custom Event Bus also its subscribers: listed, and
   * the construct's described), the schedules and the stack's alarms. No write, no
   * secret, no function invocation (doctor's bank checks need `grantOperatorRecovery`). The
   * policies, and which command needs what, are listed in docs/security.md ("Operator permissions").
   *
   * @example
   * poller.grantOperatorRead(iam.Role.fromRoleName(this, 'OnCall', 'on-call'));
   */
  grantOperatorRead(principal: iam.IGrantable): iam.Grant {
    return grantOperatorRead(this, this.#operatorResources(), principal);
  }

  /**
   * What `tail` calls: a temporary rule on the bus and a queue, both named `bep-tail-…` (the rule
   * may target only such a queue), read and removed when it stops; on a Custom Event Bus a
   * subscriber named `bep-tail-…` instead of the rule, and `iam:PassRole` on `tailDeliveryRole`
   * only. Apart from read because it writes, and shows the events themselves.
   */
  grantOperatorTail(principal: iam.IGrantable): iam.Grant {
    return grantOperatorTail(this, this.#operatorResources(), principal);
  }

  /**
   * What `rewind`, `jumps accept|reject`, `replay`, `event`, `archive-replay` and `secret set` call: `GetItem` and
   * `UpdateItem` on the checkpoint table, `lambda:InvokeFunction` on the poller (operator requests
   * run inside it, with the secret it holds), `s3:GetObject` on `operator-answers/*` of the
   * claim-check bucket (where the poller leaves an answer too large to return; not the events'
   * bodies), describing the bus and archive and starting and
   * following an archive replay to the bus, and `PutSecretValue` on the programs' secrets. Never
   * `GetSecretValue`. On a Custom Event Bus, instead of the archive: describing the bus and its
   * subscribers, creating point-in-time copies named `bep-replay-…`, and `iam:PassRole` (to
   * EventBridge) on the construct's subscribers' delivery roles only.
   */
  grantOperatorRecovery(principal: iam.IGrantable): iam.Grant {
    return grantOperatorRecovery(this, this.#operatorResources(), principal);
  }

  /**
   * What `banking-events-poller programs add | pause | resume | remove` and `secret set --program`
   * call: `GetItem`, `PutItem` and `DeleteItem` on the programs table (each write conditional on
   * the revision read), and on the secrets under `secretsPrefix` only `CreateSecret` (with its
   * tags) and `PutSecretValue`: never `GetSecretValue`. `programs list` needs only
   * `grantOperatorRead`.
   *
   * @example
   * poller.grantOperatorPrograms(iam.Role.fromRoleName(this, 'Platform', 'platform-admin'));
   */
  grantOperatorPrograms(principal: iam.IGrantable): iam.Grant {
    return grantOperatorPrograms(
      this,
      { ...this.#operatorResources(), encryptionKey: this.#encryptionKey },
      principal,
    );
  }

  #operatorResources(): OperatorResources {
    return {
      checkpointTable: this.checkpointTable,
      programsTable: this.programsTable,
      secretsPrefix: this.secretsPrefix,
      bus: this.#bus,
      secrets: this.secrets,
      schedules: this.workerSchedules,
      pollerFunction: this.pollerFunction,
      claimCheckBucket: this.claimCheckBucket,
    };
  }

  #sharedIdempotencyTable(): dynamodb.Table {
    // Logical id pinned by a test: a new id would replace the table and forget every handled event.
    if (this.#subscriberIdempotencyTable === undefined) {
      this.#subscriberIdempotencyTable = createIdempotencyTable(
        this,
        'SubscriberIdempotencyTable',
        tableEncryption(this.#encryptionKey),
      );
      acknowledgeBackupPlan(this.#subscriberIdempotencyTable);
    }
    return this.#subscriberIdempotencyTable;
  }
}
