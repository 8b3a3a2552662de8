import { CheckpointRegressionError, FeedProgramMismatchError, LeaseLostError } from './errors.ts';
import type { CheckpointState, CommitRequest, CycleRecord, LeaseGrant, LeaseRequest } from './ports.ts';

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
    grant: {
      acquired: true,
      checkpoint: state.checkpoint,
      feedProgramId: state.feedProgramId,
      openGaps: state.openGaps,
    },
    next: { ...state, lease: { owner: request.owner, expiresAt: request.expiresAt } },
  };
}

/**
 * Moves the checkpoint forward for the lease holder only, never backwards, and only for the
 * feed the row serves; the first commit records that feed's `program_id`.
 */
export function decideCommit(
  state: CheckpointState,
  request: Omit<CommitRequest, 'signal'>,
  program: string,
  nowIso: string,
): CheckpointState {
  const { owner, sequenceNumber, feedProgramId, openGaps, newestCreatedDt } = request;
  if (state.lease?.owner !== owner) {
    throw new LeaseLostError(
      `The lease of program ${program} is held by ${state.lease?.owner ?? 'nobody'}, not ${owner}; checkpoint ${sequenceNumber} not written`,
      { program, owner, holder: state.lease?.owner ?? null, sequenceNumber },
    );
  }
  if (feedProgramId !== null && state.feedProgramId !== null && state.feedProgramId !== feedProgramId) {
    throw new FeedProgramMismatchError(program, state.feedProgramId, feedProgramId, sequenceNumber);
  }
  if (state.checkpoint !== null && sequenceNumber < state.checkpoint) {
    throw new CheckpointRegressionError(
      `Refusing to move the checkpoint of program ${program} back from ${state.checkpoint} to ${sequenceNumber}`,
      { program, checkpoint: state.checkpoint, sequenceNumber },
    );
  }
  return {
    ...state,
    checkpoint: sequenceNumber,
    updatedAt: nowIso,
    feedProgramId: feedProgramId ?? state.feedProgramId,
    openGaps: openGaps ?? state.openGaps,
    ...(newestCreatedDt === undefined ? {} : { newestCreatedDt }),
  };
}

/** Keeps the newer of two cycle records; a failed one also becomes the last error. */
export function decideCycleRecord(state: CheckpointState, record: CycleRecord): CheckpointState {
  if (state.lastCycle != null && state.lastCycle.endedAt > record.endedAt) return state;
  return {
    ...state,
    lastCycle: record,
    ...(record.error === undefined ? {} : { lastError: { ...record.error, at: record.endedAt } }),
  };
}

export function decideRelease(state: CheckpointState, owner: string): CheckpointState {
  return state.lease?.owner === owner ? { ...state, lease: null } : state;
}

export const EMPTY_CHECKPOINT_STATE: CheckpointState = Object.freeze({
  checkpoint: null,
  updatedAt: null,
  lease: null,
  feedProgramId: null,
  openGaps: Object.freeze([]),
});
