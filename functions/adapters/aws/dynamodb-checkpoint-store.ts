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
 * | `lease_owner`      | S    | invocation holding the lease (absent: free)                   |
 * | `lease_expires_at` | N    | epoch ms after which another invocation may take it over      |
 *
 * Every write is one conditional `UpdateItem`, so checkpoint and lease change together atomically.
 */
import {
  type AttributeValue,
  type ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import {
  CheckpointRegressionError,
  ConfigurationError,
  DeadlineExceededError,
  FeedProgramMismatchError,
  LeaseLostError,
} from '../../core/errors.ts';
import type {
  CheckpointState,
  CheckpointStore,
  CommitRequest,
  LeaseGrant,
  LeaseRequest,
  OpenGap,
} from '../../core/ports.ts';

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

export interface SetCheckpointOptions {
  /**
   * Allow moving the checkpoint backwards (events after it will be published again).
   * @default false
   */
  readonly force?: boolean;
}

type Item = Record<string, AttributeValue>;

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
   * Takes the lease if it is free, expired, or already ours (re-entrant: the expiry is extended).
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
      update: 'SET lease_owner = :owner, lease_expires_at = :expiresAt',
      condition: 'attribute_not_exists(lease_owner) OR lease_expires_at < :now OR lease_owner = :owner',
      values: {
        ':owner': { S: owner },
        ':expiresAt': { N: String(expiresAt) },
        ':now': { N: String(now) },
      },
      returnNew: true,
    };
    // Two tries: if the holder released between our write and our read, the lease is free now.
    for (let attempt = 0; attempt < 2; attempt++) {
      const outcome = await this.#conditionalUpdate(write);
      if (outcome.applied) {
        return {
          acquired: true,
          checkpoint: numberAttribute(outcome.item, 'checkpoint') ?? null,
          feedProgramId: stringAttribute(outcome.item, 'feed_program_id') ?? null,
          openGaps: openGapsOf(outcome.item),
        };
      }
      const holder = leaseOf(outcome.item);
      if (holder !== null) return { acquired: false, holder: holder.owner, expiresAt: holder.expiresAt };
    }
    return { acquired: false, holder: 'unknown (released while being read)', expiresAt: now };
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
  async commit({ owner, sequenceNumber, feedProgramId, openGaps, signal }: CommitRequest): Promise<void> {
    assertSequenceNumber(sequenceNumber);
    const outcome = await this.#conditionalUpdate({
      operation: 'commit',
      update: `SET checkpoint = :seq, updated_at = :updatedAt, feed_program_id = :feed${openGaps === undefined ? '' : ', open_gaps = :gaps'}`,
      condition:
        'lease_owner = :owner AND (attribute_not_exists(checkpoint) OR checkpoint <= :seq) ' +
        'AND (attribute_not_exists(feed_program_id) OR feed_program_id = :feed)',
      values: {
        ':owner': { S: owner },
        ':seq': { N: String(sequenceNumber) },
        ':feed': { S: feedProgramId },
        ':updatedAt': { S: new Date(this.#clock()).toISOString() },
        ...(openGaps === undefined ? {} : { ':gaps': { S: JSON.stringify(openGaps) } }),
      },
      signal,
    });
    if (outcome.applied) return;
    const { item } = outcome;
    const holder = stringAttribute(item, 'lease_owner') ?? null;
    if (holder !== owner) {
      throw new LeaseLostError(
        `Lease of program ${this.#program} is held by ${holder ?? 'nobody'}, not ${owner}: checkpoint ${sequenceNumber} not written`,
        { program: this.#program, owner, holder, sequenceNumber },
      );
    }
    const recordedFeed = stringAttribute(item, 'feed_program_id');
    if (recordedFeed !== undefined && recordedFeed !== feedProgramId) {
      throw new FeedProgramMismatchError(this.#program, recordedFeed, feedProgramId, sequenceNumber);
    }
    throw new CheckpointRegressionError(
      `Checkpoint of program ${this.#program} is already ${numberAttribute(item, 'checkpoint')}, beyond ${sequenceNumber}, although ${owner} holds the lease: another writer moved it`,
      { program: this.#program, owner, checkpoint: numberAttribute(item, 'checkpoint'), sequenceNumber },
    );
  }

  /**
   * Frees the lease if `owner` still holds it; the checkpoint is untouched.
   *
   * Timeline: A's lease expired and B took over; A's release must not free B's lease, so the
   * condition `lease_owner = :owner` fails and the call does nothing.
   */
  async releaseLease(owner: string, signal?: AbortSignal): Promise<void> {
    await this.#conditionalUpdate({
      operation: 'releaseLease',
      update: 'REMOVE lease_owner, lease_expires_at',
      condition: 'lease_owner = :owner',
      values: { ':owner': { S: owner } },
      signal,
    });
  }

  async read(): Promise<CheckpointState> {
    const item = await this.#getItem();
    return {
      checkpoint: numberAttribute(item, 'checkpoint') ?? null,
      updatedAt: stringAttribute(item, 'updated_at') ?? null,
      lease: leaseOf(item),
      feedProgramId: stringAttribute(item, 'feed_program_id') ?? null,
      openGaps: openGapsOf(item),
    };
  }

  /**
   * Operator command: sets the checkpoint without holding the lease, refusing while an unexpired
   * lease is held (a running invocation would overwrite it). Forward only unless `force`.
   *
   * Timeline: the poller holds the lease until t=60; at t=30 the operator's write fails on
   * `lease_expires_at < :now` and is refused; at t=61 it goes through.
   * @throws LeaseLostError while another invocation holds a live lease.
   * @throws CheckpointRegressionError when moving backwards without `force`.
   */
  async setCheckpoint(sequenceNumber: number, options: SetCheckpointOptions = {}): Promise<void> {
    assertSequenceNumber(sequenceNumber);
    const now = this.#clock();
    const leaseFree = '(attribute_not_exists(lease_owner) OR lease_expires_at < :now)';
    const outcome = await this.#conditionalUpdate({
      operation: 'setCheckpoint',
      update: 'SET checkpoint = :seq, updated_at = :updatedAt',
      condition: options.force
        ? leaseFree
        : `${leaseFree} AND (attribute_not_exists(checkpoint) OR checkpoint <= :seq)`,
      values: {
        ':seq': { N: String(sequenceNumber) },
        ':now': { N: String(now) },
        ':updatedAt': { S: new Date(now).toISOString() },
      },
    });
    if (outcome.applied) return;
    const lease = leaseOf(outcome.item);
    if (lease !== null && lease.expiresAt >= now) {
      throw new LeaseLostError(
        `Lease of program ${this.#program} is held by ${lease.owner} until ${new Date(lease.expiresAt).toISOString()}; try again after it expires`,
        { program: this.#program, holder: lease.owner, expiresAt: lease.expiresAt, sequenceNumber },
      );
    }
    const stored = numberAttribute(outcome.item, 'checkpoint');
    throw new CheckpointRegressionError(
      `Checkpoint of program ${this.#program} is ${stored ?? 'unset'}; moving it back to ${sequenceNumber} needs force (rewind)`,
      { program: this.#program, checkpoint: stored ?? null, sequenceNumber },
    );
  }

  /** Operator command: moves the checkpoint anywhere, backwards included (events after it are published again). */
  rewind(sequenceNumber: number): Promise<void> {
    return this.setCheckpoint(sequenceNumber, { force: true });
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

function leaseOf(item: Item | undefined): { owner: string; expiresAt: number } | null {
  const owner = stringAttribute(item, 'lease_owner');
  const expiresAt = numberAttribute(item, 'lease_expires_at');
  return owner === undefined || expiresAt === undefined ? null : { owner, expiresAt };
}
