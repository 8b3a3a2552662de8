/**
 * The banking service's event feed over HTTP (undici): long-polls `GET /events` and looks single
 * events up for gap repair and the operator CLI. Authentication, the one-time 401 refresh and the
 * mapping of statuses to the poller's errors live here; parsing is the core's.
 */
import type { Dispatcher } from 'undici';
import {
  AuthenticationError,
  ConfigurationError,
  PayloadValidationError,
  PollerError,
} from '../../core/errors.ts';
import {
  type BankingEvent,
  eventTextOf,
  type FeedPage,
  normalizeEvent,
  type PayloadOrigin,
  parsePollResponse,
  singleEventText,
} from '../../core/event-model.ts';
import type { JsonDocument } from '../../core/json-text.ts';
import { parseQueryParameterName } from '../../core/name-rules.ts';
import type { CredentialsProvider, EventFeed, PollRequest } from '../../core/ports.ts';
import { type RequestTarget, upstreamErrorForStatus } from './http-status.ts';
import {
  DEFAULT_MAX_BODY_BYTES,
  discardBody,
  readErrorBody,
  readJsonBody,
  summarizeErrorBody,
} from './response-body.ts';
import type { AccessToken, AccessTokenSource } from './token-cache.ts';
import { deadlineError, networkError, sendUpstreamRequest, throwIfAborted } from './upstream-request.ts';

const EMPTY_PAGE: FeedPage = Object.freeze({ events: Object.freeze([]), lastSequenceNumber: null });
const TIMED_OUT_PAGE: FeedPage = Object.freeze({
  events: Object.freeze([]),
  lastSequenceNumber: null,
  timedOut: true,
});
/**
 * Statuses with which a long poll ends without events: 204 says nothing is new; 408 and 504 say a
 * proxy or gateway gave up waiting, which the cycle must not take for "caught up".
 */
const BODILESS_POLL_ANSWERS: ReadonlyMap<number, FeedPage> = new Map([
  [204, EMPTY_PAGE],
  [408, TIMED_OUT_PAGE],
  [504, TIMED_OUT_PAGE],
]);
/** The status with which a single-event lookup says there is no such event. */
const EVENT_NOT_FOUND: ReadonlyMap<number, null> = new Map([[404, null]]);

export interface BankingEventFeedOptions {
  /** Gives the base URL; `refresh()` is called after a 401, as the secret may have been rotated. */
  readonly credentials: CredentialsProvider;
  /** Usually the handler's module-scope `ClientCredentialsTokenProvider`. */
  readonly tokens: AccessTokenSource;
  /**
   * The undici dispatcher; share one `Agent` with the token provider for connection reuse.
   * @default undici's global dispatcher
   */
  readonly dispatcher?: Dispatcher;
  /**
   * Query parameter carrying the cursor (the interface does not name it).
   * @default 'last_sequence_number'
   */
  readonly cursorParam?: string;
  /**
   * Query parameter carrying the page size.
   * @default 'limit'
   */
  readonly limitParam?: string;
  /**
   * Events asked for per poll.
   * @default 100
   */
  readonly limit?: number;
  /**
   * Largest response body accepted, in bytes.
   * @default 10 MiB
   */
  readonly maxBodyBytes?: number;
  /**
   * Epoch milliseconds, for `Retry-After` dates.
   * @default Date.now
   */
  readonly clock?: () => number;
  /** Called when a 401 made the feed refresh credentials and retry (a log line or metric). */
  readonly onAuthRetry?: (target: RequestTarget) => void;
}

interface Exchange {
  readonly target: RequestTarget;
  /** e.g. `GET /events`, for payload errors. */
  readonly source: string;
  readonly query?: URLSearchParams;
  readonly signal: AbortSignal;
}

interface AuthenticatedResponse {
  readonly response: Dispatcher.ResponseData;
  readonly token: AccessToken;
}

