import { type BackoffOptions, fullJitterDelay } from './backoff.ts';
import type { BankingEvent, FeedPage } from './banking-event.ts';
import { PageTooLargeError, PageUnreadableError, UpstreamHttpError } from './errors.ts';
import { selectNewEvents } from './event-model.ts';
import { pickLateEvents } from './late-events.ts';
import { type ReadRoom, withinRoom } from './memory-budget.ts';
import type { Clock, CpuTurns, CycleLogger, EventFeed, MetricsSink } from './ports.ts';
import { type JumpRule, splitAtJump } from './sequence-jumps.ts';

export interface FeedReaderDeps {
  readonly feed: EventFeed;
  readonly clock: Clock;
  readonly metrics: MetricsSink;
  readonly logger: CycleLogger;
  /** Source of jitter; injectable for deterministic tests. @default Math.random */
  readonly random?: () => number;
  /**
   * Sequence numbers the feed skipped and nobody published since (the gap ledger): an event at or
   * below the cursor with one of them was filled in late and is wanted. @default none
   */
  readonly recordedGaps?: { includes(sequence: number): boolean };
  /**
   * Tells events implausibly far past the cursor (`sequence-jumps.ts`): they are returned apart, as
   * `held`, never as events. @default every event is trusted (the operator's reads)
   */
  readonly jumps?: JumpRule;
  /** Turns on a shared thread: a page is parsed in its program's turn (`CpuTurns`). @default none */
  readonly cpuTurns?: CpuTurns;
}

export interface FeedReaderOptions {
  /** No poll starts with less than this left before the deadline. */
  readonly minPollWindowMs: number;
  /** Waits after a failed poll that gave no `Retry-After`. */
  readonly pollBackoff: BackoffOptions;
  /**
   * Two answers in a row without events, each faster than this, make the next poll wait until
   * this long after the last was sent, capping the request rate.
   */
  readonly minEmptyPollIntervalMs: number;
}

/** The window the reader may poll in: until `deadline`, or until `signal` aborts (deadline or Ctrl-C). */
export interface ReadWindow {
  readonly deadline: number;
  readonly signal: AbortSignal;
}

export type FeedRead =
  /**
   * Events after the cursor, new to this checkpoint, ascending; `late` ones at or below it that
   * fall in a recorded gap (never published); and `held` ones, from a number implausibly far past
   * the cursor on (`sequence-jumps.ts`): never to be registered. One of the three is not empty.
   */
  | {
      readonly kind: 'events';
      readonly events: readonly BankingEvent[];
      readonly late: readonly BankingEvent[];
      /** Absent when none. */
      readonly held?: readonly BankingEvent[];
    }
  /** The feed answered that nothing is new. */
  | { readonly kind: 'caught-up' }
  /** Polling is over for this invocation: the window closed, or no retry fits in what is left. */
  | { readonly kind: 'closed'; readonly upstreamUnavailable: boolean };

/** What the reader saw in this invocation. */
export interface FeedReadStats {
  /** Requests the feed answered (timeouts and stale pages included). */
  readonly polls: number;
  /** Events in those answers, duplicates included. */
  readonly received: number;
  /** Requests that failed (retryable errors) or answered only with events already seen. */
  readonly pollErrors: number;
  /** Answers of 408 or 504: a gateway gave up waiting. */
  readonly pollTimeouts: number;
  /** Answers holding only events at or below the cursor. */
  readonly stalePolls: number;
}

/**
 * What the cycle reads the feed through, page by page: `FeedReader` (long polls) or
 * `StreamReader` (Server-Sent Events). The cursor is an argument, not state: a caller may ask for
 * the events after ones it has not published yet.
 */
export interface FeedSource {
  /**
   * The next events after `after`, or that the feed is caught up, or that reading is over. Throws
   * what cannot be retried (authentication, payload, 4xx). With `room`, the events returned fit
   * it (`withinRoom`): the ones after them are read again by the next call.
   */
  next(after: number | null, room?: ReadRoom): Promise<FeedRead>;
  readonly stats: FeedReadStats;
  /** The last retryable error, for a cycle in which the feed never answered. */
  readonly lastError: unknown;
  /** Ends what the source keeps open (a stream's connection); called once reading is over. */
  close?(): Promise<void>;
}

