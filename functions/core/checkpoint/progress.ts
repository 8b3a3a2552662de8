import type { GapLedger } from '../gap-ledger.ts';
import type { Clock, CycleLogger, MetricsSink } from '../ports.ts';
import type { CheckpointStore } from './store.ts';

export interface CheckpointCommitterDeps {
  readonly checkpoints: CheckpointStore;
  readonly clock: Clock;
  readonly metrics: MetricsSink;
  readonly logger: CycleLogger;
}

export interface CheckpointCommitterOptions {
  /** The lease holder. */
  readonly owner: string;
  /** The checkpoint the run started from. */
  readonly committed: number | null;
  /** The skipped numbers; written along with the checkpoint whenever they changed. */
  readonly gaps: GapLedger;
  /** Bounds every write by the end of the invocation. */
  readonly signal: AbortSignal;
  /**
   * Writes start at most this often (DynamoDB sees at most 1000/this writes a second). `flush`
   * does not wait for it. @default 100
   */
  readonly minIntervalMs?: number;
  /**
   * A write waits, after `minIntervalMs`, until this many sequence numbers have been accepted past
   * the last one written, or `maxIntervalMs` has passed: during a catch-up at Lambda's CPU share
   * each write costs about as much CPU as publishing fifty events, so they carry a few hundred
   * numbers each rather than whatever 100 ms brought. It stays well below the read loop's bound
   * on uncommitted numbers (`MAX_UNCOMMITTED`), which therefore still bounds what a crash re-sends.
   * @default 500
   */
  readonly writeAfterNumbers?: number;
  /** The longest a newer checkpoint waits for its write. @default 500 */
  readonly maxIntervalMs?: number;
  /**
   * Called once, as soon as a write fails (the lease was lost, the table throttled past the
   * SDK's retries), so the cycle stops publishing at once rather than after the pages in flight.
   */
  readonly onFailure?: (error: unknown) => void;
}

interface WritePacing {
  readonly minIntervalMs: number;
  readonly writeAfterNumbers: number;
  readonly maxIntervalMs: number;
}

/** Defaults of the write pacing; see the options. */
export const CHECKPOINT_WRITE_PACING: WritePacing = Object.freeze({
  minIntervalMs: 100,
  writeAfterNumbers: 500,
  maxIntervalMs: 500,
});

/**
 * Writes the checkpoint in the background while publishing goes on: one write at a time, each
 * carrying the newest safe checkpoint offered meanwhile, so a fast run neither waits for DynamoDB
 * nor lets the stored checkpoint lag far behind (a crash re-publishes only what was accepted
 * since the last write). The checkpoint offered must already be safe: the contiguous prefix of
 * accepted events (`CheckpointTracker`).
 *
 * A write that fails (the lease was lost, the deadline came) is kept and reported: the cycle
 * stops publishing at once and `flush` throws it.
 */
export class CheckpointCommitter {
  readonly #deps: CheckpointCommitterDeps;
  readonly #options: CheckpointCommitterOptions;
  #committed: number | null;
  #wanted: number | null;
  #feedProgramId: string | null = null;
  /** `created_dt` of the newest event accepted, recorded with the checkpoint for `status`. */
  #newestCreatedDt: string | undefined;
  #writing: Promise<void> | undefined;
  #failure: { readonly error: unknown } | undefined;
  #lastWriteAt = Number.NEGATIVE_INFINITY;
  /** Cuts the pause between writes short when the run wants everything written now. */
  #hurry = new AbortController();
  /** Cuts a pause short once enough numbers wait for the write (see `writeAfterNumbers`). */
  #enough: AbortController | undefined;
  readonly #pacing: WritePacing;

