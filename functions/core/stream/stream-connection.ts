import { type BackoffOptions, fullJitterDelay } from '../backoff.ts';
import { PayloadValidationError, UpstreamHttpError } from '../errors.ts';
import type { Clock, CycleLogger, EventStream, MetricsSink, StreamMessage } from '../ports.ts';
import type { ChangeSignal } from './change-signal.ts';
import type { BufferedEvent, StreamBuffer } from './stream-buffer.ts';
import type { LookupRecovery } from './stream-recovery.ts';

export interface StreamConnectionDeps {
  readonly stream: EventStream;
  readonly clock: Clock;
  readonly metrics: MetricsSink;
  readonly logger: CycleLogger;
  readonly random?: () => number;
  readonly buffer: StreamBuffer;
  /** Lookups of events to recover (`lookup` recovery); without it they are read with pages. */
  readonly recovery?: LookupRecovery;
  readonly changes: ChangeSignal;
  /** Called when a message brought events (the reader may report "caught up" again later). */
  readonly onEvents: () => void;
}

export interface StreamConnectionOptions {
  /** No connection is opened with less than this left before `deadline`. */
  readonly minPollWindowMs: number;
  readonly deadline: number;
  /** Closes the connection (the window closed, or the reader was closed). */
  readonly signal: AbortSignal;
  readonly reconnectBackoff: BackoffOptions;
  /** Events held before messages are no longer taken off the connection. */
  readonly maxBufferedEvents: number;
  /** Bytes the buffered events may take (`eventFootprint`) before messages are left on the connection. */
  readonly maxBufferedBytes: number;
}

/** The shortest wait before reconnecting after a failure. */
export const MIN_RECONNECT_WAIT_MS = 100;
/**
 * The longest reconnection delay a stream's `retry:` field is honoured up to: beyond it, the wait
 * is this long. A server asking for days (`retry: 999999999`) would otherwise make every
 * reconnection "not fit in the budget" and end the run at once, over and over.
 */
export const MAX_SERVER_RETRY_MS = 30_000;
/** Answers with which the service says it has no stream for this client: read pages instead. */
const NO_STREAM_STATUSES: ReadonlySet<number> = new Set([404, 405, 406, 501]);

/**
 * Keeps one connection to `GET /events/stream` open in the background until the window closes,
 * taking messages into the buffer (a full buffer stops the reading, and TCP pushes back on the
 * service). A connection that ends or breaks is reopened after the highest number received (never
 * past events not read), at once after a productive connection, else with full-jitter backoff
 * (`Retry-After` and the stream's `retry:` as floors; `retry:` is honoured between
 * `MIN_RECONNECT_WAIT_MS` and `MAX_SERVER_RETRY_MS`), and never with less than `minPollWindowMs`
 * left. A stream the service does not offer (404, 405, 406, 501) or that breaks its payload rules
 * turns the rest of the window into pages (`pagesOnly`); what cannot be retried is `fatal`.
 */
export class StreamConnection {
  readonly #deps: StreamConnectionDeps;
  readonly #options: StreamConnectionOptions;
  #pagesOnly = false;
  #fatal: { readonly error: unknown } | undefined;
  #connected = false;
  #outOfTime = false;
  #lastActivityAt = Number.NEGATIVE_INFINITY;
  #serverRetryMs: number | undefined;
  #opens = 0;
  #received = 0;
  #errors = 0;
  #timeouts = 0;
  #lastError: unknown;

  constructor(deps: StreamConnectionDeps, options: StreamConnectionOptions) {
    this.#deps = deps;
    this.#options = options;
  }

  /** The stream is not used for the rest of the window: every read is a page read. */
  get pagesOnly(): boolean {
    return this.#pagesOnly;
  }

  /** What cannot be retried, for the reader to throw. */
  get fatal(): { readonly error: unknown } | undefined {
    return this.#fatal;
  }

  get connected(): boolean {
    return this.#connected;
  }

  /** No reconnection fits before the deadline any more. */
  get outOfTime(): boolean {
    return this.#outOfTime;
  }

  /** Epoch ms of the last message or connection. */
  get lastActivityAt(): number {
    return this.#lastActivityAt;
  }

  get stats(): { opens: number; received: number; errors: number; timeouts: number; lastError: unknown } {
    return {
      opens: this.#opens,
      received: this.#received,
      errors: this.#errors,
      timeouts: this.#timeouts,
      lastError: this.#lastError,
    };
  }

  /** Records an error that cannot be retried (from a lookup, say): the reader fails with it. */
  failWith(error: unknown): void {
    this.#fatal ??= { error };
  }

