/**
 * Gap repair: sequence numbers are positions in the program's sequence, so numbers a page or a
 * stream message skipped are looked up one by one (`GET /event/sequence/:n`). A 404 means the
 * number is unused for now; it may still be filled late.
 *
 * What the checkpoint does then (the no-loss promise states exactly this):
 * - it does not wait below a gap: the events above it are published and checkpointed as usual,
 *   so a gap costs no latency and no duplicates;
 * - the skipped numbers go into the gap ledger, written in the same update as the checkpoint
 *   that passes them, and are looked up again while the gap is young (`graceMs`, five minutes by
 *   default) each time its age doubles (1, 2, 4, 8... seconds, then at least once a minute); an
 *   event found then is published, late and out of order;
 * - once the grace is over the numbers are counted in `GapsUnfilled` and no longer looked up; the
 *   ledger still lets the feed deliver them late for its retention (24 h);
 * - every lookup, first looks and re-checks alike, counts against `maxLookups` per invocation;
 * - a gap that only a jump beyond `maxJump` opens (an operator accepted it, see `sequence-jumps.ts`)
 *   is never looked up: its numbers are not skipped ones but the jump's, and a held jump's range is
 *   never a gap at all (the held event is not registered).
 */

import type { BankingEvent } from './banking-event.ts';
import type { OpenGap } from './checkpoint/store.ts';
import {
  AuthenticationError,
  PageUnreadableError,
  PayloadValidationError,
  UpstreamHttpError,
} from './errors.ts';
import type { SequenceGap } from './event-model.ts';
import type { GapLedger } from './gap-ledger.ts';
import type { Clock, CycleLogger, EventLookup, MetricsSink } from './ports.ts';
import { isJumpGap, SEQUENCE_JUMP_DEFAULTS } from './sequence-jumps.ts';

export interface GapRepairOptions {
  /** Lookups per invocation, first looks and re-checks together; 0 turns gap repair off. @default 100 */
  readonly maxLookups?: number;
  /** How long after a gap was seen its numbers are looked up again. @default 300_000 (5 minutes) */
  readonly graceMs?: number;
  /** Lookups in flight at once. @default 4 */
  readonly concurrency?: number;
  /** A gap whose neighbours lie more than this apart is not looked up. @default 100_000 */
  readonly maxJump?: number;
}

export const GAP_REPAIR_DEFAULTS = { maxLookups: 100, graceMs: 300_000, concurrency: 4 } as const;

export interface GapRepairDeps {
  readonly lookup: EventLookup;
  readonly clock: Clock;
  readonly metrics: MetricsSink;
  readonly logger: CycleLogger;
}

/** Re-checks of a young gap are at least this far apart... */
const MIN_RECHECK_INTERVAL_MS = 1_000;
/** ...and at most this far. */
const MAX_RECHECK_INTERVAL_MS = 60_000;

/** The lookups of one invocation: its bound, and when each number was last looked up. */
export class GapRepair {
  readonly #deps: GapRepairDeps;
  readonly #maxLookups: number;
  readonly #graceMs: number;
  readonly #concurrency: number;
  readonly #maxJump: number;
  #used = 0;
  /** The service cannot look events up (it refused with a non-retryable status): no more tries. */
  #disabled = false;
  readonly #lastLookedUp = new Map<number, number>();

  constructor(deps: GapRepairDeps, options: GapRepairOptions = {}) {
    this.#deps = deps;
    this.#maxLookups = options.maxLookups ?? GAP_REPAIR_DEFAULTS.maxLookups;
    this.#graceMs = options.graceMs ?? GAP_REPAIR_DEFAULTS.graceMs;
    this.#concurrency = options.concurrency ?? GAP_REPAIR_DEFAULTS.concurrency;
    this.#maxJump = options.maxJump ?? SEQUENCE_JUMP_DEFAULTS.maxJump;
  }

  /** Lookups made so far in this invocation. */
  get lookups(): number {
    return this.#used;
  }

