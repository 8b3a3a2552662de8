/**
 * The banking service's event stream over HTTP (undici): `GET /events/stream` as Server-Sent
 * Events, read into the core's stream messages. Reconnecting, backoff and recovery are the core's
 * (`stream/stream-reader.ts`); this module opens one connection and reads it.
 */
import type { Dispatcher } from 'undici';
import type { BusEntryRules } from '../../core/bus-entry-rules.ts';
import { PayloadValidationError, UpstreamHttpError } from '../../core/errors.ts';
import { parseQueryParameterName } from '../../core/name-rules.ts';
import type { CredentialsProvider, EventStream, StreamMessage, StreamRequest } from '../../core/ports.ts';
import { parseStreamMessage } from '../../core/stream/stream-payload.ts';
import { SETTINGS } from '../../settings/settings.ts';
import { AuthenticatedRequests, type Exchange, translate } from './authenticated-requests.ts';
import type { RequestTarget } from './http-status.ts';
import { DEFAULT_MAX_BODY_BYTES, discardBody } from './response-body.ts';
import { readServerSentEvents } from './sse-reader.ts';
import type { AccessTokenSource } from './token-cache.ts';

const TARGET: RequestTarget = { method: 'GET', path: '/events/stream' };
const SOURCE = 'GET /events/stream';
/** A gateway gave up waiting for the service: worth another try, like a 5xx. */
const GATEWAY_TIMEOUTS: ReadonlySet<number> = new Set([408, 504]);

export interface BankingEventStreamOptions {
  /** Gives the base URL; `refresh()` is called after a 401, as the secret may have been rotated. */
  readonly credentials: CredentialsProvider;
  /** Usually the same token provider as the feed's, so both share one token. */
  readonly tokens: AccessTokenSource;
  /** What the bus accepts (its adapter's `BusEntryRules`): a streamed event it would refuse is read again by a poll, which quarantines it. */
  readonly entryRules: BusEntryRules;
  /** Overrides the dispatcher of the tokens (tests). @default the dispatcher each token was issued over */
  readonly dispatcher?: Dispatcher;
  /**
   * Query parameter carrying the starting point (the interface does not name it); the
   * `Last-Event-ID` header carries it too.
   * @default 'last_sequence_number'
   */
  readonly cursorParam?: string;
  /**
   * Largest message accepted, in characters.
   * @default 10 MiB
   */
  readonly maxMessageChars?: number;
  /** Epoch milliseconds, for `Retry-After` dates. @default Date.now */
  readonly clock?: () => number;
  /** Called when a 401 made the stream refresh credentials and retry. */
  readonly onAuthRetry?: (target: RequestTarget) => void;
}

/**
 * `EventStream` over `GET /events/stream`.
 *
 * `open` sends `Accept: text/event-stream`, the bearer header and the starting point (query
 * parameter and `Last-Event-ID`); a 401 refreshes the token and retries once (tokens expire
 * mid-stream, and the service then ends the stream or refuses the next request). 408 and 504
 * reject with a retryable `UpstreamHttpError`, other statuses as for a poll; a 200 that is not
 * `text/event-stream` with `PayloadValidationError`. While reading, a dropped connection throws
 * a retryable `UpstreamHttpError`, a body that is not UTF-8 or an oversized message a
 * `PayloadValidationError`. Leaving the iteration early closes the connection.
 *
 * @example
 * const stream = new BankingEventStream({ credentials, tokens, entryRules: CLASSIC_BUS_ENTRY_RULES });
 * for await (const message of await stream.open({ after: 41, signal })) console.log(message);
 */
export class BankingEventStream implements EventStream {
  readonly #requests: AuthenticatedRequests;
  readonly #cursorParam: string;
  readonly #maxMessageChars: number;
  readonly #entryRules: BusEntryRules;

  constructor(options: BankingEventStreamOptions) {
    this.#requests = new AuthenticatedRequests(options);
    this.#entryRules = options.entryRules;
    this.#cursorParam = parseQueryParameterName(
      options.cursorParam ?? SETTINGS.streamCursorParam.default,
      'BankingEventStream: cursorParam',
    );
    this.#maxMessageChars = options.maxMessageChars ?? DEFAULT_MAX_BODY_BYTES;
  }

  async open(request: StreamRequest): Promise<AsyncIterable<StreamMessage>> {
    const { after, signal } = request;
    const query = new URLSearchParams();
    if (after !== null) query.set(this.#cursorParam, String(after));
    const exchange: Exchange = {
      target: TARGET,
      source: SOURCE,
      query,
      headers: {
        accept: 'text/event-stream',
        'cache-control': 'no-cache',
        ...(after === null ? {} : { 'last-event-id': String(after) }),
      },
      signal,
    };
    return this.#requests.run(exchange, async (authenticated) => {
      const { statusCode: status, body, headers } = authenticated.response;
      if (GATEWAY_TIMEOUTS.has(status)) {
        await discardBody(body);
        throw new UpstreamHttpError(
          `${SOURCE} answered HTTP ${status}: a gateway gave up waiting (retryable)`,
          {
            status,
            retryable: true,
            context: { method: TARGET.method, path: TARGET.path },
          },
        );
      }
      if (status !== 200) throw await this.#requests.statusError(exchange, authenticated);
      const contentType = String(headers['content-type'] ?? '');
      if (!/^text\/event-stream\s*(;|$)/i.test(contentType)) {
        await discardBody(body);
        throw new PayloadValidationError(
          `${SOURCE} (HTTP 200): content-type must be text/event-stream, got ${JSON.stringify(contentType.slice(0, 60))}`,
          { source: SOURCE, status, field: 'content-type' },
        );
      }
      return this.#messages(body, exchange);
    });
  }

  /** The messages of one connection; the connection is closed when the iteration ends, however it ends. */
  async *#messages(body: Dispatcher.ResponseData['body'], exchange: Exchange): AsyncGenerator<StreamMessage> {
    const origin = { source: SOURCE, status: 200 };
    try {
      for await (const item of readServerSentEvents(body, {
        source: SOURCE,
        maxMessageChars: this.#maxMessageChars,
      })) {
        if (item.kind === 'retry') {
          yield { kind: 'retry', retryMs: item.retryMs };
          continue;
        }
        const message = parseStreamMessage(item.message, origin, this.#entryRules);
        // A named message that holds no events is something else (a heartbeat, a notice): skip it.
        const named = item.message.event !== undefined && item.message.event !== 'message';
        if (message.kind === 'unreadable' && named) continue;
        yield message;
      }
    } catch (error) {
      throw translate(error, exchange);
    } finally {
      if (!body.destroyed) body.destroy();
    }
  }
}
