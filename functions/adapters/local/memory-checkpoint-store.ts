import {
  decideCommit,
  decideLease,
  decideRelease,
  EMPTY_CHECKPOINT_STATE,
} from '../../core/checkpoint-rules.ts';
import type { CheckpointState, CheckpointStore, LeaseGrant, LeaseRequest } from '../../core/ports.ts';

/**
 * A checkpoint store held in memory, with the same lease rules as the DynamoDB one. Subclasses
 * persist the state (`FileCheckpointStore`); tests use it as it is.
 */
export class MemoryCheckpointStore implements CheckpointStore {
  protected state: CheckpointState;
  readonly #now: () => number;

  constructor(initial: CheckpointState = EMPTY_CHECKPOINT_STATE, now: () => number = Date.now) {
    this.state = initial;
    this.#now = now;
  }

  async acquireLease(request: LeaseRequest): Promise<LeaseGrant> {
    const { grant, next } = decideLease(await this.load(), request);
    await this.save(next);
    return grant;
  }

  async commit(owner: string, sequenceNumber: number, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    await this.save(
      decideCommit(await this.load(), owner, sequenceNumber, new Date(this.#now()).toISOString()),
    );
  }

  async releaseLease(owner: string, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    await this.save(decideRelease(await this.load(), owner));
  }

  async read(): Promise<CheckpointState> {
    return this.load();
  }

  protected async load(): Promise<CheckpointState> {
    return this.state;
  }

  protected async save(next: CheckpointState): Promise<void> {
    this.state = next;
  }
}