/**
 * `EventFeed` over the banking service's HTTP interface.
 *
 * Errors: an aborted `signal` rejects with `DeadlineExceededError` (the signal's reason itself if
 * it already is one); 429/503 and other 5xx, resets and refused connections with a retryable
 * `UpstreamHttpError` (`retryAfterMs` from `Retry-After` on 429/503); other statuses with a
 * non-retryable one; a 401 on a freshly issued token with `AuthenticationError`; a body that is
 * not JSON or not the documented shape with `PayloadValidationError`. No message or context ever
 * holds a token, a secret or a query string.
 *
 * @example
 * const feed = new BankingEventFeed({ credentials, tokens, dispatcher });
 * const page = await feed.poll({ after: checkpoint, signal: AbortSignal.timeout(remainingMs) });
 */
export class BankingEventFeed implements EventFeed {
  readonly #credentials: CredentialsProvider;
  readonly #tokens: AccessTokenSource;
  readonly #dispatcher: Dispatcher | undefined;
  readonly #cursorParam: string;
  readonly #limitParam: string;
  readonly #limit: number;
  readonly #maxBodyBytes: number;
  readonly #clock: () => number;
  readonly #onAuthRetry: ((target: RequestTarget) => void) | undefined;

  constructor(options: BankingEventFeedOptions) {
    this.#credentials = options.credentials;
    this.#tokens = options.tokens;
    this.#dispatcher = options.dispatcher;
    this.#cursorParam = parseQueryParameterName(
      options.cursorParam ?? 'last_sequence_number',
      'BankingEventFeed: cursorParam',
    );
    this.#limitParam = parseQueryParameterName(options.limitParam ?? 'limit', 'BankingEventFeed: limitParam');
    this.#limit = options.limit ?? 100;
    this.#maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.#clock = options.clock ?? Date.now;
    this.#onAuthRetry = options.onAuthRetry;
    if (!Number.isSafeInteger(this.#limit) || this.#limit < 1) {
      throw new ConfigurationError(`BankingEventFeed: limit must be a positive integer, got ${this.#limit}`, {
        option: 'limit',
      });
    }
    if (!Number.isSafeInteger(this.#maxBodyBytes) || this.#maxBodyBytes < 1) {
      throw new ConfigurationError(
        `BankingEventFeed: maxBodyBytes must be a positive integer, got ${this.#maxBodyBytes}`,
        {
          option: 'maxBodyBytes',
        },
      );
    }
  }

  /**
   * One long poll: `GET /events?<cursorParam>=<after>&<limitParam>=<limit>` (no cursor when
   * `after` is null). 204, an empty body and an empty `data` give an empty page; 408 and 504 a
   * page marked `timedOut`.
   */
  async poll(request: PollRequest): Promise<FeedPage> {
    const query = new URLSearchParams();
    if (request.after !== null) query.set(this.#cursorParam, String(request.after));
    query.set(this.#limitParam, String(this.#limit));
    const exchange: Exchange = {
      target: { method: 'GET', path: '/events' },
      source: 'GET /events',
      query,
      signal: request.signal,
    };
    return this.#getJson(exchange, BODILESS_POLL_ANSWERS, (payload, origin) =>
      payload === undefined ? EMPTY_PAGE : parsePollResponse(payload, origin),
    );
  }

  /** Fetches the credentials and a token ahead of the first poll (cached afterwards). */
  async prepare(signal: AbortSignal): Promise<void> {
    await this.#tokens.getAccessToken(signal);
  }

  /**
   * `GET /event/sequence/:n`, for gap repair: the event, or `null` on 404.
   * @throws PayloadValidationError when the upstream answers with another sequence number.
   */
  async fetchEventBySequence(sequenceNumber: number, signal: AbortSignal): Promise<BankingEvent | null> {
    if (!Number.isSafeInteger(sequenceNumber) || sequenceNumber < 0) {
      throw new RangeError(`sequenceNumber must be a non-negative integer, got ${sequenceNumber}`);
    }
    const event = await this.#fetchSingle(`/event/sequence/${sequenceNumber}`, signal);
    if (event && event.sequence_number !== sequenceNumber) {
      throw new PayloadValidationError(
        `GET /event/sequence/${sequenceNumber} (HTTP 200): returned sequence ${event.sequence_number} instead`,
        { source: 'GET /event/sequence', status: 200, field: 'sequence_number', sequenceNumber },
      );
    }
    return event;
  }

  /**
   * `GET /event/:id`: the event, or `null` on 404.
   * @throws PayloadValidationError when the upstream answers with another id.
   */
  async fetchEventById(id: string, signal: AbortSignal): Promise<BankingEvent | null> {
    if (id === '') throw new RangeError('id must be a non-empty string');
    const path = `/event/${encodeURIComponent(id)}`;
    const event = await this.#fetchSingle(path, signal);
    if (event && event.id !== id) {
      throw new PayloadValidationError(`GET ${path} (HTTP 200): returned event ${event.id} instead`, {
        source: 'GET /event',
        status: 200,
        field: 'id',
      });
    }
    return event;
  }

  async #fetchSingle(path: string, signal: AbortSignal): Promise<BankingEvent | null> {
    const exchange: Exchange = { target: { method: 'GET', path }, source: `GET ${path}`, signal };
    return this.#getJson<BankingEvent | null>(exchange, EVENT_NOT_FOUND, (payload, origin) =>
      normalizeEvent(
        payload === undefined ? eventTextOf(undefined) : singleEventText(payload),
        origin,
        'event',
      ),
    );
  }

