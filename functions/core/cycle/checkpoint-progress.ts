/**
 * Where the checkpoint stands during a cycle: the events registered and accepted (the contiguous
 * prefix, `CheckpointTracker`), and the writes in the background (`CheckpointCommitter`). Created
 * once the start position is applied, from where reading begins.
 */
import type { BankingEvent } from '../banking-event.ts';
import { CheckpointCommitter } from '../checkpoint/progress.ts';
import { CheckpointTracker } from '../checkpoint/tracker.ts';
import type { GapLedger } from '../gap-ledger.ts';
import type { CycleDeps } from './cycle-deps.ts';

export interface CheckpointProgressOptions {
  readonly owner: string;
  /** The checkpoint as stored when reading begins (the cursor of the first read). */
  readonly checkpoint: number | null;
  /** The skipped numbers, written along with the checkpoint whenever they changed. */
  readonly gaps: GapLedger;
  /** Bounds every write by the end of the invocation. */
  readonly signal: AbortSignal;
  /** Called once, as soon as a write fails: the cycle stops publishing at once. */
  readonly onWriteFailure: (error: unknown) => void;
}

export class CheckpointProgress {
  readonly #tracker: CheckpointTracker;
  readonly #committer: CheckpointCommitter;
  /** Just below the first sequence number registered: a new row's baseline for `uncommitted`. */
  #firstRegistered: number | undefined;
  /** Events in the largest page registered so far. */
  #largestPage = 0;

  constructor(deps: CycleDeps, options: CheckpointProgressOptions) {
    this.#tracker = new CheckpointTracker(options.checkpoint);
    this.#committer = new CheckpointCommitter(
      { checkpoints: deps.checkpoints, clock: deps.clock, metrics: deps.metrics, logger: deps.logger },
      {
        owner: options.owner,
        committed: options.checkpoint,
        gaps: options.gaps,
        signal: options.signal,
        onFailure: options.onWriteFailure,
      },
    );
  }

  /** The highest sequence number registered (or the checkpoint): the cursor of the next read. */
  get cursor(): number | null {
    return this.#tracker.highestTracked;
  }

  /** The checkpoint that may be committed now: the contiguous prefix of accepted events. */
  get safe(): number | null {
    return this.#tracker.safeCheckpoint;
  }

  /** The last checkpoint written. */
  get committed(): number | null {
    return this.#committer.committed;
  }

  get largestPage(): number {
    return this.#largestPage;
  }

  /** The error of a failed write, if one failed. */
  get writeFailure(): { readonly error: unknown } | undefined {
    return this.#committer.failure;
  }

  /** Registers a page's new events, in feed order, before any of them is published. */
  register(fresh: readonly BankingEvent[]): void {
    this.#tracker.track(fresh.map((event) => event.sequence_number));
    if (this.#firstRegistered === undefined && fresh.length > 0) {
      this.#firstRegistered = fresh[0]!.sequence_number - 1;
    }
    this.#largestPage = Math.max(this.#largestPage, fresh.length);
  }

  /** Marks a registered event accepted by the bus. */
  accept(sequence: number): void {
    this.#tracker.accept(sequence);
  }

  /** Asks for the safe checkpoint (and changed gaps) to be written, with the row's feed and newest event. */
  offer(feedProgramId: string | null, newestCreatedDt: string | undefined): void {
    this.#committer.offer(this.#tracker.safeCheckpoint, feedProgramId, newestCreatedDt);
  }

  /** Accepted sequence numbers past the checkpoint written (a new row: past its first event). */
  uncommitted(): number {
    const safe = this.#tracker.safeCheckpoint;
    const written = this.#committer.committed ?? this.#firstRegistered;
    return safe === null || written === undefined ? 0 : safe - written;
  }

  /** Whether a write is under way or waiting for its turn. */
  get writing(): boolean {
    return this.#committer.busy;
  }

  /** Resolves when the writes under way are done (never rejects). */
  writesSettled(): Promise<void> {
    return this.#committer.settled();
  }

  /** Waits until everything offered is written; throws the first write error, if any. */
  flush(): Promise<void> {
    return this.#committer.flush();
  }
}
