/**
 * A Lambda handler for events delivered one at a time: a Lambda target of an EventBridge rule, or
 * a Lambda task of a Step Functions state machine whose input is the event. Parses, resolves a
 * pointer, and runs the subscriber's handler once per event (`HandledOnce`).
 */
import type { Context } from 'aws-lambda';
import { type ParseOptions, parseEvent } from './event-parser.ts';
import { type EventHandler, HandledOnce, type HandledOnceOptions } from './handled-once.ts';

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
