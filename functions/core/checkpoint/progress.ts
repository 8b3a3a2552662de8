/**
 * When the checkpoint is written during a cycle: the events registered and accepted give the safe
 * checkpoint (the contiguous prefix, `CheckpointTracker` in `tracker.ts`), and `CheckpointCommitter`
 * writes the newest safe one in the background, paced. `CheckpointProgress` joins the two for the
 * cycle; it is created once the start position is applied, from where reading begins.
 */
import type { BankingEvent } from '../banking-event.ts';
import type { GapLedger } from '../gap-ledger.ts';
import type { Clock, CycleLogger, MetricsSink } from '../ports.ts';
import type { HeldJumps } from '../sequence-jumps.ts';
import type { CheckpointStore } from './store.ts';
import { CheckpointTracker } from './tracker.ts';

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
  /**
   * The held sequence jumps; written along with the checkpoint whenever they changed, those the
   * checkpoint passes let go. @default none
   */
  readonly heldJumps?: HeldJumps;
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
    const { gaps, heldJumps } = this.#options;
    return moves || ((gaps.changed || heldJumps?.changed === true) && this.#wanted !== null);
  }

  async #writeOnce(): Promise<void> {
    const { checkpoints, metrics, logger } = this.#deps;
    const { gaps, heldJumps } = this.#options;
    const sequenceNumber = this.#wanted!;
    const openGaps = gaps.changed ? [...gaps.open] : undefined;
    if (openGaps !== undefined) gaps.written();
    heldJumps?.passedThrough(sequenceNumber);
    const held = heldJumps?.changed ? [...heldJumps.records] : undefined;
    if (held !== undefined) heldJumps?.written();
    try {
      await checkpoints.commit({
        owner: this.#options.owner,
        sequenceNumber,
        feedProgramId: this.#feedProgramId,
        openGaps,
        ...(held === undefined ? {} : { heldJumps: held }),
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

export interface CheckpointProgressOptions {
  readonly owner: string;
  /** The checkpoint as stored when reading begins (the cursor of the first read). */
  readonly checkpoint: number | null;
  /** The skipped numbers, written along with the checkpoint whenever they changed. */
  readonly gaps: GapLedger;
  /** The held sequence jumps, written along with the checkpoint whenever they changed. @default none */
  readonly heldJumps?: HeldJumps;
  /** Bounds every write by the end of the invocation. */
  readonly signal: AbortSignal;
  /** Called once, as soon as a write fails: the cycle stops publishing at once. */
  readonly onWriteFailure: (error: unknown) => void;
}

/**
 * Where the checkpoint stands during a cycle: the events registered and accepted, and the writes
 * in the background. The cycle asks it for the cursor of the next read and offers it every
 * acceptance; it never offers more than the contiguous prefix.
 */
export class CheckpointProgress {
  readonly #tracker: CheckpointTracker;
  readonly #committer: CheckpointCommitter;
  /** Just below the first sequence number registered: a new row's baseline for `uncommitted`. */
  #firstRegistered: number | undefined;
  /** Events in the largest page registered so far. */
  #largestPage = 0;

  constructor(deps: CheckpointCommitterDeps, options: CheckpointProgressOptions) {
    this.#tracker = new CheckpointTracker(options.checkpoint);
    this.#committer = new CheckpointCommitter(
      { checkpoints: deps.checkpoints, clock: deps.clock, metrics: deps.metrics, logger: deps.logger },
      {
        owner: options.owner,
        committed: options.checkpoint,
        gaps: options.gaps,
        heldJumps: options.heldJumps,
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
