/**
 * Turns what a subscriber receives into a typed event: an EventBridge event as a Lambda target or
 * a Step Functions execution gets it (an object), the body of an SQS message (JSON text), or an
 * SQS record; from a classic bus's rule or a Custom Event Bus subscriber alike (`RAW` or
 * `WITH_METADATA`, see `bus-delivery.ts`), and the array a custom bus's Lambda target receives
 * (`parseEvents`). The envelope and the detail are validated against the event JSON Schema, the
 * one the registry holds; the first problem throws an `EventValidationError` naming the field.
 */

import { detailDefinitionName } from '../event-schema/event-json-schema.ts';
import type { EventEnvelope } from '../event-schema/event-types.generated.ts';
import { type BusDelivery, busDeliveryOf, isWithMetadata } from './bus-delivery.ts';
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

/** The EventBridge event inside `input`, whichever of the accepted forms it came in, and the bus's metadata around it. */
function envelopeOf(input: unknown): { readonly value: Record<string, unknown>; readonly bus: BusDelivery } {
  let value = input;
  if (typeof value === 'string') value = parseJson(value, 'body');
  else if (Array.isArray(value)) {
    throw new EventValidationError(
      'event is a batch (an array, as a Custom Event Bus delivers to a Lambda target), not one event: use parseEvents, or makeEventBatchHandler',
      'event',
    );
  } else if (isObject(value) && Array.isArray(value.Records)) {
    throw new EventValidationError(
      'event is a batch (it has Records), not one event: parse each record, or use makeSqsBatchHandler',
      'Records',
    );
  } else if (isObject(value) && isSqsRecord(value)) value = parseJson(value.body as string, 'body');
  let bus: BusDelivery = {};
  if (isObject(value) && isWithMetadata(value)) {
    bus = busDeliveryOf(value);
    value = value.Data;
  }
  if (!isObject(value)) {
    throw new EventValidationError(
      'event must be an EventBridge event: an object, its JSON text, an SQS record holding it, or a Custom Event Bus delivery WITH_METADATA around it',
      'event',
    );
  }
  return { value, bus };
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
  bus: BusDelivery = {},
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
    ...bus,
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
  const { value, bus } = envelopeOf(input);
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
    return pointerEvent(envelope, detailType, detail, bus);
  return completeEvent(envelope, detailType, detail, undefined, bus);
}

/**
 * The events of what a Custom Event Bus subscriber's Lambda target receives: an array, one
 * element per event in delivery order (each `RAW` or `WITH_METADATA`), or one event (a
 * subscriber with `MaxBatchSize` 1, or a classic rule's target).
 *
 * @throws EventValidationError or UnsafeIntegerError for the first element that is not an event of the poller
 *
 * @example
 * for (const event of parseEvents(lambdaInput, { source: 'banking.events' })) console.log(event.busEventGroup);
 */
export function parseEvents(input: unknown, options: ParseOptions = {}): ReceivedEvent[] {
  return Array.isArray(input) ? input.map((item) => parseEvent(item, options)) : [parseEvent(input, options)];
}

function pointerEvent(
  envelope: EventEnvelope,
  detailType: string,
  detail: Record<string, unknown>,
  bus: BusDelivery,
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
  return { kind: 'claim_check', detailType, detail: pointer, envelope, ...bus };
}
