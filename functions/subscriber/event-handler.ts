/**
 * Lambda handlers for events delivered to a function directly: one at a time (a classic rule's
 * Lambda target, a Lambda task of a Step Functions state machine whose input is the event, a
 * Custom Event Bus subscriber with `MaxBatchSize` 1), or as the array a Custom Event Bus
 * subscriber's Lambda target receives. Each parses, resolves a pointer, and runs the subscriber's
 * handler once per event (`HandledOnce`).
 */
import type { Context } from 'aws-lambda';
import { type ParseOptions, parseEvent } from './event-parser.ts';
import { describeError } from './failure-log.ts';
import { type EventHandler, HandledOnce, type HandledOnceOptions } from './handled-once.ts';
import type { ReceivedEvent } from './subscriber-events.ts';

export interface EventHandlerOptions extends HandledOnceOptions {
  readonly parse?: ParseOptions;
}

/**
 * Wraps `handler` into a Lambda handler for single events. A duplicate returns the result the
 * first delivery stored; a bad event throws (`EventValidationError`), so Lambda's retries and the
 * target's dead-letter queue keep it.
 *
 * @example
 * export const handler = makeEventHandler(async (event) => {
 *   if (event.kind === 'transaction') await book(event.detail.data);
 * }, { idempotency: { tableName: process.env.IDEMPOTENCY_TABLE! } });
 */
export function makeEventHandler<R>(
  handler: EventHandler<R>,
  options: EventHandlerOptions,
): (event: unknown, context: Context) => Promise<R> {
  const once = new HandledOnce(handler, options);
  return async (event, context) => {
    once.registerLambdaContext(context);
    const received = parseEvent(event, options.parse);
    const outcome = await once.handle(received, { lambdaContext: context });
    return outcome.result;
  };
}

/**
 * Wraps `handler` into a Lambda handler for what a Custom Event Bus subscriber's Lambda target
 * receives: an array of events (`RAW` or `WITH_METADATA`), or one event. The events are handled
 * in delivery order, one after the other; the first that fails (a bad event, a refused claim
 * check, the handler throwing) stops the batch and fails the invocation, so no later event is
 * handled before it. The bus then retries the whole batch under the subscriber's retry policy
 * (those handled before are duplicates then, and skipped) and finally writes it to the
 * subscriber's dead-letter queue. Returns the handlers' results, in order.
 *
 * Use the subscriber's `REQUEST_RESPONSE` invocation type: with `EVENT`, a failure is Lambda's
 * asynchronous retry, no longer the bus's, and a FIFO subscriber's order is lost.
 *
 * @example
 * export const handler = makeEventBatchHandler(async (event) => {
 *   if (event.kind === 'account_status') await applyStatus(event.detail.data, event.busEventGroup);
 * }, { idempotency: { tableName: process.env.IDEMPOTENCY_TABLE! } });
 */
export function makeEventBatchHandler<R>(
  handler: EventHandler<R>,
  options: EventHandlerOptions,
): (events: unknown, context: Context) => Promise<R[]> {
  const once = new HandledOnce(handler, options);
  const logger = options.logger ?? console;
  return async (input, context) => {
    once.registerLambdaContext(context);
    const items: readonly unknown[] = Array.isArray(input) ? input : [input];
    const results: R[] = [];
    for (const [index, item] of items.entries()) {
      let event: ReceivedEvent | undefined;
      try {
        event = parseEvent(item, options.parse);
        results.push((await once.handle(event, { lambdaContext: context })).result);
      } catch (error) {
        logger.error('Event not handled; the batch fails from it on, and the bus delivers it again', {
          batchIndex: index,
          batchSize: items.length,
          ...(event === undefined
            ? {}
            : { detailType: event.detailType, eventId: event.detail.id, busEventGroup: event.busEventGroup }),
          error: describeError(error),
        });
        throw error;
      }
    }
    return results;
  };
}
