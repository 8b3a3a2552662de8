/**
 * The checkpoint port: where a program's checkpoint, its single-flight lease and what operators
 * read about its runs are kept. DynamoDB in the Lambda (`adapters/aws`), a file or memory locally
 * (`adapters/local`), with the same rules (`rules.ts`, applied by the memory and file stores and
 * written as condition expressions by the DynamoDB one). The folder's map: `index.ts`.
 */
export interface LeaseRequest {
  /** Identifies the invocation (`context.awsRequestId`). */
  readonly owner: string;
  /** Epoch ms after which another invocation may take the lease over. */
  readonly expiresAt: number;
  /** Epoch ms, the caller's clock: a lease whose `expiresAt` is before this is free. */
  readonly now: number;
}

/** A run of sequence numbers the feed skipped, remembered since `seenAt` (epoch ms). */
export interface OpenGap {
  readonly from: number;
  readonly to: number;
  readonly seenAt: number;
  /**
   * When gap repair stopped looking these numbers up (their grace period was over) and counted
   * them in `GapsUnfilled`; absent while they are still looked up.
   */
  readonly gaveUpAt?: number;
}

/**
 * An event held for a sequence number implausibly far past the numbers before it
 * (`sequence-jumps.ts`): its quarantined copy was accepted by the bus, so it is not quarantined
 * again, and the checkpoint stays below it until an operator decides.
 */
export interface HeldJump {
  readonly sequenceNumber: number;
  /** The event's `id` (an `invalid-…` id for an event that also failed validation). */
  readonly eventId: string;
  /** SHA-256 of the event's text: the quarantined copy's `fingerprint`. */
  readonly fingerprint: string;
  /** Epoch ms its quarantined copy was accepted by the bus. */
  readonly heldAt: number;
  /**
   * The operator's decision (`banking-events-poller jumps accept|reject`): `accepted`, the event is
   * trusted and published, and the checkpoint may pass the numbers below it; `rejected`, it is
   * passed over while its number stays implausible. Absent while it awaits one.
   */
  readonly decision?: 'accepted' | 'rejected';
  /** Epoch ms of the decision. */
  readonly decidedAt?: number;
}

export type LeaseGrant =
  | {
      readonly acquired: true;
      readonly checkpoint: number | null;
      /** The `program_id` the row's feed serves, recorded by its first commit; `null` before that. */
      readonly feedProgramId: string | null;
      /** Skipped sequence numbers below the checkpoint whose events were never published. */
      readonly openGaps: readonly OpenGap[];
      /** Events held for implausible sequence numbers, above the checkpoint (`sequence-jumps.ts`). */
      readonly heldJumps: readonly HeldJump[];
      /**
       * Epoch ms the row's first lease was taken: when its first run started. Written by the lease
       * write itself (never replaced), so a first run that dies at once still leaves it behind.
       */
      readonly firstLeasedAt: number;
      /**
       * Whether the row's start position was applied: a run recorded where it landed (with or
       * without a checkpoint). A row with a checkpoint has had it applied too.
       */
      readonly startApplied: boolean;
      /**
       * The highest sequence number a run of the row saw at the end of the feed (0: a run found
       * it empty); `null` while none has. `latest` takes every event above it as new.
       */
      readonly highestSeen: number | null;
    }
  | { readonly acquired: false; readonly holder: string; readonly expiresAt: number };

export interface CheckpointState {
  readonly checkpoint: number | null;
  readonly updatedAt: string | null;
  readonly lease: { readonly owner: string; readonly expiresAt: number } | null;
  /** The `program_id` of the events behind the checkpoint; `null` until the first commit. */
  readonly feedProgramId: string | null;
  readonly openGaps: readonly OpenGap[];
  /** `created_dt` of the newest event published, as of the last commit that named one (`status` shows its lag). */
  readonly newestCreatedDt?: string | null;
  /** How the last cycle that held the lease ended; `null` before the first one recorded. */
  readonly lastCycle?: CycleRecord | null;
  /** The last failed cycle's error, kept after later cycles succeed; `null` if none was recorded. */
  readonly lastError?: RecordedError | null;
  /** Epoch ms the row's first lease was taken (its first run's start); absent before any lease. */
  readonly firstLeasedAt?: number | null;
  /** The start position as applied by the row's first run; absent until then. */
  readonly start?: StartRecord | null;
  /**
   * The highest sequence number a run of the row saw at the end of the feed (0: empty), recorded
   * by the start position's walk before its landing; absent until then. Never lowered.
   */
  readonly highestSeen?: number | null;
  /** Events held for implausible sequence numbers (`sequence-jumps.ts`); absent: none. */
  readonly heldJumps?: readonly HeldJump[];
}

/**
 * Where a row's first run started reading, recorded before it read any event to publish: the
 * start position is applied once. A later run, whatever its own setting, reads on from the
 * checkpoint, or from the beginning of the feed when the landing had no number (an empty feed).
 */
export interface StartRecord {
  /** The start position applied, as configured: `beginning`, `latest` or a sequence number. */
  readonly position: string;
  /** ISO time it was applied. */
  readonly appliedAt: string;
}

