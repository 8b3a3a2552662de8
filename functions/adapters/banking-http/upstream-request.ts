/**
 * The one place that calls undici: sends a request to the banking service and turns transport
 * failures into the poller's errors. An aborted `signal` becomes `DeadlineExceededError`; a reset,
 * refused or timed-out connection becomes a retryable `UpstreamHttpError`. Statuses are left to
 * the caller, which knows what they mean for its endpoint.
 */
import { type Dispatcher, request } from 'undici';
import { DeadlineExceededError, UpstreamHttpError } from '../../core/errors.ts';
import type { RequestTarget } from './http-status.ts';
import { ProxyTunnelError } from './proxy-tunnel.ts';

/**
 * Longer than the upstream's 60 s poll hold, so only the caller's `signal` (the invocation
 * deadline) ends a long poll; undici's own timers are a backstop for a signal that never fires.
 */
export const TRANSPORT_TIMEOUT_MS = 90_000;

export interface UpstreamRequest extends RequestTarget {
  readonly method: 'GET' | 'POST';
  /** Absolute URL: base URL, path and query. Never carries a credential. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly dispatcher: Dispatcher | undefined;
  readonly signal: AbortSignal;
  /** What helps explain a failure before any response. */
  readonly hints?: NetworkErrorHints;
}

/**
 * The error to reject with once `signal` has aborted: the signal's reason when it already is a
 * `DeadlineExceededError` (the cycle's own), otherwise a new one naming the request, with the
 * reason (an `AbortError` or `TimeoutError` DOMException) as its cause.
 */
export function deadlineError(signal: AbortSignal, target: RequestTarget): DeadlineExceededError {
  if (signal.reason instanceof DeadlineExceededError) return signal.reason;
  const message = `${target.method} ${target.path} was cut short by the invocation deadline`;
  const error = new DeadlineExceededError(message, { method: target.method, path: target.path });
  // DeadlineExceededError takes no cause; attach it the way `Error` does (own, non-enumerable).
  return Object.defineProperty(error, 'cause', { value: signal.reason, enumerable: false, writable: true });
}

/** Rejects at once when `signal` has already aborted, so no request starts after the deadline. */
export function throwIfAborted(signal: AbortSignal, target: RequestTarget): void {
  if (signal.aborted) throw deadlineError(signal, target);
}

/** Requests sent through each dispatcher whose response has not ended (or failed) yet. */
const inFlight = new WeakMap<Dispatcher, number>();

/**
 * Requests sent through `dispatcher` that have not settled: no response yet, or a body not read
 * to its end nor destroyed. After a run, one still counted here is stuck (`BankConnections.endOfWork`).
 */
export function requestsInFlight(dispatcher: Dispatcher): number {
  return inFlight.get(dispatcher) ?? 0;
}

function track(dispatcher: Dispatcher | undefined, pending: Promise<Dispatcher.ResponseData>): void {
  if (dispatcher === undefined) return;
  inFlight.set(dispatcher, requestsInFlight(dispatcher) + 1);
  const settled = (): void => {
    inFlight.set(dispatcher, requestsInFlight(dispatcher) - 1);
  };
  pending.then(({ body }) => {
    if (body.closed) settled();
    else body.once('close', settled);
  }, settled);
}

/**
 * Sends the request; resolves with whatever status came back (redirects are not followed: they
 * would carry the Authorization header to another location).
 *
 * undici acts on `signal` only once the request has a connection, so a request queued behind a
 * busy pool would outlive the deadline; the race below rejects at the abort regardless, and a
 * response that still arrives afterwards has its body destroyed.
 */
