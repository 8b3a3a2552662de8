import { type BackoffOptions, fullJitterDelay } from './backoff.ts';
import { PayloadValidationError, UpstreamHttpError } from './errors.ts';
import type { BankingEvent } from './event-model.ts';
import type { FeedRead, FeedReadStats, FeedSource, ReadWindow } from './feed-reader.ts';
import type {
  Clock,
  CycleLogger,
  EventLookup,
  EventStream,
  MetricsSink,
  StreamedEvent,
  StreamMessage,
} from './ports.ts';

/**
 * How an event the stream may carry differently from a poll (see `stream-payload.ts`) is fetched
 * before it is published: `lookup` asks for each one (`GET /event/:id`); `page` reads the page
 * from the cursor (`GET /events`), the stream serving only as a doorbell for such events.
 */
export type StreamRecovery = 'lookup' | 'page';

export interface StreamReaderDeps {
  readonly stream: EventStream;
  /** Page reads (a `FeedReader`): recovery in `page` mode, and everything once the stream cannot be used. */
  readonly pages: FeedSource;
  /** Single-event lookups for `lookup` recovery; without them, recovery reads pages. */
  readonly lookup?: EventLookup;
  readonly clock: Clock;
  readonly metrics: MetricsSink;
  readonly logger: CycleLogger;
  /** Source of jitter; injectable for deterministic tests. @default Math.random */
  readonly random?: () => number;
  /** Sequence numbers the feed skipped and nobody published since: a late event for one is wanted. */
  readonly recordedGaps?: { includes(sequence: number): boolean };
  /**
   * Whether events handed out earlier are still being published: a micro-batch waits for
   * companions only meanwhile. Call `publishingSettled()` when that changes. @default never busy
   */
  readonly publishing?: { readonly busy: boolean };
}

export interface StreamReaderOptions {
  readonly recovery: StreamRecovery;
  /**
   * The longest a ready event waits for companions: while earlier events are being published, a
   * read returns once `maxBatch` events are ready or this long after the first of them arrived.
   */
  readonly lingerMs: number;
  /** No connection is opened with less than this left before the deadline. */
  readonly minPollWindowMs: number;
  /** Waits before reconnecting after a failure. */
  readonly reconnectBackoff: BackoffOptions;
  /** Events that end the linger at once: one PutEvents request's worth. @default 10 */
  readonly maxBatch?: number;
  /** Nothing buffered and nothing received for this long reads as "caught up". @default 1_000 */
  readonly quietMs?: number;
  /** Events held before the reader stops taking messages off the connection. @default 1_000 */
  readonly maxBufferedEvents?: number;
  /** Lookups in flight at once in `lookup` mode. @default 8 */
  readonly lookupConcurrency?: number;
}

const DEFAULTS = { maxBatch: 10, quietMs: 1_000, maxBufferedEvents: 1_000, lookupConcurrency: 8 } as const;
/** The most events one read returns: a page's worth. */
const MAX_READ_EVENTS = 100;
/** The shortest wait before reconnecting after a failure. */
const MIN_RECONNECT_WAIT_MS = 100;
/** Answers with which the service says it has no stream for this client: read pages instead. */
const NO_STREAM_STATUSES: ReadonlySet<number> = new Set([404, 405, 406, 501]);

interface Entry {
  event: BankingEvent;
  readonly arrivedAt: number;
  /** `unrecoverable`: to be read with a page (page mode, or a lookup that found nothing). */
  state: 'ready' | 'queued' | 'recovering' | 'unrecoverable';
}

/**
 * Reads the feed from `GET /events/stream` for the cycle, answering `next(after)` like
 * `FeedReader` does, so the cycle's publishing and checkpointing do not change with the mode.
 *
 * One connection at a time runs in the background from the first `next` call until the window
 * closes, taking messages into a bounded buffer (a full buffer stops the reading, and TCP pushes
 * back on the service). A read returns the ready events at once when nothing is being published;
 * while something is, it waits until `maxBatch` are ready or `lingerMs` after the first arrived: a
 * micro-batch under load, no added latency otherwise (Nagle's rule). A connection that ends or breaks is reopened after the
 * highest sequence number received (query cursor and `Last-Event-ID`), at once after a productive
 * connection, else with full-jitter backoff (`Retry-After` and the stream's `retry:` as floors),
 * and never with less than `minPollWindowMs` left. A 401 is the adapter's: it refreshes the token
 * and reopens once.
 *
 * Events the stream may carry differently from a poll are recovered before they are returned
 * (`StreamRecovery`); a message whose payload cannot be read is read with a page instead; a
 * stream the service does not offer (404, 405, 406, 501) or that breaks its payload rules turns
 * the rest of the window into polling. The answer is the same events either way.
 */
