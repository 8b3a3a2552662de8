/**
 * The wire shape of an event in a poll response (`GET /events`, `GET /event/...`): sequence number
 * as an integer, type in upper case. The stream shape is derived from it in `sse.ts`.
 */
export interface RawEvent {
  /** UUID. */
  readonly id: string;
  /** UUID of the program the event belongs to. */
  readonly program_id: string;
  /** Per program, starting at 1, strictly increasing by 1. */
  readonly sequence_number: number;
  /** ISO 8601 with milliseconds and an explicit offset, e.g. `2026-11-22T01:02:03.456+00:00`. */
  readonly created_dt: string;
  /** Upper case, e.g. `ACCOUNT_STATUS`. */
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/**
 * Formats epoch milliseconds the way the service does: fractional seconds and a numeric UTC
 * offset rather than `Z`, so parsers that only handle `Z` are caught by the tests.
 */
export function formatTimestamp(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/Z$/, '+00:00');
}

/** Freezes a JSON-like value all the way down, so callers of `events()` cannot rewrite history. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Texts of `data` given as text: values that a JSON round trip would change. */
const dataTexts = new WeakMap<RawEvent, string>();

/**
 * Gives `event` an exact wire form whose `data` is `dataText` as written (big integers, decimals
 * with trailing zeros, exponents, escapes), so tests can check that they arrive unchanged.
 */
export function setDataText(event: RawEvent, dataText: string): void {
  dataTexts.set(event, dataText);
}

/** The event's `data` as the service writes it. */
export function dataWireText(event: RawEvent): string {
  return dataTexts.get(event) ?? JSON.stringify(event.data);
}

/** The event as the service writes it in a poll answer or a lookup: `data` last, as given. */
export function wireText(event: RawEvent): string {
  const dataText = dataTexts.get(event);
  if (dataText === undefined) return JSON.stringify(event);
  const { data: _parsed, ...fields } = event;
  return `${JSON.stringify(fields).slice(0, -1)},"data":${dataText}}`;
}
