import type { SequenceGap } from './event-model.ts';
import type { OpenGap } from './ports.ts';

export interface GapLedgerOptions {
  /** How long a skipped sequence number is remembered. @default 24 hours */
  readonly retentionMs?: number;
  /** The most ranges kept (the oldest go first); bounds the checkpoint item. @default 100 */
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

  /** Adds newly seen gaps; ranges already recorded (a gap seen again after a failed run) are not repeated. */
  record(gaps: readonly SequenceGap[], now: number): void {
    for (const gap of gaps) {
      if (this.#gaps.some((open) => open.from <= gap.to && gap.from <= open.to)) continue;
      this.#gaps.push({ from: gap.from, to: gap.to, seenAt: now });
      this.#changed = true;
    }
    this.#gaps.sort((a, b) => a.from - b.from);
  }

  /** Whether `sequence` is a number the feed skipped and nobody has published since. */
  includes(sequence: number): boolean {
    return this.#gaps.some((gap) => gap.from <= sequence && sequence <= gap.to);
  }

  /** Takes a number out of its gap once its event is published (splitting the range if need be). */
  fill(sequence: number): void {
    const index = this.#gaps.findIndex((gap) => gap.from <= sequence && sequence <= gap.to);
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
    const index = this.#gaps.indexOf(gap);
    if (index === -1 || gap.gaveUpAt !== undefined) return;
    this.#gaps[index] = { ...gap, gaveUpAt: now };
    this.#changed = true;
  }

  /**
   * Forgets gaps older than the retention, and the oldest beyond the size bound. Returns what
   * was forgotten: a number filled in after this is no longer recognised as unpublished.
   */
  prune(now: number): OpenGap[] {
    const expired = this.#gaps.filter((gap) => now - gap.seenAt > this.#retentionMs);
    let kept = this.#gaps.filter((gap) => now - gap.seenAt <= this.#retentionMs);
    const overflow = kept.length - this.#maxGaps;
    if (overflow > 0) {
      const oldest = [...kept].sort((a, b) => a.seenAt - b.seenAt || a.from - b.from).slice(0, overflow);
      expired.push(...oldest);
      kept = kept.filter((gap) => !oldest.includes(gap));
    }
    if (expired.length > 0) {
      this.#gaps = kept;
      this.#changed = true;
    }
    return expired;
  }
}
