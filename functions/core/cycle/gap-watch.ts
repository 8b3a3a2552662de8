/**
 * Sequence numbers a read skipped, during a cycle: counted (`SequenceGaps`), looked up at once
 * (gap repair), remembered in the ledger for late events, and looked up again while young, beside
 * the reads. The checkpoint never waits on them (see `gap-repair.ts`). The numbers below an event
 * an operator accepted past the jump bound are not skipped ones: they are passed over, neither
 * counted, looked up nor remembered (`sequence-jumps.ts`).
 */
import type { BankingEvent } from '../banking-event.ts';
import type { OpenGap } from '../checkpoint/store.ts';
import { findSequenceGaps, type SequenceGap } from '../event-model.ts';
import type { GapLedger } from '../gap-ledger.ts';
import { GapRepair } from '../gap-repair.ts';
import { isJumpGap } from '../sequence-jumps.ts';
import type { CycleDeps } from './cycle-deps.ts';
import type { CycleSettings } from './cycle-options.ts';

/** How often young gaps are looked at for a re-check that is due (most looks find none due). */
const RECHECK_TICK_MS = 1_000;

export interface GapWatchHandlers {
  /** Events a re-check found: below the checkpoint, to be published as late events. */
  readonly onFound: (found: readonly BankingEvent[]) => void;
  /** Gaps were given up: the ledger should be written, so the next run does not count them again. */
  readonly onGivenUp: () => void;
  /** A re-check failed with what cannot be retried: the cycle fails with it. */
  readonly onFailure: (error: unknown) => void;
  /** Whether the cycle has failed: re-checks stop. */
  readonly failed: () => boolean;
}

export class GapWatch {
  readonly #deps: CycleDeps;
  readonly #ledger: GapLedger;
  readonly #repair: GapRepair | undefined;
  readonly #maxJump: number;
  /** Stops lookups: the reads' window (deadline, Ctrl-C, a failure). */
  readonly #signal: AbortSignal;
  /** Set when reading is over: re-checks stop with it. */
  readonly #readingOver = new AbortController();
  #handlers: GapWatchHandlers | undefined;
  #rechecking: Promise<void> | undefined;

  constructor(deps: CycleDeps, settings: CycleSettings, ledger: GapLedger, signal: AbortSignal) {
    this.#deps = deps;
    this.#ledger = ledger;
    this.#signal = signal;
    this.#maxJump = settings.maxSequenceJump;
    this.#repair =
      deps.lookup === undefined || settings.gapRepair.maxLookups === 0
        ? undefined
        : new GapRepair(
            { lookup: deps.lookup, clock: deps.clock, metrics: deps.metrics, logger: deps.logger },
            { ...settings.gapRepair, maxJump: settings.maxSequenceJump },
          );
  }

  /** Forgets what is past the ledger's retention and bound, before reading starts. */
  prune(): void {
    this.#reportForgotten(this.#ledger.prune(this.#deps.clock.now()));
  }

  /**
   * A read's events with those of the numbers it skipped that a lookup finds (gap repair),
   * ascending. `SequenceGaps` counts what the feed skipped; what stays missing is recorded when
   * the events are registered.
   */
  async withSkippedEvents(
    cursor: number | null,
    events: readonly BankingEvent[],
    committed: number | null,
  ): Promise<readonly BankingEvent[]> {
    const gaps = this.#skipped(cursor, events, true);
    if (gaps.length === 0) return events;
    const missing = gaps.reduce((count, gap) => count + gap.to - gap.from + 1, 0);
    this.#deps.metrics.add('SequenceGaps', 'Count', missing);
    const found = this.#repair === undefined ? [] : await this.#repair.fill(gaps, this.#signal);
    this.#deps.logger.warn('The feed skipped sequence numbers', {
      gaps: gaps.slice(0, 10),
      foundByLookup: found.map((event) => event.sequence_number).slice(0, 10),
      checkpoint: committed,
    });
    if (found.length === 0) return events;
    return [...events, ...found].sort((a, b) => a.sequence_number - b.sequence_number);
  }

  /** Remembers the numbers `fresh` skips after `cursor`, for late events and re-checks. */
  record(cursor: number | null, fresh: readonly BankingEvent[]): void {
    const gaps = this.#skipped(cursor, fresh, false);
    if (gaps.length === 0) return;
    this.#reportForgotten(this.#ledger.record(gaps, this.#deps.clock.now()));
    this.#startRechecks();
  }

  /**
   * The numbers `events` skip after `cursor`, but those below an accepted jump (logged once, when
   * `report` is set: the read's first look).
   */
  #skipped(cursor: number | null, events: readonly BankingEvent[], report: boolean): SequenceGap[] {
    const gaps = findSequenceGaps(cursor, events);
    const passedOver = gaps.filter((gap) => isJumpGap(gap, this.#maxJump));
    if (passedOver.length === 0) return gaps;
    if (report) {
      this.#deps.logger.warn('Passed over the numbers below an accepted sequence jump', {
        ranges: passedOver.slice(0, 10),
        maxSequenceJump: this.#maxJump,
      });
    }
    return gaps.filter((gap) => !isJumpGap(gap, this.#maxJump));
  }

  /** Starts looking young gaps up again beside the reads, until `stop()`. */
  start(handlers: GapWatchHandlers): void {
    this.#handlers = handlers;
    this.#startRechecks();
  }

  /** Ends the re-checks and waits for the one under way. */
  async stop(): Promise<void> {
    this.#readingOver.abort();
    await this.#rechecking;
  }

  /** Starts the loop of re-checks, unless it runs already, reading is over, or it has nothing to do. */
  #startRechecks(): void {
    const repair = this.#repair;
    const handlers = this.#handlers;
    if (repair === undefined || handlers === undefined || this.#rechecking !== undefined) return;
    if (this.#readingOver.signal.aborted || !repair.hasWork(this.#ledger, this.#deps.clock.now())) return;
    this.#rechecking = this.#recheck(repair, handlers).finally(() => {
      this.#rechecking = undefined;
    });
  }

  async #recheck(repair: GapRepair, handlers: GapWatchHandlers): Promise<void> {
    const { clock } = this.#deps;
    const signal = AbortSignal.any([this.#signal, this.#readingOver.signal]);
    while (!handlers.failed() && repair.hasWork(this.#ledger, clock.now())) {
      try {
        await clock.sleep(RECHECK_TICK_MS, signal);
      } catch {
        return;
      }
      let found: BankingEvent[];
      try {
        found = await repair.recheck(this.#ledger, signal);
      } catch (error) {
        handlers.onFailure(error);
        return;
      }
      if (found.length > 0) handlers.onFound(found);
      else if (this.#ledger.changed) handlers.onGivenUp();
    }
  }

  /**
   * Skipped numbers the ledger no longer remembers (past its retention, or beyond its size bound):
   * an event filled in for them later would be taken for a re-send. Those still looked up count as
   * unfilled, so the alarm on `GapsUnfilled` sees them as it sees gaps given up after the grace.
   */
  #reportForgotten(forgotten: readonly OpenGap[]): void {
    if (forgotten.length === 0) return;
    const unfilled = forgotten
      .filter((gap) => gap.gaveUpAt === undefined)
      .reduce((count, gap) => count + gap.to - gap.from + 1, 0);
    if (unfilled > 0) this.#deps.metrics.add('GapsUnfilled', 'Count', unfilled);
    this.#deps.logger.warn(
      'Skipped sequence numbers no longer remembered: an event filled in for them now would be taken for a re-send',
      { gaps: forgotten.slice(0, 10), ranges: forgotten.length, unfilled },
    );
  }
}
