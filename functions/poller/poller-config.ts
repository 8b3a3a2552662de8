import { ConfigurationError } from '../core/errors.ts';

/** The poller's configuration, read once from the environment at cold start and frozen. */
export interface PollerConfig {
  /** Secret of the default program (`SECRET_ID`). */
  readonly secretId: string;
  /** Secrets an invocation may name in `event.secretId` (`ALLOWED_SECRET_IDS`, plus `SECRET_ID`). */
  readonly allowedSecretIds: ReadonlySet<string>;
  /** Checkpoint row used when the event names no program (`DEFAULT_PROGRAM`). @default 'default' */
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
  /** Attempts per rejected PutEvents entry (`PUBLISH_MAX_ATTEMPTS`). @default 5 */
  readonly publishMaxAttempts: number;
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
      {
        variable: name,
      },
    );
  }
  return value;
}

const PROGRAM_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const QUERY_PARAM = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

/** Validates a program name: it becomes a DynamoDB key and a metrics dimension. */
export function parseProgramName(value: unknown, where: string): string {
  if (typeof value !== 'string' || !PROGRAM_NAME.test(value)) {
    throw new ConfigurationError(
      `${where} must be 1-64 characters of letters, digits, '.', '_' or '-', starting with a letter or digit`,
      { where },
    );
  }
  return value;
}

function queryParam(env: Env, name: string, fallback: string): string {
  const value = optional(env, name, fallback);
  if (!QUERY_PARAM.test(value)) {
    throw new ConfigurationError(
      `Environment variable ${name} must be a plain query parameter name, got "${value}"`,
      {
        variable: name,
      },
    );
  }
  return value;
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
    'the Secrets Manager id or ARN of the banking credentials secret',
  );
  const allowed = (env.ALLOWED_SECRET_IDS ?? '')
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id.length > 0);
  return Object.freeze({
    secretId,
    allowedSecretIds: new Set([secretId, ...allowed]),
    defaultProgram: parseProgramName(
      optional(env, 'DEFAULT_PROGRAM', 'default'),
      'Environment variable DEFAULT_PROGRAM',
    ),
    checkpointTable: required(
      env,
      'CHECKPOINT_TABLE',
      'the DynamoDB table holding checkpoints (partition key "pk")',
    ),
    eventBusName: required(env, 'EVENT_BUS_NAME', 'the name or ARN of the EventBridge bus to publish to'),
    eventSource: optional(env, 'EVENT_SOURCE', 'banking.events'),
    pollLimit: integer(env, 'POLL_LIMIT', 100, 1, 1000),
    cursorParam: queryParam(env, 'POLL_CURSOR_PARAM', 'last_sequence_number'),
    limitParam: queryParam(env, 'POLL_LIMIT_PARAM', 'limit'),
    safetyMarginMs: integer(env, 'SAFETY_MARGIN_MS', 10_000, 0, 600_000),
    minPollWindowMs: integer(env, 'MIN_POLL_WINDOW_MS', 2_000, 100, 600_000),
    credentialsTtlMs: integer(env, 'CREDENTIALS_TTL_SECONDS', 300, 0, 86_400) * 1000,
    publishMaxAttempts: integer(env, 'PUBLISH_MAX_ATTEMPTS', 5, 1, 20),
  });
}

/** What one invocation works on, from the (optional) schedule payload. */
export interface InvocationTarget {
  readonly program: string;
  readonly secretId: string;
}

/**
 * Reads `{ program?, secretId? }` from the invocation event. A secret not granted to this
 * function is refused here, before any call, with a message that says where to grant it.
 */
export function resolveInvocationTarget(event: unknown, config: PollerConfig): InvocationTarget {
  const payload = typeof event === 'object' && event !== null ? (event as Record<string, unknown>) : {};
  const program =
    payload.program === undefined
      ? config.defaultProgram
      : parseProgramName(payload.program, 'event.program');
  let secretId = config.secretId;
  if (payload.secretId !== undefined) {
    if (typeof payload.secretId !== 'string' || payload.secretId.trim() === '') {
      throw new ConfigurationError('event.secretId must be a non-empty string', { where: 'event.secretId' });
    }
    secretId = payload.secretId.trim();
    if (!config.allowedSecretIds.has(secretId)) {
      throw new ConfigurationError(
        `event.secretId ${secretId} is not one of this function's secrets; add it to ALLOWED_SECRET_IDS (the construct's programs) and grant read access`,
        { where: 'event.secretId', secretId, program },
      );
    }
  }
  return { program, secretId };
}
