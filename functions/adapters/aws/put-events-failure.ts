/**
 * What a failed PutEvents means, on either bus, in the core's words (`PublishFailure`): the one
 * place where the bus's error names and messages are read. A whole request that failed is a
 * `ConfigurationError` (a missing bus, a denied role: the deployment must change) or a
 * `PublishError` whose `failure` says how; a rejected entry gets its `failure` from its code.
 *
 * - `throttled`: the bus's throttling names, or HTTP 429;
 * - `too-large`: a validation error whose message speaks of the size, or HTTP 413;
 * - `transient`: server errors, timeouts, broken connections, and an entry code we do not know
 *   (worth the pipeline's bounded attempts);
 * - `rejected`: another service error to a whole request, or an entry code the bus documents as
 *   not retryable.
 */
import type { BankingEvent } from '../../core/banking-event.ts';
import { ConfigurationError, PublishError } from '../../core/errors.ts';
import type { PublishFailure } from '../../core/ports.ts';

/** Names with which AWS says "slow down", for a whole request or one entry. */
export const THROTTLE_NAMES: ReadonlySet<string> = new Set([
  'ThrottlingException',
  'Throttling',
  'TooManyRequestsException',
  'RequestLimitExceeded',
]);
/** Whole-request failures that may pass on their own, by error name. */
export const TRANSIENT_NAMES: ReadonlySet<string> = new Set([
  'InternalException',
  'InternalFailure',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'RequestTimeout',
  'RequestTimeoutException',
  'TimeoutError',
]);
const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  // undici's own: a socket closed or reset, a connection or an answer that timed out.
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
]);

/** A bus's own names, as its adapter states them. */
export interface BusErrorNames {
  /** How messages name the bus, e.g. `EventBridge bus bank-bus`. */
  readonly busLabel: string;
  /** The bus in an error's context, e.g. `{ eventBusName }`. */
  readonly busContext: Readonly<Record<string, string>>;
  /** The service's name for a validation error (the one a size refusal comes as). */
  readonly validationErrorNames: ReadonlySet<string>;
  /** Entry error codes the bus documents as not retryable. */
  readonly refusedEntryCodes: ReadonlySet<string>;
}

/**
 * Whether the bus refused an entry (or a whole request) for its size: EventBridge answers with a
 * validation error whose message speaks of the size. Our own estimate of an entry's size can
 * disagree with the bus's (a region still at the old cap, a limit set above it), and such an
 * entry goes through the claim check too.
 */
export function isSizeRefusal(errorCode: string, errorMessage: string): boolean {
  if (THROTTLE_NAMES.has(errorCode) || /throttl|internal|unavailable/i.test(errorCode)) return false;
  return /too large|too big|\bsize\b|exceed|over the limit/i.test(errorMessage);
}

/** The failure of one rejected entry, from the code and message the bus gave it. */
export function entryFailure(errorCode: string, errorMessage: string, names: BusErrorNames): PublishFailure {
  if (THROTTLE_NAMES.has(errorCode)) return 'throttled';
  if (isSizeRefusal(errorCode, errorMessage)) return 'too-large';
  if (names.refusedEntryCodes.has(errorCode)) return 'rejected';
  return 'transient';
}

/** What an SDK service error or a Node network error may carry. */
interface SdkErrorShape {
  readonly name: string;
  readonly code?: unknown;
  readonly $fault?: 'client' | 'server';
  readonly $retryable?: { readonly throttling?: boolean };
  readonly $metadata?: { readonly httpStatusCode?: number; readonly requestId?: string };
}

export interface PutEventsFailureContext {
  readonly names: BusErrorNames;
  readonly batch: readonly BankingEvent[];
  readonly signal: AbortSignal;
}

/** `error`, thrown by a whole PutEvents request, as the publish pipeline reads it; see the module comment. */
export function translatePutEventsFailure(error: unknown, context: PutEventsFailureContext): unknown {
  const { batch, signal, names } = context;
  const { busLabel } = names;
  // The deadline came: surface the signal's reason, as `Clock.sleep` does. Whether the bus got
  // the entries is unknown; the checkpoint has not moved, so they will be sent again.
  if (signal.aborted) return signal.reason ?? error;
  if (!(error instanceof Error)) return error;
  const shape = error as Error & SdkErrorShape;
  const status = shape.$metadata?.httpStatusCode;
  const details = {
    ...names.busContext,
    awsError: shape.name,
    status,
    requestId: shape.$metadata?.requestId,
    entries: batch.length,
    firstSequenceNumber: batch[0]?.sequence_number,
    lastSequenceNumber: batch.at(-1)?.sequence_number,
  };
  if (shape.name === 'ResourceNotFoundException') {
    return new ConfigurationError(`${busLabel} does not exist`, details, error);
  }
  if (shape.name === 'AccessDeniedException') {
    return new ConfigurationError(
      `The function role may not put events on ${busLabel} (needs events:PutEvents on it)`,
      details,
      error,
    );
  }
  const failure = requestFailure(shape, status, names);
  if (failure === undefined) return error;
  if (failure === 'too-large') {
    // For the claim check, which sends the entries again one at a time to find the large one.
    return new PublishError(
      `PutEvents to ${busLabel} was refused for its size (${shape.name}, HTTP ${status ?? '?'})`,
      details,
      error,
      failure,
    );
  }
  return new PublishError(
    `PutEvents to ${busLabel} failed as a whole (${shape.name}${status === undefined ? '' : `, HTTP ${status}`})`,
    details,
    error,
    failure,
  );
}

/** How a whole request failed; `undefined` for an error that is neither a service's nor the network's. */
function requestFailure(
  shape: Error & SdkErrorShape,
  status: number | undefined,
  names: BusErrorNames,
): PublishFailure | undefined {
  if (
    status === 413 ||
    (names.validationErrorNames.has(shape.name) && isSizeRefusal(shape.name, shape.message))
  ) {
    return 'too-large';
  }
  if (THROTTLE_NAMES.has(shape.name) || status === 429 || shape.$retryable?.throttling === true) {
    return 'throttled';
  }
  const isNetworkError = typeof shape.code === 'string' && NETWORK_ERROR_CODES.has(shape.code);
  if (
    isNetworkError ||
    TRANSIENT_NAMES.has(shape.name) ||
    shape.$retryable !== undefined ||
    shape.$fault === 'server' ||
    (status !== undefined && status >= 500)
  ) {
    return 'transient';
  }
  // Another service error will not fix itself within the invocation; anything else is not ours to read.
  return shape.$metadata !== undefined ? 'rejected' : undefined;
}
