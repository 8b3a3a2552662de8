/**
 * The banking service's event feed over HTTP (undici): long-polls `GET /events` and looks single
 * events up for gap repair and the operator CLI. Authentication, the one-time 401 refresh and the
 * mapping of statuses to the poller's errors live here; parsing is the core's.
 */
import type { Dispatcher } from 'undici';
import type { BankingEvent, FeedPage } from '../../core/banking-event.ts';
import type { BusEntryRules } from '../../core/bus-entry-rules.ts';
import { ConfigurationError, PageUnreadableError, PayloadValidationError } from '../../core/errors.ts';
import {
  eventFailure,
  eventTextOf,
  normalizeEvent,
  type PayloadOrigin,
  parsePollResponse,
  parseSequenceNumber,
  singleEventText,
} from '../../core/event-model.ts';
import { invalidEvent, placeInvalidEvent, usableSequenceNumber } from '../../core/invalid-event.ts';
import type { JsonDocument } from '../../core/json-text.ts';
import { parseQueryParameterName } from '../../core/name-rules.ts';
import { parsePagePrefix } from '../../core/page-prefix.ts';
import { recoverPage } from '../../core/page-recovery.ts';
import type { CredentialsProvider, EventFeed, EventLookup, PollRequest } from '../../core/ports.ts';
import { SETTINGS } from '../../settings/settings.ts';
import { AuthenticatedRequests, type Exchange } from './authenticated-requests.ts';
import type { RequestTarget } from './http-status.ts';
import { DEFAULT_MAX_BODY_BYTES, discardBody, readJsonBody, readPageBody } from './response-body.ts';
import type { AccessTokenSource } from './token-cache.ts';

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
/** The least of a poll answer read, however little room the cycle has: a few ordinary events. */
const MIN_PAGE_READ_BYTES = 64 * 1024;
/** The status with which a single-event lookup says there is no such event. */
const EVENT_NOT_FOUND: ReadonlyMap<number, null> = new Map([[404, null]]);

export interface BankingEventFeedOptions {
  /** Gives the base URL; `refresh()` is called after a 401, as the secret may have been rotated. */
  readonly credentials: CredentialsProvider;
  /** Usually the handler's module-scope `ClientCredentialsTokenProvider`. */
  readonly tokens: AccessTokenSource;
  /** What the bus accepts (its adapter's `BusEntryRules`): an event it would refuse is quarantined as it is read. */
  readonly entryRules: BusEntryRules;
  /**
   * Overrides the dispatcher of the tokens (tests).
   * @default the dispatcher each token was issued over: the token provider's connections
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
   * Largest response body of a single-event lookup accepted, in bytes.
   * @default 10 MiB
   */
  readonly maxBodyBytes?: number;
  /**
   * Bytes of a poll answer read at once: of a longer one, the events complete in its first
   * `maxPageBytes` make the page (`parsePagePrefix`), and the rest is asked for again after them.
   * The handler derives it from the function's memory (`memoryBudget`).
   * @default 10 MiB
   */
  readonly maxPageBytes?: number;
  /**
   * Epoch milliseconds, for `Retry-After` dates and the time an answer arrived.
   * @default Date.now
   */
  readonly clock?: () => number;
  /** Called when a 401 made the feed refresh credentials and retry (a log line or metric). */
  readonly onAuthRetry?: (target: RequestTarget) => void;
}

/**
 * `EventFeed` over the banking service's HTTP interface.
 *
 * Errors: an aborted `signal` rejects with `DeadlineExceededError` (the signal's reason itself if
 * it already is one); 429/503 and other 5xx, resets and refused connections with a retryable
 * `UpstreamHttpError` (`retryAfterMs` from `Retry-After` on 429/503); other statuses with a
 * non-retryable one; a 401 on a freshly issued token with `AuthenticationError`; a poll answer
 * that is not UTF-8 or not JSON with `PageUnreadableError`; any other body that is not JSON or not
 * the documented shape with `PayloadValidationError`. No message or context ever
 * holds a token, a secret or a query string.
 *
 * @example
 * const feed = new BankingEventFeed({ credentials, tokens, entryRules: CLASSIC_BUS_ENTRY_RULES });
 * const page = await feed.poll({ after: checkpoint, signal: AbortSignal.timeout(remainingMs) });
 */
export class BankingEventFeed implements EventFeed, EventLookup {
  readonly #requests: AuthenticatedRequests;
  readonly #cursorParam: string;
  readonly #limitParam: string;
  readonly #limit: number;
  readonly #maxBodyBytes: number;
  readonly #maxPageBytes: number;
  readonly #clock: () => number;
  readonly #entryRules: BusEntryRules;