export class StreamReader implements FeedSource {
  readonly #deps: StreamReaderDeps;
  readonly #options: StreamReaderOptions;
  readonly #window: ReadWindow;
  readonly #maxBatch: number;
  readonly #quietMs: number;
  readonly #maxBuffered: number;
  /** Aborted by `close()`, or with the window. */
  readonly #stop = new AbortController();
  readonly #signal: AbortSignal;

  /** Buffered events above the cursor, ascending by sequence number, one per number. */
  #entries: Entry[] = [];
  /** Late events (below the cursor, filling a recorded gap) waiting to be returned. */
  #late: BankingEvent[] = [];
  #recoveryQueue: Entry[] = [];
  #recoveriesInFlight = 0;
  /** The highest sequence number the last `next` call asked to read after. */
  #cursor: number | null = null;
  /** Where a new connection starts: the highest sequence number received. */
  #resumeAfter: number | null = null;
  /**
   * Messages that could not be read announced the events after `after` up to `through`: they are
   * read with pages until a page returns them or the window closes, and nothing of the stream
   * beyond them is handed out meanwhile (the cursor never passes an event that was not read).
   */
  #unread: { readonly after: number | null; readonly through: number } | undefined;
  /** Whether the current unread range was already reported as missing from the poll. */
  #unreadReported = false;
  /** The stream is not used for the rest of the window: every read is a page read. */
  #pagesOnly = false;
  #fatal: { readonly error: unknown } | undefined;
  #connection: Promise<void> | undefined;
  #connected = false;
  /** The connection loop gave up: no reconnection fits before the deadline. */
  #outOfTime = false;
  #lastActivityAt = Number.NEGATIVE_INFINITY;
  #caughtUpReported = false;
  #serverRetryMs: number | undefined;
  #changed = changeSignal();

  #opens = 0;
  #received = 0;
  #errors = 0;
  #timeouts = 0;
  #lastError: unknown;

  constructor(deps: StreamReaderDeps, options: StreamReaderOptions, window: ReadWindow) {
    this.#deps = deps;
    this.#options = options;
    this.#window = window;
    this.#maxBatch = options.maxBatch ?? DEFAULTS.maxBatch;
    this.#quietMs = options.quietMs ?? DEFAULTS.quietMs;
    this.#maxBuffered = options.maxBufferedEvents ?? DEFAULTS.maxBufferedEvents;
    this.#signal = AbortSignal.any([window.signal, this.#stop.signal]);
    this.#signal.addEventListener('abort', () => this.#notify(), { once: true });
  }

  get stats(): FeedReadStats {
    const pages = this.#deps.pages.stats;
    return {
      polls: this.#opens + pages.polls,
      received: this.#received + pages.received,
      pollErrors: this.#errors + pages.pollErrors,
      pollTimeouts: this.#timeouts + pages.pollTimeouts,
      stalePolls: pages.stalePolls,
    };
  }

  get lastError(): unknown {
    return this.#lastError ?? this.#deps.pages.lastError;
  }

