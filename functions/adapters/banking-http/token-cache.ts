/**
 * OAuth 2.0 client-credentials tokens for the banking service, cached until shortly before they
 * expire, fetched once however many callers ask at the same moment.
 */
import type { Dispatcher } from 'undici';
import { AuthenticationError, DeadlineExceededError, PollerError } from '../../core/errors.ts';
import { isJsonObject } from '../../core/json-object.ts';
import type { BankingCredentials, CredentialsProvider } from '../../core/ports.ts';
import { BankConnections, type DispatcherSource } from './bank-connections.ts';
import { bearerTokenOf } from './bearer-token.ts';
import { type RequestTarget, upstreamErrorForStatus } from './http-status.ts';
import { DEFAULT_MAX_BODY_BYTES, readErrorBody, readJsonBody, summarizeErrorBody } from './response-body.ts';
import { deadlineError, networkError, sendUpstreamRequest, throwIfAborted } from './upstream-request.ts';

const TOKEN_TARGET: RequestTarget = Object.freeze({ method: 'POST', path: '/oauth2/token' });
const TOKEN_SOURCE = 'POST /oauth2/token';
/** Statuses with which the token endpoint refuses the credentials themselves (RFC 6749 §5.2). */
const REFUSED_STATUSES = new Set([400, 401, 403]);

/**
 * An issued access token and the base URL of the service that issued it: the feed sends it only
 * there, so a rotated secret pointing at another environment never receives the old token. It
 * also keeps the connections it was issued over, so it travels with the client certificate it may
 * be bound to (RFC 8705). Logging or serializing one shows `[redacted]` instead of the value.
 */
export class AccessToken {
  readonly #value: string;
  readonly baseUrl: string;
  /** Epoch ms at which the token stops being valid, by the issuer's `expires_in`. */
  readonly expiresAt: number;
  /** The dispatcher the token was requested through; requests that carry it use it too. */
  readonly dispatcher: Dispatcher | undefined;

  constructor(value: string, baseUrl: string, expiresAt: number, dispatcher?: Dispatcher) {
    this.#value = value;
    this.baseUrl = baseUrl;
    this.expiresAt = expiresAt;
    this.dispatcher = dispatcher;
  }

  /** The bearer value, for the Authorization header only. */
  get value(): string {
    return this.#value;
  }

  toJSON(): Record<string, unknown> {
    return { value: '[redacted]', baseUrl: this.baseUrl, expiresAt: this.expiresAt };
  }

  toString(): string {
    return '[AccessToken redacted]';
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `AccessToken { value: '[redacted]', baseUrl: '${this.baseUrl}', expiresAt: ${this.expiresAt} }`;
  }

