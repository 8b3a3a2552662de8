/**
 * What a PutEvents request that failed as a whole means for the publish pipeline, on either bus:
 * a missing bus or a denied role is a `ConfigurationError` (retrying cannot fix it), a refusal
 * for size a `PublishError` marked `tooLarge` (for the claim check), throttling, server errors and
 * broken connections a retryable `PublishError`, another service error a final one.
 */
import type { BankingEvent } from '../../core/banking-event.ts';
import { isSizeRefusal } from '../../core/claim-check.ts';
import { ConfigurationError, PublishError } from '../../core/errors.ts';

/** Whole-request failures worth another try, by error name (the SDK has already retried them). */
const RETRYABLE_NAMES = new Set([
  'ThrottlingException',
  'Throttling',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'InternalException',
  'InternalFailure',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'RequestTimeout',
  'RequestTimeoutException',
  'TimeoutError',
]);
const NETWORK_ERROR_CODES = new Set([
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

/** What an SDK service error or a Node network error may carry. */
interface SdkErrorShape {
  readonly name: string;
  readonly code?: unknown;
  readonly $fault?: 'client' | 'server';
  readonly $retryable?: unknown;
  readonly $metadata?: { readonly httpStatusCode?: number; readonly requestId?: string };
}

export interface PutEventsFailureContext {
  /** How messages name the bus, e.g. `EventBridge bus bank-bus`. */
  readonly busLabel: string;
  /** The bus in the error's context, e.g. `{ eventBusName }`. */
  readonly busContext: Readonly<Record<string, string>>;
  /** The service's name for a validation error (the one a size refusal comes as). */
  readonly validationErrorNames: ReadonlySet<string>;
  readonly batch: readonly BankingEvent[];
  readonly signal: AbortSignal;
}

/** `error` as the publish pipeline reads it; see the module comment. */
export function translatePutEventsFailure(error: unknown, context: PutEventsFailureContext): unknown {
  const { batch, signal, busLabel } = context;
  // The deadline came: surface the signal's reason, as `Clock.sleep` does. Whether the bus got
  // the entries is unknown; the checkpoint has not moved, so they will be sent again.
  if (signal.aborted) return signal.reason ?? error;
  if (!(error instanceof Error)) return error;
  const shape = error as Error & SdkErrorShape;
  const status = shape.$metadata?.httpStatusCode;
  const details = {
    ...context.busContext,
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
  if (
    status === 413 ||
    (context.validationErrorNames.has(shape.name) && isSizeRefusal(shape.name, error.message))
  ) {
    // Marked for the claim check, which sends the entries again one at a time to find the large one.
    return new PublishError(
      `PutEvents to ${busLabel} was refused for its size (${shape.name}, HTTP ${status ?? '?'})`,
      { ...details, retryable: false, tooLarge: true },
      error,
    );
  }
  const isNetworkError = typeof shape.code === 'string' && NETWORK_ERROR_CODES.has(shape.code);
  const isServiceError = shape.$metadata !== undefined;
  if (!isNetworkError && !isServiceError && !RETRYABLE_NAMES.has(shape.name)) return error;
  const retryable =
    isNetworkError ||
    RETRYABLE_NAMES.has(shape.name) ||
    shape.$retryable !== undefined ||
    shape.$fault === 'server' ||
    (status !== undefined && (status === 429 || status >= 500));
  return new PublishError(
    `PutEvents to ${busLabel} failed as a whole (${shape.name}${status === undefined ? '' : `, HTTP ${status}`})`,
    { ...details, retryable },
    error,
  );
}
