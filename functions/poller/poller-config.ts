import { DEFAULT_MAX_ENTRY_BYTES, MIN_MAX_ENTRY_BYTES, PUT_EVENTS_MAX_BYTES } from '../core/claim-check.ts';
import { ConfigurationError } from '../core/errors.ts';
import { isJsonObject } from '../core/json-object.ts';
import { parseProgramName, parseQueryParameterName } from '../core/name-rules.ts';
import { parseStartPosition, type StartPosition } from '../core/start-position.ts';
import type { StreamRecovery } from '../core/stream/stream-recovery.ts';

export const FEED_MODES = ['poll', 'stream'] as const;
export type FeedMode = (typeof FEED_MODES)[number];
export const STREAM_RECOVERIES: readonly StreamRecovery[] = ['page', 'lookup'];

/** The poller's configuration, read once from the environment at cold start and frozen. */
export interface PollerConfig {
  /**
   * Program name → the secret holding its credentials: `DEFAULT_PROGRAM` → `SECRET_ID`, plus
   * every entry of `PROGRAM_SECRETS`. A program's checkpoint row is only ever fed by its own secret.
   */
  readonly programSecrets: ReadonlyMap<string, string>;
  /** Program polled when the event names none (`DEFAULT_PROGRAM`). @default 'default' */
  readonly defaultProgram: string;
  readonly checkpointTable: string;
  readonly eventBusName: string;
  /** @default 'banking.events' */
  readonly eventSource: string;
  /** Page size asked of the upstream (`POLL_LIMIT`). @default 100 */
  readonly pollLimit: number;
  /** Query parameter names, not documented upstream (`POLL_CURSOR_PARAM`, `POLL_LIMIT_PARAM`). */
  readonly cursorParam: string;
  readonly limitParam: string;
  /** `SAFETY_MARGIN_MS`. @default 10_000 */
  readonly safetyMarginMs: number;
  /** `MIN_POLL_WINDOW_MS`. @default 2_000 */
  readonly minPollWindowMs: number;
  /** `CREDENTIALS_TTL_SECONDS`. @default 300 */
  readonly credentialsTtlMs: number;
  /**
   * How long to wait for the run holding the lease to hand it over (`LEASE_WAIT_MS`); the
   * construct sets it from the schedule. @default 0: give up at once
   */
  readonly leaseWaitMs: number;
  /** How often the lease is looked at while waiting (`LEASE_CHECK_INTERVAL_MS`). @default 100 */
  readonly leaseCheckIntervalMs: number;
  /** Attempts per rejected PutEvents entry (`PUBLISH_MAX_ATTEMPTS`). @default 5 */
  readonly publishMaxAttempts: number;
  /** PutEvents requests in flight at once (`PUBLISH_CONCURRENCY`). @default 8 */
  readonly publishConcurrency: number;
  /**
   * Cap on PutEvents requests per second (`PUBLISH_MAX_REQUESTS_PER_SECOND`): the quota is per
   * account and region, shared with other producers. @default no cap
   */
  readonly publishMaxRequestsPerSecond: number | undefined;
  /** Where a program without a checkpoint starts (`START_POSITION`). @default beginning */
  readonly startPosition: StartPosition;
  /** How events are read (`FEED_MODE`): long polls of `GET /events`, or `GET /events/stream`. @default 'poll' */
  readonly feedMode: FeedMode;
  /**
   * Stream mode: how a transaction whose `data.type` the stream may have replaced is fetched
   * (`STREAM_RECOVERY`): `page` (`GET /events` from the cursor, the stream as a doorbell) or
   * `lookup` (`GET /event/:id` each). @default 'page': as fast, with far fewer requests (README)
   */
  readonly streamRecovery: StreamRecovery;
  /** Stream mode: a micro-batch is published after this long, or at 10 events (`STREAM_LINGER_MS`). @default 100 */
  readonly streamLingerMs: number;
  /** Stream mode: query parameter carrying the starting point (`STREAM_CURSOR_PARAM`). @default 'last_sequence_number' */
  readonly streamCursorParam: string;
  /** Lookups of skipped sequence numbers per invocation (`GAP_REPAIR_MAX_LOOKUPS`); 0 turns repair off. @default 100 */
  readonly gapRepairMaxLookups: number;
  /** How long a skipped number is looked up again (`GAP_REPAIR_GRACE_SECONDS`). @default 300 */
  readonly gapRepairGraceMs: number;
  /**
   * Largest PutEvents entry sent (`MAX_EVENT_ENTRY_BYTES`); larger events go through the claim
   * check. @default 1_000_000 (see `core/claim-check.ts`)
   */
  readonly maxEventEntryBytes: number;
  /**
   * S3 bucket for events too large for the bus (`CLAIM_CHECK_BUCKET`). @default none: such an
   * event stops the run with `EVENT_TOO_LARGE`, the checkpoint just before it
   */
  readonly claimCheckBucket: string | undefined;
}

