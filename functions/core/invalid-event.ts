/**
 * Quarantine for bad events: an event of a well-formed poll answer that fails validation (no `id`,
 * no `sequence_number`, no `type`, a field of the wrong type, not an object at all) is not dropped
 * and does not stop the feed. It becomes an event of its own, published with the detail-type
 * `invalid_event`, carrying the event's text exactly as received and the validation error, so a
 * quarantine queue receives it and a person can repair it by hand.
 *
 * Where it sits in the sequence (its *position*, the number the checkpoint treats it under):
 *
 * - its own `sequence_number` when that is usable (a non-negative integer, or a numeric string);
 * - otherwise just after the cursor the answer was polled from (`checkpoint + 1`, `0` when there
 *   is none). The answer holds only events after the cursor, so its true number is at least that:
 *   the checkpoint cannot pass the cursor until the `invalid_event` is accepted, and so can never
 *   move past the bad event while it is unpublished, whatever order the page came in.
 *
 * The checkpoint passes a position only once every event tracked there, the invalid one included,
 * was accepted by the bus (`CheckpointTracker` lets two events share a number). So a bad event
 * never lets the checkpoint skip a valid one, and never wedges the feed: once its `invalid_event`
 * is accepted the checkpoint moves on. An unnumbered one that the feed keeps sending (it is the
 * newest event) is published again at each new cursor until the feed moves past it: duplicates in
 * the quarantine queue, bounded by the numbers between the cursor and its own.
 */
import { createHash } from 'node:crypto';
import type { BankingEvent, EventText } from './banking-event.ts';
import type { BusEntryRules } from './bus-entry-rules.ts';
import type { PollerError } from './errors.ts';
import { isJsonObject } from './json-object.ts';
import { compactText, nestingDepth } from './json-text.ts';

/** The detail-type of every quarantined event; the construct routes it to the quarantine queue. */
export const INVALID_EVENT_TYPE = 'invalid_event';

export interface InvalidEventOptions {
  /** Its own sequence number when usable, else `null` (placed later by `placeInvalidEvent`). */
  readonly sequenceNumber: number | null;
  /** When the answer arrived (epoch ms): the event's time when its `created_dt` is unusable. */
  readonly receivedAt: number;
  /** What the bus accepts: `raw` goes as JSON only when the bus processes it one level deeper. */
  readonly rules: BusEntryRules;
}

/** The provisional number of an event without a usable one, before `placeInvalidEvent`: first in its page. */
const UNPLACED = -1;

/**
 * The event's `sequence_number` when it can be read as one (what `parseSequenceNumber` accepts),
 * else `null`. Never throws: it looks at a value that already failed validation.
 */
export function usableSequenceNumber(raw: unknown, parse: (value: unknown) => number): number | null {
  if (!isJsonObject(raw) || raw.sequence_number === undefined) return null;
  try {
    return parse(raw.sequence_number);
  } catch {
    return null;
  }
}

/**
 * The `invalid_event` for an event that failed validation. Its detail:
 *
 * ```json
 * {"id": "<the event's id, or null>", "program_id": "<or null>", "sequence_number": 17 | null,
 *  "position": 17, "received_at": "2026-11-23T10:00:00.000Z",
 *  "error": {"code": "PAYLOAD_INVALID", "message": "GET /events (HTTP 200): data[3].type must be …", "field": "data[3].type"},
 *  "fingerprint": "<sha256 hex of raw>", "raw": <the event exactly as received>}
 * ```
 *
 * `error.code` says what failed: `PAYLOAD_INVALID` (its shape), `EVENT_UNPUBLISHABLE` (the bus
 * would refuse it), `EVENT_UNPROCESSABLE` (a `RangeError` its shape caused). An event nested too
 * deeply for the bus, or that is not JSON at all (`page-recovery.ts`), cannot be spliced in as
 * JSON: its `raw` is then its text as a JSON string, and `"raw_is_text": true` says so.
 *
 * Its `id` (what the cycle de-duplicates a page on) is derived from the text, never the bank's
 * id: a broken copy must not displace a valid event with the same id.
 */
export function invalidEvent(
  source: EventText,
  error: PollerError,
  options: InvalidEventOptions,
): BankingEvent {
  const raw = source.value;
  // No value: text `JSON.parse` refused (`page-recovery.ts`), kept exactly as it came.
  const unparsed = raw === undefined;
  const rawText = unparsed
    ? source.text.slice(source.span.start, source.span.end)
    : compactText(source.text, source.span);
  const fingerprint = createHash('sha256').update(rawText).digest('hex');
  const field = typeof error.context.field === 'string' ? error.context.field : 'event';
  const record = isJsonObject(raw) ? raw : {};
  const ownId = nonEmptyString(record.id);
  const programId = nonEmptyString(record.program_id);
  const createdDt = nonEmptyString(record.created_dt);
  const receivedAt = new Date(options.receivedAt).toISOString();
  const position = options.sequenceNumber ?? UNPLACED;
  const detail = [
    `"id":${JSON.stringify(ownId)}`,
    `"program_id":${JSON.stringify(programId)}`,
    `"sequence_number":${JSON.stringify(options.sequenceNumber)}`,
    `"position":${position}`,
    `"received_at":${JSON.stringify(receivedAt)}`,
    `"error":${JSON.stringify({ code: error.code, message: error.message, field })}`,
    `"fingerprint":"${fingerprint}"`,
    // Spliced as text: the event goes to quarantine exactly as the bank sent it. Within `raw` it
    // sits one level deeper than it came: beyond the bus's depth, it goes as a string.
    ...(!unparsed && nestingDepth(source.text, source.span) < options.rules.maxDetailDepth
      ? [`"raw":${rawText}`]
      : [`"raw_is_text":true`, `"raw":${JSON.stringify(rawText)}`]),
  ];
  return {
    id: `invalid-${fingerprint.slice(0, 32)}`,
    program_id: programId ?? '',
    sequence_number: position,
    created_dt: createdDt !== null && !Number.isNaN(Date.parse(createdDt)) ? createdDt : receivedAt,
    type: INVALID_EVENT_TYPE,
    data: {},
    detail: `{${detail.join(',')}}`,
    invalid: { message: error.message, field, sequenceNumber: options.sequenceNumber, fingerprint },
  };
}

function nonEmptyString(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** Whether `event` is a quarantined event still waiting for its position (it had no usable number). */
export function isUnplaced(event: BankingEvent): boolean {
  return (
    event.invalid !== undefined && event.invalid.sequenceNumber === null && event.sequence_number === UNPLACED
  );
}

/**
 * The quarantined `event` placed just after `cursor` (see the module comment); any other event as
 * it is.
 */
export function placeInvalidEvent(event: BankingEvent, cursor: number | null): BankingEvent {
  if (!isUnplaced(event)) return event;
  const position = cursor === null ? 0 : cursor + 1;
  return {
    ...event,
    sequence_number: position,
    // The only member written from the position; `raw` comes after it.
    detail: event.detail.replace(`"position":${UNPLACED},`, `"position":${position},`),
  };
}
