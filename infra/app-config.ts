import {
  DEFAULT_MAX_ENTRY_BYTES,
  MIN_MAX_ENTRY_BYTES,
  PUT_EVENTS_MAX_BYTES,
} from '../functions/core/claim-check.ts';
import { ConfigurationError } from '../functions/core/errors.ts';
import {
  isProgramName,
  PROGRAM_NAME_EXPECTED,
  QUERY_PARAMETER_EXPECTED,
  QUERY_PARAMETER_PATTERN,
} from '../functions/core/name-rules.ts';
import { parseStartPosition, START_POSITION_EXPECTED } from '../functions/core/start-position.ts';

/** A program as configured: a name and, optionally, the secret it already has. */
export interface ProgramConfig {
  readonly name: string;
  /** Full ARN of an existing secret (with its 6-character suffix). */
  readonly secretArn?: string;
  /** Name of an existing secret. */
  readonly secretName?: string;
}

/** Retry policy of one route's targets; absent fields take the construct's defaults. */
export interface RouteConfig {
  readonly maxEventAgeSeconds?: number;
  readonly retryAttempts?: number;
}

/** The app's configuration: CDK context (cdk.json, then `-c key=value`), validated and frozen. */
export interface AppConfig {
  readonly stackName: string;
  readonly programs: readonly ProgramConfig[];
  readonly eventSource: string;
  /** From `scheduleRate`, e.g. `rate(1 minute)`. */
  readonly scheduleRateMinutes: number;
  readonly routes: Readonly<Record<string, RouteConfig>>;
  readonly lagThresholdSeconds: number;
  readonly alarmEmail: string | undefined;
  readonly archiveRetentionDays: number;
  readonly logRetentionDays: number;
  /** Name of the bus to create; `undefined` when `existingEventBusArn` is set. */
  readonly eventBusName: string | undefined;
  readonly existingEventBusArn: string | undefined;
  readonly metricsNamespace: string;
  readonly tracing: boolean;
  /** Query parameter names of `GET /events`: the cursor (`POLL_CURSOR_PARAM`) and the page size (`POLL_LIMIT_PARAM`). */
  readonly pollCursorParam: string;
  readonly pollLimitParam: string;
  /** PutEvents requests in flight at once per program (`PUBLISH_CONCURRENCY`). */
  readonly publishConcurrency: number;
  /** Cap on PutEvents requests per second per program; `undefined`: no cap. */
  readonly maxPutEventsPerSecond: number | undefined;
  /** Where a program without a checkpoint starts: `beginning`, `latest` or a sequence number. */
  readonly startPosition: 'beginning' | 'latest' | number;
  /** How the feed is read (`FEED_MODE`): long polls or the SSE stream. */
  readonly feedMode: 'poll' | 'stream';
  /** Stream mode: how transactions are fetched (`STREAM_RECOVERY`). */
  readonly streamRecovery: 'page' | 'lookup';
  /** Stream mode: longest wait for companions of a micro-batch (`STREAM_LINGER_MS`). */
  readonly streamLingerMs: number;
  /** Stream mode: the stream's cursor parameter (`STREAM_CURSOR_PARAM`). */
  readonly streamCursorParam: string;
  /** Lookups of skipped numbers per invocation (`GAP_REPAIR_MAX_LOOKUPS`); 0 turns repair off. */
  readonly gapRepairMaxLookups: number;
  /** How long a skipped number is looked up again (`GAP_REPAIR_GRACE_SECONDS`). */
  readonly gapRepairGraceSeconds: number;
  /** Largest PutEvents entry; larger events go through the claim check (`MAX_EVENT_ENTRY_BYTES`). */
  readonly maxEventEntryBytes: number;
  /** Days the claim-check bucket keeps an event's body. */
  readonly claimCheckRetentionDays: number;
  /** Deploys the example subscriber of transactions (`infra/example-subscriber.ts`), built with the subscriber kit. */
  readonly exampleSubscriber: boolean;
}

/** Defaults, as cdk.json spells them. The cdk.json context must agree (a test checks). */
export const DEFAULT_CONTEXT = Object.freeze({
  stackName: 'BankingEventsPoller',
  programs: [{ name: 'default' }],
  eventSource: 'banking.events',
  scheduleRate: 'rate(1 minute)',
  routes: { account_status: {}, transaction: {} },
  lagThresholdSeconds: 300,
  alarmEmail: '',
  archiveRetentionDays: 30,
  logRetentionDays: 30,
  eventBusName: 'banking-events',
  existingEventBusArn: '',
  metricsNamespace: 'BankingEventsPoller',
  tracing: false,
  pollCursorParam: 'last_sequence_number',
  pollLimitParam: 'limit',
  publishConcurrency: 8,
  maxPutEventsPerSecond: 0,
  startPosition: 'beginning',
  feedMode: 'poll',
  streamRecovery: 'page',
  streamLingerMs: 100,
  streamCursorParam: 'last_sequence_number',
  gapRepairMaxLookups: 100,
  gapRepairGraceSeconds: 300,
  maxEventEntryBytes: DEFAULT_MAX_ENTRY_BYTES,
  claimCheckRetentionDays: 30,
  exampleSubscriber: false,
});

