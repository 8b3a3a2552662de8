import type { BackoffOptions } from '../backoff.ts';
import type { FeedRead, FeedReadStats, FeedSource, ReadWindow } from '../feed-reader.ts';
import { DEFAULT_MEMORY_BUDGET, type ReadRoom, withinRoom } from '../memory-budget.ts';
import type { Clock, CycleLogger, EventLookup, EventStream, MetricsSink } from '../ports.ts';
import { awaitsCorroboration, type JumpRule, splitAtJump } from '../sequence-jumps.ts';
import { ChangeSignal } from './change-signal.ts';
import { type BufferedEvent, StreamBuffer } from './stream-buffer.ts';
import { StreamConnection } from './stream-connection.ts';
import { LookupRecovery, type StreamRecovery } from './stream-recovery.ts';

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
   * Tells events implausibly far past the cursor (`sequence-jumps.ts`): returned apart, as `held`,
   * and never a resume point. @default every event is trusted
   */
  readonly jumps?: JumpRule;
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
  /** Events that end the linger at once: one request's worth (the publisher's `maxEntriesPerBatch`). @default 10 */
  readonly maxBatch?: number;
  /** Nothing buffered and nothing received for this long reads as "caught up". @default 1_000 */
  readonly quietMs?: number;
  /** Events held before the reader stops taking messages off the connection. @default 1_000 */
  readonly maxBufferedEvents?: number;
  /**
   * Bytes the events held may take (`eventFootprint`) before the reader stops taking messages off
   * the connection. @default a quarter of `DEFAULT_MEMORY_BUDGET.heldBytes`
   */
  readonly maxBufferedBytes?: number;
  /** Lookups in flight at once in `lookup` mode. @default 8 */
  readonly lookupConcurrency?: number;
}

const DEFAULTS = { maxBatch: 10, quietMs: 1_000, maxBufferedEvents: 1_000, lookupConcurrency: 8 } as const;
/** The most events one read returns: a page's worth. */
const MAX_READ_EVENTS = 100;

/**
 * Reads the feed from `GET /events/stream` for the cycle, answering `next(after)` like
 * `FeedReader` does, so the cycle's publishing and checkpointing do not change with the mode.
 *
 * A connection runs in the background (`StreamConnection`) from the first `next` call until the
 * window closes, filling a buffer (`StreamBuffer`). A read returns the ready events at once when
 * nothing is being published; while something is, it waits until `maxBatch` are ready or
 * `lingerMs` after the first arrived: a micro-batch under load, no added latency otherwise
 * (Nagle's rule). A row's first event (no cursor yet) beyond the jump bound waits the same way when
 * it is alone, for the next event to corroborate it (`sequence-jumps.ts`). Events the stream may carry differently from a poll are recovered first
 * (`StreamRecovery`); the events of a message that could not be read are read with pages, until a
 * page returns them; once the stream cannot be used, every read is a page read. The answer is the
 * same events either way.
 */
export class StreamReader implements FeedSource {
  readonly #deps: StreamReaderDeps;
  readonly #options: StreamReaderOptions;
  readonly #maxBatch: number;
  readonly #quietMs: number;
  /** Bytes the events buffered from the stream may take. */
  readonly maxBufferedBytes: number;
  /** Aborted by `close()`, or with the window. */
  readonly #stop = new AbortController();
  readonly #signal: AbortSignal;
  readonly #changes = new ChangeSignal();
  readonly #buffer: StreamBuffer;
  readonly #connection: StreamConnection;
  #running: Promise<void> | undefined;
  #caughtUpReported = false;
  /** Whether the current unread range was already reported as missing from the poll. */
  #unreadReported = false;

