/**
 * A Lambda handler for SQS batches (an event source mapping with `ReportBatchItemFailures`) of
 * events routed to a queue: each record parsed, its pointer resolved, its event handled once,
 * and a partial batch response naming only the records that failed, so SQS delivers just those
 * again (and moves them to the queue's DLQ after its `maxReceiveCount`). Built on Powertools'
 * `BatchProcessor`; records are handled one after the other, in sequence order per program, so
 * two copies of an event in one batch never race: the second is a duplicate.
 *
 * From a FIFO queue (a Custom Event Bus FIFO subscriber's target: `MessageGroupId` = the event
 * group), records keep the queue's order, and once a record fails, the later records of its
 * message group fail with it unhandled (Powertools' `SqsFifoPartialProcessorAsync` with
 * `skipGroupOnError`): SQS delivers them again in order, other groups go on.
 */
import {
  BatchProcessor,
  EventType,
  processPartialResponse,
  SqsFifoPartialProcessorAsync,
} from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { type ParseOptions, parseEvent } from './event-parser.ts';
import { describeError } from './failure-log.ts';
import {
  type EventHandler,
  HandledOnce,
  type HandledOnceOptions,
  type SubscriberLogger,
} from './handled-once.ts';
import { compareBySequence } from './sequence-order.ts';
import type { ReceivedEvent } from './subscriber-events.ts';

export interface SqsBatchHandlerOptions extends HandledOnceOptions {
  readonly parse?: ParseOptions;
}

type Parsed = { readonly event: ReceivedEvent } | { readonly error: unknown };

function parseRecord(record: SQSRecord, options: ParseOptions | undefined): Parsed {
  try {
    return { event: parseEvent(record, options) };
  } catch (error) {
    return { error };
  }
}

/** Unparseable records first (they fail at once), then events by program and sequence number. */
function bySequence(parsed: ReadonlyMap<SQSRecord, Parsed>): (a: SQSRecord, b: SQSRecord) => number {
  return (a, b) => {
    const first = parsed.get(a)!;
    const second = parsed.get(b)!;
    if (!('event' in first)) return 'event' in second ? -1 : 0;
    if (!('event' in second)) return 1;
    return compareBySequence(first.event, second.event);
  };
}

function logFailure(
  logger: SubscriberLogger,
  record: SQSRecord,
  event: ReceivedEvent | undefined,
  error: unknown,
): void {
  const attributes = {
    messageId: record.messageId,
    receiveCount: record.attributes?.ApproximateReceiveCount,
    ...(event === undefined ? {} : { detailType: event.detailType, eventId: event.detail.id }),
    error: describeError(error),
  };
  if (error instanceof Error && error.name === 'IdempotencyAlreadyInProgressError') {
    logger.warn(
      'Event being handled by another invocation right now; SQS will deliver this copy again',
      attributes,
    );
  } else {
    logger.error(
      'Event not handled; SQS will deliver it again, then move it to the dead-letter queue',
      attributes,
    );
  }
}

/** Whether the batch comes from a FIFO queue (an event source mapping reads one queue). */
function isFifo(batch: SQSEvent): boolean {
  return (
    batch.Records.length > 0 && batch.Records.every((record) => record.eventSourceARN?.endsWith('.fifo'))
  );
}

/**
 * Wraps `handler` into a Lambda handler of SQS batches with partial batch responses. When every
 * record fails, it throws (Powertools' `FullBatchFailureError`) and the whole batch returns.
 *
 * @example
 * export const handler = makeSqsBatchHandler(async (event) => {
 *   switch (event.kind) {
 *     case 'transaction': return book(event.detail);
 *     default: return; // account_status, invalid_event, unknown: not ours
 *   }
 * }, { idempotency: { tableName: process.env.IDEMPOTENCY_TABLE! } });
 */
export function makeSqsBatchHandler(
  handler: EventHandler<unknown>,
  options: SqsBatchHandlerOptions,
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const once = new HandledOnce(handler, options);
  const logger = options.logger ?? console;
  const processor = new BatchProcessor(EventType.SQS);
  const fifoProcessor = new SqsFifoPartialProcessorAsync();
  return async (batch, context) => {
    once.registerLambdaContext(context);
    const parsed = new Map(batch.Records.map((record) => [record, parseRecord(record, options.parse)]));
    const handleRecord = async (record: SQSRecord): Promise<void> => {
      const outcome = parsed.get(record)!;
      const event = 'event' in outcome ? outcome.event : undefined;
      try {
        if (event === undefined) throw (outcome as { error: unknown }).error;
        await once.handle(event, { lambdaContext: context, sqsRecord: record });
      } catch (error) {
        logFailure(logger, record, event, error);
        throw error;
      }
    };
    if (isFifo(batch)) {
      // The queue's order is the group's order: kept as delivered, never re-sorted.
      return processPartialResponse(batch, handleRecord, fifoProcessor, { context, skipGroupOnError: true });
    }
    const records = [...batch.Records].sort(bySequence(parsed));
    return processPartialResponse({ Records: records }, handleRecord, processor, {
      context,
      processInParallel: false,
    });
  };
}