export type ContextKey = keyof typeof DEFAULT_CONTEXT;
const CONTEXT_KEYS = Object.keys(DEFAULT_CONTEXT) as ContextKey[];

/** CloudWatch Logs accepts only these retention periods. */
const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

/**
 * Context keys the CDK CLI and libraries set themselves. Any other key without `:` or `@` is
 * taken for a misspelt setting of ours, which would otherwise be ignored without a word.
 */
const FOREIGN_KEYS = new Set(['cli-telemetry']);

/**
 * Reads and validates the app's context. `context` is what `app.node.getAllContext()` returns.
 * Every problem is reported at once, each naming its key and the expected form.
 *
 * @throws ConfigurationError listing every invalid key
 */
export function parseAppConfig(context: Readonly<Record<string, unknown>>): AppConfig {
  const reader = new ContextReader(context);
  for (const key of Object.keys(context)) {
    if (key.includes(':') || key.startsWith('@') || FOREIGN_KEYS.has(key)) continue;
    if (!(CONTEXT_KEYS as string[]).includes(key)) {
      reader.fail(key, `is not a setting of this app; the settings are ${CONTEXT_KEYS.join(', ')}`);
    }
  }

  const stackName = reader.string(
    'stackName',
    /^[A-Za-z][A-Za-z0-9-]{0,127}$/,
    'a CloudFormation stack name',
  );
  const eventSource = reader.string(
    'eventSource',
    /^(?!aws\.)[A-Za-z0-9._\-/]{1,256}$/,
    'an EventBridge source such as "banking.events" (not starting with "aws.")',
  );
  const programs = reader.programs();
  const scheduleRateMinutes = reader.scheduleRate();
  const routes = reader.routes();
  const lagThresholdSeconds = reader.integer('lagThresholdSeconds', 60, 86_400);
  const alarmEmailRaw = reader.string(
    'alarmEmail',
    /^$|^[^\s@]+@[^\s@]+\.[^\s@]+$/,
    'an email address, or "" for none',
  );
  const archiveRetentionDays = reader.integer('archiveRetentionDays', 0, 36_500);
  const logRetentionDays = reader.integer('logRetentionDays', 1, 3653);
  if (
    !Number.isNaN(logRetentionDays) &&
    !(LOG_RETENTION_DAYS as readonly number[]).includes(logRetentionDays)
  ) {
    reader.fail(
      'logRetentionDays',
      `must be one of ${LOG_RETENTION_DAYS.join(', ')} (CloudWatch Logs periods)`,
    );
  }
  const eventBusName = reader.string(
    'eventBusName',
    /^$|^[A-Za-z0-9._-]{1,256}$/,
    'an event bus name, or ""',
  );
  const existingEventBusArn = reader.string(
    'existingEventBusArn',
    /^$|^arn:aws[a-z-]*:events:[a-z0-9-]+:\d{12}:event-bus\/[A-Za-z0-9._-]+$/,
    'the ARN of an existing event bus, or "" to create one',
  );
  if (existingEventBusArn !== '' && eventBusName !== '') {
    reader.fail('eventBusName', 'names a bus to create; set it to "" when existingEventBusArn is set');
  }
  const metricsNamespace = reader.string(
    'metricsNamespace',
    /^[A-Za-z0-9._\-/#:]{1,255}$/,
    'a CloudWatch namespace',
  );
  const tracing = reader.boolean('tracing');
  const pollCursorParam = reader.string('pollCursorParam', QUERY_PARAMETER_PATTERN, QUERY_PARAMETER_EXPECTED);
  const pollLimitParam = reader.string('pollLimitParam', QUERY_PARAMETER_PATTERN, QUERY_PARAMETER_EXPECTED);
  if (pollCursorParam !== '' && pollLimitParam === pollCursorParam) {
    reader.fail(
      'pollLimitParam',
      `must differ from pollCursorParam ("${pollCursorParam}"): one names the cursor, the other the page size`,
    );
  }

  const publishConcurrency = reader.integer('publishConcurrency', 1, 50);
  const maxPutEventsPerSecond = reader.integer('maxPutEventsPerSecond', 0, 10_000);
  const startPosition = reader.startPosition();
  const feedMode = reader.string('feedMode', /^(poll|stream)$/, '"poll" or "stream"') as 'poll' | 'stream';
  const streamRecovery = reader.string('streamRecovery', /^(page|lookup)$/, '"page" or "lookup"') as
    | 'page'
    | 'lookup';
  const streamLingerMs = reader.integer('streamLingerMs', 0, 1_000);
  const streamCursorParam = reader.string(
    'streamCursorParam',
    QUERY_PARAMETER_PATTERN,
    QUERY_PARAMETER_EXPECTED,
  );
  const gapRepairMaxLookups = reader.integer('gapRepairMaxLookups', 0, 10_000);
  const gapRepairGraceSeconds = reader.integer('gapRepairGraceSeconds', 0, 86_400);
  const maxEventEntryBytes = reader.integer('maxEventEntryBytes', MIN_MAX_ENTRY_BYTES, PUT_EVENTS_MAX_BYTES);
  const claimCheckRetentionDays = reader.integer('claimCheckRetentionDays', 1, 36_500);
  const exampleSubscriber = reader.boolean('exampleSubscriber');

  reader.throwIfInvalid();
  return deepFreeze({
    stackName,
    programs,
    eventSource,
    scheduleRateMinutes,
    routes,
    lagThresholdSeconds,
    alarmEmail: alarmEmailRaw === '' ? undefined : alarmEmailRaw,
    archiveRetentionDays,
    logRetentionDays,
    eventBusName: existingEventBusArn === '' ? eventBusName || undefined : undefined,
    existingEventBusArn: existingEventBusArn === '' ? undefined : existingEventBusArn,
    metricsNamespace,
    tracing,
    pollCursorParam,
    pollLimitParam,
    publishConcurrency,
    maxPutEventsPerSecond: maxPutEventsPerSecond === 0 ? undefined : maxPutEventsPerSecond,
    startPosition,
    feedMode,
    streamRecovery,
    streamLingerMs,
    streamCursorParam,
    gapRepairMaxLookups,
    gapRepairGraceSeconds,
    maxEventEntryBytes,
    claimCheckRetentionDays,
    exampleSubscriber,
  });
}

const SECRET_ARN =
  /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$/;
const SECRET_NAME = /^[A-Za-z0-9/_+=.@-]{1,512}$/;
const EVENT_TYPE = /^[a-z0-9][a-z0-9._-]{0,127}$/;

/** Collects problems instead of stopping at the first, so one synth shows every key to fix. */
class ContextReader {
  private readonly problems: { key: string; message: string }[] = [];

  constructor(private readonly context: Readonly<Record<string, unknown>>) {}

  fail(key: string, message: string): void {
    this.problems.push({ key, message });
  }

  throwIfInvalid(): void {
    if (this.problems.length === 0) return;
    const lines = this.problems.map(({ key, message }) => `  - context "${key}" ${message}`);
    throw new ConfigurationError(
      `Invalid CDK context (fix it in cdk.json or with -c key=value):\n${lines.join('\n')}`,
      { keys: this.problems.map(({ key }) => key).join(',') },
    );
  }

  private raw(key: ContextKey): unknown {
    return this.context[key] ?? DEFAULT_CONTEXT[key];
  }

  string(key: ContextKey, pattern: RegExp, expected: string): string {
    const value = this.raw(key);
    if (typeof value !== 'string' || !pattern.test(value)) {
      this.fail(key, `must be ${expected}, got ${show(value)}`);
      return '';
    }
    return value;
  }

  /** Numbers, or digit strings as `-c key=value` passes them. */
  integer(key: ContextKey, min: number, max: number): number {
    const value = this.raw(key);
    const parsed = typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;
    if (typeof parsed !== 'number' || !Number.isInteger(parsed) || parsed < min || parsed > max) {
      this.fail(key, `must be an integer from ${min} to ${max}, got ${show(value)}`);
      return Number.NaN;
    }
    return parsed;
  }

  boolean(key: ContextKey): boolean {
    const value = this.raw(key);
    if (value === true || value === 'true') return true;
    if (value === false || value === 'false') return false;
    this.fail(key, `must be true or false, got ${show(value)}`);
    return false;
  }

  /** Objects and arrays from cdk.json, or the same as a JSON string from `-c`. */
  private json(key: ContextKey): unknown {
    const value = this.raw(key);
    if (typeof value !== 'string') return value;
    try {
      return JSON.parse(value) as unknown;
    } catch {
      this.fail(key, `is not valid JSON: ${show(value)}`);
      return undefined;
    }
  }

  /** `beginning`, `latest` or a sequence number (a number in cdk.json, a digit string from `-c`). */
  startPosition(): 'beginning' | 'latest' | number {
    const value = this.raw('startPosition');
    try {
      const position = parseStartPosition(value, 'context "startPosition"');
      return position.kind === 'sequence' ? position.sequenceNumber : position.kind;
    } catch {
      this.fail('startPosition', `must be ${START_POSITION_EXPECTED}, got ${show(value)}`);
      return 'beginning';
    }
  }

  scheduleRate(): number {
    const value = this.raw('scheduleRate');
    const match = typeof value === 'string' ? /^rate\((\d+) (minute|minutes)\)$/.exec(value.trim()) : null;
    const minutes = match === null ? Number.NaN : Number(match[1]);
    const unitAgrees = match !== null && (minutes === 1) === (match[2] === 'minute');
    if (!unitAgrees || minutes < 1 || minutes > 14) {
      this.fail(
        'scheduleRate',
        `must be "rate(1 minute)" or "rate(N minutes)" with N from 2 to 14 (the function timeout follows it), got ${show(value)}`,
      );
      return Number.NaN;
    }
    return minutes;
  }

  programs(): ProgramConfig[] {
    const value = this.json('programs');
    if (value === undefined) return [];
    if (!Array.isArray(value) || value.length === 0) {
      this.fail(
        'programs',
        `must be a non-empty array of {"name", "secretArn"?, "secretName"?}, got ${show(value)}`,
      );
      return [];
    }
    const seen = new Set<string>();
    const programs: ProgramConfig[] = [];
    value.forEach((entry: unknown, index) => {
      const key = `programs[${index}]`;
      if (!isRecord(entry)) {
        this.fail(key, `must be an object {"name", "secretArn"?, "secretName"?}, got ${show(entry)}`);
        return;
      }
      for (const field of Object.keys(entry)) {
        if (!['name', 'secretArn', 'secretName'].includes(field)) {
          this.fail(`${key}.${field}`, 'is not a program setting; use name, secretArn or secretName');
        }
      }
      const { name, secretArn, secretName } = entry;
      if (!isProgramName(name)) {
        this.fail(`${key}.name`, `must be ${PROGRAM_NAME_EXPECTED}, got ${show(name)}`);
        return;
      }
      if (seen.has(name.toLowerCase())) this.fail(`${key}.name`, `repeats program "${name}"`);
      seen.add(name.toLowerCase());
      if (secretArn !== undefined && secretName !== undefined) {
        this.fail(key, 'sets both secretArn and secretName; keep one');
      }
      if (secretArn !== undefined && (typeof secretArn !== 'string' || !SECRET_ARN.test(secretArn))) {
        this.fail(
          `${key}.secretArn`,
          `must be a complete Secrets Manager ARN (ending in the 6-character suffix), got ${show(secretArn)}`,
        );
      }
      if (secretName !== undefined && (typeof secretName !== 'string' || !SECRET_NAME.test(secretName))) {
        this.fail(`${key}.secretName`, `must be a Secrets Manager secret name, got ${show(secretName)}`);
      }
      programs.push({
        name,
        ...(typeof secretArn === 'string' ? { secretArn } : {}),
        ...(typeof secretName === 'string' ? { secretName } : {}),
      });
    });
    return programs;
  }

  routes(): Record<string, RouteConfig> {
    const value = this.json('routes');
    if (value === undefined) return {};
    if (!isRecord(value)) {
      this.fail(
        'routes',
        `must be an object mapping event type → {"maxEventAgeSeconds"?, "retryAttempts"?}, got ${show(value)}`,
      );
      return {};
    }
    const routes: Record<string, RouteConfig> = {};
    for (const [eventType, options] of Object.entries(value)) {
      const key = `routes.${eventType}`;
      if (!EVENT_TYPE.test(eventType)) {
        this.fail(key, 'is not an event type: use the lower-case detail-type, e.g. "account_status"');
        continue;
      }
      if (!isRecord(options)) {
        this.fail(key, `must be an object {"maxEventAgeSeconds"?, "retryAttempts"?}, got ${show(options)}`);
        continue;
      }
      const route: { maxEventAgeSeconds?: number; retryAttempts?: number } = {};
      for (const [field, fieldValue] of Object.entries(options)) {
        if (field === 'maxEventAgeSeconds') {
          if (!isIntegerIn(fieldValue, 60, 86_400)) {
            this.fail(`${key}.${field}`, `must be an integer from 60 to 86400, got ${show(fieldValue)}`);
          } else route.maxEventAgeSeconds = fieldValue;
        } else if (field === 'retryAttempts') {
          if (!isIntegerIn(fieldValue, 0, 185)) {
            this.fail(`${key}.${field}`, `must be an integer from 0 to 185, got ${show(fieldValue)}`);
          } else route.retryAttempts = fieldValue;
        } else {
          this.fail(`${key}.${field}`, 'is not a route setting; use maxEventAgeSeconds or retryAttempts');
        }
      }
      routes[eventType] = route;
    }
    return routes;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isIntegerIn(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
