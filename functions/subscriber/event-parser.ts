/**
 * Turns what a subscriber receives into a typed event: an EventBridge event as a Lambda target or
 * a Step Functions execution gets it (an object), the body of an SQS message (JSON text), or an
 * SQS record. The envelope and the detail are validated against the event JSON Schema, the one
 * the registry holds; the first problem throws an `EventValidationError` naming the field.
 */

import { detailDefinitionName } from '../event-schema/event-json-schema.ts';
import type { EventEnvelope } from '../event-schema/event-types.generated.ts';
import { EventValidationError, UnsafeIntegerError } from './errors.ts';
import { validateDefinition } from './schema-validator.ts';
import type { ClaimCheckedEvent, ReceivedEvent, SubscriberEvent } from './subscriber-events.ts';
import { findUnsafeInteger } from './unsafe-integers.ts';

export interface ParseOptions {
  /**
   * The `source` the events must have; an event from any other source is refused (a shared bus,
   * a rule wider than meant).
   *
   * @default - any source
   */
  readonly source?: string;
}

/** The detail-types with a kind of their own; any other is `unknown`. */
const KINDS = new Set(['account_status', 'transaction', 'invalid_event']);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJson(text: string, field: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new EventValidationError(
      `${field} is not JSON: ${error instanceof Error ? error.message : String(error)}`,
      field,
      {},
      error,
    );
  }
}

/** Whether `value` looks like a record of an SQS event (what a Lambda gets from an event source mapping). */
function isSqsRecord(value: Record<string, unknown>): boolean {
  return typeof value.body === 'string' && (value.eventSource === 'aws:sqs' || 'messageId' in value);
}

/** The EventBridge event inside `input`, whichever of the accepted forms it came in. */
function envelopeOf(input: unknown): Record<string, unknown> {
  let value = input;
  if (typeof value === 'string') value = parseJson(value, 'body');
  else if (isObject(value) && Array.isArray(value.Records)) {
    throw new EventValidationError(
      'event is a batch (it has Records), not one event: parse each record, or use makeSqsBatchHandler',
      'Records',
    );
  } else if (isObject(value) && isSqsRecord(value)) value = parseJson(value.body as string, 'body');
  if (!isObject(value)) {
    throw new EventValidationError(
      'event must be an EventBridge event: an object, its JSON text or an SQS record holding it',
      'event',
    );
  }
  return value;
}

function refuseUnsafeIntegers(detail: unknown, context: Record<string, string>): void {
  const field = findUnsafeInteger(detail, 'detail');
  if (field !== undefined) throw new UnsafeIntegerError(field, context);
}

/**
 * The complete event of `detailType` with `detail`: validated against that type's schema.
 * (Also how a claim-check body becomes an event, once read.)
 */
export function completeEvent(
  envelope: EventEnvelope,
  detailType: string,
  detail: unknown,
  claimCheck?: SubscriberEvent['claimCheck'],
): SubscriberEvent {
  validateDefinition(detail, detailDefinitionName(detailType), 'detail');
  const kind = KINDS.has(detailType) ? detailType : 'unknown';
  const fields = detail as { id?: unknown; type?: unknown };
  if (kind === 'unknown' && fields.type !== detailType) {
    throw new EventValidationError(
      `detail.type must be the detail-type ${JSON.stringify(detailType)}, got ${JSON.stringify(fields.type)}`,
      'detail.type',
    );
  }
  refuseUnsafeIntegers(detail, { detailType, eventId: typeof fields.id === 'string' ? fields.id : '' });
  return {
    kind,
    detailType,
    detail,
    envelope,
    ...(claimCheck === undefined ? {} : { claimCheck }),
  } as SubscriberEvent;
}

/**
 * Validates an incoming event and returns it typed, or the claim-check pointer that stands for
 * it (`kind: 'claim_check'`; `ClaimCheckResolver` fetches the event).
 *
 * @throws EventValidationError naming the field, when the input is not an event of the poller
 * @throws UnsafeIntegerError when it holds an integer a JavaScript number cannot represent exactly
 *
 * @example
 * const event = parseEvent(record.body, { source: 'banking.events' });
 * if (event.kind === 'transaction') console.log(event.detail.data.amount);
 */
export function parseEvent(input: unknown, options: ParseOptions = {}): ReceivedEvent {
  const value = envelopeOf(input);
  validateDefinition(value, 'EventEnvelope', '');
  const envelope = value as unknown as EventEnvelope;
  if (options.source !== undefined && envelope.source !== options.source) {
    throw new EventValidationError(
      `source must be ${JSON.stringify(options.source)}, got ${JSON.stringify(envelope.source)}`,
      'source',
    );
  }
  const detailType = envelope['detail-type'];
  const { detail } = envelope;
  if (isObject(detail) && Object.hasOwn(detail, 'claim_check'))
    return pointerEvent(envelope, detailType, detail);
  return completeEvent(envelope, detailType, detail);
}

function pointerEvent(
  envelope: EventEnvelope,
  detailType: string,
  detail: Record<string, unknown>,
): ClaimCheckedEvent {
  validateDefinition(detail, 'ClaimCheckPointerDetail', 'detail');
  const pointer = detail as unknown as ClaimCheckedEvent['detail'];
  if (pointer.type !== detailType) {
    throw new EventValidationError(
      `detail.type of a claim-check pointer must be its detail-type ${JSON.stringify(detailType)}, got ${JSON.stringify(pointer.type)}`,
      'detail.type',
    );
  }
  refuseUnsafeIntegers(detail, { detailType, eventId: pointer.id });
  return { kind: 'claim_check', detailType, detail: pointer, envelope };
}
