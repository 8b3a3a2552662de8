import type { CheckpointStore } from './checkpoint-store.ts';
import type { GapLedger } from './gap-ledger.ts';
import type { Clock, CycleLogger, MetricsSink } from './ports.ts';

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
   * Writes start at most this often while a run catches up (a crash re-publishes at most this
   * long's worth of accepted events; DynamoDB sees at most 1000/this writes a second). `flush`
   * does not wait for it. @default 100
   */
  readonly minIntervalMs?: number;
  /**
   * Called once, as soon as a write fails (the lease was lost, the table throttled past the
   * SDK's retries), so the cycle stops publishing at once rather than after the pages in flight.
   */
  readonly onFailure?: (error: unknown) => void;
}

const DEFAULT_MIN_INTERVAL_MS = 100;

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

  constructor(deps: CheckpointCommitterDeps, options: CheckpointCommitterOptions) {
    this.#deps = deps;
    this.#options = options;
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

  async #pace(): Promise<void> {
    const { clock } = this.#deps;
    const wait = this.#lastWriteAt + (this.#options.minIntervalMs ?? DEFAULT_MIN_INTERVAL_MS) - clock.now();
    if (wait > 0 && !this.#hurry.signal.aborted) {
      await clock.sleep(wait, AbortSignal.any([this.#hurry.signal, this.#options.signal])).catch(() => {});
    }
    this.#lastWriteAt = clock.now();
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
