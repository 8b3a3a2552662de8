/**
 * Reads the messages of `GET /events/stream` into events shaped as `GET /events` gives them, so
 * the published `Detail` is the same whichever mode fetched an event. The stream payload differs
 * from the poll payload in two documented ways: `sequence_number` is a string (normalized by
 * `normalizeEvent`), and the inner `data` carries `type` with the lower-case event type.
 *
 * That inner `type` is removed where the event's own data has no field of that name (the
 * documented `account_status` data). Elsewhere it may have replaced a value of the event's own: a
 * transaction's `data.type` (card, fee, inbound...) has the same name, and a type this poller
 * does not know may have one too. Such an event is marked `needsRecovery`: the reader fetches it
 * as the poll gives it before publishing. An inner `type` that differs from the event type is the
 * event's own value, kept as it is.
 */

import type { BankingEvent } from '../banking-event.ts';
import type { BusEntryRules } from '../bus-entry-rules.ts';
import { eventFailure, normalizeEvent, type PayloadOrigin } from '../event-model.ts';
import { isJsonObject } from '../json-object.ts';
import { compactText, elementSpans, memberSpans, rootSpan, type Span } from '../json-text.ts';
import type { StreamedEvent, StreamMessage } from '../ports.ts';

/** Event types whose documented `data` has no `type` of its own: the stream's inner `type` is only the event type. */
const TYPES_WITHOUT_OWN_DATA_TYPE: ReadonlySet<string> = new Set(['account_status']);

/** An SSE message as the parser gives it. */
export interface SseMessage {
  readonly id?: string;
  readonly event?: string;
  readonly data: string;
}

/**
 * The events of one stream message. A payload that is not a JSON array of valid events gives
 * `unreadable` (never a guess): the reader then reads what the message announced with a poll,
 * which reports a payload error of its own if the service's data is broken.
 *
 * @example
 * parseStreamMessage({ id: '7', data: '[{"id":"…","sequence_number":"7",…}]' }, { source: 'GET /events/stream' }, rules);
 */
export function parseStreamMessage(
  message: SseMessage,
  origin: PayloadOrigin,
  rules: BusEntryRules,
): StreamMessage {
  const lastEventId = parseMessageId(message.id);
  const unreadable = (reason: string): StreamMessage => ({ kind: 'unreadable', lastEventId, reason });
  let value: unknown;
  try {
    value = JSON.parse(message.data);
  } catch {
    return unreadable('its data is not JSON');
  }
  const text = message.data;
  const root = rootSpan(text);
  let sources: Array<{ value: unknown; span: Span }>;
  if (Array.isArray(value)) {
    const spans = elementSpans(text, root);
    sources = value.map((element, index) => ({ value: element, span: spans[index]! }));
  } else if (isJsonObject(value)) {
    // One event on its own, not in an array: read it rather than drop it.
    sources = [{ value, span: root }];
  } else {
    return unreadable('its data is neither an array of events nor an event');
  }
  try {
    const events = sources.map(({ value: raw, span }, index) =>
      streamedEvent(normalizeEvent({ value: raw, text, span }, origin, rules, `data[${index}]`)),
    );
    events.sort((a, b) => a.event.sequence_number - b.event.sequence_number);
    return { kind: 'events', lastEventId, events };
  } catch (error) {
    // The poll that reads the message again quarantines the event (`parsePollResponse`).
    return unreadable(eventFailure(error, origin, 'data').message);
  }
}

/** The `id:` line as a sequence number; anything else (absent, not a number) as `null`. */
function parseMessageId(id: string | undefined): number | null {
  if (id === undefined || !/^\s*\d+\s*$/.test(id)) return null;
  const parsed = Number(id);
  return Number.isSafeInteger(parsed) ? parsed : null;
}

function streamedEvent(event: BankingEvent): StreamedEvent {
  const inner = event.data.type;
  if (typeof inner !== 'string' || inner.toLowerCase() !== event.type) {
    return { event, needsRecovery: false };
  }
  if (!TYPES_WITHOUT_OWN_DATA_TYPE.has(event.type)) return { event, needsRecovery: true };
  return { event: withoutDataType(event), needsRecovery: false };
}

/** The event without `data.type`, in its parsed view and in its detail text. */
function withoutDataType(event: BankingEvent): BankingEvent {
  const { type: _type, ...data } = event.data;
  const { detail } = event;
  const members = memberSpans(detail, rootSpan(detail)).map(({ key, keyToken, value }) => {
    const valueText =
      key === 'data'
        ? `{${memberSpans(detail, value)
            .filter((member) => member.key !== 'type')
            .map((member) => `${slice(detail, member.keyToken)}:${compactText(detail, member.value)}`)
            .join(',')}}`
        : slice(detail, value);
    return `${slice(detail, keyToken)}:${valueText}`;
  });
  return { ...event, data, detail: `{${members.join(',')}}` };
}

function slice(text: string, span: Span): string {
  return text.slice(span.start, span.end);
}
