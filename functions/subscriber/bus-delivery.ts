/**
 * What a subscriber of the Custom Event Bus (EventBridge's `eventsv2`, API 2025-05-15) delivers,
 * told from what a classic rule's target gets. A subscriber's `Transformer` decides the payload
 * (user guide, "Transforming events with JSONata" and "Event structure: data, metadata, and system
 * metadata"):
 *
 * - `RAW` (the default): the published data unchanged. For events published with `PutEvents`, as
 *   the poller does, that is the classic envelope (`version`, `id`, `detail-type`, `source`,
 *   `account`, `time`, `region`, `resources`, `detail`): parsed as a classic event, without the
 *   bus's metadata.
 * - `WITH_METADATA`: `{ Data, Metadata, SystemMetadata }`, `Data` being that envelope and
 *   `SystemMetadata` the fields the bus assigns, all strings: `aws:EventId`, `aws:SequenceNumber`
 *   (ordering the event within its group; it can exceed 2^53, so it stays a string),
 *   `aws:IngestionTime`, `aws:DeliveryType` (`LIVE`, or `REPLAY` for a subscriber started from a
 *   point in time), and the publisher's own `EventGroupId` and `DeduplicationId` (no `aws:`
 *   prefix: the user guide's SQS target maps `{% $events.SystemMetadata.EventGroupId %}`).
 *   `Metadata` holds `PutRawEvents` keys only; `PutEvents` sets none.
 *
 * A Lambda target receives an array of such payloads (one element per event, even for one event),
 * or a single one when the subscriber's `MaxBatchSize` is 1; an SQS target, one payload per
 * message body.
 */
import { EventValidationError } from './errors.ts';

/** The delivery types the bus documents: a live delivery, or one of a subscriber started from a point in time. */
export const BUS_DELIVERY_TYPES = ['LIVE', 'REPLAY'] as const;
export type BusDeliveryType = (typeof BUS_DELIVERY_TYPES)[number];

/** The bus's metadata of a `WITH_METADATA` delivery, as the kit puts it on the parsed event. */
export interface BusDelivery {
  /** The event group the poller published the event in (`SystemMetadata.EventGroupId`). */
  readonly busEventGroup?: string;
  /** The bus's sequence number of the event within its group (`aws:SequenceNumber`), a decimal string. */
  readonly busSequenceNumber?: string;
  /** The bus's id of the event (`aws:EventId`); not the bank's `detail.id`. */
  readonly busEventId?: string;
  /** `LIVE`, or `REPLAY` for a subscriber started from a point in time (`aws:DeliveryType`). */
  readonly busDeliveryType?: BusDeliveryType;
}

/** The documented members the kit reads, by the name it gives them. */
const MEMBERS = {
  busEventGroup: 'EventGroupId',
  busSequenceNumber: 'aws:SequenceNumber',
  busEventId: 'aws:EventId',
  busDeliveryType: 'aws:DeliveryType',
} as const satisfies Record<keyof BusDelivery, string>;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether `value` is a `WITH_METADATA` payload: `Data` beside a `SystemMetadata` object, and no envelope of its own. */
export function isWithMetadata(value: Record<string, unknown>): boolean {
  return 'Data' in value && 'SystemMetadata' in value && !('detail-type' in value);
}

function stringMember(systemMetadata: Record<string, unknown>, name: string): string | undefined {
  const value = systemMetadata[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0) {
    throw new EventValidationError(
      `SystemMetadata.${name} must be a non-empty string, got ${JSON.stringify(value)}`,
      `SystemMetadata.${name}`,
    );
  }
  return value;
}

/** The bus's metadata of a `WITH_METADATA` payload, validated: each member a string, the delivery type a documented one. */
export function busDeliveryOf(payload: Record<string, unknown>): BusDelivery {
  const { SystemMetadata: systemMetadata } = payload;
  if (!isObject(systemMetadata)) {
    throw new EventValidationError(
      `SystemMetadata must be an object, got ${JSON.stringify(systemMetadata)}`,
      'SystemMetadata',
    );
  }
  const delivery: Record<string, string> = {};
  for (const [field, member] of Object.entries(MEMBERS)) {
    const value = stringMember(systemMetadata, member);
    if (value !== undefined) delivery[field] = value;
  }
  const sequence = delivery.busSequenceNumber;
  if (sequence !== undefined && !/^\d+$/.test(sequence)) {
    throw new EventValidationError(
      `SystemMetadata.aws:SequenceNumber must be a decimal number, got ${JSON.stringify(sequence)}`,
      'SystemMetadata.aws:SequenceNumber',
    );
  }
  const type = delivery.busDeliveryType;
  if (type !== undefined && !(BUS_DELIVERY_TYPES as readonly string[]).includes(type)) {
    throw new EventValidationError(
      `SystemMetadata.aws:DeliveryType must be one of ${BUS_DELIVERY_TYPES.join(', ')}, got ${JSON.stringify(type)}`,
      'SystemMetadata.aws:DeliveryType',
    );
  }
  return delivery as BusDelivery;
}

/** The bus's fields of `event`, to carry over to the event a claim-check pointer stands for. */
export function busFieldsOf(event: BusDelivery): BusDelivery {
  const fields: Record<string, string> = {};
  for (const field of Object.keys(MEMBERS) as (keyof BusDelivery)[]) {
    const value = event[field];
    if (value !== undefined) fields[field] = value;
  }
  return fields as BusDelivery;
}
