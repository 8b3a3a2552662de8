import type { BankingEvent, EventText, FeedPage } from './banking-event.ts';
import type { BusEntryRules } from './bus-entry-rules.ts';
import {
  EventUnprocessableError,
  EventUnpublishableError,
  PayloadValidationError,
  type PollerError,
} from './errors.ts';
import { invalidEvent, isUnplaced, placeInvalidEvent, usableSequenceNumber } from './invalid-event.ts';
import { isJsonObject } from './json-object.ts';
import {
  compactText,
  elementSpans,
  type JsonDocument,
  memberSpan,
  memberSpans,
  nestingDepth,
  rootSpan,
} from './json-text.ts';
import { isRecoveredPage, type RecoveredPage, unreadableEntry } from './page-recovery.ts';

/** An event that exists only as a value (tests, a payload built in code): its text is its JSON. */
export function eventTextOf(value: unknown): EventText {
  const text = JSON.stringify(value) ?? 'null';
  return { value, text, span: { start: 0, end: text.length } };
}

/** Where a payload came from, so a validation error can name it. */
export interface PayloadOrigin {
  /** e.g. `GET /events` */
  readonly source: string;
  readonly status?: number;
  /** When the answer arrived (epoch ms), for events quarantined without a usable time. @default Date.now() */
  readonly receivedAt?: number;
}

function describe(origin: PayloadOrigin): string {
  return origin.status === undefined ? origin.source : `${origin.source} (HTTP ${origin.status})`;
}

/** A short rendering of the offending value, never a whole payload; one too deep to stringify is named. */
function preview(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? 'undefined';
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return Array.isArray(value) ? '[…] (too deeply nested to show)' : '{…} (too deeply nested to show)';
  }
  return text.length <= 80 ? text : `${text.slice(0, 77)}...`;
}

/** Refuses what the bus would refuse (`BusEntryRules`): the event is quarantined with the reason. */
function refuse(origin: PayloadOrigin, field: string, problem: string): never {
  const context = { source: origin.source, status: origin.status, field };
  throw new EventUnpublishableError(`${describe(origin)}: ${field} ${problem}`, context);
}

function fail(origin: PayloadOrigin, field: string, expected: string, got: unknown): never {
  const shown = preview(got);
  throw new PayloadValidationError(`${describe(origin)}: ${field} must be ${expected}, got ${shown}`, {
    source: origin.source,
    status: origin.status,
    field,
  });
}

/**
 * Sequence numbers arrive as integers in poll responses and as strings in stream payloads.
 * Both become a safe integer; anything else is rejected rather than guessed at.
 */
export function parseSequenceNumber(value: unknown, origin: PayloadOrigin, field: string): number {
  let parsed: number | undefined;
  if (typeof value === 'number') parsed = value;
  else if (typeof value === 'string' && /^\s*\d+\s*$/.test(value)) parsed = Number(value);
  if (parsed === undefined || !Number.isSafeInteger(parsed) || parsed < 0) {
    return fail(origin, field, 'a non-negative integer or a numeric string', value);
  }
  return parsed;
}

function requireString(
  raw: Record<string, unknown>,
  key: string,
  origin: PayloadOrigin,
  path: string,
): string {
  const value = raw[key];
  if (typeof value !== 'string' || value.length === 0)
    return fail(origin, `${path}.${key}`, 'a non-empty string', value);
  return value;
}

/**
 * Validates one raw event and returns it normalized; `path` names it in errors, e.g. `data[3]`. What
 * the bus would refuse by `rules` is refused too (`EventUnpublishableError`), so that it is quarantined.
 */