  constructor(deps: CheckpointCommitterDeps, options: CheckpointCommitterOptions) {
    this.#deps = deps;
    this.#options = options;
    const min = options.minIntervalMs ?? CHECKPOINT_WRITE_PACING.minIntervalMs;
    this.#pacing = {
      minIntervalMs: min,
      writeAfterNumbers: options.writeAfterNumbers ?? CHECKPOINT_WRITE_PACING.writeAfterNumbers,
      maxIntervalMs: Math.max(min, options.maxIntervalMs ?? CHECKPOINT_WRITE_PACING.maxIntervalMs),
    };
    this.#committed = options.committed;
    this.#wanted = options.committed;
  }

  /** The last checkpoint written. */
  get committed(): number | null {
    return this.#committed;
  }

  /** Resolves when the writes under way are done (at once when none is); never rejects. */
  settled(): Promise<void> {
    return this.#writing ?? Promise.resolve();
  }

  /** Whether a write is under way or waiting for its turn. */
  get busy(): boolean {
    return this.#writing !== undefined;
  }

  /** The error of a failed write, if one failed. */
  get failure(): { readonly error: unknown } | undefined {
    return this.#failure;
  }

  /**
   * Asks for `safe` (and the gap ledger, if it changed) to be written. Returns at once; the
   * write starts when the one in flight is done. `feedProgramId` is the row's feed, known
   * before anything was published; `newestCreatedDt` the newest event accepted so far.
   */
  offer(safe: number | null, feedProgramId: string | null, newestCreatedDt?: string): void {
    this.#feedProgramId = feedProgramId;
    this.#newestCreatedDt = newestCreatedDt ?? this.#newestCreatedDt;
    if (safe !== null && (this.#wanted === null || safe > this.#wanted)) this.#wanted = safe;
    if (this.#enough !== undefined && this.#waitingNumbers() >= this.#pacing.writeAfterNumbers) {
      this.#enough.abort();
    }
    this.#writing ??= this.#drain();
  }

  /** Waits until everything offered is written; throws the first write error, if any. */
  async flush(): Promise<void> {
    this.#hurry.abort();
    while (this.#writing !== undefined) await this.#writing;
    if (this.#failure !== undefined) throw this.#failure.error;
  }

  async #drain(): Promise<void> {
    try {
      // One turn first: the acceptances of one PutEvents answer arrive together and make one write.
      await Promise.resolve();
      while (this.#failure === undefined && this.#pending()) {
        await this.#pace();
        await this.#writeOnce();
      }
    } finally {
      this.#writing = undefined;
    }
  }

  /** Waits for the next write's turn: see `minIntervalMs`, `writeAfterNumbers`, `maxIntervalMs`. */
  async #pace(): Promise<void> {
    const { clock } = this.#deps;
    const { minIntervalMs, writeAfterNumbers, maxIntervalMs } = this.#pacing;
    for (;;) {
      const elapsed = clock.now() - this.#lastWriteAt;
      const enough = this.#waitingNumbers() >= writeAfterNumbers;
      const due = enough ? minIntervalMs : maxIntervalMs;
      if (elapsed >= due || this.#hurry.signal.aborted || this.#options.signal.aborted) break;
      this.#enough = enough ? undefined : new AbortController();
      const signals = [this.#hurry.signal, this.#options.signal];
      if (this.#enough !== undefined) signals.push(this.#enough.signal);
      await clock.sleep(due - elapsed, AbortSignal.any(signals)).catch(() => {});
      this.#enough = undefined;
    }
    this.#lastWriteAt = clock.now();
  }

  /** Sequence numbers accepted past the last checkpoint written (all of them before the first). */
  #waitingNumbers(): number {
    if (this.#wanted === null) return 0;
    if (this.#committed === null) return Number.POSITIVE_INFINITY;
    return this.#wanted - this.#committed;
  }

  #pending(): boolean {
    const moves = this.#wanted !== null && (this.#committed === null || this.#wanted > this.#committed);
    return moves || (this.#options.gaps.changed && this.#wanted !== null);
  }

  async #writeOnce(): Promise<void> {
    const { checkpoints, metrics, logger } = this.#deps;
    const { gaps } = this.#options;
    const sequenceNumber = this.#wanted!;
    const openGaps = gaps.changed ? [...gaps.open] : undefined;
    if (openGaps !== undefined) gaps.written();
    try {
      await checkpoints.commit({
        owner: this.#options.owner,
        sequenceNumber,
        feedProgramId: this.#feedProgramId,
        openGaps,
        newestCreatedDt: this.#newestCreatedDt,
        signal: this.#options.signal,
      });
    } catch (error) {
      this.#failure = { error };
      this.#options.onFailure?.(error);
      return;
    }
    if (this.#committed === null || sequenceNumber > this.#committed) {
      this.#committed = sequenceNumber;
      metrics.add('CheckpointSequence', 'None', sequenceNumber);
      logger.debug('Checkpoint committed', { checkpoint: sequenceNumber });
    }
  }
}
