import {
  decideCommit,
  decideCycleRecord,
  decideHighestSeen,
  decideLease,
  decideRelease,
  decideStart,
  EMPTY_CHECKPOINT_STATE,
} from '../../core/checkpoint-rules.ts';
import type {
  CheckpointState,
  CheckpointStore,
  CommitRequest,
  CycleRecord,
  HighestSeenRequest,
  LeaseGrant,
  LeaseRequest,
  ReleaseOptions,
  StartRequest,
} from '../../core/checkpoint-store.ts';

export interface MemoryCheckpointStoreOptions {
  /** What differs from an empty state (no checkpoint, no lease, no gaps). */
  readonly initial?: Partial<CheckpointState>;
  /** Epoch milliseconds, for `updatedAt`. @default Date.now */
  readonly now?: () => number;
  /** Named in errors. @default 'local' */
  readonly program?: string;
}

/**
 * A checkpoint store held in memory, with the same lease rules as the DynamoDB one. Subclasses
 * persist the state (`FileCheckpointStore`); tests use it as it is.
 */
export class MemoryCheckpointStore implements CheckpointStore {
  protected state: CheckpointState;
  readonly #now: () => number;
  readonly #program: string;

  constructor(options: MemoryCheckpointStoreOptions = {}) {
    this.state = { ...EMPTY_CHECKPOINT_STATE, ...options.initial };
    this.#now = options.now ?? Date.now;
    this.#program = options.program ?? 'local';
  }

  async acquireLease(request: LeaseRequest): Promise<LeaseGrant> {
    const { grant, next } = decideLease(await this.load(), request);
    await this.save(next);
    return grant;
  }

  async recordStart({ signal, ...request }: StartRequest): Promise<void> {
    signal?.throwIfAborted();
    const now = new Date(this.#now()).toISOString();
    await this.save(decideStart(await this.load(), request, this.#program, now));
  }

  async recordHighestSeen({ signal, ...request }: HighestSeenRequest): Promise<void> {
    signal?.throwIfAborted();
    await this.save(decideHighestSeen(await this.load(), request, this.#program));
  }

  async commit({ signal, ...request }: CommitRequest): Promise<void> {
    signal?.throwIfAborted();
    const now = new Date(this.#now()).toISOString();
    await this.save(decideCommit(await this.load(), request, this.#program, now));
  }

  async releaseLease(owner: string, options: ReleaseOptions = {}): Promise<void> {
    options.signal?.throwIfAborted();
    await this.save(decideRelease(await this.load(), owner, options.record));
  }

  async read(): Promise<CheckpointState> {
    return this.load();
  }

  /** Records a cycle without touching the lease (an older record never replaces a newer one). */
  async recordCycle(record: CycleRecord, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    await this.save(decideCycleRecord(await this.load(), record));
  }

  protected async load(): Promise<CheckpointState> {
    return this.state;
  }

  protected async save(next: CheckpointState): Promise<void> {
    this.state = next;
  }
}