  async next(after: number | null): Promise<FeedRead> {
    this.#cursor = after;
    this.#connection ??= this.#connect();
    for (;;) {
      if (this.#fatal !== undefined) throw this.#fatal.error;
      this.#dropThrough(after);
      if (this.#unread !== undefined && after !== null && this.#unread.through <= after)
        this.#unread = undefined;
      if (this.#mustReadPage()) {
        const read = await this.#readPage(after);
        if (read !== undefined) return read;
        continue;
      }
      const ready = this.#readyPrefix();
      const closing = this.#signal.aborted;
      if (ready.length > 0) {
        const lingerEnds = ready[0]!.arrivedAt + this.#options.lingerMs;
        const idle = this.#deps.publishing?.busy !== true;
        if (closing || idle || ready.length >= this.#maxBatch || this.#deps.clock.now() >= lingerEnds) {
          return this.#take(ready);
        }
        await this.#waitForChange(lingerEnds);
        continue;
      }
      if (this.#late.length > 0) return this.#take([]);
      if (this.#entries.length > 0 && !closing) {
        await this.#waitForChange();
        continue;
      }
      if (closing || this.#outOfTime) return { kind: 'closed', upstreamUnavailable: this.#outOfTime };
      const quietSince = this.#lastActivityAt + this.#quietMs;
      if (this.#connected && !this.#caughtUpReported && this.#deps.clock.now() >= quietSince) {
        this.#caughtUpReported = true;
        return { kind: 'caught-up' };
      }
      await this.#waitForChange(this.#connected && !this.#caughtUpReported ? quietSince : undefined);
    }
  }

  /** Tells a lingering read that publishing has settled: what is ready may go now. */
  publishingSettled(): void {
    this.#notify();
  }

  /** Closes the connection and waits for it; buffered events are dropped (they are read again next time). */
  async close(): Promise<void> {
    this.#stop.abort();
    await this.#connection;
  }

  // --- Reads -----------------------------------------------------------------------------------

  /**
   * Drops what the cursor has passed. An event at or below it that fills a recorded gap arrived
   * late and was never published: it is kept to be returned as late. Anything else there was read
   * already (by a page, or on an earlier connection).
   */
  #dropThrough(after: number | null): void {
    if (after === null || this.#entries.length === 0 || this.#entries[0]!.event.sequence_number > after) {
      return;
    }
    const late: BankingEvent[] = [];
    const kept: Entry[] = [];
    for (const entry of this.#entries) {
      const sequence = entry.event.sequence_number;
      if (sequence > after) kept.push(entry);
      else if (entry.state === 'ready' && this.#deps.recordedGaps?.includes(sequence) === true) {
        late.push(entry.event);
      }
    }
    this.#entries = kept;
    this.#late.push(...late);
    if (late.length > 0) {
      this.#deps.metrics.add('LateEvents', 'Count', late.length);
      for (const event of late) {
        this.#deps.logger.warn('An event arrived late for a skipped sequence number; publishing it', {
          eventId: event.id,
          sequenceNumber: event.sequence_number,
          cursor: after,
        });
      }
    }
    this.#notify();
  }

  #mustReadPage(): boolean {
    if (this.#pagesOnly || this.#unread !== undefined) return true;
    return this.#entries[0]?.state === 'unrecoverable';
  }

  /** A page read in place of the stream; `undefined` when it brought nothing and the loop goes on. */
  async #readPage(after: number | null): Promise<FeedRead | undefined> {
    const read = await this.#deps.pages.next(after);
    if (read.kind === 'closed') return read;
    if (read.kind === 'caught-up') {
      // The poll has nothing beyond the cursor: what the stream announced is not there (yet).
      if (this.#pagesOnly) return read;
      if (this.#unread !== undefined) {
        // A poll index that lags the stream: read again (the reader paces empty answers) rather
        // than leave those events to gap repair.
        if (!this.#unreadReported) {
          this.#unreadReported = true;
          this.#deps.logger.warn(
            'The poll does not have the events of an unreadable stream message yet; reading pages until it does',
            { cursor: after, through: this.#unread.through },
          );
        }
        return undefined;
      }
      const head = this.#entries[0];
      if (head?.state === 'unrecoverable') {
        this.#deps.logger.warn('The stream sent an event the poll does not have yet; reading again', {
          eventId: head.event.id,
          sequenceNumber: head.event.sequence_number,
          cursor: after,
        });
      }
      return undefined;
    }
    const highest = read.events.at(-1)?.sequence_number;
    if (highest !== undefined) {
      this.#entries = this.#entries.filter((entry) => entry.event.sequence_number > highest);
      if (this.#unread !== undefined) {
        this.#unread = highest >= this.#unread.through ? undefined : { ...this.#unread, after: highest };
        if (this.#unread === undefined) this.#unreadReported = false;
      }
      this.#advanceResume(highest);
    }
    this.#caughtUpReported = false;
    this.#notify();
    return read;
  }

