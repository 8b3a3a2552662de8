/**
 * The narrow interfaces the poll → publish → checkpoint cycle works over. The core knows nothing
 * of AWS or HTTP: adapters in `functions/adapters/` implement these for the Lambda (undici,
 * EventBridge, DynamoDB) and for local mode (simulator, stdout, a file), and unit tests use
 * in-memory ones.
 */
import type { BankingEvent, FeedPage } from './event-model.ts';

/**
 * Wall clock and waiting, injectable so tests can run a whole budget in microseconds.
 *
 * Under Lambda an event loop that empties while the handler's promise is pending ends the
 * invocation early (the runtime posts a null or error result and freezes the container with the
 * cycle half done). So a wait the cycle is blocked on must keep the process alive, and a timer
 * that only bounds work must be cleared once that work is over.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /**
   * Waits `ms`, keeping the process alive meanwhile; rejects with the signal's reason as soon as
   * `signal` aborts (and clears its timer).
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * A deadline: its signal aborts at `epochMs` (at once if that is past) with a
   * `DeadlineExceededError`. Call `clear()` when the work it bounds is over.
   */
  deadline(epochMs: number): Deadline;
}

/** A signal that fires at a moment, and the means to stop its timer. */
export interface Deadline {
  readonly signal: AbortSignal;
  /** Stops the timer; the signal never fires afterwards. Idempotent. */
  clear(): void;
}

export interface PollRequest {
  /** Events strictly after this sequence number; `null` when there is no checkpoint yet. */
  readonly after: number | null;
  /** Fires no later than the invocation's deadline; aborting a poll loses nothing. */
  readonly signal: AbortSignal;
}

/**
 * Where events come from. One call is one request to the upstream (the adapter handles auth and
 * a single 401 refresh itself). A retryable failure is thrown as `UpstreamHttpError` with
 * `retryable: true`; the cycle decides whether the budget allows another try.
 */
export interface EventFeed {
  poll(request: PollRequest): Promise<FeedPage>;
  /**
   * Gets ready to poll (credentials, access token) so the first poll does not wait for them: run
   * while the lease is awaited, it keeps a hand-over between runs short. Failures are left for the
   * first poll to report.
   */
  prepare?(signal: AbortSignal): Promise<void>;
}

/**
 * Single-event lookups (`GET /event/sequence/:n`, `GET /event/:id`): gap repair, recovering a
 * stream payload that may differ from the poll payload, and the operator CLI. Errors as for
 * `EventFeed.poll`.
 */
export interface EventLookup {
  /** The event with this sequence number, or `null` when the feed has none (404). */
  fetchEventBySequence(sequenceNumber: number, signal: AbortSignal): Promise<BankingEvent | null>;
  /** The event with this id, or `null` when the feed has none (404). */
  fetchEventById(id: string, signal: AbortSignal): Promise<BankingEvent | null>;
}

export interface StreamRequest {
  /** Events strictly after this sequence number; `null` from the beginning. */
  readonly after: number | null;
  /** Closes the connection when aborted. */
  readonly signal: AbortSignal;
}

/** An event as a stream message carried it. */
export interface StreamedEvent {
  /** Normalized as a poll would give it, as far as the stream payload allows. */
  readonly event: BankingEvent;
  /**
   * The payload may hold a value the poll payload does not (a transaction whose own `data.type`
   * the stream replaced with the event type): fetch the event before publishing it.
   */
  readonly needsRecovery: boolean;
}

/** One Server-Sent Events message of the feed. */
export type StreamMessage =
  | {
      readonly kind: 'events';
      /** The `id:` line: the sequence number to resume after; `null` when the message had none. */
      readonly lastEventId: number | null;
      /** Ascending by sequence number. */
      readonly events: readonly StreamedEvent[];
    }
  /**
   * A message whose payload could not be read (not JSON, not events): the events it announced
   * must be read another way. `lastEventId` is its `id:` line, if it had a usable one.
   */
  | { readonly kind: 'unreadable'; readonly lastEventId: number | null; readonly reason: string }
  /** The service asked for this reconnection delay (the SSE `retry:` field). */
  | { readonly kind: 'retry'; readonly retryMs: number };

/**
 * The feed as a stream (`GET /events/stream`). `open` resolves once the service accepted the
 * request (HTTP 200, after one 401 refresh at most) and gives the messages until the connection
 * ends (the iterator returns) or breaks (it throws a retryable `UpstreamHttpError`). Aborting the
 * signal closes the connection. Refusals are thrown by `open` like `EventFeed.poll` throws them.
 */
