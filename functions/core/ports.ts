/**
 * The narrow interfaces the poll → publish → checkpoint cycle works over. The core knows nothing
 * of AWS or HTTP: adapters in `functions/adapters/` implement these for the Lambda (undici,
 * EventBridge, DynamoDB) and for local mode (simulator, stdout, a file), and unit tests use
 * in-memory ones. The checkpoint store has a module of its own (`checkpoint/store.ts`).
 */
import type { BankingEvent, FeedPage } from './banking-event.ts';
import type { BusEntryRules } from './bus-entry-rules.ts';

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

/**
 * Turns on the one thread that several programs' cycles share (a worker's, `fleet/cpu-turns.ts`):
 * a cycle awaits `take()` before a step that holds the thread for long (parsing a page, building
 * and signing a request to the bus), and the step runs, up to its next wait, when it is this
 * program's turn. A program with much to do then takes turns with one that has little, instead of
 * queueing all its steps ahead of it.
 */
export interface CpuTurns {
  /** Resolves when it is this program's turn; never rejects. */
  take(): Promise<void>;
  /**
   * The most of a page read (and so parsed) in one step: a longer page is read in parts
   * (`FeedPage.cut`). A first event longer than this is still read whole, within the feed's bound.
   */
  readonly stepBytes: number;
}

export interface PollRequest {
  /** Events strictly after this sequence number; `null` when there is no checkpoint yet. */
  readonly after: number | null;
  /** Fires no later than the invocation's deadline; aborting a poll loses nothing. */
  readonly signal: AbortSignal;
  /**
   * Awaited once the answer has arrived, before it is parsed: the program's turn on a thread it
   * shares (`CpuTurns`). @default no wait
   */
  readonly cpuTurn?: () => Promise<void>;
  /**
   * Bytes of the answer the cycle has room for: a longer one may be read in parts, its first
   * events only (`FeedPage.cut`). The feed may read more (its floor), or less (its own bound).
   * @default the feed's own bound
   */
  readonly maxBytes?: number;
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

/**
 * Why the bus did not take an entry, or a whole request, in the core's words. The publisher
 * classifies its own failures (the bus's error codes and messages stay in its adapter); the core
 * decides by these words alone:
 * - `throttled`: the bus asks to slow down. Resent with backoff for as long as the budget allows,
 *   however many attempts that takes, and fewer requests are sent at once meanwhile.
 * - `transient`: may pass on its own (a server error, a broken connection, an answer we do not
 *   understand): resent with backoff, up to the pipeline's attempts.
 * - `too-large`: refused for its size: the claim check stores the event and sends a pointer in
 *   its place; without one it is final.
 * - `rejected`: refused for what it is or for what the deployment is (a missing bus, a denied
 *   role): another try within the invocation cannot help; final.
 */
export type PublishFailure = 'throttled' | 'transient' | 'too-large' | 'rejected';

/** Result of one attempt for one entry, in the order the batch was given. */
export type EntryOutcome =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly failure: PublishFailure;
      /** The bus's own code (or the core's, e.g. `EARLIER_ENTRY_FAILED`): for people, never decided by. */
      readonly errorCode: string;
      readonly errorMessage: string;
    };

/** What one request to the bus may carry, as the publisher states it for its bus. */
export interface PublishLimits {
  /** Entries per request. */
  readonly maxEntriesPerBatch: number;
  /** Bytes per request, entry sizes added up as `entrySize` counts them. */
  readonly maxBatchBytes: number;
  /** Bytes of one entry (at most `maxBatchBytes`): a larger event goes through the claim check, or stops the run. */
  readonly maxEntryBytes: number;
}

/**
 * Where events go. `send` is one attempt for one batch that respects `limits`; it resolves with
 * an outcome per entry (partial failure is normal) and throws only when the whole request failed:
 * a `PublishError` whose `failure` says how, a `ConfigurationError` for what the deployment must
 * fix (read as `rejected`), or the signal's reason once it aborted. Batching and retrying failed
 * entries belong to the core (`publish-pipeline.ts`).
 */
export interface EventPublisher {
  readonly limits: PublishLimits;
  /** What its bus refuses in an entry's detail-type and detail (a quarantined copy is shaped by it). */
  readonly entryRules: BusEntryRules;
  /** Bytes this event counts for against `maxBatchBytes` and `maxEntryBytes`. */
  entrySize(event: BankingEvent): number;
  send(batch: readonly BankingEvent[], signal: AbortSignal): Promise<readonly EntryOutcome[]>;
  /**
   * The event group of an event: events of one group must be accepted by the bus in sequence
   * order (the order the pipeline is given them), and the pipeline keeps it so under concurrency
   * and retries (`group-sequencer.ts`). `undefined`, or no such method, means no order is needed:
   * such entries are sent as soon as the gate admits them.
   */
  eventGroup?(event: BankingEvent): string | undefined;
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
  'DuplicateEventIds',
  'StreamReconnects',
  'InvalidEvents',
  'ClaimChecks',
  'ClientCertificateDaysLeft',
  /**
   * Groups whose order a partial failure broke: per request, 1 for each event group in which the
   * bus rejected an entry and accepted a later one (see `group-sequencer.ts`).
   */
  'OrderBroken',
  /**
   * Sequence jumps awaiting an operator's decision (a gauge, the run's maximum): events held for a
   * number implausibly far past the one before it, quarantined once (see `sequence-jumps.ts`).
   */
  'SequenceJumpsHeld',
  /**
   * Pages of the feed with more events than the poll asked for (a bank that ignores `limit`), or
   * too long to read at once in the function's memory (read in parts).
   */
  'OversizePages',
  /** A program's turn in a worker's run that failed or was left behind (its `Program`); the others ran. */
  'CycleFailures',
  /** A worker's: registry items refused as malformed (no `Program`: the item may have no valid name). */
  'ProgramRecordsRefused',
  /** A worker's: programs whose turn never came in its run (too many for its lanes and time). */
  'ProgramsNotReached',
  /**
   * A program's run that completed no healthy cycle (no `CycleDurationMs`: it failed, waited for a
   * busy lease, was left behind or not reached, or every poll timed out). Written by the metrics
   * adapter when it sends a program's metrics, so that an alarm can see what is missing.
   */
  'StalledRuns',
  /** A worker's run, from its start to its answer (the worker's, with its `Worker`): its liveness. */
  'WorkerDurationMs',
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

/**
 * Mutual TLS material from the secret, each field PEM text as stored (checked when a connection is
 * built, not here). Present only when the secret has at least one of the fields.
 */
export interface BankingTls {
  /** `client_certificate`: the client's certificate (its chain may follow). */
  readonly clientCertificate?: string;
  /** `client_key`: the certificate's private key, encrypted or not. */
  readonly clientKey?: string;
  /** `client_key_passphrase`: decrypts an encrypted `client_key`. */
  readonly clientKeyPassphrase?: string;
  /** `ca_certificate`: the CA(s) that sign the bank's server certificate, instead of the public ones. */
  readonly caCertificate?: string;
}

/** Banking-service credentials as stored in the secret; `baseUrl` has no trailing slash. */
export interface BankingCredentials {
  readonly baseUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Mutual TLS to the bank; absent when the secret has none of its fields. */
  readonly tls?: BankingTls;
}

/**
 * Source of credentials, cached with a TTL by the adapter; `refresh` forces a re-read, used after
 * a 401 because the secret may have been rotated.
 */
export interface CredentialsProvider {
  get(): Promise<BankingCredentials>;
  refresh(): Promise<BankingCredentials>;
}