  /**
   * Looks up the numbers a read skipped (as many as the bound allows) and returns the events
   * found, ascending; they are published with the read, in order.
   */
  async fill(gaps: readonly SequenceGap[], signal: AbortSignal): Promise<BankingEvent[]> {
    const numbers: number[] = [];
    for (const gap of gaps) {
      if (isJumpGap(gap, this.#maxJump)) continue;
      for (let n = gap.from; n <= gap.to && numbers.length < this.#left(); n += 1) numbers.push(n);
    }
    return this.#lookUp(numbers, signal);
  }

  /**
   * Whether re-checks are still to come in this invocation: a gap in its grace with lookups left,
   * or one whose grace is over and is yet to be given up.
   */
  hasWork(ledger: GapLedger, now: number): boolean {
    return ledger.open.some(
      (gap) =>
        gap.gaveUpAt === undefined &&
        (this.#isPastGrace(gap, now) || (this.#left() > 0 && !isJumpGap(gap, this.#maxJump))),
    );
  }

  /**
   * Looks up again the numbers of young gaps whose next look is due, and gives up the gaps whose
   * grace is over (counting their numbers in `GapsUnfilled`). Returns the events found, ascending:
   * they fill a gap below the checkpoint, so they are published as late events.
   */
  async recheck(ledger: GapLedger, signal: AbortSignal): Promise<BankingEvent[]> {
    const { clock, metrics, logger } = this.#deps;
    const now = clock.now();
    const due: number[] = [];
    for (const gap of ledger.open) {
      if (gap.gaveUpAt !== undefined) continue;
      if (this.#isPastGrace(gap, now)) {
        ledger.giveUp(gap, now);
        const count = gap.to - gap.from + 1;
        metrics.add('GapsUnfilled', 'Count', count);
        logger.warn(
          'No event turned up for skipped sequence numbers within the grace period; no longer looking them up',
          { from: gap.from, to: gap.to, seenAt: new Date(gap.seenAt).toISOString(), graceMs: this.#graceMs },
        );
        continue;
      }
      if (isJumpGap(gap, this.#maxJump)) continue;
      for (let n = gap.from; n <= gap.to && due.length < this.#left(); n += 1) {
        if (this.#isDue(n, gap, now)) due.push(n);
      }
    }
    return this.#lookUp(due, signal);
  }

  #left(): number {
    return this.#disabled ? 0 : Math.max(0, this.#maxLookups - this.#used);
  }

  #isPastGrace(gap: OpenGap, now: number): boolean {
    return now - gap.seenAt > this.#graceMs;
  }

  /**
   * Due when never looked up in this invocation, or once half the gap's age (1 s to 1 min) has
   * passed since: each time the age doubles.
   */
  #isDue(sequence: number, gap: OpenGap, now: number): boolean {
    const last = this.#lastLookedUp.get(sequence);
    if (last === undefined) return true;
    const interval = Math.min(
      MAX_RECHECK_INTERVAL_MS,
      Math.max(MIN_RECHECK_INTERVAL_MS, (now - gap.seenAt) / 2),
    );
    return now - last >= interval;
  }

  /** Looks `numbers` up, `concurrency` at a time; the events found, ascending. */
  async #lookUp(numbers: readonly number[], signal: AbortSignal): Promise<BankingEvent[]> {
    const found: BankingEvent[] = [];
    let next = 0;
    const worker = async () => {
      while (next < numbers.length && !this.#disabled && !signal.aborted) {
        const sequence = numbers[next]!;
        next += 1;
        const event = await this.#lookUpOne(sequence, signal);
        if (event !== null) found.push(event);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#concurrency, numbers.length) }, worker));
    found.sort((a, b) => a.sequence_number - b.sequence_number);
    if (found.length > 0) {
      this.#deps.metrics.add('GapsRepaired', 'Count', found.length);
      this.#deps.logger.info('Gap repair found events for skipped sequence numbers', {
        sequenceNumbers: found.slice(0, 10).map((event) => event.sequence_number),
        count: found.length,
      });
    }
    return found;
  }

  /**
   * One lookup. A 404, a failure worth another try later and a wrong answer give `null`; a refusal
   * that will not change (a 4xx other than 404) turns repair off for the invocation; an
   * authentication failure is the cycle's to report.
   */
  async #lookUpOne(sequence: number, signal: AbortSignal): Promise<BankingEvent | null> {
    const { clock, lookup, logger } = this.#deps;
    this.#used += 1;
    this.#lastLookedUp.set(sequence, clock.now());
    try {
      // A signal of its own: lookups run side by side, and each request listens to its signal.
      return await lookup.fetchEventBySequence(sequence, AbortSignal.any([signal]));
    } catch (error) {
      if (signal.aborted) return null;
      if (error instanceof AuthenticationError) throw error;
      if (error instanceof UpstreamHttpError && !error.retryable) {
        this.#disabled = true;
        logger.warn(
          'The service refused a lookup by sequence number; no gap repair for the rest of this run',
          {
            sequenceNumber: sequence,
            status: error.status,
          },
        );
        return null;
      }
      if (
        error instanceof UpstreamHttpError ||
        error instanceof PayloadValidationError ||
        error instanceof PageUnreadableError
      ) {
        logger.warn('A lookup by sequence number failed; it is tried again later', {
          sequenceNumber: sequence,
          error: error.message,
        });
        return null;
      }
      throw error;
    }
  }
}
