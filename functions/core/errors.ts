/**
 * One error family for the whole poller. Every class carries a stable `code` (for alarms, log
 * queries and tests) and the context that helps the person on call: status, path, sequence
 * number, variable name. Never a secret, a token or an Authorization header.
 */
import type { PublishFailure } from './ports.ts';

export type ErrorContext = Readonly<Record<string, string | number | boolean | null | undefined>>;

export class PollerError extends Error {
  readonly code: string;
  readonly context: ErrorContext;

  constructor(code: string, message: string, options: { context?: ErrorContext; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.context = Object.freeze({ ...(options.context ?? {}) });
  }
}

/**
 * A configuration value (environment variable, secret field, CDK context key) is missing or malformed.
 *
 * Not in the jsii assembly (an `Error` subclass has no form in Python, Java, .NET or Go); the jsii
 * kernel still reports it to those languages by its name, `ConfigurationError`.
 *
 * @jsii ignore
 */
export class ConfigurationError extends PollerError {
  static readonly code = 'CONFIGURATION_INVALID';

  constructor(message: string, context: ErrorContext = {}, cause?: unknown) {
    super(ConfigurationError.code, message, { context, cause });
  }
}

/**
 * The secret's mutual TLS material cannot be used: a certificate or key that does not parse, a
 * certificate expired or not yet valid, a key that does not match it, a field without its pair.
 * `field` names the secret field; the message never quotes a certificate, a key or a passphrase.
 */
export class ClientCertificateError extends PollerError {
  static readonly code = 'CLIENT_CERTIFICATE_INVALID';

  constructor(message: string, context: ErrorContext & { readonly field: string }) {
    super(ClientCertificateError.code, message, { context });
  }
}

/** The credentials were refused: by the token endpoint, or a second 401 right after a fresh token. */
export class AuthenticationError extends PollerError {
  static readonly code = 'AUTHENTICATION_FAILED';

  constructor(message: string, context: ErrorContext = {}, cause?: unknown) {
    super(AuthenticationError.code, message, { context, cause });
  }
}

/** The banking service answered with a status we could not recover from within the budget. */
export class UpstreamHttpError extends PollerError {
  static readonly code = 'UPSTREAM_HTTP_ERROR';

  readonly status: number | undefined;
  /** 429, 503, other 5xx and network errors are worth another try; 4xx are not. */
  readonly retryable: boolean;
  /** From `Retry-After` (429/503), in milliseconds; the caller still caps it at the deadline. */
  readonly retryAfterMs: number | undefined;