  /**
   * Runs `exchange` and reads its answer: a status in `bodiless` gives its value there (the body
   * discarded), a 200 gives `parse` of its JSON body (`undefined` when the body is empty), and any
   * other status its upstream error.
   */
  async #getJson<T>(
    exchange: Exchange,
    bodiless: ReadonlyMap<number, T>,
    parse: (payload: JsonDocument | undefined, origin: PayloadOrigin) => T,
  ): Promise<T> {
    return this.#run(exchange, async (authenticated) => {
      const { statusCode: status, body, headers } = authenticated.response;
      if (bodiless.has(status)) {
        await discardBody(body);
        return bodiless.get(status) as T;
      }
      if (status !== 200) throw await this.#statusError(exchange, authenticated);
      const origin = { source: exchange.source, status, receivedAt: this.#clock() };
      const payload = await readJsonBody(body, {
        origin,
        maxBytes: this.#maxBodyBytes,
        contentLength: headers['content-length'],
      });
      return parse(payload, origin);
    });
  }

  /**
   * Runs one authenticated exchange and hands the response to `handle`, translating whatever
   * escapes into the poller's errors: the deadline first (an abort surfaces as many different
   * undici errors), then our own errors as they are, then anything else as a network failure.
   */
  async #run<T>(
    exchange: Exchange,
    handle: (authenticated: AuthenticatedResponse) => Promise<T>,
  ): Promise<T> {
    const { signal, target } = exchange;
    try {
      return await handle(await this.#sendAuthenticated(exchange));
    } catch (error) {
      if (signal.aborted) throw deadlineError(signal, target);
      if (error instanceof PollerError) throw error;
      throw networkError(error, target);
    }
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

  /** The token goes only to the base URL that issued it, and only in the Authorization header. */
  async #send(exchange: Exchange, token: AccessToken): Promise<AuthenticatedResponse> {
    const query = exchange.query?.toString();
    const response = await sendUpstreamRequest({
      ...exchange.target,
      method: 'GET',
      url: `${token.baseUrl}${exchange.target.path}${query ? `?${query}` : ''}`,
      headers: { authorization: `Bearer ${token.value}`, accept: 'application/json' },
      dispatcher: this.#dispatcher,
      signal: exchange.signal,
    });
    return { response, token };
  }

  /** The error for an unexpected status; the summary of its body is scrubbed of token and secret. */
  async #statusError(exchange: Exchange, { response, token }: AuthenticatedResponse): Promise<PollerError> {
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
}