export interface EventStream {
  open(request: StreamRequest): Promise<AsyncIterable<StreamMessage>>;
}

/** Result of one PutEvents-style attempt for one entry, in the order the batch was given. */
export type EntryOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly errorCode: string; readonly errorMessage: string };

export interface PublishLimits {
  /** PutEvents: 10 entries per request. */
  readonly maxEntriesPerBatch: number;
  /**
   * PutEvents: bytes per request, entry sizes added up the way AWS documents; one entry alone must
   * fit too (`MAX_EVENT_ENTRY_BYTES`, see `claim-check.ts`).
   */
  readonly maxBatchBytes: number;
}

/**
 * Where events go. `send` is one attempt for one batch that respects `limits`; it resolves with
 * an outcome per entry (partial failure is normal) and throws only when the whole request failed.
 * Batching and retrying failed entries belong to the core (`publish-pipeline.ts`).
 */
export interface EventPublisher {
  readonly limits: PublishLimits;
  /** Bytes this event counts for against `maxBatchBytes` (one entry must fit on its own). */
  entrySize(event: BankingEvent): number;
  send(batch: readonly BankingEvent[], signal: AbortSignal): Promise<readonly EntryOutcome[]>;
}

/** Where a claim-checked event's full text is stored. */
export interface ClaimCheckLocation {
  readonly bucket: string;
  readonly key: string;
}

/**
 * Object storage for events too large for the bus (S3 in the Lambda). `put` stores `body` under
 * `key`, replacing what is there (the same event stored twice is the same object), and rejects
 * when it could not: a `ConfigurationError` for what retrying cannot fix (no bucket, no access).
 */
export interface ClaimCheckStore {
  put(key: string, body: string, signal: AbortSignal): Promise<ClaimCheckLocation>;
}

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

export type LeaseGrant =
  | {
      readonly acquired: true;
      readonly checkpoint: number | null;
      /** The `program_id` the row's feed serves, recorded by its first commit; `null` before that. */
      readonly feedProgramId: string | null;
      /** Skipped sequence numbers below the checkpoint whose events were never published. */
      readonly openGaps: readonly OpenGap[];
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
  commit(request: CommitRequest): Promise<void>;
  /** Frees the lease if `owner` still holds it (a no-op otherwise), with the cycle's record if given. */
  releaseLease(owner: string, options?: ReleaseOptions): Promise<void>;
  /** Read-only view for operators (`status`) and tests. */
  read(): Promise<CheckpointState>;
}

/** Names of the metrics the cycle emits; the CDK alarms and dashboard refer to the same names. */
export const METRIC_NAMES = [
  'EventsReceived',
  'EventsPublished',
  'PublishRetries',
  'FailedEntries',
  'PollRequests',
  'PollErrors',
  'PollTimeouts',
  'AuthRefreshes',
  'LagSeconds',
  'CheckpointSequence',
  'LeaseBusy',
  'HandoverWaitMs',
  'CycleDurationMs',
  'SequenceGaps',
  'GapsRepaired',
  'GapsUnfilled',
  'LateEvents',
  'StreamReconnects',
  'InvalidEvents',
  'ClaimChecks',
] as const;
export type MetricName = (typeof METRIC_NAMES)[number];
export type MetricUnit = 'Count' | 'Seconds' | 'Milliseconds' | 'None';

/** Powertools Metrics at the edge; an in-memory recorder in tests. */
export interface MetricsSink {
  add(name: MetricName, unit: MetricUnit, value: number): void;
}

/** The subset of Powertools Logger the core uses; attributes never carry credentials. */
export interface CycleLogger {
  debug(message: string, attributes?: Record<string, unknown>): void;
  info(message: string, attributes?: Record<string, unknown>): void;
  warn(message: string, attributes?: Record<string, unknown>): void;
  error(message: string, attributes?: Record<string, unknown>): void;
}

/** Banking-service credentials as stored in the secret; `baseUrl` has no trailing slash. */
export interface BankingCredentials {
  readonly baseUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
}

/**
 * Source of credentials, cached with a TTL by the adapter; `refresh` forces a re-read, used after
 * a 401 because the secret may have been rotated.
 */
export interface CredentialsProvider {
  get(): Promise<BankingCredentials>;
  refresh(): Promise<BankingCredentials>;
}