export function normalizeEvent(
  source: EventText,
  origin: PayloadOrigin,
  rules: BusEntryRules,
  path = 'event',
): BankingEvent {
  const raw = source.value;
  // Measured on the text, before anything that recurses over the value (a preview, a copy).
  const depth = nestingDepth(source.text, source.span);
  if (depth > rules.maxDetailDepth) {
    refuse(
      origin,
      path,
      `nests arrays and objects ${depth} levels deep; ${rules.busName} processes at most ${rules.maxDetailDepth}`,
    );
  }
  if (!isJsonObject(raw)) return fail(origin, path, 'an object', raw);
  const id = requireString(raw, 'id', origin, path);
  const programId = requireString(raw, 'program_id', origin, path);
  const createdDt = requireString(raw, 'created_dt', origin, path);
  if (Number.isNaN(Date.parse(createdDt))) {
    fail(origin, `${path}.created_dt`, 'an ISO 8601 timestamp', createdDt);
  }
  const type = requireString(raw, 'type', origin, path).toLowerCase();
  const typeProblem = rules.detailTypeProblem(type);
  if (typeProblem !== undefined) refuse(origin, `${path}.type`, typeProblem);
  const data = raw.data;
  if (!isJsonObject(data)) return fail(origin, `${path}.data`, 'an object', data);
  const sequenceNumber = parseSequenceNumber(raw.sequence_number, origin, `${path}.sequence_number`);
  return {
    id,
    program_id: programId,
    sequence_number: sequenceNumber,
    created_dt: createdDt,
    type,
    data,
    detail: eventDetail(source, id, sequenceNumber, type),
  };
}

/**
 * The event's text with `sequence_number` and `type` rewritten to their normalized values and
 * every other member's value token for token as received. Its `id` is checked against the parsed
 * one: text that does not belong to this event must never be published in its name.
 */
function eventDetail({ text, span }: EventText, id: string, sequenceNumber: number, type: string): string {
  let idSeen = false;
  const members = memberSpans(text, span).map(({ key, keyToken, value }) => {
    let valueText: string;
    if (key === 'sequence_number') valueText = String(sequenceNumber);
    else if (key === 'type') valueText = JSON.stringify(type);
    else valueText = compactText(text, value);
    if (key === 'id') idSeen = JSON.parse(valueText) === id;
    return `${text.slice(keyToken.start, keyToken.end)}:${valueText}`;
  });
  if (!idSeen) throw new Error(`Internal error: the text located for event ${id} is another event's`);
  return `{${members.join(',')}}`;
}

/**
 * One event's own failure, which quarantines it: invalid, refused by the bus, or a `RangeError`
 * its shape caused (named so, never a network failure). Anything else is rethrown: not its fault.
 */
export function eventFailure(error: unknown, origin: PayloadOrigin, path: string): PollerError {
  if (error instanceof PayloadValidationError || error instanceof EventUnpublishableError) return error;
  if (error instanceof RangeError) {
    return new EventUnprocessableError(
      `${describe(origin)}: ${path} could not be processed: ${error.name}: ${error.message}`,
      { source: origin.source, status: origin.status, field: path, errorName: error.name },
      error,
    );
  }
  throw error;
}

/**
 * Parses the JSON body of `GET /events`: `{ data: Event[], last_sequence_number, limit }`. A body
 * that is not that shape is refused (`PayloadValidationError`); an event inside it that fails
 * validation is not: it becomes an `invalid_event` (see `invalid-event.ts` for the number the
 * checkpoint treats it under; one without a usable number is placed by `selectNewEvents`), so
 * one bad event neither blocks the feed nor goes missing. `rules`: what the bus accepts.
 */
export function parsePollResponse(
  document: JsonDocument | RecoveredPage,
  origin: PayloadOrigin,
  rules: BusEntryRules,
): FeedPage {
  const body = document.value;
  if (!isJsonObject(body)) return fail(origin, 'body', 'a JSON object', body);
  // A missing `data` is not "no events": it is an answer we do not understand (a proxy's page, an API change).
  const data = body.data;
  if (!Array.isArray(data)) return fail(origin, 'data', 'an array of events', data);
  const cursor = body.last_sequence_number;
  const lastSequenceNumber =
    cursor === undefined || cursor === null
      ? null
      : parseSequenceNumber(cursor, origin, 'last_sequence_number');
  const { text } = document;
  const spans = elementSpans(text, memberSpan(text, rootSpan(text), 'data')!);
  const readSequence = (value: unknown) => parseSequenceNumber(value, origin, 'sequence_number');
  type Entry =
    | { readonly event: BankingEvent }
    | {
        readonly source: EventText;
        readonly error: PollerError;
        readonly sequenceNumber: number | null;
      };
  const entries = data.map((raw, index): Entry => {
    const unreadable = isRecoveredPage(document) ? document.unreadableEvents.get(index) : undefined;
    if (unreadable !== undefined) return unreadableEntry(unreadable, index, origin);
    const source: EventText = { value: raw, text, span: spans[index]! };
    try {
      return { event: normalizeEvent(source, origin, rules, `data[${index}]`) };
    } catch (error) {
      const failure = eventFailure(error, origin, `data[${index}]`);
      return { source, error: failure, sequenceNumber: usableSequenceNumber(raw, readSequence) };
    }
  });
  const events = entries.map((entry) =>
    'event' in entry
      ? entry.event
      : invalidEvent(entry.source, entry.error, {
          sequenceNumber: entry.sequenceNumber,
          receivedAt: origin.receivedAt ?? Date.now(),
          rules,
        }),
  );
  // Stable: events sharing a number keep their order; quarantined ones without a number come first,
  // to be placed just after the cursor (`selectNewEvents`).
  events.sort((a, b) => a.sequence_number - b.sequence_number);
  return { events, lastSequenceNumber };
}

