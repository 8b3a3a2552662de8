/**
 * Every setting of the poller, declared once. One declaration answers the questions about its
 * setting: what it does (`doc`), its default (`default`, or `whenAbsent`), where it acts
 * (`actsIn`: the module and export that apply the value, `path#Export`; a test checks each
 * exists), and where it can be set: the handler's environment variable (`env`), the app's
 * context key (`context`), the construct's prop (`prop`), the operator CLI's flag (`cli`).
 *
 * How a value travels to where it acts, the same for every setting: an `env` variable is parsed
 * by `readEnvironment` (`environment.ts`) inside `loadPollerConfig` (`functions/poller/poller-config.ts`),
 * and the handler (`functions/poller/handler.ts`) hands it to the module of `actsIn`; a `cli`
 * flag is parsed by `functions/cli/setting-options.ts`; a `context` key by `infra/app-config.ts`,
 * which passes it on as the prop; a `prop` is resolved by `infra/constructs/setting-props.ts`
 * and, where the setting has an `env` variable, written into the function's environment by
 * `writeEnvironment` (`createPollerFunction`).
 *
 * Also derived from this table: cdk.json's defaults, the construct's validation and the
 * configuration tables of docs/configuration.md (`npm run generate:docs`). Rules between
 * settings are in `setting-rules.ts`.
 *
 * Order matters twice: the function's environment lists its variables in this order, and the
 * docs tables list their rows in it.
 *
 * The defaults of the settings the core also reads (budget, lease, publishing, stream, gap repair)
 * are the core's own constants (`CYCLE_DEFAULTS.safetyMarginMs`, literal types, so an editor
 * shows the number): the core runs without this table (the CLI, tests), and the value is still
 * written once. docs/configuration.md shows every default as a number.
 */

import { SECRETS_PREFIX_EXPECTED, SECRETS_PREFIX_PATTERN } from '../adapters/aws/program-secret-scope.ts';
import {
  DEFAULT_MAX_ENTRY_BYTES,
  MIN_MAX_ENTRY_BYTES,
  PUT_EVENTS_MAX_BYTES,
} from '../adapters/aws/put-events-limits.ts';
import { PROGRAM_METRICS_PLANS } from '../adapters/observability/metric-plan.ts';
import { KNOWN_EVENT_TYPES } from '../core/banking-event.ts';
import { CYCLE_DEFAULTS, FEED_MODES } from '../core/cycle/cycle-options.ts';
import { EVENT_GROUP_BYS } from '../core/event-groups.ts';
import { MAX_WORKERS } from '../core/fleet/assignment.ts';
import { GAP_REPAIR_DEFAULTS } from '../core/gap-repair.ts';
import {
  PROGRAM_NAME_EXPECTED,
  PROGRAM_NAME_PATTERN,
  QUERY_PARAMETER_EXPECTED,
  QUERY_PARAMETER_PATTERN,
} from '../core/name-rules.ts';
import { PUBLISH_DEFAULTS } from '../core/publish-pipeline.ts';
import { SEQUENCE_JUMP_DEFAULTS } from '../core/sequence-jumps.ts';
import { START_POSITION_DEFAULTS } from '../core/start-position.ts';
import { STREAM_RECOVERIES } from '../core/stream/stream-recovery.ts';
import { type Setting, setting } from './setting.ts';
import {
  flag,
  integer,
  oneOf,
  rateExpression,
  startPosition,
  structured,
  text,
  type ValueKind,
} from './value-kinds.ts';

/** The program a deployment without `programs` polls, and the one an invocation naming none polls. */
const DEFAULT_PROGRAM = 'default';
/** The banking interface's own name for the cursor, in polls and in the stream. */
const CURSOR_PARAMETER = 'last_sequence_number';

const queryParameter = text(QUERY_PARAMETER_PATTERN, QUERY_PARAMETER_EXPECTED);
const nonEmpty = (expected: string) => text(/\S/, expected);

/** CloudWatch Logs accepts only these retention periods; 9999 is CDK's `RetentionDays.INFINITE`. */
const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
  9999,
] as const;

const scheduleMinutes = integer({ min: 1, max: 14, unit: 'minutes' });

