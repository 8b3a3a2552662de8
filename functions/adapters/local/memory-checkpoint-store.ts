import {
  type CheckpointState,
  type CheckpointStore,
  type CommitRequest,
  type CycleRecord,
  decideCommit,
  decideCycleRecord,
  decideHighestSeen,
  decideLease,
  decideRelease,
  decideStart,
  EMPTY_CHECKPOINT_STATE,
  type HighestSeenRequest,
  type LeaseGrant,
  type LeaseRequest,
  type ReleaseOptions,
  type StartRequest,
} from '../../core/checkpoint/index.ts';
import { DeadlineExceededError } from '../../core/errors.ts';

export interface MemoryCheckpointStoreOptions {
  /** What differs from an empty state (no checkpoint, no lease, no gaps). */
  readonly initial?: Partial<CheckpointState>;
  /** Epoch milliseconds, for `updatedAt`. @default Date.now */
  readonly now?: () => number;
  /** Named in errors. @default 'local' */
  readonly program?: string;
}

/**
 * A checkpoint store held in memory: each write applies the core's rules (`decide…` in
 * `core/checkpoint/rules.ts`) to the state, the same rules the DynamoDB store writes as condition
 * expressions. Subclasses persist the state (`FileCheckpointStore`); tests use it as it is.
 */
export class MemoryCheckpointStore implements CheckpointStore {
  protected state: CheckpointState;
  readonly #now: () => number;
  readonly #program: string;
  /** The last operation queued: each one reads, decides and writes alone, as a conditional write does. */
  #tail: Promise<unknown> = Promise.resolve();

  constructor(options: MemoryCheckpointStoreOptions = {}) {
    this.state = { ...EMPTY_CHECKPOINT_STATE, ...options.initial };
    this.#now = options.now ?? Date.now;
    this.#program = options.program ?? 'local';
  }

  acquireLease(request: LeaseRequest): Promise<LeaseGrant> {
    return this.#alone(async () => {
      const { grant, next } = decideLease(await this.load(), request);
      await this.save(next);
      return grant;
    });
  }

  recordStart({ signal, ...request }: StartRequest): Promise<void> {
    return this.#alone(async () => {
      this.#throwIfAborted('recordStart', signal);
      const now = new Date(this.#now()).toISOString();
      await this.save(decideStart(await this.load(), request, this.#program, now));
    });
  }

  recordHighestSeen({ signal, ...request }: HighestSeenRequest): Promise<void> {
    return this.#alone(async () => {
      this.#throwIfAborted('recordHighestSeen', signal);
      await this.save(decideHighestSeen(await this.load(), request, this.#program));
    });
  }

  commit({ signal, ...request }: CommitRequest): Promise<void> {
    return this.#alone(async () => {
      this.#throwIfAborted('commit', signal);
      const now = new Date(this.#now()).toISOString();
      await this.save(decideCommit(await this.load(), request, this.#program, now));
    });
  }

  releaseLease(owner: string, options: ReleaseOptions = {}): Promise<void> {
    return this.#alone(async () => {
      this.#throwIfAborted('releaseLease', options.signal);
      await this.save(decideRelease(await this.load(), owner, options.record, options.heldJumps));
    });
  }

  async read(): Promise<CheckpointState> {
    return this.load();
  }

  /** Records a cycle without touching the lease (an older record never replaces a newer one). */
  recordCycle(record: CycleRecord, signal?: AbortSignal): Promise<void> {
    return this.#alone(async () => {
      this.#throwIfAborted('recordCycle', signal);
      await this.save(decideCycleRecord(await this.load(), record));
    });
  }

  /** Runs `operation` once every operation queued before it has settled. */
  #alone<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(operation);
    this.#tail = result.catch(() => {});
    return result;
  }

  /** An aborted write rejects with `DeadlineExceededError`, as the port says (the signal's own reason if it is one). */
  #throwIfAborted(operation: string, signal: AbortSignal | undefined): void {
    if (!signal?.aborted) return;
    if (signal.reason instanceof DeadlineExceededError) throw signal.reason;
    throw new DeadlineExceededError(
      `The checkpoint ${operation} of program ${this.#program} was cut short; the checkpoint is as it was`,
      { program: this.#program, operation },
    );
  }

  protected async load(): Promise<CheckpointState> {
    return this.state;
  }

  protected async save(next: CheckpointState): Promise<void> {
    this.state = next;
  }
}