  /** Connects, and reconnects, until the window closes, the stream is given up, or a fatal error. */
  async run(): Promise<void> {
    const { signal } = this.#options;
    let failures = 0;
    while (!signal.aborted && !this.#pagesOnly && this.#fatal === undefined) {
      if (this.#opens + this.#errors > 0) this.#deps.metrics.add('StreamReconnects', 'Count', 1);
      const outcome = await this.#connectOnce();
      if (outcome === 'over') break;
      failures = outcome.productive ? 0 : failures + 1;
      const waitMs = outcome.productive
        ? (this.#serverRetryMs ?? 0)
        : Math.max(outcome.floorMs, this.#backoff(failures));
      if (!(await this.#waitToReconnect(waitMs))) break;
    }
    this.#deps.changes.notify();
  }

  /** One connection, to its end: whether it brought events, and the wait floor a failure asks for. */
  async #connectOnce(): Promise<'over' | { productive: boolean; floorMs: number }> {
    const { stream, clock, metrics, logger, changes } = this.#deps;
    const { signal } = this.#options;
    const after = this.#deps.buffer.resumePoint();
    let productive = false;
    try {
      metrics.add('PollRequests', 'Count', 1);
      const messages = await stream.open({ after, signal });
      this.#opens += 1;
      this.#connected = true;
      this.#lastActivityAt = clock.now();
      logger.debug('Stream connected', { after });
      for await (const message of messages) {
        productive = this.#take(message) || productive;
        await this.#roomInBuffer();
        if (this.#pagesOnly || signal.aborted) break;
      }
      if (signal.aborted || this.#pagesOnly) return 'over';
      logger.info('The stream ended; reconnecting', { after: this.#deps.buffer.resumePoint() });
      return { productive, floorMs: 0 };
    } catch (error) {
      if (signal.aborted) return 'over';
      const floorMs = this.#onConnectionError(error, after);
      return floorMs === undefined ? 'over' : { productive: false, floorMs };
    } finally {
      this.#connected = false;
      changes.notify();
    }
  }

  /** Waits `waitMs` before the next connection; false when none fits before the deadline or the window closed. */
  async #waitToReconnect(waitMs: number): Promise<boolean> {
    const { clock, logger } = this.#deps;
    if (clock.now() + waitMs + this.#options.minPollWindowMs > this.#options.deadline) {
      logger.warn('No reconnection of the stream fits in the budget', { waitMs });
      this.#outOfTime = true;
      return false;
    }
    if (waitMs <= 0) return true;
    try {
      await clock.sleep(waitMs, this.#options.signal);
      return true;
    } catch {
      return false;
    }
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
      resumePoint: this.#deps.buffer.resumePoint(),
    });
    this.#deps.changes.notify();
  }

  /** Takes one message in; true when it carried events. */
  #take(message: StreamMessage): boolean {
    const { clock, metrics, logger, buffer, recovery, changes } = this.#deps;
    if (message.kind === 'retry') {
      const retryMs = Math.min(MAX_SERVER_RETRY_MS, Math.max(MIN_RECONNECT_WAIT_MS, message.retryMs));
      if (retryMs !== message.retryMs && this.#serverRetryMs !== retryMs) {
        logger.warn('The stream asked for a reconnection delay out of bounds; using the nearest bound', {
          retryMs: message.retryMs,
          usedMs: retryMs,
        });
      }
      this.#serverRetryMs = retryMs;
      return false;
    }
    this.#lastActivityAt = clock.now();
    if (message.kind === 'unreadable') {
      logger.warn('A stream message could not be read; reading its events with a poll', {
        reason: message.reason,
        lastEventId: message.lastEventId,
      });
      if (message.lastEventId === null) this.#usePagesOnly('a message without a usable id could not be read');
      else buffer.markUnread(message.lastEventId);
      changes.notify();
      return true;
    }
    this.#received += message.events.length;
    metrics.add('EventsReceived', 'Count', message.events.length);
    const now = clock.now();
    for (const streamed of message.events) {
      const state: BufferedEvent['state'] = !streamed.needsRecovery
        ? 'ready'
        : recovery === undefined
          ? 'unrecoverable'
          : 'queued';
      const entry = buffer.admit(streamed, state, now);
      if (entry?.state === 'queued') recovery?.enqueue(entry);
    }
    // One number at a time: each is judged against the one before it (`advanceResume`).
    for (const { event } of message.events) buffer.advanceResume(event.sequence_number);
    if (message.events.length === 0 && message.lastEventId !== null)
      buffer.advanceResume(message.lastEventId);
    if (message.events.length > 0) this.#deps.onEvents();
    recovery?.start();
    changes.notify();
    return message.events.length > 0;
  }

  async #roomInBuffer(): Promise<void> {
    const { signal, maxBufferedEvents, maxBufferedBytes } = this.#options;
    const { buffer } = this.#deps;
    const full = () => buffer.size >= maxBufferedEvents || buffer.heldBytes >= maxBufferedBytes;
    while (full() && !signal.aborted && !this.#pagesOnly) {
      await this.#deps.changes.wait(this.#deps.clock, signal);
    }
  }

  #backoff(failures: number): number {
    return Math.max(
      MIN_RECONNECT_WAIT_MS,
      this.#serverRetryMs ?? 0,
      fullJitterDelay(failures - 1, this.#options.reconnectBackoff, this.#deps.random),
    );
  }
}
