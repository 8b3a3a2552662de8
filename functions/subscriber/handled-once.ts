/**
 * Each event handled once, on Powertools idempotency with DynamoDB persistence, keyed by
 * `idempotencyKey` (the bank's event id). The timeline of one key:
 *
 * - first delivery: a record `INPROGRESS` is written (conditional: absent, expired, or in
 *   progress past its in-progress expiry), the pointer is resolved, the handler runs, and the
 *   record becomes `COMPLETED` with the handler's result, for `expiresAfterSeconds`;
 * - a later copy finds `COMPLETED`: the handler does not run, the stored result is returned and
 *   the copy is reported as a duplicate;
 * - a copy while the first is still running finds `INPROGRESS` and fails
 *   (`IdempotencyAlreadyInProgressError`): SQS delivers it again later, when it is a duplicate;
 * - a handler that throws (or a claim check refused) deletes the record, so the next delivery
 *   runs it again;
 * - an invocation that dies mid-handler leaves `INPROGRESS` until the invocation's deadline
 *   (`registerLambdaContext`), after which the next delivery runs it again.
 *
 * Two events the bank gave one id (at two sequence numbers) share a key: only the first delivered
 * runs the handler (see `idempotency-key.ts`).
 *
 * So a handler's effects happen once unless it is killed, or the `COMPLETED` write fails, after
 * they happened: make the handler's own writes conditional too when that window matters.
 */
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context, SQSRecord } from 'aws-lambda';
import { type ClaimCheckOptions, ClaimCheckResolver } from './claim-check-resolver.ts';
import { SubscriberConfigurationError } from './errors.ts';
import { idempotencyKey } from './idempotency-key.ts';
import type { ReceivedEvent, SubscriberEvent } from './subscriber-events.ts';

/** Two weeks: as long as a route queue keeps a message, so a copy redriven from its DLQ is still caught. */
export const DEFAULT_EXPIRES_AFTER_SECONDS = 14 * 24 * 60 * 60;

export interface IdempotencyOptions {
  /**
   * The DynamoDB table of the idempotency records, in Powertools' layout: partition key `id`
   * (string), TTL on `expiration` (the construct's `grantSubscriber` makes one). Not with
   * `persistenceStore`.
   */
  readonly tableName?: string;
  /** The DynamoDB client for `tableName`. @default - a client with the SDK's default configuration */
  readonly dynamoDBClient?: DynamoDBClient;
  /** Any Powertools persistence layer, instead of `tableName`. */
  readonly persistenceStore?: BasePersistenceLayer;
  /**
   * How long a handled event's record is kept: copies arriving later run the handler again.
   * Keep it at least as long as duplicates can arrive: queue retention, archive replays, rewinds.
   *
   * @default 1_209_600 (14 days)
   */
  readonly expiresAfterSeconds?: number;
  /**
   * Prefix of the stored keys: subscribers sharing a table keep apart by it.
   *
   * @default - the function's name (`AWS_LAMBDA_FUNCTION_NAME`), as Powertools does
   */
  readonly keyPrefix?: string;
}

/** A logger: Powertools Logger, `console`, or anything with these methods. */
export interface SubscriberLogger {
  info(message: string, attributes: Readonly<Record<string, unknown>>): void;
  warn(message: string, attributes: Readonly<Record<string, unknown>>): void;
  error(message: string, attributes: Readonly<Record<string, unknown>>): void;
}

/** Where the handler's event came from. */
export interface HandlerContext {
  readonly lambdaContext: Context;
  /** The SQS message, for a handler of SQS batches. */
  readonly sqsRecord?: SQSRecord;
}

/**
 * A subscriber's handler: called once per event (see the module comment), with the complete
 * event (pointers already resolved). What it returns is stored for duplicates, so it must be JSON.
 */
export type EventHandler<R = void> = (event: SubscriberEvent, context: HandlerContext) => Promise<R>;

export interface HandledOnceOptions {
  readonly idempotency: IdempotencyOptions;
  /** How pointers are resolved: options, or a resolver of your own. @default - `new ClaimCheckResolver()` */
  readonly claimChecks?: ClaimCheckOptions | ClaimCheckResolver;
  /** @default console */
  readonly logger?: SubscriberLogger;
}