/** The shortest wait between a failed poll and the next one. */
const MIN_RETRY_WAIT_MS = 100;

/**
 * Reads the feed for the cycle by long polls: one `next(after)` call returns the next page of new
 * events, or says the feed is caught up or that polling is over. Retries, backoff (`Retry-After`
 * as a floor, full jitter otherwise), pacing of empty and timed-out answers, and the detection of
 * a feed that ignores the cursor live here; the cycle only decides what to publish and commit.
 */
export class FeedReader implements FeedSource {
  readonly #deps: FeedReaderDeps;
  readonly #options: FeedReaderOptions;
  readonly #window: ReadWindow;
  #polls = 0;
  #received = 0;
  #pollErrors = 0;
  #pollTimeouts = 0;
  #stalePolls = 0;
  #consecutiveErrors = 0;
  #lastError: unknown;
  /** Whether a page larger than asked for was reported at warning level in this cycle (once is enough). */
  #oversizeReported = false;
  /** The most text per event of the pages read so far, to read no more of a page than there is room for. */
  #textPerEvent = 0;
  /** Epoch ms before which no poll starts: pacing after answers without events. */
  #notBefore = Number.NEGATIVE_INFINITY;
  /** Whether the last answer came back without events faster than the pacing interval. */
  #lastAnswerQuickAndEmpty = false;

  constructor(deps: FeedReaderDeps, options: FeedReaderOptions, window: ReadWindow) {
    this.#deps = deps;
    this.#options = options;
    this.#window = window;
  }

  get stats(): FeedReadStats {
    return {
      polls: this.#polls,
      received: this.#received,
      pollErrors: this.#pollErrors,
      pollTimeouts: this.#pollTimeouts,
      stalePolls: this.#stalePolls,
    };
  }

  /** The last retryable error, for a cycle in which the feed never answered. */
  get lastError(): unknown {
    return this.#lastError;
  }