export const SETTINGS = {
  stackName: setting(text(/^[A-Za-z][A-Za-z0-9-]{0,127}$/, 'a CloudFormation stack name'), {
    doc: 'CloudFormation stack name; change it to deploy a second copy',
    default: 'BankingEventsPoller',
    actsIn: ['infra/poller-app.ts#createPollerApp'],
    context: { key: 'stackName' },
  }),
  programs: setting(
    structured('a non-empty array of {"name", "secretArn"?, "secretName"?, "secretKeyArn"?}'),
    {
      doc:
        'Programs to poll: `name` (letters, digits, `.`, `_`, `-`), optional `secretArn` or `secretName` of an ' +
        'existing secret, and `secretKeyArn`, the customer-managed KMS key it is encrypted with (the function ' +
        "is granted kms:Decrypt on it through Secrets Manager). The first is the handler's default program",
      default: [{ name: DEFAULT_PROGRAM }],
      actsIn: [
        'infra/constructs/poller-schedules.ts#createPollerSchedules',
        'infra/constructs/poller-storage.ts#createProgramSecret',
        'infra/constructs/poller-alarms.ts#PollerAlarms',
      ],
      context: { key: 'programs' },
      prop: { name: 'programs' },
    },
  ),
  defaultProgram: setting(text(PROGRAM_NAME_PATTERN, PROGRAM_NAME_EXPECTED), {
    doc: 'Program polled when the invocation names none; the construct sets the first of its programs',
    default: DEFAULT_PROGRAM,
    actsIn: ['functions/poller/poller-config.ts#resolveInvocationTarget'],
    env: { name: 'DEFAULT_PROGRAM', deployed: 'computed' },
  }),
  secretId: setting(nonEmpty("the Secrets Manager id or ARN of the default program's credentials secret"), {
    doc: 'Secrets Manager id or ARN of `{"base_url", "client_id", "client_secret"}`: the secret of `DEFAULT_PROGRAM`',
    actsIn: [
      'functions/poller/poller-config.ts#loadPollerConfig',
      'functions/adapters/aws/secrets-manager-credentials.ts#SecretsManagerCredentialsProvider',
    ],
    env: { name: 'SECRET_ID', required: true, deployed: 'resource' },
  }),
  programSecrets: setting(structured('a JSON object {"<program>": "<secret id or ARN>"}'), {
    doc: 'JSON object binding every other program to its secret: `{"loans": "arn:…"}`',
    whenAbsent: 'the default program only',
    actsIn: ['functions/poller/poller-config.ts#resolveInvocationTarget'],
    env: { name: 'PROGRAM_SECRETS', deployed: 'computed' },
  }),
  programsTable: setting(nonEmpty('the DynamoDB table holding the program records (partition key "pk")'), {
    doc:
      "DynamoDB table of the program records (the CLI's programs commands), partition key `pk` (string), " +
      'read at every worker run',
    whenAbsent: 'no registry: a worker polls the programs of `SECRET_ID` and `PROGRAM_SECRETS`',
    actsIn: [
      'functions/adapters/aws/dynamodb-program-registry.ts#DynamoDbProgramRegistry',
      'functions/poller/handler.ts#handler',
      'infra/constructs/programs-table.ts#createProgramsTable',
    ],
    env: { name: 'PROGRAMS_TABLE', deployed: 'resource' },
  }),
  secretsPrefix: setting(text(SECRETS_PREFIX_PATTERN, SECRETS_PREFIX_EXPECTED), {
    doc:
      "Name path of the deployment's program secrets (`<prefix><program>`, what `secret set --program` writes): " +
      "the function may read the secrets under it, and a program record's secret must be under it or one of " +
      "the stack's own",
    whenAbsent:
      'the construct derives `banking-events-poller/<stack name>/`; the handler without it takes only the ' +
      'secrets of `SECRET_ID` and `PROGRAM_SECRETS`',
    actsIn: [
      'functions/adapters/aws/program-secret-scope.ts#ProgramSecretScope',
      'infra/constructs/program-secrets.ts#resolveSecretsPrefix',
    ],
    env: { name: 'SECRETS_PREFIX', deployed: 'computed' },
    context: { key: 'secretsPrefix', none: '' },
    prop: { name: 'secretsPrefix' },
  }),
  workerCount: setting(integer({ min: 1, max: MAX_WORKERS }), {
    doc:
      'Workers sharing the programs: the schedule of worker `i` sends `{"worker": i}`, and it polls the active ' +
      'programs that rendezvous hashing assigns it',
    default: 1,
    actsIn: [
      'functions/core/fleet/assignment.ts#assignedWorker',
      'functions/poller/poller-config.ts#resolveWorkerInvocation',
      'infra/constructs/poller-schedules.ts#createPollerSchedules',
    ],
    env: { name: 'WORKER_COUNT' },
    context: { key: 'workers' },
    prop: { name: 'workers' },
  }),
  maxConcurrentPrograms: setting(integer({ min: 1, max: 1_000 }), {
    doc:
      "Programs a worker polls at once, each with its own connections and share of the function's memory; " +
      'more programs take turns, each for a share of the run',
    default: 50,
    actsIn: ['functions/core/fleet/worker-run.ts#runWorker'],
    env: { name: 'MAX_CONCURRENT_PROGRAMS' },
    context: { key: 'maxConcurrentPrograms' },
    prop: { name: 'maxConcurrentPrograms' },
  }),
  createProgramSecrets: setting(flag(), {
    doc:
      'A secret in the stack for each program of `programs` without its own (`Secret<Program>`, as before); ' +
      '`false`: such a program reads `<secretsPrefix><name>` (set it with `secret set --program`) and the ' +
      'template holds no resource per program',
    default: true,
    actsIn: ['infra/constructs/program-secrets.ts#programSecretsOf'],
    context: { key: 'createProgramSecrets' },
    prop: { name: 'createProgramSecrets' },
  }),
  perProgramAlarms: setting(flag(), {
    doc:
      'Seven alarms per program of `programs` (eight on the custom bus), each named for its program, left out ' +
      "of the deployment's alarms over every program, which name the program either way",
    whenAbsent: 'on with at most 5 programs in `programs`, off above',
    actsIn: ['infra/constructs/poller-props-resolution.ts#resolvePollerProps'],
    context: { key: 'perProgramAlarms', none: '' },
    prop: { name: 'perProgramAlarms' },
  }),
  checkpointTable: setting(nonEmpty('the DynamoDB table holding checkpoints (partition key "pk")'), {
    doc: 'DynamoDB table holding the checkpoints, partition key `pk` (string)',
    actsIn: ['functions/adapters/aws/dynamodb-checkpoint-store.ts#DynamoDbCheckpointStore'],
    env: { name: 'CHECKPOINT_TABLE', required: true, deployed: 'resource' },
  }),
  eventBus: setting(nonEmpty('the name or ARN of the EventBridge bus to publish to'), {
    doc:
      'Name or ARN of the bus to publish to; with `EVENT_BUS_KIND=custom`, the ARN of the Custom Event Bus ' +
      '(`arn:aws:events:<region>:<account>:event-busv2/<name>/<id>`: that API takes no name)',
    actsIn: [
      'functions/adapters/aws/eventbridge-publisher.ts#EventBridgePublisher',
      'functions/adapters/aws/eventbridgev2/custom-bus-publisher.ts#CustomBusPublisher',
    ],
    env: { name: 'EVENT_BUS_NAME', required: true, deployed: 'resource' },
  }),
  eventSource: setting(
    text(
      /^(?!aws\.)[A-Za-z0-9._\-/]{1,256}$/,
      'an EventBridge source of letters, digits, ".", "_", "-" and "/", at most 256 (not starting with "aws.")',
    ),
    {
      doc: '`source` of every published event',
      default: 'banking.events',
      actsIn: [
        'functions/adapters/aws/eventbridge-publisher.ts#EventBridgePublisher',
        'infra/constructs/event-routing.ts#EventRouting',
        'infra/constructs/poller-source-guard.ts#PollerSourceGuard',
      ],
      env: { name: 'EVENT_SOURCE' },
      context: { key: 'eventSource' },
      prop: { name: 'eventSource' },
    },
  ),
  scheduleRateMinutes: setting(scheduleMinutes, {
    doc: "How often each program's schedule fires, in whole minutes; the function timeout follows it",
    default: 1,
    actsIn: [
      'infra/constructs/poller-schedules.ts#createPollerSchedules',
      'infra/constructs/handover-timing.ts#overlappingTimeout',
    ],
    context: { key: 'scheduleRate', kind: rateExpression(scheduleMinutes) },
    prop: { name: 'scheduleInterval', duration: true },
  }),
  routes: setting(
    structured('an object mapping event type → {"maxEventAgeSeconds"?, "retryAttempts"?, "ordered"?}'),
    {
      doc:
        'Event type → queue. Per route, optional `maxEventAgeSeconds` (60–86400, default 86400) and ' +
        '`retryAttempts` (0–185, default 185) for EventBridge delivery, and `ordered` (custom bus only: a FIFO ' +
        'subscriber onto a FIFO queue, in order within each event group)',
      default: Object.fromEntries(KNOWN_EVENT_TYPES.map((type): [string, object] => [type, {}])),
      actsIn: [
        'infra/constructs/event-routing.ts#EventRouting',
        'infra/constructs/custom-bus-routing.ts#CustomBusRouting',
      ],
      context: { key: 'routes' },
      prop: { name: 'routes' },
    },
  ),
  lagThresholdSeconds: setting(integer({ min: 60, unit: 'seconds' }), {
    doc: "`LagSeconds` above this for 3 consecutive schedule intervals raises a program's lag alarm",
    default: 300,
    actsIn: ['infra/constructs/poller-alarms.ts#PollerAlarms'],
    context: { key: 'lagThresholdSeconds' },
    prop: { name: 'lagThreshold', duration: true },
  }),
  alarmEmail: setting(text(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'an email address'), {
    doc: 'Subscribes this address to the alarm topic (confirm the email AWS sends)',
    whenAbsent: 'none',
    actsIn: ['infra/constructs/banking-events-poller.ts#BankingEventsPoller'],
    context: { key: 'alarmEmail', none: '' },
    prop: { name: 'alarmEmail' },
  }),
  archiveRetentionDays: setting(integer({ min: 0, max: 36_500, unit: 'days' }), {
    doc: 'How long the archive keeps events for replay; `0` keeps them forever',
    default: 30,
    actsIn: ['infra/constructs/classic-poller-bus.ts#ClassicPollerBus'],
    context: { key: 'archiveRetentionDays' },
    prop: { name: 'archiveRetention', duration: true },
  }),
  logRetentionDays: setting(oneOf(LOG_RETENTION_DAYS, 'CloudWatch Logs periods; 9999 keeps them forever'), {
    doc: "Retention of the function's log group, in days",
    default: 30,
    actsIn: ['infra/constructs/poller-function.ts#createPollerFunction'],
    context: { key: 'logRetentionDays' },
    prop: { name: 'logRetention' },
  }),
  eventBusName: setting(text(/^[A-Za-z0-9._-]{1,256}$/, 'an event bus name'), {
    doc: 'Name of the bus to create; leave it out when publishing to an existing bus',
    whenAbsent: 'a name generated by CloudFormation',
    actsIn: [
      'infra/constructs/classic-poller-bus.ts#ClassicPollerBus',
      'infra/constructs/custom-poller-bus.ts#CustomPollerBus',
    ],
    context: { key: 'eventBusName', default: 'banking-events', none: '' },
    prop: { name: 'eventBusName' },
  }),
  existingEventBusArn: setting(
    text(
      /^arn:aws[a-z-]*:events:[a-z0-9-]+:\d{12}:event-bus\/[A-Za-z0-9._-]+$/,
      'the ARN of an existing event bus',
    ),
    {
      doc: 'Publish to this existing bus instead of creating one (then set `eventBusName` to `""`)',
      whenAbsent: 'none (a bus is created)',
      actsIn: ['infra/poller-stack.ts#PollerStack'],
      context: { key: 'existingEventBusArn', none: '' },
    },
  ),
  eventBusKind: setting(oneOf(['classic', 'custom'] as const), {
    doc:
      'Which kind of bus: `classic` (rules and targets; at-least-once, unordered) or `custom`, the ' +
      'EventBridge Custom Event Bus (subscribers; FIFO per event group, duplicates dropped at publish, ' +
      'retention and replay from it)',
    default: 'classic',
    actsIn: [
      'functions/poller/bus-kinds.ts#HANDLER_BUS_KINDS',
      'infra/constructs/poller-bus-kinds.ts#POLLER_BUS_KINDS',
    ],
    // Written for the custom bus only: a classic function's environment stays as it was before
    // the setting existed (the handler's default is classic).
    env: { name: 'EVENT_BUS_KIND', deployed: 'computed' },
    context: { key: 'eventBusKind' },
    prop: { name: 'eventBusKind' },
  }),
  eventGroupBy: setting(oneOf(EVENT_GROUP_BYS), {
    doc:
      "Custom bus only: the event group a FIFO subscriber keeps in order: the program's whole feed, each " +
      "account's status changes and each transaction's own lifecycle (`account`), or no order (`none`)",
    default: 'program',
    customBusOnly: true,
    // The construct's part: an ordered route needs a group.
    actsIn: [
      'functions/core/event-groups.ts#eventGroupOf',
      'infra/constructs/custom-bus-routing.ts#CustomBusRouting',
    ],
    env: { name: 'EVENT_GROUP_BY' },
    context: { key: 'eventGroupBy' },
    prop: { name: 'eventGroupBy' },
  }),
  busRetentionDays: setting(integer({ min: 1, max: 365, unit: 'days' }), {
    doc: 'Custom bus only: how long the bus keeps every event, for subscribers that start from a point in time',
    default: 14,
    customBusOnly: true,
    actsIn: ['infra/constructs/custom-event-bus.ts#CustomEventBus'],
    context: { key: 'busRetentionDays' },
    prop: { name: 'busRetention', duration: true },
  }),
  serviceName: setting(text(/^\S{1,255}$/, 'a service name'), {
    doc: 'The `service` of every log line, and a dimension of every metric',
    default: 'banking-events-poller',
    actsIn: ['functions/poller/handler.ts#handler', 'infra/constructs/poller-metrics.ts#PollerMetrics'],
    env: { name: 'POWERTOOLS_SERVICE_NAME', deployed: 'fixed', readBy: 'powertools' },
  }),
  metricsNamespace: setting(
    text(
      /^[A-Za-z0-9 ._\-/#:]{1,255}$/,
      'a CloudWatch namespace: letters, digits, spaces, ".", "_", "-", "/", "#" and ":", at most 255',
    ),
    {
      doc: "CloudWatch namespace of the handler's metrics",
      default: 'BankingEventsPoller',
      actsIn: ['functions/poller/handler.ts#handler', 'infra/constructs/poller-metrics.ts#PollerMetrics'],
      env: { name: 'POWERTOOLS_METRICS_NAMESPACE', readBy: 'powertools' },
      context: { key: 'metricsNamespace' },
      prop: { name: 'metricsNamespace' },
    },
  ),
  programMetrics: setting(oneOf(PROGRAM_METRICS_PLANS), {
    doc:
      "Which of a program's metrics carry its `Program` dimension: `all` (every metric, for per-program alarms) or " +
      '`alarmed` (only what the per-condition alarms read, while it is not 0; every metric also for the whole ' +
      'deployment). The construct writes it with its alarms',
    default: 'all',
    actsIn: ['functions/adapters/observability/powertools-metrics-sink.ts#PowertoolsMetricsSink'],
    env: { name: 'PROGRAM_METRICS', deployed: 'computed' },
  }),
  logLevel: setting(oneOf(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT']), {
    doc: "Powertools Logger's level",
    default: 'INFO',
    actsIn: ['functions/poller/handler.ts#handler'],
    env: { name: 'POWERTOOLS_LOG_LEVEL', deployed: 'fixed', readBy: 'powertools' },
  }),
  tracing: setting(flag(), {
    doc: 'Active X-Ray tracing on the function',
    default: false,
    actsIn: ['infra/constructs/poller-function.ts#createPollerFunction'],
    context: { key: 'tracing' },
    prop: { name: 'tracing' },
  }),
  pollLimit: setting(integer({ min: 1, max: 1000 }), {
    doc: 'Events asked for per poll request',
    default: 100,
    perProgram: true,
    actsIn: [
      'functions/adapters/banking-http/banking-event-feed.ts#BankingEventFeed',
      'functions/core/start-position.ts#fastForward',
    ],
    env: { name: 'POLL_LIMIT' },
    prop: { name: 'pollLimit' },
    cli: { flag: '--limit <events>' },
  }),
  pollCursorParam: setting(queryParameter, {
    doc:
      'Name of the `GET /events` query parameter that carries the cursor, the last sequence number seen ' +
      '(the feed must answer with the events after it)',
    default: CURSOR_PARAMETER,
    perProgram: true,
    actsIn: ['functions/adapters/banking-http/banking-event-feed.ts#BankingEventFeed'],
    env: { name: 'POLL_CURSOR_PARAM' },
    context: { key: 'pollCursorParam' },
    prop: { name: 'pollCursorParam' },
    cli: { flag: '--cursor-param <name>' },
  }),
  pollLimitParam: setting(queryParameter, {
    doc: "Name of the `GET /events` query parameter that carries the page size; not the cursor's name",
    default: 'limit',
    perProgram: true,
    actsIn: ['functions/adapters/banking-http/banking-event-feed.ts#BankingEventFeed'],
    env: { name: 'POLL_LIMIT_PARAM' },
    context: { key: 'pollLimitParam' },
    prop: { name: 'pollLimitParam' },
    cli: { flag: '--limit-param <name>' },
  }),
  startPosition: setting(startPosition(), {
    doc:
      'Where a program without a checkpoint starts: every event the feed still has (`beginning`), only ' +
      'events created from its first run on (`latest`), or a sequence number',
    default: 'beginning',
    perProgram: true,
    actsIn: ['functions/core/cycle/start-landing.ts#applyStartPosition'],
    see: { title: 'start position', path: 'docs/configuration.md#start-position' },
    env: { name: 'START_POSITION' },
    context: { key: 'startPosition' },
    prop: { name: 'startPosition' },
    cli: { flag: '--start-position <where>' },
  }),
  startClockSkewAllowanceSeconds: setting(integer({ min: 0, max: 86_400, unit: 'seconds' }), {
    doc:
      '`latest` only, until a run has recorded where the feed ended: events stamped up to this long before ' +
      "the program's first run are published, so a bank clock behind ours by as much loses nothing",
    default: START_POSITION_DEFAULTS.clockSkewAllowanceMs / 1000,
    perProgram: true,
    actsIn: ['functions/core/cycle/start-landing.ts#applyStartPosition'],
    see: { title: 'start position', path: 'docs/configuration.md#start-position' },
    env: { name: 'START_CLOCK_SKEW_ALLOWANCE_SECONDS' },
    context: { key: 'startClockSkewAllowanceSeconds' },
    prop: { name: 'startClockSkewAllowance', duration: true },
    cli: { flag: '--start-clock-skew <seconds>' },
  }),
  safetyMarginMs: setting(integer({ min: 0, max: 600_000, unit: 'milliseconds' }), {
    doc: 'Time kept back at the end of a run to publish and commit; at most a quarter of the time left',
    default: CYCLE_DEFAULTS.safetyMarginMs,
    actsIn: [
      'functions/core/cycle-budget.ts#computeDeadline',
      'infra/constructs/handover-timing.ts#overlappingTimeout',
    ],
    see: { title: 'sizing', path: 'docs/performance.md#sizing-memory-and-timeout' },
    env: { name: 'SAFETY_MARGIN_MS' },
    prop: { name: 'safetyMargin', duration: true },
  }),
  leaseWaitMs: setting(integer({ min: 0, max: 900_000, unit: 'milliseconds' }), {
    doc: 'How long a run waits for the run holding the lease to hand it over; the construct sets it from the schedule',
    default: CYCLE_DEFAULTS.leaseWaitMs,
    actsIn: ['functions/core/checkpoint/lease.ts#takeLease', 'infra/constructs/handover-timing.ts#leaseWait'],
    env: { name: 'LEASE_WAIT_MS', deployed: 'computed' },
  }),
  publishConcurrency: setting(integer({ min: 1, max: 50 }), {
    doc:
      'PutEvents requests in flight at once while catching up; halved when EventBridge throttles, grown ' +
      'back after a streak of successes',
    default: PUBLISH_DEFAULTS.concurrency,
    perProgram: true,
    actsIn: ['functions/core/publish-gate.ts#PublishGate'],
    env: { name: 'PUBLISH_CONCURRENCY' },
    context: { key: 'publishConcurrency' },
    prop: { name: 'publishConcurrency' },
  }),
  maxPutEventsPerSecond: setting(integer({ min: 1, max: 10_000 }), {
    doc:
      'Cap on PutEvents requests per second per program: the quota is per account and region, shared ' +
      'with your other producers',
    whenAbsent: 'no cap',
    perProgram: true,
    actsIn: ['functions/core/publish-gate.ts#PublishGate'],
    env: { name: 'PUBLISH_MAX_REQUESTS_PER_SECOND' },
    context: { key: 'maxPutEventsPerSecond', none: 0 },
    prop: { name: 'maxPutEventsPerSecond' },
  }),
  feedMode: setting(oneOf(FEED_MODES), {
    doc: 'How the feed is read: long polls of `GET /events`, or the SSE stream `GET /events/stream`',
    default: CYCLE_DEFAULTS.feedMode,
    perProgram: true,
    actsIn: ['functions/core/cycle/feed-sources.ts#openFeedSources'],
    see: { title: 'Poll or stream', path: 'docs/decisions/poll-or-stream.md' },
    env: { name: 'FEED_MODE' },
    context: { key: 'feedMode' },
    prop: { name: 'feedMode' },
    cli: { flag: '--feed-mode <mode>' },
  }),
  streamRecovery: setting(oneOf(STREAM_RECOVERIES), {
    doc:
      'How a transaction whose `data.type` the stream may have replaced is fetched: one `GET /events` ' +
      'page (`page`), or `GET /event/:id` each (`lookup`)',
    default: CYCLE_DEFAULTS.streamRecovery,
    perProgram: true,
    actsIn: ['functions/core/stream/stream-reader.ts#StreamReader'],
    see: { title: 'Poll or stream', path: 'docs/decisions/poll-or-stream.md' },
    streamOnly: true,
    env: { name: 'STREAM_RECOVERY' },
    context: { key: 'streamRecovery' },
    prop: { name: 'streamRecovery' },
    cli: { flag: '--stream-recovery <how>' },
  }),
  streamLingerMs: setting(integer({ min: 0, max: 1_000, unit: 'milliseconds' }), {
    doc: 'Longest wait for more events of a micro-batch while earlier ones are being published',
    default: CYCLE_DEFAULTS.streamLingerMs,
    perProgram: true,
    actsIn: ['functions/core/stream/stream-reader.ts#StreamReader'],
    streamOnly: true,
    env: { name: 'STREAM_LINGER_MS' },
    context: { key: 'streamLingerMs' },
    prop: { name: 'streamLinger', duration: true },
  }),
  streamCursorParam: setting(queryParameter, {
    doc: 'Name of the `GET /events/stream` query parameter that carries the starting point',
    default: CURSOR_PARAMETER,
    perProgram: true,
    actsIn: ['functions/adapters/banking-http/banking-event-stream.ts#BankingEventStream'],
    streamOnly: true,
    env: { name: 'STREAM_CURSOR_PARAM' },
    context: { key: 'streamCursorParam' },
    prop: { name: 'streamCursorParam' },
  }),
  gapRepairMaxLookups: setting(integer({ min: 0, max: 10_000 }), {
    doc:
      'Lookups of skipped sequence numbers per invocation; `0` turns gap repair off (the sequence-gap ' +
      'alarm then watches `SequenceGaps`)',
    default: GAP_REPAIR_DEFAULTS.maxLookups,
    perProgram: true,
    actsIn: ['functions/core/gap-repair.ts#GapRepair'],
    see: { title: 'sequence gaps', path: 'docs/runbook.md#alarm-sequence-gaps' },
    env: { name: 'GAP_REPAIR_MAX_LOOKUPS' },
    context: { key: 'gapRepairMaxLookups' },
    prop: { name: 'gapRepair.maxLookups' },
  }),
  gapRepairGraceSeconds: setting(integer({ min: 0, max: 86_400, unit: 'seconds' }), {
    doc:
      'How long a skipped number is looked up again before it is given up and counted in `GapsUnfilled`; ' +
      "at most the feed's retention, 24 hours",
    default: GAP_REPAIR_DEFAULTS.graceMs / 1000,
    perProgram: true,
    actsIn: ['functions/core/gap-repair.ts#GapRepair'],
    env: { name: 'GAP_REPAIR_GRACE_SECONDS' },
    context: { key: 'gapRepairGraceSeconds' },
    prop: { name: 'gapRepair.gracePeriod', duration: true },
  }),
  maxSequenceJump: setting(integer({ min: 10, max: Number.MAX_SAFE_INTEGER }), {
    doc:
      'The most a sequence number may lie above the one before it. An event beyond is held, not trusted: ' +
      'quarantined once (`SEQUENCE_JUMP_HELD`), events with lower numbers still published and the checkpoint ' +
      'kept below it, until an operator accepts or rejects the jump (`banking-events-poller jumps`)',
    default: SEQUENCE_JUMP_DEFAULTS.maxJump,
    perProgram: true,
    actsIn: [
      'functions/core/sequence-jumps.ts#splitAtJump',
      'functions/core/gap-repair.ts#GapRepair',
      'functions/core/stream/stream-buffer.ts#StreamBuffer',
    ],
    see: { title: 'sequence jumps', path: 'docs/runbook.md#alarm-sequence-jumps' },
    env: { name: 'MAX_SEQUENCE_JUMP' },
    context: { key: 'maxSequenceJump' },
    prop: { name: 'maxSequenceJump' },
  }),
  maxEventEntryBytes: setting(integer({ min: MIN_MAX_ENTRY_BYTES, max: PUT_EVENTS_MAX_BYTES }), {
    doc: 'Largest PutEvents entry, in bytes; a larger event goes through the claim check (S3, a pointer on the bus)',
    default: DEFAULT_MAX_ENTRY_BYTES,
    actsIn: [
      'functions/core/claim-check-publisher.ts#ClaimCheckPublisher',
      'functions/adapters/aws/eventbridge-publisher.ts#EventBridgePublisher',
    ],
    see: { title: 'too large', path: 'docs/runbook.md#event-too-large' },
    env: { name: 'MAX_EVENT_ENTRY_BYTES' },
    context: { key: 'maxEventEntryBytes' },
    prop: { name: 'maxEventEntryBytes' },
  }),
  claimCheckBucket: setting(nonEmpty('an S3 bucket name'), {
    doc: 'S3 bucket for events too large for the bus',
    whenAbsent: 'none: such an event stops the run with `EVENT_TOO_LARGE`',
    actsIn: ['functions/adapters/aws/s3-claim-check-store.ts#S3ClaimCheckStore'],
    env: { name: 'CLAIM_CHECK_BUCKET', deployed: 'resource' },
  }),
  claimCheckRetentionDays: setting(integer({ min: 1, max: 36_500, unit: 'days' }), {
    doc: "How long the claim-check bucket keeps an event's body",
    default: 30,
    actsIn: ['infra/constructs/poller-storage.ts#createClaimCheckBucket'],
    context: { key: 'claimCheckRetentionDays' },
    prop: { name: 'claimCheckRetention', duration: true },
  }),
  exampleSubscriber: setting(flag(), {
    doc: 'Deploys the example subscriber of transactions (docs/subscribers.md)',
    default: false,
    actsIn: ['infra/poller-stack.ts#PollerStack'],
    context: { key: 'exampleSubscriber' },
  }),
  minPollWindowMs: setting(integer({ min: 100, max: 600_000, unit: 'milliseconds' }), {
    doc: 'No poll starts with less time than this left',
    default: CYCLE_DEFAULTS.minPollWindowMs,
    actsIn: [
      'functions/core/feed-reader.ts#FeedReader',
      'functions/core/stream/stream-reader.ts#StreamReader',
    ],
    env: { name: 'MIN_POLL_WINDOW_MS' },
  }),
  credentialsTtlSeconds: setting(integer({ min: 0, max: 86_400, unit: 'seconds' }), {
    doc: 'How long the credentials read from a secret are cached (re-read at once on a 401)',
    default: 300,
    actsIn: ['functions/adapters/aws/secrets-manager-credentials.ts#SecretsManagerCredentialsProvider'],
    env: { name: 'CREDENTIALS_TTL_SECONDS' },
  }),
  leaseCheckIntervalMs: setting(integer({ min: 10, max: 10_000, unit: 'milliseconds' }), {
    doc: 'How often the lease is looked at while waiting for it',
    default: CYCLE_DEFAULTS.leaseCheckIntervalMs,
    actsIn: ['functions/core/checkpoint/lease.ts#takeLease'],
    env: { name: 'LEASE_CHECK_INTERVAL_MS' },
  }),
  publishMaxAttempts: setting(integer({ min: 1, max: 20 }), {
    doc:
      'Attempts per PutEvents entry the bus rejects for a reason that may pass (a server error); ' +
      'throttled attempts do not count: they go on, with backoff, until the run must stop',
    default: PUBLISH_DEFAULTS.maxAttempts,
    actsIn: ['functions/core/publish-pipeline.ts#PublishPipeline'],
    env: { name: 'PUBLISH_MAX_ATTEMPTS' },
  }),
  functionMemoryMb: setting(integer({ min: 128, max: 10_240 }), {
    doc:
      "The function's memory in MB, set by Lambda from the construct's `memorySize`: what a run holds of " +
      'the events it reads, and reads of a page at once, are derived from it; so is, in a worker, the CPU ' +
      "its programs' turns keep to (three quarters of Lambda's vCPU share at that memory)",
    whenAbsent: "V8's heap limit (outside Lambda), and a whole core",
    actsIn: [
      'functions/core/memory-budget.ts#memoryBudget',
      'functions/adapters/process-cpu-meter.ts#turnsShareOf',
    ],
    see: { title: 'a bank that ignores limit', path: 'docs/performance.md#a-bank-that-ignores-limit' },
    env: { name: 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE' },
  }),
};

type Settings = typeof SETTINGS;
export type SettingName = keyof Settings;

/** The value type of a setting, from its kind. */
export type SettingValue<N extends SettingName> = Settings[N]['kind'] extends ValueKind<infer T> ? T : never;

/** A setting's value once read: always there when it has a default or is required, else perhaps not. */
export type ResolvedValue<N extends SettingName> = Settings[N] extends
  | { readonly default: unknown }
  | { readonly env: { readonly required: true } }
  ? SettingValue<N>
  : SettingValue<N> | undefined;

/** The names of the settings that exist at `place`. */
export type SettingsAt<Place extends 'env' | 'context' | 'prop' | 'cli'> = {
  [N in SettingName]: Settings[N] extends { readonly [P in Place]: object } ? N : never;
}[SettingName];

/** The settings at `place` whose values the table reads; `programs` and `routes` each place reads by hand. */
export type ValueSettingsAt<Place extends 'env' | 'context' | 'prop' | 'cli'> = {
  [N in SettingsAt<Place>]: Settings[N] extends { readonly kind: { readonly structured: true } } ? never : N;
}[SettingsAt<Place>];

export type FeedMode = SettingValue<'feedMode'>;
export type StreamRecovery = SettingValue<'streamRecovery'>;

/** The table as a list, in its order. */
export function settingEntries(): readonly (readonly [SettingName, Setting])[] {
  return Object.entries(SETTINGS) as [SettingName, Setting][];
}
