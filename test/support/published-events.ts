/**
 * Events exactly as the poller publishes them, made by the handler's own code (poll answer parsed
 * and normalized, quarantine, claim-check pointers), and as an EventBridge target receives them:
 * fixtures for the subscriber kit and the schema tests that cannot drift from the poller.
 */

import { CLASSIC_BUS_ENTRY_RULES } from '../../functions/adapters/aws/eventbridge-entry-rules.ts';
import type { BankingEvent } from '../../functions/core/banking-event.ts';
import { claimCheckKey, claimCheckPointer } from '../../functions/core/claim-check.ts';
import { parsePollResponse, selectNewEvents } from '../../functions/core/event-model.ts';

export const EVENT_SOURCE = 'banking.events';
export const PROGRAM_ID = '792a815a-8e8d-4e17-b712-23c27145e12e';

/** What the poller publishes for one `GET /events` answer whose body is `text` (its events after sequence 0). */
export function publishedFromText(text: string): BankingEvent[] {
  const page = parsePollResponse(
    { text, value: JSON.parse(text) },
    { source: 'GET /events', status: 200, receivedAt: Date.parse('2026-11-23T10:00:00Z') },
    CLASSIC_BUS_ENTRY_RULES,
  );
  return selectNewEvents(page.events, 0);
}

/** What the poller publishes for an answer holding `rawEvents`. */
export function published(rawEvents: readonly unknown[]): BankingEvent[] {
  return publishedFromText(JSON.stringify({ data: rawEvents, last_sequence_number: null }));
}

/** The pointer the poller publishes in place of `event` when it is too large for the bus. */
export function pointerOf(event: BankingEvent, options: { readonly bucket?: string } = {}): BankingEvent {
  return claimCheckPointer(event, { bucket: options.bucket ?? 'claim-checks', key: claimCheckKey(event) });
}

/** The EventBridge event around a published entry, as JSON text (an SQS message body) with `detail` spliced in as published. */
export function deliveredText(event: BankingEvent, options: { readonly source?: string } = {}): string {
  const envelope = JSON.stringify({
    version: '0',
    id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
    'detail-type': event.type,
    source: options.source ?? EVENT_SOURCE,
    account: '123456789012',
    time: '2026-11-23T10:00:00Z',
    region: 'eu-west-1',
    resources: [],
    detail: null,
  });
  // Spliced as text, as the bus does: the detail's numbers stay digit for digit.
  return envelope.replace('"detail":null', `"detail":${event.detail}`);
}

/** The same event as a Lambda target receives it: parsed by the runtime. */
export function delivered(
  event: BankingEvent,
  options: { readonly source?: string } = {},
): Record<string, unknown> {
  return JSON.parse(deliveredText(event, options)) as Record<string, unknown>;
}

/** A raw bank event of the documented shape (as `GET /events` carries it). */
export function rawEvent(
  sequence: number,
  type: string,
  data: Record<string, unknown>,
  id = `evt-${sequence}`,
): Record<string, unknown> {
  return {
    id,
    program_id: PROGRAM_ID,
    sequence_number: sequence,
    created_dt: '2026-11-23T09:59:59.123+00:00',
    type: type.toUpperCase(),
    data,
  };
}

/**
 * The `SystemMetadata` a Custom Event Bus subscriber delivers `WITH_METADATA` for an event the
 * poller published with `PutEvents`, in the user guide's documented shape: strings only, the bus's
 * own fields `aws:`-prefixed, the publisher's `EventGroupId` and `DeduplicationId` as sent
 * (`ContentType` is `application/eventbridge+json` for `PutEvents`).
 */
export function busSystemMetadata(
  event: BankingEvent,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    ContentType: 'application/eventbridge+json',
    'aws:EventId': 'a1b2c3d4-5678-90ab-cdef-EXAMPLE11111',
    'aws:IngestionTime': '2026-11-23T10:00:00Z',
    'aws:DeliveryType': 'LIVE',
    'aws:SequenceNumber': '10000000000000003000',
    EventGroupId: PROGRAM_ID,
    DeduplicationId: event.id,
    ...overrides,
  };
}

/** A `WITH_METADATA` delivery of `event` as JSON text (an SQS message body): `Data` is the envelope, its detail spliced as published. */
export function deliveredWithMetadataText(
  event: BankingEvent,
  systemMetadata: Record<string, unknown> = busSystemMetadata(event),
): string {
  const payload = JSON.stringify({ Data: null, SystemMetadata: systemMetadata });
  return payload.replace('"Data":null', `"Data":${deliveredText(event)}`);
}

/** The same as a Lambda target receives it: parsed by the runtime. */
export function deliveredWithMetadata(
  event: BankingEvent,
  systemMetadata: Record<string, unknown> = busSystemMetadata(event),
): Record<string, unknown> {
  return JSON.parse(deliveredWithMetadataText(event, systemMetadata)) as Record<string, unknown>;
}
