/**
 * Authenticated requests to the banking service, shared by the feed (polls, lookups) and the
 * stream: the bearer header, the one-time 401 refresh, the error for an unexpected status, and
 * the translation of whatever escapes into the poller's errors.
 */
import type { Dispatcher } from 'undici';
import { AuthenticationError, PollerError } from '../../core/errors.ts';
import type { CredentialsProvider } from '../../core/ports.ts';
import { type RequestTarget, upstreamErrorForStatus } from './http-status.ts';
import { discardBody, readErrorBody, summarizeErrorBody } from './response-body.ts';
import type { AccessToken, AccessTokenSource } from './token-cache.ts';
import { deadlineError, networkError, sendUpstreamRequest, throwIfAborted } from './upstream-request.ts';

export interface AuthenticatedRequestsOptions {
  /** Gives the base URL; `refresh()` is called after a 401, as the secret may have been rotated. */
  readonly credentials: CredentialsProvider;
  readonly tokens: AccessTokenSource;
  /** Overrides the token's dispatcher (tests). @default the dispatcher each token was issued over */
  readonly dispatcher?: Dispatcher;
  /** Epoch milliseconds, for `Retry-After` dates. @default Date.now */
  readonly clock?: () => number;
  /** Called when a 401 made the request refresh credentials and retry (a log line or metric). */
  readonly onAuthRetry?: (target: RequestTarget) => void;
}

/** One GET to the banking service. */
export interface Exchange {
  readonly target: RequestTarget;
  /** e.g. `GET /events`, for payload errors. */
  readonly source: string;
  readonly query?: URLSearchParams;
  /** Besides the bearer header. @default { accept: 'application/json' } */
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal: AbortSignal;
}

export interface AuthenticatedResponse {
  readonly response: Dispatcher.ResponseData;
  readonly token: AccessToken;
}

export class AuthenticatedRequests {
  readonly #credentials: CredentialsProvider;
  readonly #tokens: AccessTokenSource;
  readonly #dispatcher: Dispatcher | undefined;
  readonly #clock: () => number;
  readonly #onAuthRetry: ((target: RequestTarget) => void) | undefined;

  constructor(options: AuthenticatedRequestsOptions) {
    this.#credentials = options.credentials;
    this.#tokens = options.tokens;
    this.#dispatcher = options.dispatcher;
    this.#clock = options.clock ?? Date.now;
    this.#onAuthRetry = options.onAuthRetry;
  }

  /** Fetches the credentials and a token ahead of the first request (cached afterwards). */
  async prepare(signal: AbortSignal): Promise<void> {
    await this.#tokens.getAccessToken(signal);
  }

  /**
   * Runs one authenticated exchange and hands the response to `handle`, translating whatever
   * escapes (see `translate`).
   */
  async run<T>(exchange: Exchange, handle: (authenticated: AuthenticatedResponse) => Promise<T>): Promise<T> {
    try {
      return await handle(await this.#sendAuthenticated(exchange));
    } catch (error) {
      throw translate(error, exchange);
    }
  }

  /** The error for an unexpected status; the summary of its body is scrubbed of token and secret. */
  async statusError(exchange: Exchange, { response, token }: AuthenticatedResponse): Promise<PollerError> {
    const credentials = await this.#credentials.get();
    const text = await readErrorBody(response.body, exchange.signal);
    const detail = summarizeErrorBody(text, [token.value, credentials.clientSecret]);
    return upstreamErrorForStatus(
      exchange.target,
      { status: response.statusCode, retryAfter: response.headers['retry-after'] },
      detail,
      this.#clock(),
    );
  }

  /**
   * Sends with the current token; on 401 forgets it, re-reads the credentials (the secret may have
   * been rotated), fetches a new token and tries once more. A second 401 is not a stale token.
   */
  async #sendAuthenticated(exchange: Exchange): Promise<AuthenticatedResponse> {
    const { signal, target } = exchange;
    const first = await this.#send(exchange, await this.#tokens.getAccessToken(signal));
    if (first.response.statusCode !== 401) return first;
    await discardBody(first.response.body);
    this.#tokens.invalidate(first.token.value);
    this.#onAuthRetry?.(target);
    throwIfAborted(signal, target);
    await this.#credentials.refresh();
    const second = await this.#send(exchange, await this.#tokens.getAccessToken(signal));
    if (second.response.statusCode !== 401) return second;
    await discardBody(second.response.body);
    this.#tokens.invalidate(second.token.value);
    throw new AuthenticationError(
      `${target.method} ${target.path}: the banking service refused a freshly issued token (HTTP 401 twice, ` +
        'credentials re-read in between); check that the client may read events and that base_url is the ' +
        "client's environment",
      { method: target.method, path: target.path, status: 401 },
    );
  }

  /**
   * The token goes only to the base URL that issued it, only in the Authorization header, and over
   * the connections (client certificate) it was issued over.
   */
  async #send(exchange: Exchange, token: AccessToken): Promise<AuthenticatedResponse> {
    const query = exchange.query?.toString();
    const response = await sendUpstreamRequest({
      ...exchange.target,
      method: 'GET',
      url: `${token.baseUrl}${exchange.target.path}${query ? `?${query}` : ''}`,
      headers: { accept: 'application/json', ...exchange.headers, authorization: `Bearer ${token.value}` },
      dispatcher: this.#dispatcher ?? token.dispatcher,
      signal: exchange.signal,
    });
    return { response, token };
  }
}

/**
 * What escapes an exchange, as the poller's error: the deadline first (an abort surfaces as many
 * different undici errors), then our own errors as they are, then anything else as a network
 * failure (retryable).
 */
export function translate(error: unknown, { signal, target }: Exchange): unknown {
  if (signal.aborted) return deadlineError(signal, target);
  if (error instanceof PollerError) return error;
  return networkError(error, target);
}