type Env = Readonly<Record<string, string | undefined>>;

function required(env: Env, name: string, hint: string): string {
  const value = env[name]?.trim();
  if (!value)
    throw new ConfigurationError(`Environment variable ${name} is required: ${hint}`, { variable: name });
  return value;
}

function optional(env: Env, name: string, fallback: string): string {
  const value = env[name]?.trim();
  return value ? value : fallback;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigurationError(
      `Environment variable ${name} must be an integer from ${min} to ${max}, got "${raw}"`,
      { variable: name },
    );
  }
  return value;
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!(values as readonly string[]).includes(raw)) {
    throw new ConfigurationError(
      `Environment variable ${name} must be one of ${values.join(', ')}, got "${raw}"`,
      { variable: name },
    );
  }
  return raw as T;
}

/**
 * `PROGRAM_SECRETS`: a JSON object `{"<program>": "<secret id or ARN>"}` naming the programs other
 * than the default one. Naming the default program again is allowed only with `SECRET_ID`.
 */
function programSecrets(env: Env, defaultProgram: string, defaultSecretId: string): Map<string, string> {
  const secrets = new Map([[defaultProgram, defaultSecretId]]);
  const raw = env.PROGRAM_SECRETS?.trim();
  if (!raw) return secrets;
  const invalid = (problem: string): never => {
    throw new ConfigurationError(
      `Environment variable PROGRAM_SECRETS ${problem}; expected a JSON object {"<program>": "<secret id or ARN>"}`,
      { variable: 'PROGRAM_SECRETS' },
    );
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return invalid('is not valid JSON');
  }
  if (!isJsonObject(parsed)) return invalid('is not a JSON object');
  for (const [program, secretId] of Object.entries(parsed)) {
    parseProgramName(program, `Environment variable PROGRAM_SECRETS: program "${program}"`);
    if (typeof secretId !== 'string' || secretId.trim() === '') {
      invalid(`names program "${program}" without a secret id`);
    }
    const id = (secretId as string).trim();
    if (program === defaultProgram && id !== defaultSecretId) {
      invalid(
        `binds the default program "${program}" to another secret than SECRET_ID; the default program's secret is SECRET_ID`,
      );
    }
    secrets.set(program, id);
  }
  return secrets;
}

/**
 * Parses the environment. Every error names the variable and the expected form.
 *
 * @example
 * const config = loadPollerConfig(process.env);
 */
