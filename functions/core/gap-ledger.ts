import type { OpenGap } from './checkpoint/store.ts';
import type { SequenceGap } from './event-model.ts';

export interface GapLedgerOptions {
  /** How long a skipped sequence number is remembered. @default 24 hours */
  readonly retentionMs?: number;
  /**
   * The most ranges kept, within a run as well as in the checkpoint item (the lowest go first);
   * bounds the item far below DynamoDB's 400 KB. @default 100
   */
  readonly maxGaps?: number;
}

export const GAP_LEDGER_DEFAULTS = { retentionMs: 24 * 3_600_000, maxGaps: 100 } as const;

/**
 * The sequence numbers the feed skipped, remembered once the checkpoint has moved past them.
 * The feed is cursor-based, so nothing below the checkpoint is asked for again: an event that
 * turns up later with one of these numbers (filled in late) is known never to have been
 * published, and is published then. Any other event at or below the checkpoint was published
 * already and is only counted.
 *
 * Timeline, checkpoint at 4:
 *   page 5, 8          → gap 6..7 recorded; checkpoint 8
 *   page 7 (late), 9   → 7 is in the ledger: published, the gap shrinks to 6..6; 9 as usual
 *   page 5 again       → not in the ledger: a re-send, counted and dropped
 */
export class GapLedger {
  readonly #retentionMs: number;
  readonly #maxGaps: number;
  /** Ascending by `from`, never overlapping: lookups are binary searches. */
  #gaps: OpenGap[];
  #changed = false;

  constructor(open: readonly OpenGap[], options: GapLedgerOptions = {}) {
    this.#gaps = [...open].sort((a, b) => a.from - b.from);
    this.#retentionMs = options.retentionMs ?? GAP_LEDGER_DEFAULTS.retentionMs;
    this.#maxGaps = options.maxGaps ?? GAP_LEDGER_DEFAULTS.maxGaps;
  }

  /** The ranges still open, ascending. */
  get open(): readonly OpenGap[] {
    return this.#gaps;
  }

  /** Whether the ledger differs from what was last written (it needs writing back). */
  get changed(): boolean {
    return this.#changed;
  }

  /** Notes that the open gaps as they are now were written with the checkpoint. */
  written(): void {
    this.#changed = false;
  }

  /**
   * Adds newly seen gaps; ranges already recorded (a gap seen again after a failed run) are not
   * repeated. Beyond the size bound the lowest ranges are forgotten at once, not only when the
   * ledger is next written, so a feed that skips numbers everywhere keeps the ledger (and the
   * checkpoint item) small. Returns what was forgotten.
   */
  record(gaps: readonly SequenceGap[], now: number): OpenGap[] {
    for (const gap of gaps) {
      // New gaps lie above the ones recorded, so this is normally an append.
      const index = this.#firstFromAbove(gap.from);
      const before = this.#gaps[index - 1];
      const after = this.#gaps[index];
      if ((before !== undefined && before.to >= gap.from) || (after !== undefined && after.from <= gap.to)) {
        continue;
      }
      const entry = { from: gap.from, to: gap.to, seenAt: now };
      if (index === this.#gaps.length) this.#gaps.push(entry);
      else this.#gaps.splice(index, 0, entry);
      this.#changed = true;
    }
    return this.#forgetBeyondBound();
  }

  /** Whether `sequence` is a number the feed skipped and nobody has published since. */
  includes(sequence: number): boolean {
    return this.#indexOf(sequence) !== -1;
  }

  /** Takes a number out of its gap once its event is published (splitting the range if need be). */
  fill(sequence: number): void {
    const index = this.#indexOf(sequence);
    if (index === -1) return;
    const gap = this.#gaps[index]!;
    const rest: OpenGap[] = [];
    if (gap.from < sequence) rest.push({ ...gap, to: sequence - 1 });
    if (sequence < gap.to) rest.push({ ...gap, from: sequence + 1 });
    this.#gaps.splice(index, 1, ...rest);
    this.#changed = true;
  }

  /** Marks `gap` as no longer looked up (its grace is over). */
  giveUp(gap: OpenGap, now: number): void {
    const index = this.#indexOf(gap.from);
    if (index === -1 || this.#gaps[index] !== gap || gap.gaveUpAt !== undefined) return;
    this.#gaps[index] = { ...gap, gaveUpAt: now };
    this.#changed = true;
  }

  /**
   * Forgets gaps older than the retention, and the lowest beyond the size bound. Returns what
   * was forgotten: a number filled in after this is no longer recognised as unpublished.
   */
  prune(now: number): OpenGap[] {
    const expired = this.#gaps.filter((gap) => now - gap.seenAt > this.#retentionMs);
    if (expired.length > 0) {
      this.#gaps = this.#gaps.filter((gap) => now - gap.seenAt <= this.#retentionMs);
      this.#changed = true;
    }
    return [...expired, ...this.#forgetBeyondBound()];
  }

  /** The lowest ranges beyond `maxGaps`, removed: the oldest numbers, seen first. */
  #forgetBeyondBound(): OpenGap[] {
    const overflow = this.#gaps.length - this.#maxGaps;
    if (overflow <= 0) return [];
    this.#changed = true;
    return this.#gaps.splice(0, overflow);
  }

  /** Index of the gap holding `sequence`, or -1. */
  #indexOf(sequence: number): number {
    const index = this.#firstFromAbove(sequence) - 1;
    return index >= 0 && this.#gaps[index]!.to >= sequence ? index : -1;
  }

  /** Index of the first gap whose `from` is above `sequence` (the length when none is). */
  #firstFromAbove(sequence: number): number {
    let low = 0;
    let high = this.#gaps.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.#gaps[middle]!.from <= sequence) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
