import { CheckpointRegressionError, FeedProgramMismatchError, LeaseLostError } from '../errors.ts';
import type {
  CheckpointState,
  CommitRequest,
  CycleRecord,
  HeldJump,
  HighestSeenRequest,
  LeaseGrant,
  LeaseRequest,
  StartRequest,
} from './store.ts';

/**
 * The checkpoint's rules, each stated once: what a store may never do, whichever store it is.
 * The memory and file stores apply them to a state (the `decide…` functions below); the DynamoDB
 * store writes each as one condition expression under the same name (`CONDITION` in
 * `adapters/aws/dynamodb-checkpoint-store.ts`, typed by `CheckpointRuleName`, so a rule added
 * here does not compile there until it has its condition). The contract suite
 * (`test/support/checkpoint-store-contract.ts`) runs the same cases on every store.
 */
export const CHECKPOINT_RULES = {
  /**
   * Nobody holds a live lease: none was taken, or its holder's expired (`expiresAt` strictly
   * before `now`; at the very millisecond it is still held). A free lease may be taken over.
   */
  leaseFree: (state: CheckpointState, now: number): boolean =>
    state.lease === null || state.lease.expiresAt < now,
  /**
   * A write for the lease holder only. The holder may write past its expiry until another takes
   * the lease over; from then on, every write of the old holder is refused (`LeaseLostError`).
   */
  holderOnly: (state: CheckpointState, owner: string): boolean => state.lease?.owner === owner,
  /** The checkpoint never moves back: a commit's number is at or beyond it (the same one again: a retry). */
  forwardOnly: (state: CheckpointState, sequenceNumber: number): boolean =>
    state.checkpoint === null || state.checkpoint <= sequenceNumber,
  /** The start position lands only on a row without a checkpoint: it is applied once per row. */
  noLandingOverCheckpoint: (state: CheckpointState): boolean => state.checkpoint === null,
  /**
   * Writes serve the row's feed: the first that names a `program_id` records it, a later one naming
   * another is refused (`FeedProgramMismatchError`); `null` (not known yet) passes.
   */
  sameFeed: (state: CheckpointState, feedProgramId: string | null): boolean =>
    feedProgramId === null || state.feedProgramId === null || state.feedProgramId === feedProgramId,
  /** The highest sequence number seen only rises; a lower or equal one changes nothing. */
  highestSeenRises: (state: CheckpointState, sequenceNumber: number): boolean =>
    state.highestSeen == null || state.highestSeen < sequenceNumber,
  /** A cycle's record never replaces a newer one (ISO times compare as strings). */
  newerRecordOnly: (state: CheckpointState, record: CycleRecord): boolean =>
    state.lastCycle == null || state.lastCycle.endedAt <= record.endedAt,
} as const;

/** The name of a rule: the key the DynamoDB store's condition expressions are written under. */
export type CheckpointRuleName = keyof typeof CHECKPOINT_RULES;

const RULE = CHECKPOINT_RULES;

export interface LeaseDecision {
  readonly grant: LeaseGrant;
  readonly next: CheckpointState;
}

/**
 * The lease may be taken when it is free (`leaseFree`: nobody holds it, or it has expired) or when
 * its holder asks again (re-entrant: the expiry is extended). The first lease ever taken records
 * its time, never replaced: the row's first run started then.
 */
export function decideLease(state: CheckpointState, request: LeaseRequest): LeaseDecision {
  const { lease } = state;
  if (lease !== null && !RULE.leaseFree(state, request.now) && !RULE.holderOnly(state, request.owner)) {
    return { grant: { acquired: false, holder: lease.owner, expiresAt: lease.expiresAt }, next: state };
  }
  const firstLeasedAt = state.firstLeasedAt ?? request.now;
  return {
    grant: {
      acquired: true,
      checkpoint: state.checkpoint,
      feedProgramId: state.feedProgramId,
      openGaps: state.openGaps,
      heldJumps: state.heldJumps ?? [],
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
  if (!RULE.noLandingOverCheckpoint(state)) {
    throw new CheckpointRegressionError(
      `The checkpoint of program ${program} is already ${state.checkpoint} although its start position was never applied: another writer set it`,
      { program, checkpoint: state.checkpoint, sequenceNumber: checkpoint },
    );
  }
  if (!RULE.sameFeed(state, feedProgramId)) {
    throw new FeedProgramMismatchError(program, state.feedProgramId!, feedProgramId!, checkpoint ?? 0);
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
  if (!RULE.highestSeenRises(state, request.sequenceNumber)) return state;
  return { ...state, highestSeen: request.sequenceNumber };
}

function assertLeaseHolder(
  state: CheckpointState,
  owner: string,
  program: string,
  sequenceNumber: number | null,
  what = 'checkpoint',
): void {
  if (RULE.holderOnly(state, owner)) return;
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
  const { owner, sequenceNumber, feedProgramId, openGaps, heldJumps, newestCreatedDt } = request;
  assertLeaseHolder(state, owner, program, sequenceNumber);
  if (!RULE.sameFeed(state, feedProgramId)) {
    throw new FeedProgramMismatchError(program, state.feedProgramId!, feedProgramId!, sequenceNumber);
  }
  if (!RULE.forwardOnly(state, sequenceNumber)) {
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
    ...(heldJumps === undefined ? {} : { heldJumps }),
    ...(newestCreatedDt === undefined ? {} : { newestCreatedDt }),
  };
}

/** Keeps the newer of two cycle records; a failed one also becomes the last error. */
export function decideCycleRecord(state: CheckpointState, record: CycleRecord): CheckpointState {
  if (!RULE.newerRecordOnly(state, record)) return state;
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
 * Frees the lease if `owner` holds it, recording the cycle (and held jumps, when given) with it:
 * the holder's record is the newest by construction. Without the lease, the record goes in only if
 * it is the newer one, and the held jumps not at all.
 */
export function decideRelease(
  state: CheckpointState,
  owner: string,
  record?: CycleRecord,
  heldJumps?: readonly HeldJump[],
): CheckpointState {
  if (!RULE.holderOnly(state, owner)) return record === undefined ? state : decideCycleRecord(state, record);
  const released = { ...state, lease: null, ...(heldJumps === undefined ? {} : { heldJumps }) };
  return record === undefined ? released : withCycleRecord(released, record);
}

export const EMPTY_CHECKPOINT_STATE: CheckpointState = Object.freeze({
  checkpoint: null,
  updatedAt: null,
  lease: null,
  feedProgramId: null,
  openGaps: Object.freeze([]),
});