/**
 * The event in the body of a single-event lookup, whose shape is not documented: the event
 * itself, `{ data: event }` or `{ data: [event] }`.
 */
export function singleEventText(document: JsonDocument): EventText {
  const { text, value } = document;
  const root = rootSpan(text);
  if (!isJsonObject(value) || typeof value.id === 'string') return { value, text, span: root };
  if (isJsonObject(value.data)) return { value: value.data, text, span: memberSpan(text, root, 'data')! };
  if (Array.isArray(value.data) && value.data.length === 1) {
    const [only] = elementSpans(text, memberSpan(text, root, 'data')!);
    return { value: value.data[0], text, span: only! };
  }
  return { value, text, span: root };
}

/** An event's place in the feed: one id at two numbers is two events (`cycle/reused-id-watch.ts`). */
function feedPosition(event: BankingEvent): string {
  return `${event.sequence_number}:${event.id}`;
}

/**
 * Drops what must not be published again: events at or below the checkpoint, and an event seen
 * twice in one page (same id, same number: the first occurrence wins). Order is kept. A
 * quarantined event without a usable number is placed just after the checkpoint
 * (`invalid-event.ts`), so it is always kept.
 */
export function selectNewEvents(events: readonly BankingEvent[], checkpoint: number | null): BankingEvent[] {
  const seen = new Set<string>();
  const fresh: BankingEvent[] = [];
  for (const given of events) {
    // A quarantined event without a number sits just after the cursor: never below the checkpoint.
    const event = placeInvalidEvent(given, checkpoint);
    if (checkpoint !== null && event.sequence_number <= checkpoint) continue;
    const position = feedPosition(event);
    if (seen.has(position)) continue;
    seen.add(position);
    fresh.push(event);
  }
  return fresh;
}

/**
 * What `selectNewEvents` leaves out for being at or below the checkpoint: late events (a number
 * filled in after the checkpoint passed it) and events sent again. An event repeated in the page
 * (same id, same number) counts once.
 */
export function selectLateEvents(events: readonly BankingEvent[], checkpoint: number | null): BankingEvent[] {
  if (checkpoint === null) return [];
  const seen = new Set<string>();
  return events.filter((event) => {
    if (isUnplaced(event) || event.sequence_number > checkpoint) return false;
    const position = feedPosition(event);
    if (seen.has(position)) return false;
    seen.add(position);
    return true;
  });
}

/** A run of sequence numbers the feed skipped: `from` to `to`, both inclusive. */
export interface SequenceGap {
  readonly from: number;
  readonly to: number;
}

/**
 * Sequence numbers missing between the checkpoint and the events (ascending), and between the
 * events themselves. The feed is documented as ordered, not as gap-free, so gaps are reported for
 * the person on call (and gap repair through `/event/sequence/:n`), not treated as errors.
 */
export function findSequenceGaps(after: number | null, events: readonly BankingEvent[]): SequenceGap[] {
  const gaps: SequenceGap[] = [];
  let previous = after;
  for (const { sequence_number: sequence } of events) {
    if (previous !== null && sequence > previous + 1) gaps.push({ from: previous + 1, to: sequence - 1 });
    previous = sequence;
  }
  return gaps;
}