  constructor(options: BankingEventFeedOptions) {
    this.#requests = new AuthenticatedRequests(options);
    this.#entryRules = options.entryRules;
    this.#clock = options.clock ?? Date.now;
    this.#cursorParam = parseQueryParameterName(
      options.cursorParam ?? SETTINGS.pollCursorParam.default,
      'BankingEventFeed: cursorParam',
    );
    this.#limitParam = parseQueryParameterName(
      options.limitParam ?? SETTINGS.pollLimitParam.default,
      'BankingEventFeed: limitParam',
    );
    this.#limit = options.limit ?? SETTINGS.pollLimit.default;
    this.#maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.#maxPageBytes = options.maxPageBytes ?? DEFAULT_MAX_BODY_BYTES;
    if (!Number.isSafeInteger(this.#limit) || this.#limit < 1) {
      throw new ConfigurationError(`BankingEventFeed: limit must be a positive integer, got ${this.#limit}`, {
        option: 'limit',
      });
    }
    for (const [option, value] of [
      ['maxBodyBytes', this.#maxBodyBytes],
      ['maxPageBytes', this.#maxPageBytes],
    ] as const) {
      if (!Number.isSafeInteger(value) || value < 1) {
        throw new ConfigurationError(`BankingEventFeed: ${option} must be a positive integer, got ${value}`, {
          option,
        });
      }
    }
  }

  /**
   * One long poll: `GET /events?<cursorParam>=<after>&<limitParam>=<limit>` (no cursor when
   * `after` is null). 204, an empty body and an empty `data` give an empty page; 408 and 504 a
   * page marked `timedOut`. A page with events says how many were asked for (`asked`); one
   * longer than the request's `maxBytes` (at least 64 KiB) or than `maxPageBytes` is read in parts
   * (`cut`).
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
    return this.#requests.run(exchange, async (authenticated) => {
      const { statusCode: status, body, headers } = authenticated.response;
      const bodiless = BODILESS_POLL_ANSWERS.get(status);
      if (bodiless !== undefined) {
        await discardBody(body);
        return bodiless;
      }
      if (status !== 200) throw await this.#requests.statusError(exchange, authenticated);
      const origin = { source: exchange.source, status, receivedAt: this.#clock() };
      const read = await readPageBody(body, {
        origin,
        maxBytes: this.#pageBytes(request.maxBytes),
        contentLength: headers['content-length'],
        unreadable: (message, context) => new PageUnreadableError(message, context),
        recover: recoverPage,
        // The parse is the longest step on the thread: in this program's turn when it is shared.
        beforeParse: request.cpuTurn,
      });
      const page =
        read.kind === 'cut'
          ? parsePagePrefix(read.text, origin, read.bytesRead, this.#entryRules)
          : read.document === undefined
            ? EMPTY_PAGE
            : parsePollResponse(read.document, origin, this.#entryRules);
      return page.events.length === 0 ? page : { ...page, asked: this.#limit };
    });
  }

  /** What of a poll answer is read at once: the room the cycle has, within `maxPageBytes`. */
  #pageBytes(room: number | undefined): number {
    if (room === undefined || !Number.isFinite(room)) return this.#maxPageBytes;
    return Math.min(this.#maxPageBytes, Math.max(MIN_PAGE_READ_BYTES, Math.floor(room)));
  }

  /** Fetches the credentials and a token ahead of the first poll (cached afterwards). */
  async prepare(signal: AbortSignal): Promise<void> {
    await this.#requests.prepare(signal);
  }

  /**
   * `GET /event/sequence/:n`, for gap repair: the event, or `null` on 404. An event that fails
   * validation is quarantined as in a poll answer (`invalid_event`, at number `n` when it has no
   * usable one of its own): gap repair must not leave a bad event behind a skipped number.
   * @throws PayloadValidationError when the upstream answers with another sequence number, or
   *   with an empty body.
   */
  async fetchEventBySequence(sequenceNumber: number, signal: AbortSignal): Promise<BankingEvent | null> {
    if (!Number.isSafeInteger(sequenceNumber) || sequenceNumber < 0) {
      throw new RangeError(`sequenceNumber must be a non-negative integer, got ${sequenceNumber}`);
    }
    const event = await this.#fetchSingle(`/event/sequence/${sequenceNumber}`, signal, sequenceNumber);
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

  /** One event; with `quarantineAt`, one that fails validation becomes an `invalid_event` placed there. */
  async #fetchSingle(path: string, signal: AbortSignal, quarantineAt?: number): Promise<BankingEvent | null> {
    const exchange: Exchange = { target: { method: 'GET', path }, source: `GET ${path}`, signal };
    return this.#getJson<BankingEvent | null>(exchange, EVENT_NOT_FOUND, (payload, origin) => {
      if (payload === undefined) return normalizeEvent(eventTextOf(undefined), origin, this.#entryRules);
      const source = singleEventText(payload);
      try {
        return normalizeEvent(source, origin, this.#entryRules);
      } catch (error) {
        const failure = eventFailure(error, origin, 'event');
        if (quarantineAt === undefined) throw failure;
        const own = usableSequenceNumber(source.value, (value) =>
          parseSequenceNumber(value, origin, 'event.sequence_number'),
        );
        const quarantined = invalidEvent(source, failure, {
          sequenceNumber: own,
          receivedAt: origin.receivedAt ?? this.#clock(),
          rules: this.#entryRules,
        });
        // Without a number of its own it is the event asked for: placed at that number.
        return own === null
          ? placeInvalidEvent(quarantined, quarantineAt === 0 ? null : quarantineAt - 1)
          : quarantined;
      }
    });
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
    reading: Pick<Parameters<typeof readJsonBody>[1], 'unreadable' | 'recover'> = {},
  ): Promise<T> {
    return this.#requests.run(exchange, async (authenticated) => {
      const { statusCode: status, body, headers } = authenticated.response;
      if (bodiless.has(status)) {
        await discardBody(body);
        return bodiless.get(status) as T;
      }
      if (status !== 200) throw await this.#requests.statusError(exchange, authenticated);
      const origin = { source: exchange.source, status, receivedAt: this.#clock() };
      const payload = await readJsonBody(body, {
        origin,
        maxBytes: this.#maxBodyBytes,
        contentLength: headers['content-length'],
        ...reading,
      });
      return parse(payload, origin);
    });
  }
}
