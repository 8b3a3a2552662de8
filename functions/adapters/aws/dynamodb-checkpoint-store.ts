/**
 * The checkpoint and single-flight lease of one program, as one DynamoDB item:
 *
 * | attribute          | type | meaning                                                       |
 * |--------------------|------|---------------------------------------------------------------|
 * | `pk`               | S    | `program#<program>`                                           |
 * | `checkpoint`       | N    | highest sequence number published (absent: none yet)          |
 * | `updated_at`       | S    | ISO time of the last checkpoint write                         |
 * | `feed_program_id`  | S    | the banking `program_id` of the events behind the checkpoint  |
 * | `open_gaps`        | S    | JSON `[{from, to, seenAt}]`: skipped numbers never published  |
 * | `held_jumps`       | S    | JSON `[{sequenceNumber, eventId, fingerprint, heldAt,         |
 * |                    |      | decision?, decidedAt?}]`: events held past a sequence jump    |
 * | `lease_owner`      | S    | invocation holding the lease (absent: free)                   |
 * | `lease_expires_at` | N    | epoch ms after which another invocation may take it over      |
 * | `first_leased_at`  | N    | epoch ms the first lease was taken: the row's first run began |
 * | `start_position`   | S    | the start position the first run applied (absent: not yet)    |
 * | `start_applied_at` | S    | ISO time it was applied                                       |
 * | `highest_seen`     | N    | highest number a run saw at the end of the feed (0: empty);   |
 * |                    |      | `latest` publishes every event above it (absent: none yet)    |
 * | `newest_created_dt`| S    | `created_dt` of the newest event published (for `status`)     |
 * | `last_cycle_*`     |      | how the last cycle ended: `ended_at` S, `outcome` S,          |
 * |                    |      | `published` N, `lag_seconds` N (absent: unknown)              |
 * | `last_error_*`     | S    | the last failed cycle's `code`, `message` and `at`            |
 *
 * | `format_version`   | N    | the item format (below); absent: format 1                     |
 *
 * Every write is one conditional `UpdateItem`, so checkpoint and lease change together atomically.
 *
 * Formats: 1 (0.1.x) has every attribute above but `first_leased_at`, `start_position`,
 * `start_applied_at` and `format_version`; 2 adds them. This version reads both and upgrades a
 * format-1 item to 2 at its next lease; an item of a newer format than it knows (written after an
 * upgrade, then read by a rolled-back function) is refused with `CONFIGURATION_INVALID` rather than
 * misread. `highest_seen` is optional within format 2: a version that does not know it reads the
 * item as it always did (its `latest` then trusts `created_dt` alone), so it bumps no format and a
 * roll-back stays possible. So is `held_jumps`: a version without it trusts every sequence number,
 * as it always did.
 */
