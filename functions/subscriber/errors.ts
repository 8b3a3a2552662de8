/**
 * The subscriber kit's error family. Every class carries a stable `code` (for log queries,
 * alarms and tests) and the context that tells a consumer what to fix: the field, the event's id,
 * the claim-check key. Never the payload: an event's data stays out of errors and log lines.
 */
export type SubscriberErrorContext = Readonly<Record<string, string | number | boolean | null | undefined>>;

export class SubscriberError extends Error {
  readonly code: string;
  readonly context: SubscriberErrorContext;

  constructor(
    code: string,
    message: string,
    options: { context?: SubscriberErrorContext; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.context = Object.freeze({ ...(options.context ?? {}) });
  }
}

/** The input is not an event of the poller: not JSON, or a field missing or of the wrong type or value. */
export class EventValidationError extends SubscriberError {
  static readonly code = 'EVENT_INVALID';

  /** The offending field's path in the event, e.g. `detail.data.amount`. */
  readonly field: string;

  constructor(message: string, field: string, context: SubscriberErrorContext = {}, cause?: unknown) {
    super(EventValidationError.code, message, { context: { field, ...context }, cause });
    this.field = field;
  }
}

/**
 * An integer outside ±(2^53 − 1) in the event: a JavaScript number cannot hold it exactly, and a
 * rounded amount is a wrong money movement, so the event is refused rather than handled with it.
 */
export class UnsafeIntegerError extends SubscriberError {
  static readonly code = 'EVENT_UNSAFE_INTEGER';

  readonly field: string;

  constructor(field: string, context: SubscriberErrorContext = {}) {
    super(
      UnsafeIntegerError.code,
      `${field} is an integer beyond ±(2^53 − 1), which a JavaScript number cannot hold exactly; ` +
        'the event is refused rather than handled with a rounded value (its message keeps the exact digits)',
      { context: { field, ...context } },
    );
    this.field = field;
  }
}

/** A claim-check body that is not the one the pointer names: another size or SHA-256, another event, another bucket. */
export class ClaimCheckMismatchError extends SubscriberError {
  static readonly code = 'CLAIM_CHECK_MISMATCH';

  constructor(message: string, context: SubscriberErrorContext = {}) {
    super(ClaimCheckMismatchError.code, message, { context });
  }
}

/** The claim-check body could not be read (missing object, access denied, S3 failing). */
export class ClaimCheckReadError extends SubscriberError {
  static readonly code = 'CLAIM_CHECK_UNREADABLE';

  constructor(message: string, context: SubscriberErrorContext = {}, cause?: unknown) {
    super(ClaimCheckReadError.code, message, { context, cause });
  }
}

/** The kit's options are missing or contradictory. */
export class SubscriberConfigurationError extends SubscriberError {
  static readonly code = 'CONFIGURATION_INVALID';

  constructor(message: string, context: SubscriberErrorContext = {}) {
    super(SubscriberConfigurationError.code, message, { context });
  }
}

/** Every error of the kit, each with its stable `code` (docs/subscribers.md lists them all). */
export const SUBSCRIBER_ERRORS = [
  EventValidationError,
  UnsafeIntegerError,
  ClaimCheckMismatchError,
  ClaimCheckReadError,
  SubscriberConfigurationError,
] as const;