/** What handling a delivery came to. */
export interface HandledOutcome<R> {
  /** The handler's result: this run's, or the stored one of the first delivery. */
  readonly result: R;
  /** The event had been handled before: the handler did not run. */
  readonly duplicate: boolean;
  readonly idempotencyKey: string;
}

interface StoredResult {
  readonly result?: unknown;
  readonly duplicate?: true;
}

function persistenceStoreOf(options: IdempotencyOptions): BasePersistenceLayer {
  if ((options.tableName === undefined) === (options.persistenceStore === undefined)) {
    throw new SubscriberConfigurationError(
      'IdempotencyOptions: give tableName (a DynamoDB table) or persistenceStore, exactly one of them',
      { option: 'tableName' },
    );
  }
  if (options.persistenceStore !== undefined) return options.persistenceStore;
  if (options.tableName === '') {
    throw new SubscriberConfigurationError('IdempotencyOptions.tableName must be a table name, got ""', {
      option: 'tableName',
    });
  }
  return new DynamoDBPersistenceLayer({
    tableName: options.tableName!,
    ...(options.dynamoDBClient === undefined ? {} : { awsSdkV3Client: options.dynamoDBClient }),
  });
}

function expiresAfterSecondsOf(options: IdempotencyOptions): number {
  const seconds = options.expiresAfterSeconds ?? DEFAULT_EXPIRES_AFTER_SECONDS;
  if (!Number.isInteger(seconds) || seconds <= 0) {
    throw new SubscriberConfigurationError(
      `IdempotencyOptions.expiresAfterSeconds must be a positive whole number of seconds, got ${seconds}`,
      { option: 'expiresAfterSeconds' },
    );
  }
  return seconds;
}

/**
 * Handles each event once. Build it at module scope (its clients and persistence layer are
 * reused across invocations) and call `registerLambdaContext` at the start of each invocation.
 */
export class HandledOnce<R> {
  readonly #config: IdempotencyConfig;
  readonly #claimChecks: ClaimCheckResolver;
  readonly #logger: SubscriberLogger;
  readonly #run: (
    key: { readonly key: string },
    event: ReceivedEvent,
    context: HandlerContext,
  ) => Promise<StoredResult>;

  constructor(handler: EventHandler<R>, options: HandledOnceOptions) {
    const persistenceStore = persistenceStoreOf(options.idempotency);
    this.#config = new IdempotencyConfig({
      eventKeyJmesPath: 'key',
      throwOnNoIdempotencyKey: true,
      expiresAfterSeconds: expiresAfterSecondsOf(options.idempotency),
      // Called only when a stored result is returned instead of running the handler.
      responseHook: (response) => ({ ...(response as object), duplicate: true }),
    });
    this.#claimChecks =
      options.claimChecks instanceof ClaimCheckResolver
        ? options.claimChecks
        : new ClaimCheckResolver(options.claimChecks);
    this.#logger = options.logger ?? console;
    // The pointer is resolved inside: a duplicate costs no S3 read, and a refused body deletes the record.
    const handle = async (
      _key: { readonly key: string },
      event: ReceivedEvent,
      context: HandlerContext,
    ): Promise<StoredResult> => {
      const complete = await this.#claimChecks.resolve(event);
      const result = await handler(complete, context);
      // DynamoDB's marshalling refuses an undefined member: a handler returning nothing stores `{}`.
      return result === undefined ? {} : { result };
    };
    this.#run = makeIdempotent(handle, {
      persistenceStore,
      config: this.#config,
      ...(options.idempotency.keyPrefix === undefined ? {} : { keyPrefix: options.idempotency.keyPrefix }),
    });
  }

  /** The invocation's deadline bounds how long an interrupted delivery keeps its key `INPROGRESS`. */
  registerLambdaContext(context: Context): void {
    this.#config.registerLambdaContext(context);
  }

  /** Runs the handler for `event` unless its key was handled before. */
  async handle(event: ReceivedEvent, context: HandlerContext): Promise<HandledOutcome<R>> {
    const key = idempotencyKey(event);
    const stored = await this.#run({ key }, event, context);
    const duplicate = stored.duplicate === true;
    if (duplicate) {
      this.#logger.info('Duplicate delivery: the event was handled before, the handler did not run', {
        idempotencyKey: key,
        detailType: event.detailType,
        ...(context.sqsRecord === undefined ? {} : { messageId: context.sqsRecord.messageId }),
      });
    }
    return { result: stored.result as R, duplicate, idempotencyKey: key };
  }
}