/** The outcome of one cycle that held the lease, for operators (`status`). */
export interface CycleRecord {
  /** ISO time the cycle ended. */
  readonly endedAt: string;
  readonly outcome: 'completed' | 'failed';
  /** Events the cycle published. */
  readonly published: number;
  /** Lag of the newest event it published (0 once caught up; `null` when unknown). */
  readonly lagSeconds: number | null;
  /** The error's stable code and message, when `outcome` is `failed`; never a secret (see errors.ts). */
  readonly error?: { readonly code: string; readonly message: string };
}

/** The landing of a row's start position, recorded once (`CheckpointStore.recordStart`). */
export interface StartRequest {
  /** The lease holder. */
  readonly owner: string;
  /** The start position applied, as configured (`beginning`, `latest`, a number). */
  readonly position: string;
  /**
   * Where reading goes on from: written as the checkpoint, the last number passed over; `null`
   * to read from the beginning of the feed (the position `beginning`, or `latest` on an empty
   * feed), when no checkpoint is written.
   */
  readonly checkpoint: number | null;
  /** The `program_id` of the events passed over, if any was valid: recorded as the row's feed. */
  readonly feedProgramId: string | null;
  /** Bounds the write; an aborted one records nothing. */
  readonly signal?: AbortSignal;
}

/** What a start position's walk saw (`CheckpointStore.recordHighestSeen`). */
export interface HighestSeenRequest {
  /** The lease holder. */
  readonly owner: string;
  /** The highest sequence number the walk saw, having reached the end of the feed (0: it was empty). */
  readonly sequenceNumber: number;
  /** Bounds the write; an aborted one records nothing. */
  readonly signal?: AbortSignal;
}

/** How a lease is given back (`CheckpointStore.releaseLease`). */
export interface ReleaseOptions {
  /** Bounds the write. */
  readonly signal?: AbortSignal;
  /**
   * How the cycle ended, written in the same update that frees the lease, so it is in place
   * before the next run can take the lease. If `owner` no longer holds the lease, it is written
   * on its own, unless a newer record is there.
   */
  readonly record?: CycleRecord;
  /**
   * Held jumps no checkpoint write carried (a row without a checkpoint has none to write them
   * with): they replace the recorded ones in the same update, for the lease holder only.
   */
  readonly heldJumps?: readonly HeldJump[];
}

/** A failed cycle's error as the store keeps it. */
export interface RecordedError {
  readonly code: string;
  readonly message: string;
  /** ISO time of the failed cycle's end. */
  readonly at: string;
}

export interface CommitRequest {
  /** The lease holder. */
  readonly owner: string;
  readonly sequenceNumber: number;
  /**
   * The `program_id` of the events published. The first commit records it; a later one with
   * another id is refused (`FeedProgramMismatchError`): the secret then holds another program's
   * credentials, and its sequence numbers mean nothing for this row. `null` while it is not known
   * (every event so far was quarantined, none with a program_id to trust): the recorded one is kept.
   */
  readonly feedProgramId: string | null;
  /** When given, replaces the recorded open gaps (written in the same update as the checkpoint). */
  readonly openGaps?: readonly OpenGap[];
  /** When given, replaces the recorded held jumps (written in the same update as the checkpoint). */
  readonly heldJumps?: readonly HeldJump[];
  /** `created_dt` of the newest event published so far in the cycle, recorded for `status`. */
  readonly newestCreatedDt?: string;
  /** Bounds the write by the invocation's end; an aborted commit leaves the checkpoint as it was. */
  readonly signal?: AbortSignal;
}

/**
 * The checkpoint of one program and its single-flight lease. Implementations guarantee:
 * `commit` never moves the checkpoint backwards (`CheckpointRegressionError`), succeeds only for
 * the current lease holder (else `LeaseLostError`) and only for the row's feed
 * (`FeedProgramMismatchError`); `acquireLease` succeeds only when the lease is free or expired,
 * and the first one ever records `firstLeasedAt`. An aborted `signal` rejects with
 * `DeadlineExceededError`.
 */
export interface CheckpointStore {
  acquireLease(request: LeaseRequest): Promise<LeaseGrant>;
  /**
   * Records where a row without a checkpoint starts reading (and that checkpoint, if any), for
   * the lease holder only (else `LeaseLostError`) and only while the row has no checkpoint.
   */
  recordStart(request: StartRequest): Promise<void>;
  /**
   * Raises the row's highest sequence number seen to `sequenceNumber` (a lower one changes
   * nothing), for the lease holder only (else `LeaseLostError`). Written before the landing, with
   * no other condition, so a first run whose landing is refused or cut off still leaves behind
   * where the feed ended: the next run's `latest` publishes every event above it.
   */
  recordHighestSeen(request: HighestSeenRequest): Promise<void>;
  commit(request: CommitRequest): Promise<void>;
  /** Frees the lease if `owner` still holds it (a no-op otherwise), with the cycle's record if given. */
  releaseLease(owner: string, options?: ReleaseOptions): Promise<void>;
  /** Read-only view for operators (`status`) and tests. */
  read(): Promise<CheckpointState>;
}