import {
  type AttributeValue,
  type ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import {
  CHECKPOINT_RULES,
  type CheckpointRuleName,
  type CheckpointState,
  type CheckpointStore,
  type CommitRequest,
  type CycleRecord,
  type HeldJump,
  type HighestSeenRequest,
  isStartApplied,
  type LeaseGrant,
  type LeaseRequest,
  type OpenGap,
  type ReleaseOptions,
  type StartRequest,
} from '../../core/checkpoint/index.ts';
import {
  CheckpointRegressionError,
  ConfigurationError,
  DeadlineExceededError,
  FeedProgramMismatchError,
  LeaseLostError,
} from '../../core/errors.ts';

export interface DynamoDbCheckpointStoreOptions {
  /** Table with a string partition key `pk`; several programs can share it. */
  readonly tableName: string;
  /** The banking program whose events this store tracks. */
  readonly program: string;
  /**
   * The low-level client, not a `DynamoDBDocumentClient`: the item has a few scalar attributes,
   * and the item DynamoDB returns with a `ConditionalCheckFailedException` is never unmarshalled
   * by the document client, so plain `AttributeValue`s are used throughout. Build it once per
   * container at module scope and pass it in.
   * @default a new `DynamoDBClient` with the SDK's default configuration
   */
  readonly client?: DynamoDBClient;
  /**
   * Epoch milliseconds, for `updated_at` and the operator commands' lease check.
   * @default Date.now
   */
  readonly clock?: () => number;
}

/** An operator's move of the checkpoint (`rewind`), made without holding the lease. */
export interface CheckpointMove {
  /** The new checkpoint: the last sequence number taken as published. */
  readonly to: number;
  /**
   * The checkpoint the operator saw and confirmed (`null`: none). The move is refused if it changed
   * meanwhile, so the before/after shown is what happened.
   */
  readonly expected: number | null;
  /**
   * Take the lease away from a running invocation: its next commit fails with `LEASE_LOST`, so it
   * cannot write over the move. Without it, a live lease refuses the move.
   * @default false
   */
  readonly breakLease?: boolean;
  /** Recorded as the row's feed when it has none yet (a fast-forward on a program's first move). */
  readonly feedProgramId?: string;
}

/** An operator's decision on a held sequence jump (`jumps accept|reject`), made without holding the lease. */
export interface HeldJumpDecision {
  /** The held jump as the operator was shown it: its number and event id. */
  readonly sequenceNumber: number;
  readonly eventId: string;
  readonly decision: NonNullable<HeldJump['decision']>;
  /**
   * Take the lease away from a running invocation: its next commit fails with `LEASE_LOST`, so it
   * cannot write its own copy of the held jumps over the decision. Without it, a live lease
   * refuses the decision.
   * @default false
   */
  readonly breakLease?: boolean;
}

/** The decision was written, or why not; `state` is the row after the write, or as it was. */
export type HeldJumpDecisionOutcome =
  | { readonly decided: true; readonly state: CheckpointState }
  | {
      readonly decided: false;
      /** `not-held`: no such held jump; `changed`: the held jumps changed meanwhile. */
      readonly reason: 'lease-held' | 'not-held' | 'changed';
      readonly state: CheckpointState;
    };

/** The move happened, or why not; `state` is the row after the write, or as it was. */
export type CheckpointMoveOutcome =
  | { readonly moved: true; readonly state: CheckpointState }
  | {
      readonly moved: false;
      readonly reason: 'lease-held' | 'checkpoint-changed';
      readonly state: CheckpointState;
    };

type Item = Record<string, AttributeValue>;

/** The checkpoint item format this version writes, and the newest it reads. */
export const CHECKPOINT_ITEM_FORMAT = 2;

/** An item whose format this version knows: none written yet, format 1 (no attribute), or up to ours. */
const FORMAT_KNOWN = '(attribute_not_exists(format_version) OR format_version <= :format)';

/**
 * The checkpoint's rules as condition expressions, one per rule, under the name it has in
 * `CHECKPOINT_RULES` (`core/checkpoint/rules.ts`, where each is stated and the memory and file
 * stores apply it). Every write's condition is built from these; which rule refused a write is
 * told by the same rules on the item as it was. Placeholders: `:owner`, `:now`, `:seq`, `:feed`,
 * `:seen`, `:endedAt`.
 */
const CONDITION = {
  leaseFree: '(attribute_not_exists(lease_owner) OR lease_expires_at < :now)',
  holderOnly: 'lease_owner = :owner',
  forwardOnly: '(attribute_not_exists(checkpoint) OR checkpoint <= :seq)',
  noLandingOverCheckpoint: 'attribute_not_exists(checkpoint)',
  sameFeed: '(attribute_not_exists(feed_program_id) OR feed_program_id = :feed)',
  highestSeenRises: '(attribute_not_exists(highest_seen) OR highest_seen < :seen)',
  newerRecordOnly: '(attribute_not_exists(last_cycle_ended_at) OR last_cycle_ended_at <= :endedAt)',
} as const satisfies { readonly [rule in CheckpointRuleName]: string };

/** Every condition at once. */
function all(...conditions: readonly string[]): string {
  return conditions.join(' AND ');
}

const RULE = CHECKPOINT_RULES;

/** One conditional write: what to set, under which condition. */
interface ConditionalUpdate {
  /** Names the write in a deadline error, e.g. `commit`. */
  readonly operation: string;
  readonly update: string;
  readonly condition: string;
  readonly values: Item;
  /** Return the item as written (the lease grant needs the checkpoint). @default false */
  readonly returnNew?: boolean;
  /** Bounds the write; an aborted one rejects with `DeadlineExceededError`. */
  readonly signal?: AbortSignal;
}

/** The write happened (with the item as written, if asked), or its condition failed (with the item as it was). */
type UpdateOutcome =
  | { readonly applied: true; readonly item: Item | undefined }
  | { readonly applied: false; readonly item: Item | undefined };

/**
 * `CheckpointStore` on DynamoDB.
 *
 * @example
 * const dynamodb = new DynamoDBClient({}); // module scope
 * const store = new DynamoDbCheckpointStore({ client: dynamodb, tableName: config.tableName, program: config.program });
 * const grant = await store.acquireLease({ owner: context.awsRequestId, expiresAt: now + 60_000, now });
 */
export class DynamoDbCheckpointStore implements CheckpointStore {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;
  readonly #program: string;
  readonly #clock: () => number;
  readonly #key: Item;

  constructor(options: DynamoDbCheckpointStoreOptions) {
    this.#client = options.client ?? new DynamoDBClient({});
    this.#tableName = options.tableName;
    this.#program = options.program;
    this.#clock = options.clock ?? Date.now;
    this.#key = { pk: { S: `program#${options.program}` } };
  }

  /**
   * Takes the lease if it is free, expired, or already ours (re-entrant: the expiry is extended):
   * `leaseFree` or `holderOnly`. The same write records `first_leased_at` if the row has none: the
   * first run's start, kept even if that run dies right after (the start position `latest` counts
   * from it).
   *
   * Timeline, leases of 60 s:
   * ```
   * t=0   A acquires: no lease_owner                          → A holds until t=60
   * t=10  B acquires: lease_owner=A, expires 60, not < now 10 → condition fails, B is told "A until 60"
   * t=20  A acquires again: lease_owner = A                   → allowed, A holds until t=80
   * t=90  B acquires: expires 80 < now 90                     → B takes over; A's next commit fails
   * ```
   */
  async acquireLease({ owner, expiresAt, now }: LeaseRequest): Promise<LeaseGrant> {
    const write: ConditionalUpdate = {
      operation: 'acquireLease',
      update:
        'SET lease_owner = :owner, lease_expires_at = :expiresAt, format_version = :format, ' +
        'first_leased_at = if_not_exists(first_leased_at, :now)',
      condition: all(`(${CONDITION.leaseFree} OR ${CONDITION.holderOnly})`, FORMAT_KNOWN),
      values: {
        ':owner': { S: owner },
        ':expiresAt': { N: String(expiresAt) },
        ':now': { N: String(now) },
        ':format': { N: String(CHECKPOINT_ITEM_FORMAT) },
      },
      returnNew: true,
    };
    // Two tries: if the holder released between our write and our read, the lease is free now.
    for (let attempt = 0; attempt < 2; attempt++) {
      const outcome = await this.#conditionalUpdate(write);
      if (outcome.applied) {
        const state = this.#stateOf(outcome.item);
        return {
          acquired: true,
          checkpoint: state.checkpoint,
          feedProgramId: state.feedProgramId,
          openGaps: state.openGaps,
          heldJumps: state.heldJumps ?? [],
          firstLeasedAt: state.firstLeasedAt ?? now,
          startApplied: isStartApplied(state),
          highestSeen: state.highestSeen ?? null,
        };
      }
      this.#assertKnownFormat(outcome.item);
      const holder = leaseOf(outcome.item);
      if (holder !== null) return { acquired: false, holder: holder.owner, expiresAt: holder.expiresAt };
    }
    return { acquired: false, holder: 'unknown (released while being read)', expiresAt: now };
  }

  /**
   * Records the start position's landing on a row without a checkpoint, for the lease holder:
   * `start_position` and `start_applied_at`, with the checkpoint when the landing has a number.
   *
   * Timeline, `latest` on an empty feed:
   * ```
   * t=0  A takes the lease (first_leased_at 0), finds nothing, records start latest, no checkpoint
   * t=5  events 1..20 arrive; A publishes some, then PutEvents refuses the rest and A fails
   * t=60 B takes the lease: start applied, no checkpoint → polls from the beginning, publishes 1..20
   * ```
   * @throws LeaseLostError when `owner` no longer holds the lease.
   * @throws CheckpointRegressionError when the row has a checkpoint already (a writer without the lease).
   * @throws FeedProgramMismatchError when the row belongs to another feed's `program_id`.
   */
  async recordStart({ owner, position, checkpoint, feedProgramId, signal }: StartRequest): Promise<void> {
    if (checkpoint !== null) assertSequenceNumber(checkpoint);
    const now = new Date(this.#clock()).toISOString();
    const sets = ['start_position = :position', 'start_applied_at = :now'];
    if (checkpoint !== null) sets.push('checkpoint = :seq', 'updated_at = :now');
    if (feedProgramId !== null) sets.push('feed_program_id = :feed');
    const outcome = await this.#conditionalUpdate({
      operation: 'recordStart',
      update: `SET ${sets.join(', ')}`,
      condition: all(
        CONDITION.holderOnly,
        CONDITION.noLandingOverCheckpoint,
        ...(feedProgramId === null ? [] : [CONDITION.sameFeed]),
      ),
      values: {
        ':owner': { S: owner },
        ':position': { S: position },
        ':now': { S: now },
        ...(checkpoint === null ? {} : { ':seq': { N: String(checkpoint) } }),
        ...(feedProgramId === null ? {} : { ':feed': { S: feedProgramId } }),
      },
      signal,
    });
    if (outcome.applied) return;
    const state = this.#stateOf(outcome.item);
    if (!RULE.holderOnly(state, owner)) {
      throw new LeaseLostError(
        `Lease of program ${this.#program} is held by ${state.lease?.owner ?? 'nobody'}, not ${owner}: start position not recorded`,
        { program: this.#program, owner, holder: state.lease?.owner ?? null, sequenceNumber: checkpoint },
      );
    }
    if (!RULE.noLandingOverCheckpoint(state)) {
      throw new CheckpointRegressionError(
        `Checkpoint of program ${this.#program} is already ${state.checkpoint} although its start position was never applied: another writer set it`,
        { program: this.#program, owner, checkpoint: state.checkpoint, sequenceNumber: checkpoint },
      );
    }
    throw new FeedProgramMismatchError(
      this.#program,
      state.feedProgramId ?? 'unknown',
      feedProgramId ?? 'unknown',
      checkpoint ?? 0,
    );
  }

  /**
   * Raises `highest_seen` for the lease holder; a value at or below the recorded one changes
   * nothing. Its only condition is the lease, so it goes in even where the landing written after
   * it (`recordStart`, with its own conditions) is refused or cut off.
   *
   * Timeline, `latest` on an empty feed, the bank's clock 10 minutes behind ours:
   * ```
   * t=0  A takes the lease (first_leased_at 0); the feed answers nothing new → highest_seen 0
   * t=0  A's recordStart is cut off; A dies
   * t=1  events 1..20 arrive, stamped t=-599
   * t=60 B takes the lease, walks: 1..20 are above highest_seen 0 → new, published
   * ```
   * @throws LeaseLostError when `owner` no longer holds the lease.
   */
  async recordHighestSeen({ owner, sequenceNumber, signal }: HighestSeenRequest): Promise<void> {
    assertSequenceNumber(sequenceNumber);
    const outcome = await this.#conditionalUpdate({
      operation: 'recordHighestSeen',
      update: 'SET highest_seen = :seen',
      condition: all(CONDITION.holderOnly, CONDITION.highestSeenRises),
      values: { ':owner': { S: owner }, ':seen': { N: String(sequenceNumber) } },
      signal,
    });
    if (outcome.applied) return;
    const state = this.#stateOf(outcome.item);
    if (RULE.holderOnly(state, owner)) return; // already as high or higher
    throw new LeaseLostError(
      `Lease of program ${this.#program} is held by ${state.lease?.owner ?? 'nobody'}, not ${owner}: highest sequence number seen ${sequenceNumber} not recorded`,
      { program: this.#program, owner, holder: state.lease?.owner ?? null, sequenceNumber },
    );
  }

  /**
   * Moves the checkpoint forward for the lease holder; writing the same value again is a no-op.
   * The first commit records the feed's `program_id`; later ones must carry the same.
   *
   * Timeline:
   * ```
   * A holds the lease, checkpoint 41; A publishes 42..50, commits 50         → checkpoint 50
   * A commits 50 again (a retry after a timeout)                             → allowed: 50 <= 50
   * A's lease expires mid-cycle; B takes it over and commits 60
   * A commits 55: lease_owner = B, not A                                    → LeaseLostError, 55 never written
   * ```
   * @throws LeaseLostError when `owner` no longer holds the lease.
   * @throws FeedProgramMismatchError when the row belongs to another feed's `program_id`.
   * @throws CheckpointRegressionError when the stored checkpoint is beyond `sequenceNumber`
   *   although `owner` holds the lease: someone wrote it without the lease.
   * @throws DeadlineExceededError when `signal` aborted the write.
   */
  async commit({
    owner,
    sequenceNumber,
    feedProgramId,
    openGaps,
    heldJumps,
    newestCreatedDt,
    signal,
  }: CommitRequest): Promise<void> {
    assertSequenceNumber(sequenceNumber);
    const newest: Item = newestCreatedDt === undefined ? {} : { ':newest': { S: newestCreatedDt } };
    const outcome = await this.#conditionalUpdate({
      operation: 'commit',
      update:
        'SET checkpoint = :seq, updated_at = :updatedAt' +
        (feedProgramId === null ? '' : ', feed_program_id = :feed') +
        (openGaps === undefined ? '' : ', open_gaps = :gaps') +
        (heldJumps === undefined ? '' : ', held_jumps = :held') +
        (newestCreatedDt === undefined ? '' : ', newest_created_dt = :newest'),
      condition: all(
        CONDITION.holderOnly,
        CONDITION.forwardOnly,
        ...(feedProgramId === null ? [] : [CONDITION.sameFeed]),
      ),
      values: {
        ':owner': { S: owner },
        ':seq': { N: String(sequenceNumber) },
        ...(feedProgramId === null ? {} : { ':feed': { S: feedProgramId } }),
        ':updatedAt': { S: new Date(this.#clock()).toISOString() },
        ...(openGaps === undefined ? {} : { ':gaps': { S: JSON.stringify(openGaps) } }),
        ...(heldJumps === undefined ? {} : { ':held': { S: JSON.stringify(heldJumps) } }),
        ...newest,
      },
      signal,
    });
    if (outcome.applied) return;
    const { item } = outcome;
    const state = stateOf(item);
    if (!RULE.holderOnly(state, owner)) {
      const holder = stringAttribute(item, 'lease_owner') ?? null;
      throw new LeaseLostError(
        `Lease of program ${this.#program} is held by ${holder ?? 'nobody'}, not ${owner}: checkpoint ${sequenceNumber} not written`,
        { program: this.#program, owner, holder, sequenceNumber },
      );
    }
    if (!RULE.sameFeed(state, feedProgramId)) {
      throw new FeedProgramMismatchError(this.#program, state.feedProgramId!, feedProgramId!, sequenceNumber);
    }
    throw new CheckpointRegressionError(
      `Checkpoint of program ${this.#program} is already ${numberAttribute(item, 'checkpoint')}, beyond ${sequenceNumber}, although ${owner} holds the lease: another writer moved it`,
      { program: this.#program, owner, checkpoint: numberAttribute(item, 'checkpoint'), sequenceNumber },
    );
  }

  /**
   * Frees the lease if `owner` still holds it, writing the cycle's record in the same update: the
   * next run cannot take the lease before the record is there. The checkpoint is untouched.
   *
   * Timeline: A's lease expired and B took over; A's release must not free B's lease, so the
   * condition `lease_owner = :owner` fails; A's record is then written on its own, unless B has
   * recorded a newer cycle meanwhile.
   */
  async releaseLease(owner: string, { signal, record, heldJumps }: ReleaseOptions = {}): Promise<void> {
    const recorded = record === undefined ? undefined : cycleRecordUpdate(record);
    const removed = ['lease_owner', 'lease_expires_at', ...(recorded?.removes ?? [])];
    const sets = [...(recorded?.sets ?? []), ...(heldJumps === undefined ? [] : ['held_jumps = :held'])];
    const outcome = await this.#conditionalUpdate({
      operation: 'releaseLease',
      update: `${sets.length === 0 ? '' : `SET ${sets.join(', ')} `}REMOVE ${removed.join(', ')}`,
      condition: CONDITION.holderOnly,
      values: {
        ':owner': { S: owner },
        ...recorded?.values,
        ...(heldJumps === undefined ? {} : { ':held': { S: JSON.stringify(heldJumps) } }),
      },
      signal,
    });
    if (!outcome.applied && record !== undefined) await this.recordCycle(record, signal);
  }

  async read(): Promise<CheckpointState> {
    return this.#stateOf(await this.#getItem());
  }

  /**
   * Records how a cycle ended, for `status`. An older record never replaces a newer one (ISO
   * times compare as strings); a failed cycle's error also becomes `last_error_*`, which later
   * successful cycles leave in place.
   */
  async recordCycle(record: CycleRecord, signal?: AbortSignal): Promise<void> {
    const { sets, removes, values } = cycleRecordUpdate(record);
    await this.#conditionalUpdate({
      operation: 'recordCycle',
      update: `SET ${sets.join(', ')}${removes.length === 0 ? '' : ` REMOVE ${removes.join(', ')}`}`,
      condition: CONDITION.newerRecordOnly,
      values,
      signal,
    });
  }

  /**
   * Operator command (`rewind`): sets the checkpoint without holding the lease, forwards or
   * backwards, only if it is still `expected` and no invocation holds a live lease (unless
   * `breakLease`). Nothing is written when it is refused.
   *
   * Timeline, the poller holding the lease until t=60:
   * ```
   * t=30  operator reads checkpoint 500, moves to 400 → lease_expires_at 60 not < 30: refused (lease-held)
   * t=30  same with breakLease → checkpoint 400, lease removed; the run's next commit (lease_owner
   *       = itself) fails with LEASE_LOST, so it cannot write 510 over the move
   * t=61  operator moves 500 → 400, lease expired      → written
   * ```
   */
  async moveCheckpoint(move: CheckpointMove): Promise<CheckpointMoveOutcome> {
    assertSequenceNumber(move.to);
    const now = this.#clock();
    const conditions = [
      move.expected === null ? 'attribute_not_exists(checkpoint)' : 'checkpoint = :expected',
      FORMAT_KNOWN,
    ];
    if (!move.breakLease) conditions.push(CONDITION.leaseFree);
    const sets = ['checkpoint = :to', 'updated_at = :updatedAt', 'format_version = :format'];
    if (move.feedProgramId !== undefined)
      sets.push('feed_program_id = if_not_exists(feed_program_id, :feed)');
    const outcome = await this.#conditionalUpdate({
      operation: 'moveCheckpoint',
      update: `SET ${sets.join(', ')}${move.breakLease ? ' REMOVE lease_owner, lease_expires_at' : ''}`,
      condition: conditions.join(' AND '),
      values: {
        ':to': { N: String(move.to) },
        ':format': { N: String(CHECKPOINT_ITEM_FORMAT) },
        ':updatedAt': { S: new Date(now).toISOString() },
        ...(move.expected === null ? {} : { ':expected': { N: String(move.expected) } }),
        ...(move.breakLease ? {} : { ':now': { N: String(now) } }),
        ...(move.feedProgramId === undefined ? {} : { ':feed': { S: move.feedProgramId } }),
      },
      returnNew: true,
    });
    const state = this.#stateOf(outcome.item);
    if (outcome.applied) return { moved: true, state };
    const changed = state.checkpoint !== move.expected;
    return { moved: false, reason: changed ? 'checkpoint-changed' : 'lease-held', state };
  }

  /**
   * Operator command (`jumps accept|reject`): records a decision on a held jump without holding
   * the lease, only if the held jumps are still as read here and no invocation holds a live lease
   * (unless `breakLease`). A run writes its copy of the held jumps back with its checkpoint, so a
   * decision written under a running invocation would be lost; the condition refuses it instead.
   *
   * Timeline, the poller holding the lease until t=60:
   * ```
   * t=30  operator accepts 9007199254740991  → lease_expires_at 60 not < 30: refused (lease-held)
   * t=61  operator accepts it                → held_jumps as read, lease expired: written
   * t=62  the next run takes the lease, reads the decision and publishes the event
   * ```
   */
  async decideHeldJump(request: HeldJumpDecision): Promise<HeldJumpDecisionOutcome> {
    const item = await this.#getItem();
    const before = this.#stateOf(item);
    const records = before.heldJumps ?? [];
    const record = records.find(
      (held) => held.sequenceNumber === request.sequenceNumber && held.eventId === request.eventId,
    );
    const expected = stringAttribute(item, 'held_jumps');
    if (record === undefined || expected === undefined) {
      return { decided: false, reason: 'not-held', state: before };
    }
    const now = this.#clock();
    const decided = records.map((held) =>
      held === record ? { ...held, decision: request.decision, decidedAt: now } : held,
    );
    const breakLease = request.breakLease === true;
    const conditions = ['held_jumps = :expected', FORMAT_KNOWN];
    if (!breakLease) conditions.push(CONDITION.leaseFree);
    const outcome = await this.#conditionalUpdate({
      operation: 'decideHeldJump',
      update: `SET held_jumps = :held${breakLease ? ' REMOVE lease_owner, lease_expires_at' : ''}`,
      condition: conditions.join(' AND '),
      values: {
        ':held': { S: JSON.stringify(decided) },
        ':expected': { S: expected },
        ':format': { N: String(CHECKPOINT_ITEM_FORMAT) },
        ...(breakLease ? {} : { ':now': { N: String(now) } }),
      },
      returnNew: true,
    });
    const state = this.#stateOf(outcome.item);
    if (outcome.applied) return { decided: true, state };
    const changed = stringAttribute(outcome.item, 'held_jumps') !== expected;
    return { decided: false, reason: changed ? 'changed' : 'lease-held', state };
  }

  /**
   * The one place that writes: a conditional `UpdateItem` whose failed condition comes back as
   * the item as it was (from the exception when DynamoDB includes it, else read consistently).
   */
  async #conditionalUpdate(write: ConditionalUpdate): Promise<UpdateOutcome> {
    const { signal } = write;
    try {
      const output = await this.#client.send(
        new UpdateItemCommand({
          TableName: this.#tableName,
          Key: this.#key,
          UpdateExpression: write.update,
          ConditionExpression: write.condition,
          ExpressionAttributeValues: write.values,
          ReturnValues: write.returnNew ? 'ALL_NEW' : 'NONE',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
        { abortSignal: signal },
      );
      return { applied: true, item: output.Attributes };
    } catch (error) {
      if (signal?.aborted) throw this.#deadlineError(write.operation, signal);
      if (!isConditionalCheckFailed(error)) throw this.#translate(error);
      return { applied: false, item: error.Item ?? (await this.#getItem()) };
    }
  }

  async #getItem(): Promise<Item | undefined> {
    try {
      const output = await this.#client.send(
        new GetItemCommand({ TableName: this.#tableName, Key: this.#key, ConsistentRead: true }),
      );
      return output.Item;
    } catch (error) {
      throw this.#translate(error);
    }
  }

  /** The item as the port's state, once its format is known to be one this version reads. */
  #stateOf(item: Item | undefined): CheckpointState {
    this.#assertKnownFormat(item);
    return stateOf(item);
  }

  #assertKnownFormat(item: Item | undefined): void {
    const format = numberAttribute(item, 'format_version') ?? 1;
    if (format <= CHECKPOINT_ITEM_FORMAT) return;
    throw new ConfigurationError(
      `The checkpoint item of program ${this.#program} has format ${format}, written by a newer banking-events-poller; this version reads formats 1 to ${CHECKPOINT_ITEM_FORMAT}. Deploy the newer version again: an older one cannot read it safely`,
      { program: this.#program, tableName: this.#tableName, format, supported: CHECKPOINT_ITEM_FORMAT },
    );
  }

  /** The signal's own reason when it is the cycle's deadline, else one naming the write. */
  #deadlineError(operation: string, signal: AbortSignal): DeadlineExceededError {
    if (signal.reason instanceof DeadlineExceededError) return signal.reason;
    return new DeadlineExceededError(
      `DynamoDB ${operation} for program ${this.#program} was cut short by the invocation deadline; the checkpoint is as it was`,
      { program: this.#program, operation },
    );
  }

  #translate(error: unknown): unknown {
    const name = error instanceof Error ? error.name : undefined;
    if (name === 'ResourceNotFoundException') {
      return new ConfigurationError(
        `DynamoDB table ${this.#tableName} does not exist (check the table name and region)`,
        { tableName: this.#tableName, awsError: name },
        error,
      );
    }
    if (name === 'AccessDeniedException') {
      return new ConfigurationError(
        `The function role may not use DynamoDB table ${this.#tableName} (needs GetItem and UpdateItem)`,
        { tableName: this.#tableName, awsError: name },
        error,
      );
    }
    return error;
  }
}

/** The attributes of a cycle record: `last_cycle_*`, and `last_error_*` for a failed cycle. */
function cycleRecordUpdate(record: CycleRecord): { sets: string[]; removes: string[]; values: Item } {
  const sets = [
    'last_cycle_ended_at = :endedAt',
    'last_cycle_outcome = :outcome',
    'last_cycle_published = :published',
  ];
  const values: Item = {
    ':endedAt': { S: record.endedAt },
    ':outcome': { S: record.outcome },
    ':published': { N: String(record.published) },
  };
  if (record.lagSeconds !== null) {
    sets.push('last_cycle_lag_seconds = :lag');
    values[':lag'] = { N: String(record.lagSeconds) };
  }
  if (record.error !== undefined) {
    sets.push('last_error_code = :code', 'last_error_message = :message', 'last_error_at = :endedAt');
    values[':code'] = { S: record.error.code };
    values[':message'] = { S: record.error.message };
  }
  return { sets, removes: record.lagSeconds === null ? ['last_cycle_lag_seconds'] : [], values };
}

function isConditionalCheckFailed(error: unknown): error is ConditionalCheckFailedException {
  // By name rather than instanceof: robust to two copies of the SDK in one bundle.
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/** The cycle only commits what it tracked; an operator's number is checked by the CLI first. */
function assertSequenceNumber(sequenceNumber: number): void {
  if (!Number.isSafeInteger(sequenceNumber) || sequenceNumber < 0) {
    throw new RangeError(`A checkpoint must be a non-negative integer, got ${sequenceNumber}`);
  }
}

function stringAttribute(item: Item | undefined, name: string): string | undefined {
  return item?.[name]?.S;
}

function numberAttribute(item: Item | undefined, name: string): number | undefined {
  const value = item?.[name]?.N;
  return value === undefined ? undefined : Number(value);
}

/** The recorded open gaps; an unreadable value counts as none (they only let late events through). */
function openGapsOf(item: Item | undefined): OpenGap[] {
  const text = stringAttribute(item, 'open_gaps');
  if (text === undefined) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed)
      ? parsed.filter(
          (gap): gap is OpenGap =>
            Number.isSafeInteger(gap?.from) && Number.isSafeInteger(gap?.to) && Number.isFinite(gap?.seenAt),
        )
      : [];
  } catch {
    return [];
  }
}