  /** The ready events at the head of the buffer, up to a page's worth. */
  #readyPrefix(): Entry[] {
    const ready: Entry[] = [];
    for (const entry of this.#entries) {
      if (entry.state !== 'ready' || ready.length >= MAX_READ_EVENTS) break;
      ready.push(entry);
    }
    return ready;
  }

  /** Returns `ready` (the head of the buffer) and the late events waiting. */
  #take(ready: readonly Entry[]): FeedRead {
    const late = this.#late;
    this.#late = [];
    this.#entries = this.#entries.slice(ready.length);
    this.#caughtUpReported = false;
    this.#notify();
    return { kind: 'events', events: ready.map((entry) => entry.event), late };
  }

  // --- The connection --------------------------------------------------------------------------

  /** Keeps one connection open until the window closes, the stream is given up, or a fatal error. */
  async #connect(): Promise<void> {
    const { stream, clock, logger, metrics } = this.#deps;
    let failures = 0;
    while (!this.#signal.aborted && !this.#pagesOnly && this.#fatal === undefined) {
      if (this.#opens + this.#errors > 0) metrics.add('StreamReconnects', 'Count', 1);
      const after = this.#resumePoint();
      let productive = false;
      let waitMs: number;
      try {
        metrics.add('PollRequests', 'Count', 1);
        const messages = await stream.open({ after, signal: this.#signal });
        this.#opens += 1;
        this.#connected = true;
        this.#lastActivityAt = clock.now();
        logger.debug('Stream connected', { after });
        for await (const message of messages) {
          productive = this.#onMessage(message) || productive;
          await this.#roomInBuffer();
          if (this.#pagesOnly || this.#signal.aborted) break;
        }
        if (this.#signal.aborted) break;
        if (productive) failures = 0;
        else failures += 1;
        waitMs = productive ? (this.#serverRetryMs ?? 0) : this.#backoff(failures);
        if (!this.#pagesOnly)
          logger.info('The stream ended; reconnecting', { after: this.#resumePoint(), waitMs });
      } catch (error) {
        if (this.#signal.aborted) break;
        const next = this.#onConnectionError(error, after);
        if (next === undefined) break;
        failures += 1;
        waitMs = Math.max(next, this.#backoff(failures));
      } finally {
        this.#connected = false;
        this.#notify();
      }
      if (this.#pagesOnly) break;
      if (clock.now() + waitMs + this.#options.minPollWindowMs > this.#window.deadline) {
        logger.warn('No reconnection of the stream fits in the budget', { waitMs });
        this.#outOfTime = true;
        break;
      }
      if (waitMs > 0) {
        try {
          await clock.sleep(waitMs, this.#signal);
        } catch {
          break;
        }
      }
    }
    this.#notify();
  }

  /**
   * Classifies a failed or broken connection: the wait before the next one (a floor; backoff is
   * added), or `undefined` when the stream is not tried again (given up for pages, or fatal).
   */
  #onConnectionError(error: unknown, after: number | null): number | undefined {
    const { logger } = this.#deps;
    if (error instanceof UpstreamHttpError && error.retryable) {
      this.#errors += 1;
      if (error.status === 408 || error.status === 504) this.#timeouts += 1;
      this.#lastError = error;
      this.#deps.metrics.add('PollErrors', 'Count', 1);
      logger.warn('The stream failed; reconnecting', { status: error.status, after, error: error.message });
      return Math.max(error.retryAfterMs ?? 0, this.#serverRetryMs ?? 0, MIN_RECONNECT_WAIT_MS);
    }
    if (
      error instanceof UpstreamHttpError &&
      error.status !== undefined &&
      NO_STREAM_STATUSES.has(error.status)
    ) {
      this.#usePagesOnly(`the service answered the stream request with HTTP ${error.status}`);
      return undefined;
    }
    if (error instanceof PayloadValidationError) {
      this.#usePagesOnly(`the stream broke its format (${error.message})`);
      return undefined;
    }
    this.#fatal = { error };
    return undefined;
  }

  #usePagesOnly(reason: string): void {
    this.#pagesOnly = true;
    this.#deps.logger.warn(`Reading pages instead of the stream for the rest of this run: ${reason}`, {
      cursor: this.#cursor,
    });
    this.#notify();
  }

  /** Takes one message in; true when it carried events. */
  #onMessage(message: StreamMessage): boolean {
    const { clock, metrics, logger } = this.#deps;
    if (message.kind === 'retry') {
      this.#serverRetryMs = message.retryMs;
      return false;
    }
    this.#lastActivityAt = clock.now();
    if (message.kind === 'unreadable') {
      logger.warn('A stream message could not be read; reading its events with a poll', {
        reason: message.reason,
        lastEventId: message.lastEventId,
      });
      if (message.lastEventId === null) this.#usePagesOnly('a message without a usable id could not be read');
      else this.#markUnread(message.lastEventId);
      this.#notify();
      return true;
    }
    this.#received += message.events.length;
    metrics.add('EventsReceived', 'Count', message.events.length);
    for (const streamed of message.events) this.#admit(streamed);
    const highest = message.events.at(-1)?.event.sequence_number ?? message.lastEventId;
    if (highest !== null) this.#advanceResume(highest);
    if (message.events.length > 0) this.#caughtUpReported = false;
    this.#startRecoveries();
    this.#notify();
    return message.events.length > 0;
  }

  /** Puts a streamed event into the buffer, in sequence order, once per number. */
  #admit({ event, needsRecovery }: StreamedEvent): void {
    const sequence = event.sequence_number;
    const entry: Entry = {
      event,
      arrivedAt: this.#deps.clock.now(),
      state: !needsRecovery ? 'ready' : this.#canLookUp() ? 'queued' : 'unrecoverable',
    };
    let index = this.#entries.length;
    while (index > 0 && this.#entries[index - 1]!.event.sequence_number >= sequence) index -= 1;
    if (this.#entries[index]?.event.sequence_number === sequence) return;
    this.#entries.splice(index, 0, entry);
    if (entry.state === 'queued') this.#recoveryQueue.push(entry);
  }

  /**
   * Notes that the events after what was received so far, up to `through`, came in a message that
   * could not be read. The resume point stays below them: a new connection asks for them again.
   */
  #markUnread(through: number): void {
    const after = this.#unread?.after ?? this.#resumePoint();
    if (after !== null && through <= after) return;
    this.#unread = { after, through: Math.max(this.#unread?.through ?? through, through) };
  }

  #canLookUp(): boolean {
    return this.#options.recovery === 'lookup' && this.#deps.lookup !== undefined;
  }

  /** Where a new connection starts: after what was received, but never past events not read. */
  #resumePoint(): number | null {
    if (this.#unread !== undefined) return this.#unread.after;
    const points = [this.#resumeAfter, this.#cursor].filter((point): point is number => point !== null);
    return points.length === 0 ? null : Math.max(...points);
  }

  #advanceResume(sequence: number): void {
    if (this.#resumeAfter === null || sequence > this.#resumeAfter) this.#resumeAfter = sequence;
  }

  async #roomInBuffer(): Promise<void> {
    while (this.#entries.length >= this.#maxBuffered && !this.#signal.aborted && !this.#pagesOnly) {
      await this.#waitForChange();
    }
  }

  #backoff(failures: number): number {
    return Math.max(
      MIN_RECONNECT_WAIT_MS,
      this.#serverRetryMs ?? 0,
      fullJitterDelay(failures - 1, this.#options.reconnectBackoff, this.#deps.random),
    );
  }

  // --- Recovery by lookup ----------------------------------------------------------------------

  #startRecoveries(): void {
    const concurrency = this.#options.lookupConcurrency ?? DEFAULTS.lookupConcurrency;
    while (this.#recoveriesInFlight < concurrency && this.#recoveryQueue.length > 0) {
      const entry = this.#recoveryQueue.shift()!;
      if (!this.#entries.includes(entry)) continue;
      this.#recoveriesInFlight += 1;
      entry.state = 'recovering';
      void this.#recover(entry).finally(() => {
        this.#recoveriesInFlight -= 1;
        this.#startRecoveries();
        this.#notify();
      });
    }
  }

  /** Replaces the streamed event with the one `GET /event/:id` gives; a page read if that fails. */
  async #recover(entry: Entry): Promise<void> {
    const { event } = entry;
    try {
      // A signal of its own: lookups run side by side, and each request listens to its signal.
      const found = await this.#deps.lookup!.fetchEventById(event.id, AbortSignal.any([this.#signal]));
      if (found !== null && found.sequence_number === event.sequence_number) {
        entry.event = found;
        entry.state = 'ready';
        return;
      }
      entry.state = 'unrecoverable';
      this.#deps.logger.warn('The lookup of a streamed event did not find it; reading its page instead', {
        eventId: event.id,
        sequenceNumber: event.sequence_number,
        foundSequenceNumber: found?.sequence_number ?? null,
      });
    } catch (error) {
      entry.state = 'unrecoverable';
      if (this.#signal.aborted) return;
      if (error instanceof UpstreamHttpError && error.retryable) {
        this.#deps.logger.warn('The lookup of a streamed event failed; reading its page instead', {
          eventId: event.id,
          sequenceNumber: event.sequence_number,
          status: error.status,
        });
        return;
      }
      this.#fatal ??= { error };
    }
  }

  // --- Waiting ---------------------------------------------------------------------------------

  #notify(): void {
    this.#changed.resolve();
    this.#changed = changeSignal();
  }

  /** Waits for any change of state, until `until` (epoch ms) at the latest, or the window's close. */
  async #waitForChange(until?: number): Promise<void> {
    if (this.#signal.aborted && this.#entries.length === 0) return;
    const changed = this.#changed.promise;
    if (until === undefined) {
      await changed;
      return;
    }
    const wait = until - this.#deps.clock.now();
    if (wait <= 0) return;
    const timer = new AbortController();
    try {
      await Promise.race([
        changed,
        this.#deps.clock.sleep(wait, AbortSignal.any([timer.signal, this.#signal])).catch(() => {}),
      ]);
    } finally {
      timer.abort();
    }
  }
}

/** A promise and its resolver: one round of "something changed". */
function changeSignal(): { readonly promise: Promise<void>; readonly resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}