  constructor(
    message: string,
    options: {
      status?: number;
      retryable: boolean;
      retryAfterMs?: number;
      context?: ErrorContext;
      cause?: unknown;
    },
  ) {
    super(UpstreamHttpError.code, message, {
      context: { status: options.status, ...options.context },
      cause: options.cause,
    });
    this.status = options.status;
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** A response body is not JSON or does not match the documented shape. */
export class PayloadValidationError extends PollerError {
  static readonly code = 'PAYLOAD_INVALID';

  constructor(message: string, context: ErrorContext = {}, cause?: unknown) {
    super(PayloadValidationError.code, message, { context, cause });
  }
}

/**
 * A page of the feed whose body could not be read at all (not UTF-8, not JSON): no event in it can
 * be told from another, so none can be quarantined alone. Retried within the invocation's budget
 * (a proxy's truncated or garbled answer passes), then reported; never taken for "no events".
 */
export class PageUnreadableError extends PollerError {
  static readonly code = 'PAGE_UNREADABLE';

  constructor(message: string, context: ErrorContext = {}) {
    super(PageUnreadableError.code, message, { context });
  }
}

/**
 * A page of the feed too large to read at once whose first event does not end within what was
 * read: the events before it would be read in parts (`page-prefix.ts`), but one event cannot be
 * split, and this one does not fit the memory the function gives a page. Raising the function's
 * memory raises that bound.
 */
export class PageTooLargeError extends PollerError {
  static readonly code = 'PAGE_TOO_LARGE';

  constructor(message: string, context: ErrorContext = {}) {
    super(PageTooLargeError.code, message, { context });
  }
}

/**
 * One event that the bus would refuse as it is (a detail-type longer than 128 characters or with
 * control characters, JSON nested deeper than PutEvents processes): it is quarantined with this
 * reason instead of stopping the feed at the bus's refusal.
 */
export class EventUnpublishableError extends PollerError {
  static readonly code = 'EVENT_UNPUBLISHABLE';

  constructor(message: string, context: ErrorContext = {}) {
    super(EventUnpublishableError.code, message, { context });
  }
}

/**
 * Processing one event failed in the runtime itself (a `RangeError`: the stack or a string's
 * length exhausted by its shape): the event is quarantined with this error, the feed goes on.
 */
export class EventUnprocessableError extends PollerError {
  static readonly code = 'EVENT_UNPROCESSABLE';

  constructor(message: string, context: ErrorContext = {}, cause?: unknown) {
    super(EventUnprocessableError.code, message, { context, cause });
  }
}

/**
 * One event whose sequence number lies implausibly far past the numbers before it (more than
 * `MAX_SEQUENCE_JUMP` above the cursor): it is held, not trusted, and quarantined once with this
 * code; the checkpoint does not move past numbers that may still come until an operator accepts
 * or rejects the jump (`banking-events-poller jumps`). See `sequence-jumps.ts`.
 */
export class SequenceJumpError extends PollerError {
  static readonly code = 'SEQUENCE_JUMP_HELD';

  constructor(sequenceNumber: number, cursor: number, maxJump: number, eventId: string) {
    super(
      SequenceJumpError.code,
      `Event ${eventId} has sequence number ${sequenceNumber}, ${sequenceNumber - cursor} past ${cursor}, ` +
        `the highest number before it; more than ${maxJump} (MAX_SEQUENCE_JUMP) is not trusted. It is held: ` +
        'events with lower numbers are still published, and the checkpoint stays below it until an operator ' +
        'accepts or rejects the jump (banking-events-poller jumps)',
      { context: { sequenceNumber, cursor, maxJump, eventId, field: 'sequence_number' } },
    );
  }
}

/** One event the service answered with that the poller cannot read or publish (it is quarantined). */
export function isUnreadableEvent(error: unknown): error is PollerError {
  return (
    error instanceof PayloadValidationError ||
    error instanceof EventUnpublishableError ||
    error instanceof EventUnprocessableError
  );
}

/**
 * Every answer of the feed held only events at or below the cursor: the upstream ignores the
 * cursor parameter (or reads it as inclusive), so polling would never get past them.
 */
export class FeedCursorError extends PollerError {
  static readonly code = 'FEED_CURSOR_IGNORED';

  constructor(cursor: number | null, polls: number) {
    super(
      FeedCursorError.code,
      `GET /events answered ${polls} poll(s) with only events at or below the cursor ${cursor ?? '(none)'}: ` +
        'the banking service ignores the cursor parameter or reads it as inclusive; check POLL_CURSOR_PARAM',
      { context: { cursor, polls } },
    );
  }
}

/**
 * One event is larger than a PutEvents entry may be and no claim-check bucket is configured (or
 * its pointer would not fit either): publishing stops before it so nothing is skipped.
 */
export class EventTooLargeError extends PollerError {
  static readonly code = 'EVENT_TOO_LARGE';

  constructor(eventId: string, sequenceNumber: number, sizeBytes: number, limitBytes: number) {
    super(
      EventTooLargeError.code,
      `Event ${eventId} (sequence ${sequenceNumber}) is ${sizeBytes} bytes as an entry on the bus; the limit is ${limitBytes}. ` +
        'The checkpoint stays before it; configure a claim-check bucket (CLAIM_CHECK_BUCKET) so such events go through the claim check.',
      { context: { eventId, sequenceNumber, sizeBytes, limitBytes } },
    );
  }
}

/**
 * Some entries were still rejected by the bus when the budget ran out or retries were exhausted;
 * or, thrown by a publisher, one request failed as a whole and `failure` says how, in the core's
 * words (`PublishFailure`, `ports.ts`): the pipeline decides by that alone.
 */
export class PublishError extends PollerError {
  static readonly code = 'PUBLISH_FAILED';
  /** How a whole request failed, as its publisher classified it; absent on the cycle's own report. */
  readonly failure: PublishFailure | undefined;

  constructor(message: string, context: ErrorContext = {}, cause?: unknown, failure?: PublishFailure) {
    super(PublishError.code, message, {
      context: failure === undefined ? context : { ...context, failure },
      cause,
    });
    this.failure = failure;
  }
}

/** Another invocation holds the lease, or took it over: this one must not write the checkpoint. */
export class LeaseLostError extends PollerError {
  static readonly code = 'LEASE_LOST';

  constructor(message: string, context: ErrorContext = {}, cause?: unknown) {
    super(LeaseLostError.code, message, { context, cause });
  }
}

/** A wait or request was cut short because the invocation's deadline came. Nothing is lost. */
export class DeadlineExceededError extends PollerError {
  static readonly code = 'DEADLINE_EXCEEDED';

  constructor(message = 'The invocation deadline was reached', context: ErrorContext = {}) {
    super(DeadlineExceededError.code, message, { context });
  }
}

/** A checkpoint write would move the checkpoint backwards: someone else moved it without the lease. */
export class CheckpointRegressionError extends PollerError {
  static readonly code = 'CHECKPOINT_REGRESSION';

  constructor(message: string, context: ErrorContext = {}) {
    super(CheckpointRegressionError.code, message, { context });
  }
}

/**
 * The feed returned events of another `program_id` than the one this checkpoint row serves: the
 * secret holds another program's credentials. Its sequence numbers mean nothing for this row, so
 * nothing is published and the checkpoint stays where it is.
 */
export class FeedProgramMismatchError extends PollerError {
  static readonly code = 'FEED_PROGRAM_MISMATCH';

  constructor(program: string, expectedProgramId: string, receivedProgramId: string, sequenceNumber: number) {
    super(
      FeedProgramMismatchError.code,
      `The feed of program ${program} returned an event of program_id ${receivedProgramId} (sequence ${sequenceNumber}), ` +
        `but this checkpoint belongs to program_id ${expectedProgramId}: the secret holds another program's credentials. ` +
        'Nothing was published and the checkpoint is unchanged; put the right credentials in the secret.',
      { context: { program, expectedProgramId, receivedProgramId, sequenceNumber } },
    );
  }
}

/**
 * A program without a checkpoint starts at `latest`, but the run ended before the fast-forward
 * through the existing events reached the end of the feed. Nothing was published or recorded.
 */
export class StartPositionIncompleteError extends PollerError {
  static readonly code = 'START_POSITION_INCOMPLETE';

  constructor(program: string, reached: number | null, pages: number) {
    super(
      StartPositionIncompleteError.code,
      `Program ${program} starts at "latest", but this run ended after fast-forwarding ${pages} page(s) ` +
        `(to sequence ${reached ?? 'none'}) before reaching the end of the feed; nothing was published or recorded. ` +
        `Run \`banking-events-poller rewind --program ${program} --to latest\`, which has no time limit.`,
      { context: { program, reached, pages } },
    );
  }
}

/**
 * An invocation carried an operator request (`{ "operatorRequest": … }`) the function cannot
 * run: malformed, an unknown kind or version, or a program it does not poll. Refused before
 * anything is read, published or written.
 */
export class OperatorRequestError extends PollerError {
  static readonly code = 'OPERATOR_REQUEST_INVALID';

  constructor(message: string, field: string) {
    super(OperatorRequestError.code, message, { context: { field } });
  }
}

/**
 * An invocation's event is not one the function takes: a key it does not know (a misspelling, a
 * prototype key), a value of the wrong form, or one too large or too deeply nested. Refused
 * before anything is read, published or written. `field` names where, bounded: a key the function
 * does not know shows as a short prefix and its length, and no value is ever quoted.
 */
export class InvocationInputError extends PollerError {
  static readonly code = 'INVOCATION_INVALID';

  constructor(message: string, field: string) {
    super(InvocationInputError.code, message, { context: { field } });
  }
}

/**
 * A program record (`core/fleet/program-record.ts`) that is not one: a field missing, of the wrong
 * form or out of bounds, or a listing of more programs than a registry may hold. `where` names the
 * record's source and `field` the field; no value is quoted but a valid program name. A worker
 * refuses that record alone: the others run.
 */
export class ProgramRecordInvalidError extends PollerError {
  static readonly code = 'PROGRAM_RECORD_INVALID';

  constructor(message: string, context: ErrorContext & { readonly where: string }) {
    super(ProgramRecordInvalidError.code, message, { context });
  }
}

/**
 * A write to a program record was based on a revision that is no longer the stored one (another
 * operator, or a deploy, wrote it meanwhile), or on a record that is gone or already exists.
 * Nothing was written: read the record again and retry.
 */
export class ProgramRevisionConflictError extends PollerError {
  static readonly code = 'PROGRAM_REVISION_CONFLICT';

  constructor(program: string, expected: number | 'absent', found: number | 'absent') {
    super(
      ProgramRevisionConflictError.code,
      `Program ${program} is ${found === 'absent' ? 'not in the registry' : `at revision ${found}`}, not ` +
        `${expected === 'absent' ? 'absent' : `at revision ${expected}`} as this write expected; nothing was written. ` +
        'Read it again and retry.',
      { context: { program, expected, found } },
    );
  }
}

/**
 * A program's own settings (its record's `settings`) hold a value its setting does not take, a
 * setting that may not differ per program, or break a rule between settings. That program is not
 * polled; the others are. `program` and `setting` name what to fix.
 */
export class ProgramSettingError extends PollerError {
  static readonly code = 'PROGRAM_SETTING_INVALID';

  constructor(
    message: string,
    context: ErrorContext & { readonly program: string; readonly setting: string },
  ) {
    super(ProgramSettingError.code, message, { context });
  }
}

/**
 * A program record names a secret outside the deployment's (not under its secrets prefix, nor one
 * of the secrets its stack was given): the worker does not read it, so one deployment's records
 * can never point its function at another's credentials. That program is not polled.
 */
export class ProgramSecretRefusedError extends PollerError {
  static readonly code = 'PROGRAM_SECRET_REFUSED';

  constructor(program: string, prefix: string | undefined) {
    super(
      ProgramSecretRefusedError.code,
      `Program ${program}'s secretId is not one of this deployment's secrets: ` +
        (prefix === undefined
          ? 'this function has no secrets prefix (SECRETS_PREFIX), so only the secrets of its stack are read'
          : `it is not under the secrets prefix ${prefix} nor one of the secrets of its stack`) +
        `; set the program's secret with \`banking-events-poller secret set --program ${program}\``,
      { context: { program, prefix } },
    );
  }
}

/**
 * A deploy's programs (the construct's `programs` prop) cannot be seeded as the stack's records:
 * a program of the props was added by an operator (`programs add`), or its item in the programs
 * table is not a readable record. The deploy fails with this reason and nothing of that program
 * is changed; `programs` names each one.
 */
export class ProgramSeedConflictError extends PollerError {
  static readonly code = 'PROGRAM_SEED_CONFLICT';

  constructor(message: string, context: ErrorContext & { readonly programs: string }) {
    super(ProgramSeedConflictError.code, message, { context });
  }
}

/**
 * Every error a run can fail with, each with its stable `code`: the runbook has an entry per code,
 * and log queries and alarms match on them. A new class of this family belongs here (a test checks
 * that every exported class is listed).
 */
export const POLLER_ERRORS = [
  ConfigurationError,
  ClientCertificateError,
  AuthenticationError,
  UpstreamHttpError,
  PayloadValidationError,
  PageUnreadableError,
  PageTooLargeError,
  EventUnpublishableError,
  EventUnprocessableError,
  SequenceJumpError,
  FeedCursorError,
  EventTooLargeError,
  PublishError,
  LeaseLostError,
  DeadlineExceededError,
  CheckpointRegressionError,
  FeedProgramMismatchError,
  StartPositionIncompleteError,
  OperatorRequestError,
  InvocationInputError,
  ProgramRecordInvalidError,
  ProgramRevisionConflictError,
  ProgramSettingError,
  ProgramSecretRefusedError,
  ProgramSeedConflictError,
] as const;

/** The stable codes of {@link POLLER_ERRORS}. */
export type PollerErrorCode = (typeof POLLER_ERRORS)[number]['code'];