export function loadPollerConfig(env: Env): PollerConfig {
  const secretId = required(
    env,
    'SECRET_ID',
    "the Secrets Manager id or ARN of the default program's banking credentials secret",
  );
  const defaultProgram = parseProgramName(
    optional(env, 'DEFAULT_PROGRAM', 'default'),
    'Environment variable DEFAULT_PROGRAM',
  );
  return Object.freeze({
    programSecrets: programSecrets(env, defaultProgram, secretId),
    defaultProgram,
    checkpointTable: required(
      env,
      'CHECKPOINT_TABLE',
      'the DynamoDB table holding checkpoints (partition key "pk")',
    ),
    eventBusName: required(env, 'EVENT_BUS_NAME', 'the name or ARN of the EventBridge bus to publish to'),
    eventSource: optional(env, 'EVENT_SOURCE', 'banking.events'),
    pollLimit: integer(env, 'POLL_LIMIT', 100, 1, 1000),
    cursorParam: parseQueryParameterName(
      optional(env, 'POLL_CURSOR_PARAM', 'last_sequence_number'),
      'Environment variable POLL_CURSOR_PARAM',
    ),
    limitParam: parseQueryParameterName(
      optional(env, 'POLL_LIMIT_PARAM', 'limit'),
      'Environment variable POLL_LIMIT_PARAM',
    ),
    safetyMarginMs: integer(env, 'SAFETY_MARGIN_MS', 10_000, 0, 600_000),
    minPollWindowMs: integer(env, 'MIN_POLL_WINDOW_MS', 2_000, 100, 600_000),
    credentialsTtlMs: integer(env, 'CREDENTIALS_TTL_SECONDS', 300, 0, 86_400) * 1000,
    leaseWaitMs: integer(env, 'LEASE_WAIT_MS', 0, 0, 900_000),
    leaseCheckIntervalMs: integer(env, 'LEASE_CHECK_INTERVAL_MS', 100, 10, 10_000),
    publishMaxAttempts: integer(env, 'PUBLISH_MAX_ATTEMPTS', 5, 1, 20),
    publishConcurrency: integer(env, 'PUBLISH_CONCURRENCY', 8, 1, 50),
    publishMaxRequestsPerSecond: env.PUBLISH_MAX_REQUESTS_PER_SECOND?.trim()
      ? integer(env, 'PUBLISH_MAX_REQUESTS_PER_SECOND', 0, 1, 10_000)
      : undefined,
    startPosition: parseStartPosition(
      optional(env, 'START_POSITION', 'beginning'),
      'Environment variable START_POSITION',
    ),
    feedMode: oneOf(env, 'FEED_MODE', FEED_MODES, 'poll'),
    streamRecovery: oneOf(env, 'STREAM_RECOVERY', STREAM_RECOVERIES, 'page'),
    streamLingerMs: integer(env, 'STREAM_LINGER_MS', 100, 0, 1_000),
    streamCursorParam: parseQueryParameterName(
      optional(env, 'STREAM_CURSOR_PARAM', 'last_sequence_number'),
      'Environment variable STREAM_CURSOR_PARAM',
    ),
    gapRepairMaxLookups: integer(env, 'GAP_REPAIR_MAX_LOOKUPS', 100, 0, 10_000),
    gapRepairGraceMs: integer(env, 'GAP_REPAIR_GRACE_SECONDS', 300, 0, 86_400) * 1000,
    maxEventEntryBytes: integer(
      env,
      'MAX_EVENT_ENTRY_BYTES',
      DEFAULT_MAX_ENTRY_BYTES,
      MIN_MAX_ENTRY_BYTES,
      PUT_EVENTS_MAX_BYTES,
    ),
    claimCheckBucket: env.CLAIM_CHECK_BUCKET?.trim() || undefined,
  });
}

/** What one invocation works on, from the schedule payload `{"program": …}`. */
export interface InvocationTarget {
  readonly program: string;
  /** The program's own secret, from the configuration: never chosen by the event. */
  readonly secretId: string;
}

/**
 * Reads `{ program? }` from the invocation event and looks up the program's secret. An unknown
 * program, or a `secretId` in the event that is not the program's own, is refused here before
 * anything is polled or written: another program's credentials would feed this program's
 * checkpoint with numbers from another sequence.
 */
export function resolveInvocationTarget(event: unknown, config: PollerConfig): InvocationTarget {
  const payload = isJsonObject(event) ? event : {};
  const program =
    payload.program === undefined
      ? config.defaultProgram
      : parseProgramName(payload.program, 'event.program');
  const secretId = config.programSecrets.get(program);
  if (secretId === undefined) {
    throw new ConfigurationError(
      `event.program "${program}" is not one of this function's programs (${[...config.programSecrets.keys()].join(', ')}); ` +
        "add it to the construct's programs (PROGRAM_SECRETS) and deploy",
      { where: 'event.program', program },
    );
  }
  if (payload.secretId !== undefined && payload.secretId !== secretId) {
    throw new ConfigurationError(
      `event.secretId is not the secret of program "${program}"; the function reads each program's credentials from ` +
        'its own secret (SECRET_ID or PROGRAM_SECRETS): leave secretId out of the event',
      { where: 'event.secretId', program },
    );
  }
  return { program, secretId };
}