export async function sendUpstreamRequest(options: UpstreamRequest): Promise<Dispatcher.ResponseData> {
  const { signal } = options;
  const target: RequestTarget = { method: options.method, path: options.path };
  throwIfAborted(signal, target);
  const pending = request(options.url, {
    method: options.method,
    headers: { ...options.headers },
    body: options.body ?? null,
    dispatcher: options.dispatcher,
    signal,
    headersTimeout: TRANSPORT_TIMEOUT_MS,
    bodyTimeout: TRANSPORT_TIMEOUT_MS,
  });
  track(options.dispatcher, pending);
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(deadlineError(signal, target));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([pending, aborted]);
  } catch (error) {
    if (signal.aborted) {
      pending.then(
        (late) => late.body.destroy(),
        () => undefined,
      );
      throw deadlineError(signal, target);
    }
    throw networkError(error, target, options.hints);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/** Node's codes for a server certificate the client does not trust (no retry will change that). */
const UNTRUSTED_SERVER_CERTIFICATE = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);
/** A TLS alert from the server: it refused the handshake, often the client certificate. */
const HANDSHAKE_ALERT = /^ERR_SSL_(SSLV3|TLSV1|TLSV13)_ALERT_/;
/** How a connection ends when the server drops it without an answer. */
const CLOSED_WITHOUT_ANSWER = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

export interface NetworkErrorHints {
  /** The connection presented a client certificate: a server that refuses one may just close it. */
  readonly clientCertificate?: boolean;
}

/**
 * A request that got no response at all. Retryable (GET is idempotent and a token request has no
 * side effect worth protecting), except for a TLS handshake that failed on a certificate, which no
 * retry fixes. The message names the error code only; undici's own message (kept as the cause)
 * may name the host, which is not a secret but not needed either.
 */
export function networkError(
  error: unknown,
  target: RequestTarget,
  hints: NetworkErrorHints = {},
): UpstreamHttpError {
  const request = `${target.method} ${target.path}`;
  if (error instanceof ProxyTunnelError) return proxyError(error, request, target);
  const code = (error as { code?: unknown } | null)?.code;
  const label = typeof code === 'string' ? code : error instanceof Error ? error.name : 'unknown error';
  const context = { method: target.method, path: target.path, errorCode: label };
  if (UNTRUSTED_SERVER_CERTIFICATE.has(label)) {
    return new UpstreamHttpError(
      `${request}: the banking service's TLS certificate is not trusted (${label}); when the bank's ` +
        'certificate is issued by a private CA, put that CA in the secret as ca_certificate',
      { retryable: false, context, cause: error },
    );
  }
  if (HANDSHAKE_ALERT.test(label)) {
    return new UpstreamHttpError(
      `${request}: the banking service refused the TLS handshake (${label}); check that it accepts ` +
        'client_certificate (registered with the bank, signed by a CA it trusts, not expired)',
      { retryable: false, context, cause: error },
    );
  }
  const hint =
    hints.clientCertificate === true && CLOSED_WITHOUT_ANSWER.has(label)
      ? '; a server that requires a client certificate closes the connection like this when it does not ' +
        'accept client_certificate (not registered with the bank, or signed by a CA it does not trust)'
      : '';
  return new UpstreamHttpError(`${request} failed before a response: ${label} (retryable)${hint}`, {
    retryable: true,
    context,
    cause: error,
  });
}

/**
 * The egress proxy did not open the tunnel: named (address and variable, never its credentials),
 * with what it answered. A 407 (its credentials) or another refusal below 500 is not retryable;
 * a proxy that could not be reached, dropped the connection, or answered 429 or 5xx is.
 */
function proxyError(error: ProxyTunnelError, request: string, target: RequestTarget): UpstreamHttpError {
  const { status } = error;
  const retryable = status === undefined || status === 429 || status >= 500;
  const hint =
    status === 407
      ? `: it wants credentials it was not given or refused them; check the user and password in ${error.proxy.variable}`
      : status !== undefined && !retryable
        ? `: it does not let this function reach ${error.target}; check the proxy's rules`
        : '';
  return new UpstreamHttpError(
    `${request} failed before a response: ${error.message}${hint} (${retryable ? 'retryable' : 'not retryable'})`,
    {
      retryable,
      context: {
        method: target.method,
        path: target.path,
        errorCode: error.code,
        proxy: error.proxy.address,
        proxyTarget: error.target,
        ...(status === undefined ? { proxyFailure: error.failureCode } : { proxyStatus: status }),
      },
    },
  );
}
