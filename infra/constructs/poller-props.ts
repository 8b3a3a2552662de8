/**
 * The construct's props: the public API, every optional prop with its `@default`. The defaults of
 * the props that are settings come from the settings table (`functions/settings/settings.ts`; a
 * test checks each `@default` here against it); `poller-props-resolution.ts` applies them.
 */
import type { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as events from 'aws-cdk-lib/aws-events';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { IAlarmActionStrategy } from './alarm-actions.ts';
import type { EventRouteOptions } from './event-routing.ts';
import type { EventBusKind, EventGroupBy, FeedMode, StartPosition, StreamRecovery } from './prop-values.ts';

/**
 * One feed of the banking service, owned by the stack: a record of the programs table that every
 * deploy seeds (an operator may pause it, not remove it), with its own credentials and checkpoint row.
 */
export interface PollerProgram {
  /**
   * The program's name: its record's key, its checkpoint row's and the `Program` metric dimension.
   * Letters, digits, `.`, `_` and `-`, at most 64 characters.
   */
  readonly name: string;
  /**
   * A secret that already holds `{"base_url", "client_id", "client_secret"}`. When it is encrypted
   * with a customer-managed key, import it with that key
   * (`Secret.fromSecretAttributes(this, id, { secretCompleteArn, encryptionKey })`): the function
   * is then granted `kms:Decrypt` on the key through Secrets Manager.
   *
   * @default - a secret is created with a placeholder value (set it before the first tick); with
   * `createProgramSecrets: false`, the secret `<secretsPrefix><name>` (set it with
   * `banking-events-poller secret set --program <name>`)
   */
  readonly existingSecret?: secretsmanager.ISecret;
}

/** Gap repair: how skipped sequence numbers are looked up (`GET /event/sequence/:n`). */
export interface GapRepairOptions {
  /**
   * Single-event lookups per invocation, first looks and re-checks alike (`GAP_REPAIR_MAX_LOOKUPS`),
   * 0 to 10000. 0 turns repair off: skipped numbers are then only recorded, and the skipped-numbers
   * alarm watches `SequenceGaps` instead of `GapsUnfilled`.
   *
   * @default 100
   */
  readonly maxLookups?: number;
  /**
   * How long a skipped number is looked up again, as its age doubles (1, 2, 4 … seconds, at most
   * a minute apart), before it is given up and counted in `GapsUnfilled` (`GAP_REPAIR_GRACE_SECONDS`).
   * Whole seconds, at most 24 hours (the feed's retention).
   *
   * @default Duration.minutes(5)
   */
  readonly gracePeriod?: Duration;
}

export interface BankingEventsPollerProps {
  /**
   * The stack's programs: seeded into the programs table at every deploy, beside those operators
   * add with `banking-events-poller programs add`. The first is the handler's default program.
   *
   * @default [{ name: 'default' }]
   */
  readonly programs?: PollerProgram[];
  /**
   * Workers sharing the programs (`WORKER_COUNT`), 1 to 100: one schedule each, sending
   * `{"worker": i}`; each polls the active programs that rendezvous hashing assigns it, up to
   * `maxConcurrentPrograms` at once. Changing it moves only the programs that must move, each
   * handed over through its lease.
   *
   * @default 1
   */
  readonly workers?: number;
  /**
   * Programs a worker polls at once (`MAX_CONCURRENT_PROGRAMS`), 1 to 1000, each with its own
   * connections and share of the function's memory; beyond it they take turns within a run.
   *
   * @default 50
   */
  readonly maxConcurrentPrograms?: number;
  /**
   * The name path of the deployment's program secrets (`SECRETS_PREFIX`): `<secretsPrefix><program>`
   * is where `banking-events-poller secret set --program` writes a program's credentials, and the
   * function may read the secrets under it and no others but those the props name. Ends with `/`.
   *
   * @default - `banking-events-poller/<stack name>/`
   */
  readonly secretsPrefix?: string;
  /**
   * Whether a program of `programs` without `existingSecret` gets a secret created in the stack
   * (`Secret<Program>`, as before). `false`: it reads `<secretsPrefix><name>` instead, and the
   * template holds no resource per program (the flat template for many programs). Switching an
   * existing stack to `false` deletes the secrets it created: copy their values first.
   *
   * @default true
   */
  readonly createProgramSecrets?: boolean;
  /**
   * Alarms of their own for each program of `programs` (lag, stall, failed entries, sequence gaps,
   * sequence jumps, lease busy, oversize pages; order broken on the custom bus), as before, and their
   * rows on the dashboard. They add seven or eight resources per program, and the alarms over every program
   * leave those programs out; those alarms name the program either way.
   *
   * @default - on with at most 5 programs in `programs`, off above
   */
  readonly perProgramAlarms?: boolean;
  /**
   * The `source` of every published event.
   *
   * @default 'banking.events'
   */
  readonly eventSource?: string;
  /**
   * How often each worker's schedule fires: whole minutes, 1 to 14.
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
   * Function memory in MiB. Lambda gives CPU in proportion to memory, and a catch-up after an
   * outage is CPU-bound: at 256 a 1-hour backlog at 50 events/s drains in about two minutes, at
   * 512 in about one (docs/performance.md, "Sizing"). Caught up, more memory changes nothing.
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
   * carries up to 10 events on the classic bus, up to 100 on the Custom Event Bus.
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
  readonly startPosition?: StartPosition | 'beginning' | 'latest' | number;
  /**
   * With `startPosition` `'latest'`, until a run of a program has recorded where the feed ended
   * (`START_CLOCK_SKEW_ALLOWANCE_SECONDS`): how far behind ours the bank's clock may be. Events
   * whose `created_dt` is up to this long before the program's first run are published, so none
   * created after it is taken for backlog. Once a run has recorded where the feed ended, sequence
   * numbers decide and no clock does. 0 to 24 hours, whole seconds.
   *
   * @default Duration.minutes(10)
   */
  readonly startClockSkewAllowance?: Duration;
  /**
   * How the handler reads the feed (`FEED_MODE`): `'poll'` long-polls `GET /events`; `'stream'`
   * reads `GET /events/stream` (SSE) and falls back to polls when the service has no stream or
   * its payloads cannot be read. docs/decisions/poll-or-stream.md compares them, measured: poll is as
   * fast against a service that sends the documented stream payloads, and makes fewer requests.
   *
   * @default 'poll'
   */
  readonly feedMode?: FeedMode | 'poll' | 'stream';
  /**
   * Stream mode only: how a transaction whose `data.type` the stream may have replaced is fetched
   * before it is published (`STREAM_RECOVERY`): `'page'` reads `GET /events` from the cursor (the
   * stream acts as a doorbell); `'lookup'` fetches each one with `GET /event/:id`.
   *
   * @default 'page': the same latency as lookups, with far fewer requests (docs/decisions/poll-or-stream.md)
   */
  readonly streamRecovery?: StreamRecovery | 'page' | 'lookup';
  /**
   * Stream mode only: how long a micro-batch waits for more events while earlier ones are still
   * being published (`STREAM_LINGER_MS`), 0 to 1 second; it never waits when nothing is in flight.
   *
   * @default Duration.millis(100)
   */
  readonly streamLinger?: Duration;
  /**
   * Stream mode only: the `GET /events/stream` query parameter carrying the starting point
   * (`STREAM_CURSOR_PARAM`). Same form as `pollCursorParam`.
   *
   * @default 'last_sequence_number'
   */
  readonly streamCursorParam?: string;
  /**
   * Gap repair: skipped sequence numbers are looked up at once and again during a grace period,
   * and an event found is published late. The checkpoint never waits on them (`openGaps` records
   * them with it).
   *
   * @default - 100 lookups per invocation, a 5-minute grace period
   */
  readonly gapRepair?: GapRepairOptions;
  /**
   * The most a sequence number may lie above the one before it (`MAX_SEQUENCE_JUMP`), 10 or more.
   * An event beyond is held, not trusted: quarantined once as an `invalid_event` with the code
   * `SEQUENCE_JUMP_HELD`, events with lower numbers still published, the checkpoint kept below it
   * and the sequence-jumps alarm raised, until an operator accepts or rejects the jump
   * (`banking-events-poller jumps`). Skipped numbers within it are ordinary gaps.
   *
   * @default 100000
   */
  readonly maxSequenceJump?: number;
  /**
   * The largest PutEvents entry the handler sends, in bytes (`MAX_EVENT_ENTRY_BYTES`), 1024 to
   * 1,048,576 (the bus's cap). A larger event, or one the bus refuses for its size, goes through
   * the claim check: stored in `claimCheckBucket`, a pointer published in its place.
   *
   * @default 1_000_000: EventBridge's 1 MiB cap (raised from 256 KB in January 2026) less room for
   * the envelope the bus wraps each event in when it delivers it to a 1 MiB SQS or Lambda target
   */
  readonly maxEventEntryBytes?: number;
  /**
   * How long the claim-check bucket keeps an event's body before it expires (whole days).
   *
   * @default Duration.days(30)
   */
  readonly claimCheckRetention?: Duration;
  /**
   * The quarantine route: events that failed validation, published as `invalid_event`.
   *
   * @default - a queue, with an alarm as soon as anything arrives in it
   */
  readonly quarantine?: EventRouteOptions;
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
   * A handler entry file to bundle at synth instead of the prebuilt handler: an escape hatch for a
   * custom build. The function then is a `NodejsFunction` bundled with this package's esbuild
   * settings, which needs esbuild installed in your app.
   *
   * @default - the handler prebuilt into this package (`dist/assets/poller`): no bundler runs at synth
   */
  readonly entry?: string;
  /**
   * A customer-managed key for every store the construct creates: the checkpoint table, the
   * secrets, the route, quarantine, unrouted and schedule dead-letter queues, the claim-check
   * bucket (SSE-KMS with a bucket key), the bus and its archive, the log group, the alarm topic and
   * the subscriber idempotency table. When the key is in the same app its policy gets a statement
   * for each service that uses it on the construct's behalf (EventBridge, CloudWatch Logs,
   * CloudWatch alarms), each scoped to this deployment by source account and source ARN; the
   * function and scheduler roles get `kms:Decrypt`/`kms:GenerateDataKey` only through the
   * services they call (`kms:ViaService`). An imported key's policy cannot be changed from here:
   * synth warns, and docs/deploy.md ("Deploying in a regulated environment") lists the statements to add.
   *
   * @default - AWS-managed and AWS-owned keys, as before (the alarm topic keeps its own key)
   */
  readonly encryptionKey?: kms.IKey;
  /**
   * The VPC to run the function in. Its traffic to the banking service then leaves through the
   * VPC's NAT gateways, whose Elastic IPs are the addresses a bank can allowlist (a stack output
   * names them when the VPC is in the same stack).
   *
   * @default - the function runs outside any VPC
   */
  readonly vpc?: ec2.IVpc;
  /**
   * Where in `vpc` the function runs. Only with `vpc`.
   *
   * @default - the VPC's private subnets with egress (`SubnetType.PRIVATE_WITH_EGRESS`)
   */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /**
   * The function's security groups. Only with `vpc`.
   *
   * @default - one security group that allows all outbound traffic and no inbound
   */
  readonly securityGroups?: ec2.ISecurityGroup[];
  /**
   * Adds VPC endpoints so the function's AWS calls stay in the VPC: gateway endpoints for
   * DynamoDB and S3, interface endpoints (private DNS) for Secrets Manager and EventBridge behind a
   * security group that admits the function alone on 443. Leave it off when the VPC already has
   * them (a second gateway endpoint for the same route tables fails to deploy). Only with `vpc`.
   *
   * @default false
   */
  readonly vpcEndpoints?: boolean;
  /**
   * Concurrent executions reserved for the function (and at most that many). A worker's run holds
   * its programs' leases while the next tick's run waits for them, so with n workers 2n covers the
   * hand-over; at least `workers`.
   *
   * @default - unreserved: the function shares the account's unreserved concurrency
   */
  readonly reservedConcurrency?: number;
  /**
   * A bucket for the claim-check bucket's server access logs (it must accept S3 log delivery:
   * SSE-S3, with a bucket policy for `logging.s3.amazonaws.com`, which CDK adds to a bucket of
   * the same app).
   *
   * @default - no server access logs (CloudTrail data events are the alternative)
   */
  readonly claimCheckAccessLogsBucket?: s3.IBucket;
  /**
   * A checkpoint table with a string partition key `pk`.
   *
   * @default - an on-demand table with point-in-time recovery, retained on stack deletion
   */
  readonly existingCheckpointTable?: dynamodb.ITable;
  /**
   * A classic bus to publish to (not with `eventBusKind: 'custom'`).
   *
   * @default - a classic event bus is created (with `eventBusKind: 'custom'`, a Custom Event Bus)
   */
  readonly existingEventBus?: events.IEventBus;
  /**
   * Name of the bus this construct creates. Not allowed with `existingEventBus`.
   *
   * @default - generated by CloudFormation
   */
  readonly eventBusName?: string;
  /**
   * Which kind of bus: `'classic'` (rules and targets; at-least-once, unordered) or `'custom'`, the
   * EventBridge Custom Event Bus (`AWS::EventsV2::EventBus`): each route becomes a subscriber,
   * unordered unless the route sets `ordered: true` (then a FIFO subscriber onto a FIFO queue, in
   * order within each event group), duplicates dropped at publish, and replay from the bus's own
   * retention. Ordered per account, end to end: docs/ordered-per-account.md.
   *
   * @default 'classic'
   */
  readonly eventBusKind?: EventBusKind | 'classic' | 'custom';
  /**
   * Custom bus only: the event group a FIFO subscriber keeps in order. `'program'`: the program's
   * whole feed; `'account'`: each account's status changes, and each transaction's own lifecycle
   * (a transaction names two addresses, not one account); `'none'`: no order.
   *
   * @default 'program'
   */
  readonly eventGroupBy?: EventGroupBy | 'program' | 'account' | 'none';
  /**
   * Custom bus only: how long the bus keeps every event (1 to 365 days), for subscribers and
   * replays that start from a point in time.
   *
   * @default Duration.days(14)
   */
  readonly busRetention?: Duration;
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
   * The stall alarm over every program reads 3 hours at most: past that, it counts 3 hours of runs.
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
   * @default 'docs/runbook.md' (this repository's runbook)
   */
  readonly runbookUrl?: string;
}