/** The recorded held jumps; unreadable entries are left out (the event is then held, and quarantined again). */
function heldJumpsOf(item: Item | undefined): HeldJump[] | undefined {
  const text = stringAttribute(item, 'held_jumps');
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter(isHeldJump) : [];
  } catch {
    return [];
  }
}

function isHeldJump(value: unknown): value is HeldJump {
  const held = value as Partial<HeldJump> | null;
  return (
    Number.isSafeInteger(held?.sequenceNumber) &&
    typeof held?.eventId === 'string' &&
    typeof held.fingerprint === 'string' &&
    Number.isFinite(held.heldAt) &&
    (held.decision === undefined || held.decision === 'accepted' || held.decision === 'rejected')
  );
}

/** The item as the port's state; the optional `status` fields appear only once written. */
function stateOf(item: Item | undefined): CheckpointState {
  const newestCreatedDt = stringAttribute(item, 'newest_created_dt');
  const endedAt = stringAttribute(item, 'last_cycle_ended_at');
  const errorCode = stringAttribute(item, 'last_error_code');
  const errorMessage = stringAttribute(item, 'last_error_message') ?? '';
  const failed = stringAttribute(item, 'last_cycle_outcome') === 'failed';
  const firstLeasedAt = numberAttribute(item, 'first_leased_at');
  const startPosition = stringAttribute(item, 'start_position');
  const highestSeen = numberAttribute(item, 'highest_seen');
  const heldJumps = heldJumpsOf(item);
  const lastCycle: CycleRecord | undefined =
    endedAt === undefined
      ? undefined
      : {
          endedAt,
          outcome: failed ? 'failed' : 'completed',
          published: numberAttribute(item, 'last_cycle_published') ?? 0,
          lagSeconds: numberAttribute(item, 'last_cycle_lag_seconds') ?? null,
          ...(failed && errorCode !== undefined ? { error: { code: errorCode, message: errorMessage } } : {}),
        };
  return {
    checkpoint: numberAttribute(item, 'checkpoint') ?? null,
    updatedAt: stringAttribute(item, 'updated_at') ?? null,
    lease: leaseOf(item),
    feedProgramId: stringAttribute(item, 'feed_program_id') ?? null,
    openGaps: openGapsOf(item),
    ...(newestCreatedDt === undefined ? {} : { newestCreatedDt }),
    ...(lastCycle === undefined ? {} : { lastCycle }),
    ...(firstLeasedAt === undefined ? {} : { firstLeasedAt }),
    ...(startPosition === undefined
      ? {}
      : { start: { position: startPosition, appliedAt: stringAttribute(item, 'start_applied_at') ?? '' } }),
    ...(highestSeen === undefined ? {} : { highestSeen }),
    ...(heldJumps === undefined ? {} : { heldJumps }),
    ...(errorCode === undefined
      ? {}
      : {
          lastError: {
            code: errorCode,
            message: errorMessage,
            at: stringAttribute(item, 'last_error_at') ?? '',
          },
        }),
  };
}

function leaseOf(item: Item | undefined): { owner: string; expiresAt: number } | null {
  const owner = stringAttribute(item, 'lease_owner');
  const expiresAt = numberAttribute(item, 'lease_expires_at');
  return owner === undefined || expiresAt === undefined ? null : { owner, expiresAt };
}
