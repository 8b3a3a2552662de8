/**
 * How `tail` shows an event received from the bus: one pretty line on a terminal, the event
 * itself as one NDJSON line otherwise. A Custom Event Bus subscriber delivers `WITH_METADATA`
 * (read as the subscriber kit reads it): the event is its `Data`, and the bus's group, sequence
 * number and event id are shown beside it (`bus` in NDJSON). Pure.
 */
import { type BusDelivery, busDeliveryOf, isWithMetadata } from '../subscriber/bus-delivery.ts';
import type { Terminal } from './terminal.ts';
import { paint } from './terminal.ts';

export interface ReceivedBusEvent {
  readonly id?: string;
  readonly time?: string;
  readonly source?: string;
  readonly 'detail-type'?: string;
  readonly detail?: unknown;
}

/** One delivered event: the envelope as published, and the bus's metadata when it came `WITH_METADATA`. */
export interface TailedEvent {
  readonly event: ReceivedBusEvent;
  readonly bus?: BusDelivery;
}

/** A queue message's body as `tail` shows it; a body it cannot read is shown as it came. */
export function readDelivered(body: string): TailedEvent {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { event: { detail: body } };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { event: { detail: value } };
  const payload = value as Record<string, unknown>;
  if (!isWithMetadata(payload)) return { event: payload as ReceivedBusEvent };
  let bus: BusDelivery | undefined;
  try {
    bus = busDeliveryOf(payload);
  } catch {
    // Metadata the kit would refuse is still worth seeing: the event is shown without it.
    bus = undefined;
  }
  const data = payload.Data;
  const event = (typeof data === 'object' && data !== null ? data : { detail: data }) as ReceivedBusEvent;
  return bus === undefined ? { event } : { event, bus };
}

/** `bus` in NDJSON: the kit's fields without their `bus` prefix. */
function busJson(bus: BusDelivery): Record<string, string> {
  return {
    ...(bus.busEventGroup === undefined ? {} : { eventGroup: bus.busEventGroup }),
    ...(bus.busSequenceNumber === undefined ? {} : { sequenceNumber: bus.busSequenceNumber }),
    ...(bus.busEventId === undefined ? {} : { eventId: bus.busEventId }),
    ...(bus.busDeliveryType === undefined ? {} : { deliveryType: bus.busDeliveryType }),
  };
}

export function renderBusEvent(delivered: TailedEvent, terminal: Terminal, json = false): string {
  const { event, bus } = delivered;
  if (json || !terminal.stdoutIsTerminal)
    return `${JSON.stringify(bus === undefined ? event : { ...event, bus: busJson(bus) })}\n`;
  const colors = paint(terminal);
  const detail = (typeof event.detail === 'object' && event.detail !== null ? event.detail : {}) as Record<
    string,
    unknown
  >;
  const sequence = detail.sequence_number === undefined ? '' : ` #${String(detail.sequence_number)}`;
  const onBus =
    bus === undefined
      ? ''
      : ` ${colors.dim(`[group ${bus.busEventGroup ?? '-'} · bus #${bus.busSequenceNumber ?? '?'}]`)}`;
  const data = JSON.stringify(detail.data ?? detail);
  const shown = data.length > 160 ? `${data.slice(0, 157)}...` : data;
  return `${colors.dim(event.time ?? '')} ${colors.cyan(event['detail-type'] ?? '?')}${colors.bold(sequence)} ${colors.dim(String(detail.id ?? event.id ?? ''))}${onBus}\n  ${shown}\n`;
}
