/**
 * What an unexpected HTTP status means for the poller, as pure functions: the feed and the token
 * cache both turn statuses into the same `UpstreamHttpError`s, so alarms and retries see one
 * vocabulary whichever request failed.
 */
import { UpstreamHttpError } from '../../core/errors.ts';
import { parseRetryAfter } from './retry-after.ts';

/** Where a response came from, for messages and error context. Never a query string or a header. */
export interface RequestTarget {
  readonly method: string;
  /** The path only, e.g. `/events`; tokens never travel in URLs, but queries are left out anyway. */
  readonly path: string;
}

/** 429 and every 5xx are worth another try; the upstream said so or is having a bad moment. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}

/** Only these two carry a `Retry-After` we honour (RFC 9110 §10.2.3). */
function honoursRetryAfter(status: number): boolean {
  return status === 429 || status === 503;
}

/**
 * The error for a status the caller has no specific meaning for. `detail` is a short, already
 * redacted summary of the error body (see `summarizeErrorBody`).
 */
export function upstreamErrorForStatus(
  target: RequestTarget,
  response: { readonly status: number; readonly retryAfter: string | readonly string[] | undefined },
  detail: string | undefined,
  nowMs: number,
): UpstreamHttpError {
  const { status } = response;
  const retryable = isRetryableStatus(status);
  const retryAfterMs = honoursRetryAfter(status) ? parseRetryAfter(response.retryAfter, nowMs) : undefined;
  const hint = retryable ? 'retryable' : 'not retryable';
  const suffix = detail ? `: ${detail}` : '';
  return new UpstreamHttpError(`${target.method} ${target.path} answered HTTP ${status} (${hint})${suffix}`, {
    status,
    retryable,
    retryAfterMs,
    context: { method: target.method, path: target.path, ...(detail ? { detail } : {}) },
  });
}
