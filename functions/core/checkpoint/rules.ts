import { CheckpointRegressionError, FeedProgramMismatchError, LeaseLostError } from '../errors.ts';
import type {
  CheckpointState,
  CommitRequest,
  CycleRecord,
  HighestSeenRequest,
  LeaseGrant,
  LeaseRequest,
  StartRequest,
} from './store.ts';

/**
 * The lease and checkpoint rules as pure functions over a state, for stores that cannot express
 * them as conditional writes (memory, a local file). The DynamoDB store encodes the same rules
 * in its condition expressions.
 */
export interface LeaseDecision {
  readonly grant: LeaseGrant;
  readonly next: CheckpointState;
}

/**
 * The lease is free when nobody holds it, it has expired, or the same owner asks again. The first
 * lease ever taken records its time: the row's first run started then.
 */
export function decideLease(state: CheckpointState, request: LeaseRequest): LeaseDecision {
  const { lease } = state;
  if (lease !== null && lease.owner !== request.owner && lease.expiresAt >= request.now) {
    return { grant: { acquired: false, holder: lease.owner, expiresAt: lease.expiresAt }, next: state };
  }
  const firstLeasedAt = state.firstLeasedAt ?? request.now;
  return {
    grant: {
      acquired: true,
      checkpoint: state.checkpoint,
      feedProgramId: state.feedProgramId,
      openGaps: state.openGaps,
      firstLeasedAt,
      startApplied: isStartApplied(state),
      highestSeen: state.highestSeen ?? null,
    },
    next: { ...state, lease: { owner: request.owner, expiresAt: request.expiresAt }, firstLeasedAt },
  };
}

/**
 * Whether a row's start position has been applied: it was recorded, or the row has a checkpoint.
 * A row without either whose last cycle completed was written by a version that recorded no start
 * (it landed on an empty feed then): applied, reading from the beginning, as that version read it.
 */
export function isStartApplied(state: CheckpointState): boolean {
  return state.start != null || state.checkpoint !== null || state.lastCycle?.outcome === 'completed';
}

/** Records the start position's landing for the lease holder, on a row without a checkpoint. */
export function decideStart(
  state: CheckpointState,
  request: Omit<StartRequest, 'signal'>,
  program: string,
  nowIso: string,
): CheckpointState {
  const { owner, checkpoint, feedProgramId, position } = request;
  assertLeaseHolder(state, owner, program, checkpoint);
  if (state.checkpoint !== null) {
    throw new CheckpointRegressionError(
      `The checkpoint of program ${program} is already ${state.checkpoint} although its start position was never applied: another writer set it`,
      { program, checkpoint: state.checkpoint, sequenceNumber: checkpoint },
    );
  }
  if (feedProgramId !== null && state.feedProgramId !== null && state.feedProgramId !== feedProgramId) {
    throw new FeedProgramMismatchError(program, state.feedProgramId, feedProgramId, checkpoint ?? 0);
  }
  return {
    ...state,
    start: { position, appliedAt: nowIso },
    feedProgramId: feedProgramId ?? state.feedProgramId,
    ...(checkpoint === null ? {} : { checkpoint, updatedAt: nowIso }),
  };
}

/** Raises the highest sequence number seen, for the lease holder; never lowers it. */
export function decideHighestSeen(
  state: CheckpointState,
  request: Omit<HighestSeenRequest, 'signal'>,
  program: string,
): CheckpointState {
  assertLeaseHolder(state, request.owner, program, request.sequenceNumber, 'highest sequence number seen');
  if (state.highestSeen != null && state.highestSeen >= request.sequenceNumber) return state;
  return { ...state, highestSeen: request.sequenceNumber };
}

function assertLeaseHolder(
  state: CheckpointState,
  owner: string,
  program: string,
  sequenceNumber: number | null,
  what = 'checkpoint',
): void {
  if (state.lease?.owner === owner) return;
  throw new LeaseLostError(
    `The lease of program ${program} is held by ${state.lease?.owner ?? 'nobody'}, not ${owner}; ${what} ${sequenceNumber ?? 'none'} not written`,
    { program, owner, holder: state.lease?.owner ?? null, sequenceNumber },
  );
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
  assertLeaseHolder(state, owner, program, sequenceNumber);
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
  return withCycleRecord(state, record);
}

function withCycleRecord(state: CheckpointState, record: CycleRecord): CheckpointState {
  return {
    ...state,
    lastCycle: record,
    ...(record.error === undefined ? {} : { lastError: { ...record.error, at: record.endedAt } }),
  };
}

/**
 * Frees the lease if `owner` holds it, recording the cycle with it: the holder's record is the
 * newest by construction. Without the lease, the record goes in only if it is the newer one.
 */
export function decideRelease(state: CheckpointState, owner: string, record?: CycleRecord): CheckpointState {
  if (state.lease?.owner !== owner) return record === undefined ? state : decideCycleRecord(state, record);
  const released = { ...state, lease: null };
  return record === undefined ? released : withCycleRecord(released, record);
}

export const EMPTY_CHECKPOINT_STATE: CheckpointState = Object.freeze({
  checkpoint: null,
  updatedAt: null,
  lease: null,
  feedProgramId: null,
  openGaps: Object.freeze([]),
});
