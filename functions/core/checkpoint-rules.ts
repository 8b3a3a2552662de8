import { LeaseLostError, PollerError } from './errors.ts';
import type { CheckpointState, LeaseGrant, LeaseRequest } from './ports.ts';

/**
 * The lease and checkpoint rules as pure functions over a state, for stores that cannot express
 * them as conditional writes (memory, a local file). The DynamoDB store encodes the same rules
 * in its condition expressions.
 */
export interface LeaseDecision {
  readonly grant: LeaseGrant;
  readonly next: CheckpointState;
}

/** The lease is free when nobody holds it, it has expired, or the same owner asks again. */
export function decideLease(state: CheckpointState, request: LeaseRequest): LeaseDecision {
  const { lease } = state;
  if (lease !== null && lease.owner !== request.owner && lease.expiresAt >= request.now) {
    return { grant: { acquired: false, holder: lease.owner, expiresAt: lease.expiresAt }, next: state };
  }
  return {
    grant: { acquired: true, checkpoint: state.checkpoint },
    next: { ...state, lease: { owner: request.owner, expiresAt: request.expiresAt } },
  };
}

/** Moves the checkpoint forward for the lease holder only; never backwards. */
export function decideCommit(
  state: CheckpointState,
  owner: string,
  sequenceNumber: number,
  nowIso: string,
): CheckpointState {
  if (state.lease?.owner !== owner) {
    throw new LeaseLostError(
      `The lease is held by ${state.lease?.owner ?? 'nobody'}, not ${owner}; checkpoint not written`,
      {
        owner,
        holder: state.lease?.owner ?? null,
        sequenceNumber,
      },
    );
  }
  if (state.checkpoint !== null && sequenceNumber < state.checkpoint) {
    throw new PollerError(
      'CHECKPOINT_REGRESSION',
      `Refusing to move the checkpoint back from ${state.checkpoint} to ${sequenceNumber}`,
      { context: { checkpoint: state.checkpoint, sequenceNumber } },
    );
  }
  return { ...state, checkpoint: sequenceNumber, updatedAt: nowIso };
}

export function decideRelease(state: CheckpointState, owner: string): CheckpointState {
  return state.lease?.owner === owner ? { ...state, lease: null } : state;
}

export const EMPTY_CHECKPOINT_STATE: CheckpointState = Object.freeze({
  checkpoint: null,
  updatedAt: null,
  lease: null,
});