  constructor(deps: StreamReaderDeps, options: StreamReaderOptions, window: ReadWindow) {
    this.#deps = deps;
    this.#options = options;
    this.#maxBatch = options.maxBatch ?? DEFAULTS.maxBatch;
    this.#quietMs = options.quietMs ?? DEFAULTS.quietMs;
    this.#buffer = new StreamBuffer({ maxJump: deps.jumps?.maxJump });
    this.maxBufferedBytes = options.maxBufferedBytes ?? Math.floor(DEFAULT_MEMORY_BUDGET.heldBytes / 4);
    this.#signal = AbortSignal.any([window.signal, this.#stop.signal]);
    this.#signal.addEventListener('abort', () => this.#changes.notify(), { once: true });
    const recovery =
      options.recovery === 'lookup' && deps.lookup !== undefined
        ? new LookupRecovery(
            {
              lookup: deps.lookup,
              logger: deps.logger,
              isBuffered: (entry) => this.#buffer.contains(entry),
              onSettled: () => this.#changes.notify(),
              onFatal: (error) => this.#connection.failWith(error),
            },
            { concurrency: options.lookupConcurrency ?? DEFAULTS.lookupConcurrency, signal: this.#signal },
          )
        : undefined;
    this.#connection = new StreamConnection(
      { ...deps, buffer: this.#buffer, recovery, changes: this.#changes, onEvents: () => this.#onEvents() },
      {
        minPollWindowMs: options.minPollWindowMs,
        deadline: window.deadline,
        signal: this.#signal,
        reconnectBackoff: options.reconnectBackoff,
        maxBufferedEvents: options.maxBufferedEvents ?? DEFAULTS.maxBufferedEvents,
        maxBufferedBytes: this.maxBufferedBytes,
      },
    );
  }

  get stats(): FeedReadStats {
    const pages = this.#deps.pages.stats;
    const stream = this.#connection.stats;
    return {
      polls: stream.opens + pages.polls,
      received: stream.received + pages.received,
      pollErrors: stream.errors + pages.pollErrors,
      pollTimeouts: stream.timeouts + pages.pollTimeouts,
      stalePolls: pages.stalePolls,
    };
  }

  get lastError(): unknown {
    return this.#connection.stats.lastError ?? this.#deps.pages.lastError;
  }

  async next(after: number | null, room?: ReadRoom): Promise<FeedRead> {
    this.#buffer.setCursor(after);
    this.#running ??= this.#connection.run();
    for (;;) {
      const fatal = this.#connection.fatal;
      if (fatal !== undefined) throw fatal.error;
      this.#dropThrough(after);
      if (this.#mustReadPage()) {
        const read = await this.#readPage(after, room);
        if (read !== undefined) return read;
        continue;
      }
      const read = await this.#readStream(after, room);
      if (read !== undefined) return read;
    }
  }

  /** Tells a lingering read that publishing has settled: what is ready may go now. */
  publishingSettled(): void {
    this.#changes.notify();
  }

  /** Closes the connection and waits for it; buffered events are dropped (they are read again next time). */
  async close(): Promise<void> {
    this.#stop.abort();
    await this.#running;
  }

  /** One look at the buffer: a micro-batch, late events, "caught up", the end; `undefined` after a wait. */
  async #readStream(after: number | null, room: ReadRoom | undefined): Promise<FeedRead | undefined> {
    const connection = this.#connection;
    const ready = this.#withinRoom(this.#buffer.readyPrefix(MAX_READ_EVENTS), room);
    const closing = this.#signal.aborted;
    if (ready.length > 0) {
      const lingerEnds = ready[0]!.arrivedAt + this.#options.lingerMs;
      // A row's first event beyond the bound, alone: its next one corroborates it as the baseline
      // (`sequence-jumps.ts`), so it waits for one as long as a micro-batch lingers, at most.
      const idle = this.#deps.publishing?.busy !== true && !this.#awaitsCorroboration(ready, after);
      if (closing || idle || ready.length >= this.#maxBatch || this.#deps.clock.now() >= lingerEnds) {
        return this.#take(ready, after);
      }
      await this.#waitForChange(lingerEnds);
      return undefined;
    }
    if (this.#buffer.hasLate) return this.#take([], after);
    if (this.#buffer.size > 0 && !closing) {
      await this.#waitForChange();
      return undefined;
    }
    if (closing || connection.outOfTime) return { kind: 'closed', upstreamUnavailable: connection.outOfTime };
    const quietSince = connection.lastActivityAt + this.#quietMs;
    const mayReportQuiet = connection.connected && !this.#caughtUpReported;
    if (mayReportQuiet && this.#deps.clock.now() >= quietSince) {
      this.#caughtUpReported = true;
      return { kind: 'caught-up' };
    }
    await this.#waitForChange(mayReportQuiet ? quietSince : undefined);
    return undefined;
  }

  /** Drops what the cursor has passed, keeping (and reporting) late events that fill a recorded gap. */
  #dropThrough(after: number | null): void {
    const late = this.#buffer.dropThrough(after, this.#deps.recordedGaps);
    if (late.length === 0) return;
    this.#deps.metrics.add('LateEvents', 'Count', late.length);
    for (const event of late) {
      this.#deps.logger.warn('An event arrived late for a skipped sequence number; publishing it', {
        eventId: event.id,
        sequenceNumber: event.sequence_number,
        cursor: after,
      });
    }
    this.#changes.notify();
  }

  #mustReadPage(): boolean {
    if (this.#connection.pagesOnly || this.#buffer.hasUnread) return true;
    return this.#buffer.head?.state === 'unrecoverable';
  }

  /** A page read in place of the stream; `undefined` when it brought nothing and the loop goes on. */
  async #readPage(after: number | null, room: ReadRoom | undefined): Promise<FeedRead | undefined> {
    const read = await this.#deps.pages.next(after, room);
    if (read.kind === 'closed') return read;
    if (read.kind === 'caught-up') {
      // The poll has nothing beyond the cursor: what the stream announced is not there (yet).
      if (this.#connection.pagesOnly) return read;
      this.#reportMissingFromPoll(after);
      return undefined;
    }
    const highest = read.events.at(-1)?.sequence_number;
    if (highest !== undefined) {
      this.#buffer.readByPage(highest);
      if (!this.#buffer.hasUnread) this.#unreadReported = false;
    }
    this.#caughtUpReported = false;
    this.#changes.notify();
    return read;
  }

  /**
   * The poll answered "nothing new" while the stream announced events: a poll index that lags the
   * stream. Read again (the page reader paces empty answers) rather than leave them to gap repair.
   */
  #reportMissingFromPoll(after: number | null): void {
    const { logger } = this.#deps;
    const through = this.#buffer.unreadThrough;
    if (through !== undefined) {
      if (this.#unreadReported) return;
      this.#unreadReported = true;
      logger.warn(
        'The poll does not have the events of an unreadable stream message yet; reading pages until it does',
        { cursor: after, through },
      );
      return;
    }
    const head = this.#buffer.head;
    if (head?.state === 'unrecoverable') {
      logger.warn('The stream sent an event the poll does not have yet; reading again', {
        eventId: head.event.id,
        sequenceNumber: head.event.sequence_number,
        cursor: after,
      });
    }
  }

  /** The first of `ready` that fit `room` beside the late events that go with them (at least one). */
  #withinRoom(ready: BufferedEvent[], room: ReadRoom | undefined): BufferedEvent[] {
    if (room === undefined || ready.length === 0) return ready;
    const kept = withinRoom(
      ready.map((entry) => entry.event),
      room,
      this.#buffer.late,
    );
    return kept.length === ready.length ? ready : ready.slice(0, kept.length);
  }

  /**
   * Returns `ready` (the head of the buffer) and the late events waiting; of `ready`, those from a
   * number implausibly far past `after` on as `held` (taken off the buffer all the same: a new
   * connection, which resumes below them, brings them again).
   */
  #take(ready: readonly BufferedEvent[], after: number | null): FeedRead {
    const { events, late } = this.#buffer.take(ready);
    this.#caughtUpReported = false;
    this.#changes.notify();
    const jumps = this.#deps.jumps;
    if (jumps === undefined) return { kind: 'events', events, late };
    const { trusted, held } = splitAtJump(events, after, jumps);
    return { kind: 'events', events: trusted, late, ...(held.length === 0 ? {} : { held }) };
  }

  #awaitsCorroboration(ready: readonly BufferedEvent[], after: number | null): boolean {
    const jumps = this.#deps.jumps;
    // Only a lone event can await its corroboration.
    if (after !== null || jumps === undefined || ready.length !== 1) return false;
    return awaitsCorroboration([ready[0]!.event], jumps);
  }

  #onEvents(): void {
    this.#caughtUpReported = false;
  }

  /** Waits for any change, until `until` (epoch ms) at the latest, or the window's close. */
  async #waitForChange(until?: number): Promise<void> {
    if (this.#signal.aborted && this.#buffer.size === 0) return;
    await this.#changes.wait(this.#deps.clock, this.#signal, until);
  }
}