  /** The same token, sent over `dispatcher` (the current connections for the same TLS material). */
  via(dispatcher: Dispatcher): AccessToken {
    return dispatcher === this.dispatcher
      ? this
      : new AccessToken(this.#value, this.baseUrl, this.expiresAt, dispatcher);
  }
}

/** What the feed needs from a token source; tests may substitute their own. */
export interface AccessTokenSource {
  /** A valid token, cached or freshly issued. Rejects with `DeadlineExceededError` once `signal` aborts. */
  getAccessToken(signal: AbortSignal): Promise<AccessToken>;
  /** Forgets `token` if it is still the cached one; returns whether it was. */
  invalidate(token: string): boolean;
}

export interface ClientCredentialsTokenProviderOptions {
  /** Where `baseUrl`, `clientId` and `clientSecret` come from; read on every refresh. */
  readonly credentials: CredentialsProvider;
  /**
   * One undici dispatcher for every request whatever the secret holds (a `MockAgent` in tests);
   * give either this or `connections`.
   * @default none: the dispatcher comes from `connections`
   */
  readonly dispatcher?: Dispatcher;
  /**
   * The dispatcher per secret value: the client certificate it names, the egress proxy of the
   * environment. Share it with nothing else: it follows this provider's secret.
   * @default a new `BankConnections`
   */
  readonly connections?: DispatcherSource;
  /**
   * Epoch milliseconds.
   * @default Date.now
   */
  readonly clock?: () => number;
  /**
   * A token is refreshed this long before it expires, so a request never leaves with a token that
   * expires on the way. Capped at half the token's lifetime, so short-lived tokens are still reused.
   * @default 60_000
   */
  readonly skewMs?: number;
  /**
   * Lifetime assumed when the token response has no usable `expires_in` (the interface documents one hour).
   * @default 3600
   */
  readonly defaultLifetimeSeconds?: number;
  /** Called once per token actually requested from the endpoint (the `AuthRefreshes` metric). */
  readonly onRefresh?: () => void;
}

interface CachedToken {
  readonly token: AccessToken;
  readonly identity: string;
  /** Epoch ms after which the cache no longer hands this token out. */
  readonly refreshAt: number;
}

/** One token request shared by every caller that asked while it was running. */
interface Flight {
  readonly identity: string;
  readonly promise: Promise<CachedToken>;
  readonly controller: AbortController;
  /** The signal of the caller that started it: the request ends when it aborts, whoever waits. */
  readonly starter: AbortSignal;
  waiters: number;
}

/**
 * Secret rotation (new id, secret, environment or client certificate) makes the cached token
 * belong to someone else.
 */
function identityOf(credentials: BankingCredentials): string {
  return JSON.stringify([
    credentials.baseUrl,
    credentials.clientId,
    credentials.clientSecret,
    credentials.tls ?? null,
  ]);
}

/** `expires_in` in seconds, as a number or numeric string; anything else means "not given". */
function lifetimeSeconds(raw: unknown): number | undefined {
  const value = typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : raw;
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

/**
 * Fetches and caches client-credentials tokens.
 *
 * Keep one instance per secret at module scope so the token survives warm invocations (it is
 * valid for an hour; a cold start costs one token request). The provider re-reads credentials on
 * every call, so a rotated secret is picked up without a new instance.
 *
 * @example
 * // functions/poller/handler.ts, module scope:
 * const tokenProviders = new Map<string, ClientCredentialsTokenProvider>();
 * function tokensFor(secretId: string, credentials: CredentialsProvider, metrics: MetricsSink) {
 *   let provider = tokenProviders.get(secretId);
 *   if (!provider) {
 *     provider = new ClientCredentialsTokenProvider({
 *       credentials,
 *       connections: new BankConnections(),
 *       onRefresh: () => metrics.add('AuthRefreshes', 'Count', 1),
 *     });
 *     tokenProviders.set(secretId, provider);
 *   }
 *   return provider;
 * }
 * // `onRefresh` is fixed at construction: give it a sink that forwards to the current
 * // invocation's metrics object rather than capturing the first invocation's.
 */
export class ClientCredentialsTokenProvider implements AccessTokenSource {
  readonly #credentials: CredentialsProvider;
  readonly #connections: DispatcherSource;
  readonly #clock: () => number;
  readonly #skewMs: number;
  readonly #defaultLifetimeSeconds: number;
  readonly #onRefresh: (() => void) | undefined;
  #cached: CachedToken | undefined;
  #flight: Flight | undefined;

  constructor(options: ClientCredentialsTokenProviderOptions) {
    this.#credentials = options.credentials;
    if (options.dispatcher !== undefined && options.connections !== undefined) {
      throw new TypeError('give either dispatcher or connections, not both');
    }
    const { dispatcher } = options;
    this.#connections =
      dispatcher === undefined
        ? (options.connections ?? new BankConnections())
        : { dispatcherFor: () => dispatcher };
    this.#clock = options.clock ?? Date.now;
    this.#skewMs = options.skewMs ?? 60_000;
    this.#defaultLifetimeSeconds = options.defaultLifetimeSeconds ?? 3600;
    this.#onRefresh = options.onRefresh;
    if (!Number.isFinite(this.#skewMs) || this.#skewMs < 0) {
      throw new RangeError(`skewMs must be a non-negative number of milliseconds, got ${this.#skewMs}`);
    }
    if (!Number.isFinite(this.#defaultLifetimeSeconds) || this.#defaultLifetimeSeconds <= 0) {
      throw new RangeError(`defaultLifetimeSeconds must be positive, got ${this.#defaultLifetimeSeconds}`);
    }
  }

  /** The bearer token value; see `getAccessToken`. */
  async getToken(signal: AbortSignal): Promise<string> {
    return (await this.getAccessToken(signal)).value;
  }

  /**
   * A cached token while it is fresh for the current credentials, else a new one. Concurrent
   * callers share one token request; a caller whose `signal` aborts stops waiting at once (with
   * `DeadlineExceededError`). The request itself is aborted when no caller is left, and at the
   * latest when the signal of the caller that started it aborts (its cycle's deadline, or its
   * end), whoever still waits: a token request never outlives the run that sent it.
   *
   * @throws AuthenticationError when the endpoint refuses the credentials (400, 401, 403), also
   *   after the secret was read again (a rotated secret is picked up here).
   * @throws UpstreamHttpError on 429 and 5xx (retryable, with `retryAfterMs` when given) and on
   *   network failures (retryable), or another status (not retryable).
   * @throws PayloadValidationError when a 200 has no string `access_token`.
   * @throws AuthenticationError when a 200's `access_token` is not a bearer token (RFC 6750
   *   b64token, at most `MAX_ACCESS_TOKEN_CHARS`) or its `token_type` is not Bearer (see
   *   `bearer-token.ts`); not retryable, the value never shown.
   */
  async getAccessToken(signal: AbortSignal): Promise<AccessToken> {
    throwIfAborted(signal, TOKEN_TARGET);
    const credentials = await this.#credentials.get();
    try {
      return await this.#tokenFor(credentials, signal);
    } catch (error) {
      if (!(error instanceof AuthenticationError)) throw error;
      // After a rotation the cached credentials are refused once the old token expires on its own
      // (no 401 from the API to prompt a re-read): read the secret again, and ask once more if it
      // changed.
      const reread = await this.#credentials.refresh();
      if (identityOf(reread) === identityOf(credentials)) throw error;
      return this.#tokenFor(reread, signal);
    }
  }

  async #tokenFor(credentials: BankingCredentials, signal: AbortSignal): Promise<AccessToken> {
    // Before the cache: a client certificate that has expired since is refused with a token cached.
    const dispatcher = this.#connections.dispatcherFor(credentials);
    const identity = identityOf(credentials);
    const cached = this.#cached;
    // Over the current connections: those the token was issued over may have been closed since
    // (a request stuck on them at the end of a run); the identity keeps the same TLS material.
    if (cached && cached.identity === identity && this.#clock() < cached.refreshAt) {
      return cached.token.via(dispatcher);
    }
    for (;;) {
      let flight = this.#flight;
      if (!flight || flight.identity !== identity) {
        flight = this.#startFlight(credentials, identity, dispatcher, signal);
      }
      try {
        return (await this.#wait(flight, signal)).token.via(dispatcher);
      } catch (error) {
        // The caller that started the request gave up (its run ended) while this one still has
        // time: it asks again, starting the request itself. At most once per other starter.
        const starterLeft = flight.starter !== signal && flight.starter.aborted;
        if (!(error instanceof DeadlineExceededError && starterLeft && !signal.aborted)) throw error;
      }
    }
  }

  /**
   * Drops `token` if it is still the cached one. A 401 for an older token (one replaced while the
   * request was in flight) leaves the newer token in place.
   */
  invalidate(token: string): boolean {
    if (this.#cached?.token.value !== token) return false;
    this.#cached = undefined;
    return true;
  }

  #startFlight(
    credentials: BankingCredentials,
    identity: string,
    dispatcher: Dispatcher,
    starter: AbortSignal,
  ): Flight {
    const controller = new AbortController();
    // Bounded by the starter's signal too: a caller that never gives up (or never hears its
    // deadline) cannot keep the request, and its connection, alive past the starter's run.
    const promise = this.#requestToken(
      credentials,
      identity,
      dispatcher,
      AbortSignal.any([controller.signal, starter]),
    );
    const flight: Flight = { identity, promise, controller, starter, waiters: 0 };
    this.#flight = flight;
    const settle = () => {
      if (this.#flight === flight) this.#flight = undefined;
    };
    promise.then((fresh) => {
      // A flight for older credentials must not overwrite a token of newer ones.
      if (this.#flight === flight || this.#cached === undefined) this.#cached = fresh;
      settle();
    }, settle);
    return flight;
  }

  /** Waits for the shared flight, but gives up alone when this caller's `signal` aborts. */
  #wait(flight: Flight, signal: AbortSignal): Promise<CachedToken> {
    flight.waiters += 1;
    return new Promise<CachedToken>((resolve, reject) => {
      let left = false;
      const leave = (): boolean => {
        if (left) return false;
        left = true;
        flight.waiters -= 1;
        signal.removeEventListener('abort', onAbort);
        return true;
      };
      const onAbort = () => {
        if (!leave()) return;
        reject(deadlineError(signal, TOKEN_TARGET));
        if (flight.waiters === 0) {
          // Nobody wants this token any more; a later caller starts a new request.
          if (this.#flight === flight) this.#flight = undefined;
          flight.controller.abort(signal.reason);
        }
      };
      flight.promise.then(
        (fresh) => {
          if (leave()) resolve(fresh);
        },
        (error: unknown) => {
          if (leave()) reject(error);
        },
      );
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  async #requestToken(
    credentials: BankingCredentials,
    identity: string,
    dispatcher: Dispatcher,
    signal: AbortSignal,
  ): Promise<CachedToken> {
    const secrets = [credentials.clientSecret];
    const startedAt = this.#clock();
    this.#onRefresh?.();
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: credentials.clientId,
      client_secret: credentials.clientSecret,
    });
    try {
      const response = await sendUpstreamRequest({
        ...TOKEN_TARGET,
        method: 'POST',
        url: `${credentials.baseUrl}/oauth2/token`,
        headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
        dispatcher,
        signal,
        hints: { clientCertificate: credentials.tls?.clientCertificate !== undefined },
      });
      const { statusCode: status, headers, body } = response;
      if (status !== 200) {
        const detail = summarizeErrorBody(await readErrorBody(body, signal), secrets);
        if (REFUSED_STATUSES.has(status)) {
          throw new AuthenticationError(
            `${TOKEN_SOURCE} refused the client credentials with HTTP ${status}` +
              `${detail ? `: ${detail}` : ''}; check client_id, client_secret and base_url in the secret`,
            { method: TOKEN_TARGET.method, path: TOKEN_TARGET.path, status, ...(detail ? { detail } : {}) },
          );
        }
        throw upstreamErrorForStatus(
          TOKEN_TARGET,
          { status, retryAfter: headers['retry-after'] },
          detail,
          this.#clock(),
        );
      }
      const payload = (
        await readJsonBody(body, {
          origin: { source: TOKEN_SOURCE, status },
          maxBytes: DEFAULT_MAX_BODY_BYTES,
          contentLength: headers['content-length'],
        })
      )?.value;
      const accessToken = bearerTokenOf(payload, { source: TOKEN_SOURCE, status });
      const lifetimeMs =
        (lifetimeSeconds(isJsonObject(payload) ? payload.expires_in : undefined) ??
          this.#defaultLifetimeSeconds) * 1000;
      // Timed from when the request left: the token can only have been issued after that.
      const expiresAt = startedAt + lifetimeMs;
      const refreshAt = expiresAt - Math.min(this.#skewMs, lifetimeMs / 2);
      return {
        token: new AccessToken(accessToken, credentials.baseUrl, expiresAt, dispatcher),
        identity,
        refreshAt,
      };
    } catch (error) {
      if (signal.aborted) throw deadlineError(signal, TOKEN_TARGET);
      if (error instanceof PollerError) throw error;
      throw networkError(error, TOKEN_TARGET);
    }
  }
}
