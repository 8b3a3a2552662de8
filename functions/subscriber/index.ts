/**
 * The subscriber kit: what a team consuming the poller's events needs, in one import (to become
 * the package's `banking-events-poller/subscriber` entry point). Typed events generated from the
 * event JSON Schema, a parser for every way an event arrives (a classic bus's rule, a Custom Event
 * Bus subscriber `RAW` or `WITH_METADATA`, SQS), claim-check pointers resolved and verified, and
 * each event handled once.
 *
 * Runtime dependencies (the subscriber's app's own, listed in docs/subscribers.md; needed only by users of this entry point):
 * `@aws-lambda-powertools/idempotency`, `@aws-lambda-powertools/batch`, `@aws-sdk/client-s3`,
 * `@aws-sdk/client-dynamodb` and `@aws-sdk/lib-dynamodb`.
 *
 * @example
 * import { makeSqsBatchHandler } from 'banking-events-poller/subscriber';
 *
 * export const handler = makeSqsBatchHandler(
 *   async (event) => {
 *     if (event.kind === 'transaction') await book(event.detail.id, event.detail.data);
 *   },
 *   { idempotency: { tableName: process.env.IDEMPOTENCY_TABLE! } },
 * );
 */
export {
  ACCOUNT_STATUSES,
  TRANSACTION_STATUSES,
  TRANSACTION_TYPES,
} from '../event-schema/event-json-schema.ts';
export type * from '../event-schema/event-types.generated.ts';
export { BUS_DELIVERY_TYPES, type BusDelivery, type BusDeliveryType } from './bus-delivery.ts';
export { type ClaimCheckOptions, ClaimCheckResolver } from './claim-check-resolver.ts';
export {
  ClaimCheckMismatchError,
  ClaimCheckReadError,
  EventValidationError,
  SubscriberConfigurationError,
  SubscriberError,
  type SubscriberErrorContext,
  UnsafeIntegerError,
} from './errors.ts';
export { type EventHandlerOptions, makeEventBatchHandler, makeEventHandler } from './event-handler.ts';
export { type ParseOptions, parseEvent, parseEvents } from './event-parser.ts';
export {
  DEFAULT_EXPIRES_AFTER_SECONDS,
  type EventHandler,
  HandledOnce,
  type HandledOnceOptions,
  type HandledOutcome,
  type HandlerContext,
  type IdempotencyOptions,
  type SubscriberLogger,
} from './handled-once.ts';
export { idempotencyKey } from './idempotency-key.ts';
export { compareBySequence, feedPosition } from './sequence-order.ts';
export { makeSqsBatchHandler, type SqsBatchHandlerOptions } from './sqs-batch-handler.ts';
export type {
  AccountStatusEvent,
  ClaimCheckedEvent,
  InvalidEvent,
  ReceivedEvent,
  SubscriberEvent,
  TransactionEvent,
  UnknownEvent,
} from './subscriber-events.ts';