  /**
   * Polls until the feed returns events after `after` or says nothing is new, or until the
   * window closes. Throws what cannot be retried (authentication, payload, 4xx).
   */
  async next(after: number | null, room?: ReadRoom): Promise<FeedRead> {
    const { clock, feed, metrics, logger, cpuTurns } = this.#deps;
    const { signal } = this.#window;
    let maxBytes = this.#bytesToRead(room);
    for (;;) {
      if (!(await this.#waitForTurn())) return { kind: 'closed', upstreamUnavailable: false };
      metrics.add('PollRequests', 'Count', 1);
      const startedAt = clock.now();
      let page: Awaited<ReturnType<EventFeed['poll']>>;
      try {
        page = await feed.poll({
          after,
          signal,
          ...(maxBytes === undefined ? {} : { maxBytes }),
          ...(cpuTurns === undefined ? {} : { cpuTurn: () => cpuTurns.take() }),
        });
      } catch (error) {
        if (signal.aborted) return { kind: 'closed', upstreamUnavailable: false };
        if (error instanceof PageTooLargeError && maxBytes !== undefined) {
          // Its first event is longer than the room: read again as far as the feed reads at all.
          maxBytes = undefined;
          continue;
        }
        // An unreadable page is neither "no events" nor a network failure: tried again while the
        // budget allows (a proxy's garbled answer passes), then the cycle fails with it.
        const unreadable = error instanceof PageUnreadableError;
        if (!unreadable && !(error instanceof UpstreamHttpError && error.retryable)) throw error;
        this.#lastError = error;
        // Retry-After is a floor, not a licence: "0" or a past date must not turn into a hot loop.
        const waitMs = Math.max(unreadable ? 0 : (error.retryAfterMs ?? 0), this.#nextBackoff());
        const retry = unreadable
          ? await this.#backOff('A page of the feed could not be read', waitMs, after, {
              error: error.message,
            })
          : await this.#backOff('Poll failed', waitMs, after, { status: error.status });
        if (retry === 'retry') continue;
        if (unreadable) throw error;
        return { kind: 'closed', upstreamUnavailable: retry === 'no-time' };
      }
      this.#polls += 1;
      this.#received += page.events.length;
      metrics.add('EventsReceived', 'Count', page.events.length);
      this.#reportOversize(page, after);

      if (page.timedOut) {
        // Not "caught up": during an outage a gateway answers this way at once, every time.
        this.#pollTimeouts += 1;
        metrics.add('PollTimeouts', 'Count', 1);
        const attributes = { cursor: after, timeouts: this.#pollTimeouts };
        const message = 'The poll ended in a gateway timeout (408/504); not counted as caught up';
        // The first one of a cycle is worth a warning; in an outage the rest would only repeat it.
        if (this.#pollTimeouts === 1) logger.warn(message, attributes);
        else logger.debug(message, attributes);
        this.#paceAnswerWithoutEvents(startedAt);
        continue;
      }

      const fresh = selectNewEvents(page.events, after);
      const late = pickLateEvents(this.#deps, page.events, after);
      if (fresh.length === 0 && late.length === 0 && page.events.length > 0) {
        // Only events we already have: the upstream ignored the cursor (wrong POLL_CURSOR_PARAM?)
        // or treats it as inclusive. Not "caught up", and not worth a hot loop.
        this.#stalePolls += 1;
        const highest = page.events.at(-1)!.sequence_number;
        const message = 'The feed returned only events at or below the cursor';
        const retry = await this.#backOff(message, this.#nextBackoff(), after, { highest });
        if (retry !== 'retry') return { kind: 'closed', upstreamUnavailable: retry === 'no-time' };
        continue;
      }
      this.#consecutiveErrors = 0;
      return this.#answered(page, { fresh, late, after, room, startedAt });
    }
  }

  /**
   * What an answer with events after the cursor (or late ones) gives: those from an implausible
   * jump on held apart (`sequence-jumps.ts`), the rest within `room`; "caught up" when nothing is
   * left to publish.
   */
  #answered(
    page: FeedPage,
    read: {
      fresh: BankingEvent[];
      late: BankingEvent[];
      after: number | null;
      room: ReadRoom | undefined;
      startedAt: number;
    },
  ): FeedRead {
    const { fresh, late, after, room, startedAt } = read;
    const { trusted, held } =
      this.#deps.jumps === undefined
        ? { trusted: fresh, held: [] }
        : splitAtJump(fresh, after, this.#deps.jumps);
    if (trusted.length === 0 && late.length === 0) {
      // Held events alone: the feed answers at once while it has them, so this is paced too.
      this.#paceAnswerWithoutEvents(startedAt);
      return held.length === 0 ? { kind: 'caught-up' } : { kind: 'events', events: [], late, held };
    }
    this.#lastAnswerQuickAndEmpty = false;
    this.#noteTextPerEvent(page.events);
    const events = withinRoom(trusted, room, late);
    // Held events go with the read that reaches them: one the room cut short comes back for them.
    const reached = held.length > 0 && events.length === trusted.length;
    return { kind: 'events', events, late, ...(reached ? { held } : {}) };
  }

  /**
   * How much of the next answer to read: what the room's events would take as text (about half
   * their footprint, and as much per event as the longest of the pages so far), so that a page far
   * larger than asked for is not read in full only to keep its first events. `undefined`: no bound.
   */
  #bytesToRead(room: ReadRoom | undefined): number | undefined {
    // On a shared thread a page is parsed in short steps: a longer one is read in parts.
    const step = this.#deps.cpuTurns?.stepBytes;
    if (room === undefined) return step;
    const byBytes = Math.max(0, room.bytes / 2);
    const byEvents = this.#textPerEvent === 0 ? byBytes : room.events * this.#textPerEvent * 1.25;
    return Math.ceil(Math.min(byBytes, byEvents, step ?? Number.POSITIVE_INFINITY));
  }

  #noteTextPerEvent(events: readonly BankingEvent[]): void {
    if (events.length === 0) return;
    let text = 0;
    for (const event of events) text += event.detail.length;
    this.#textPerEvent = Math.max(this.#textPerEvent, text / events.length);
  }

  /**
   * A page with more events than asked for (a bank that ignores `limit`, or a `POLL_LIMIT_PARAM`
   * that is not its name), or too long to read at once, is counted (`OversizePages`) and said so:
   * at warning level once a cycle, the rest at debug.
   */
  #reportOversize(page: FeedPage, after: number | null): void {
    const { metrics, logger } = this.#deps;
    const overLimit = page.asked !== undefined && page.events.length > page.asked;
    if (!overLimit && page.cut === undefined) return;
    metrics.add('OversizePages', 'Count', 1);
    // More events than asked for says the bank ignores the page size, cut or not; cut alone may be
    // an honest page of large events in little memory.
    const message = overLimit
      ? 'The feed answered more events than the poll asked for (does the bank ignore the page size parameter, POLL_LIMIT_PARAM?); reading them within the memory budget'
      : 'A page of the feed was longer than is read at once in this memory; its first events were read, the rest is asked for again';
    const attributes = {
      asked: page.asked ?? null,
      received: page.events.length,
      bytesRead: page.cut?.bytesRead ?? null,
      cursor: after,
    };
    if (this.#oversizeReported) logger.debug(message, attributes);
    else logger.warn(message, attributes);
    this.#oversizeReported = true;
  }

  /**
   * An answer without events that did not hold must not become a hot loop: the second such answer
   * in a row makes the next poll wait until the pacing interval has passed since it was sent. The
   * first goes unpaced, since a long poll that happens to time out early (the service's hold is
   * random) is normal, and a pause then would only delay the next events.
   */
  #paceAnswerWithoutEvents(startedAt: number): void {
    const quick = this.#deps.clock.now() - startedAt < this.#options.minEmptyPollIntervalMs;
    if (quick && this.#lastAnswerQuickAndEmpty) {
      this.#notBefore = startedAt + this.#options.minEmptyPollIntervalMs;
    }
    this.#lastAnswerQuickAndEmpty = quick;
  }

  /** Waits out the pacing, if any; false when the window closes first or no poll window is left. */
  async #waitForTurn(): Promise<boolean> {
    const { clock } = this.#deps;
    const { deadline, signal } = this.#window;
    const startAt = Math.max(clock.now(), this.#notBefore);
    if (signal.aborted || deadline - startAt < this.#options.minPollWindowMs) return false;
    const pause = startAt - clock.now();
    if (pause <= 0) return true;
    try {
      await clock.sleep(pause, signal);
      return true;
    } catch {
      return false;
    }
  }

  // Full jitter may draw 0; the floor keeps a run of failures from becoming back-to-back requests.
  #nextBackoff(): number {
    return Math.max(
      MIN_RETRY_WAIT_MS,
      fullJitterDelay(this.#consecutiveErrors, this.#options.pollBackoff, this.#deps.random),
    );
  }

  /**
   * Counts a failed poll and waits before the next one: `retry` after the wait, `no-time` when
   * the wait would not leave a poll window before the deadline, `closed` when the window closed
   * during it.
   */
  async #backOff(
    reason: string,
    waitMs: number,
    cursor: number | null,
    attributes: Record<string, unknown>,
  ): Promise<'retry' | 'no-time' | 'closed'> {
    const { clock, metrics, logger } = this.#deps;
    this.#pollErrors += 1;
    this.#consecutiveErrors += 1;
    metrics.add('PollErrors', 'Count', 1);
    if (clock.now() + waitMs + this.#options.minPollWindowMs > this.#window.deadline) {
      logger.warn(`${reason}; no retry fits in the budget`, { ...attributes, cursor, waitMs });
      return 'no-time';
    }
    logger.warn(`${reason}; retrying`, { ...attributes, cursor, attempt: this.#consecutiveErrors, waitMs });
    try {
      await clock.sleep(waitMs, this.#window.signal);
      return 'retry';
    } catch {
      return 'closed';
    }
  }
}
