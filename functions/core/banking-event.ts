/**
 * The event as the poller works with it, the types every other module shares: kept apart from
 * the parsing (`event-model.ts`) and the quarantine (`invalid-event.ts`), which both need them.
 */
import type { Span } from './json-text.ts';

/** The two types the interface documents; the list grows, so any other lower-case string is valid too. */
export const KNOWN_EVENT_TYPES = ['account_status', 'transaction'] as const;
export type KnownEventType = (typeof KNOWN_EVENT_TYPES)[number];

/**
 * An event as we publish it. The fields are the parsed view the poller works with (numbers in
 * `data` are JavaScript numbers, so possibly rounded: never publish them); `detail` is what is
 * published: the bank's own JSON text with only the documented normalizations.
 */
export interface BankingEvent {
  readonly id: string;
  readonly program_id: string;
  readonly sequence_number: number;
  readonly created_dt: string;
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
  /**
   * The event's JSON text as received, with `sequence_number` as a number and `type` in lower
   * case; every other token (numbers digit for digit, strings with their escapes) as sent, only
   * the whitespace between tokens dropped.
   */
  readonly detail: string;
  /**
   * Set on an event that failed validation and is published as `invalid_event` instead
   * (`invalid-event.ts`): why, and the number it had. Absent on every valid event.
   */
  readonly invalid?: InvalidEventInfo;
}

/** One event as it arrived: its parsed value, and where its text is in the document it came in. */
export interface EventText {
  readonly value: unknown;
  readonly text: string;
  readonly span: Span;
}

/** One answer of the feed. `events` are normalized, in ascending sequence order. */
export interface FeedPage {
  readonly events: readonly BankingEvent[];
  /** The cursor the upstream suggests; informational only, the checkpoint never follows it blindly. */
  readonly lastSequenceNumber: number | null;
  /**
   * The poll ended with 408 or 504: something between us and the service gave up waiting. That is
   * not "no new events": during an outage a gateway answers this way at once, every time.
   */
  readonly timedOut?: boolean;
  /** The page size the request asked for (`limit`), when the feed asked for one. */
  readonly asked?: number;
  /**
   * The body was longer than the feed reads at once: `events` are the ones complete in its first
   * `bytesRead` bytes (`page-prefix.ts`), and the rest is asked for again after them.
   */
  readonly cut?: { readonly bytesRead: number };
}

/** Why an event was quarantined; `BankingEvent.invalid` is set on quarantined events only. */
export interface InvalidEventInfo {
  /** The validation error's message, naming the answer and the field (`GET /events (HTTP 200): data[3].id …`). */
  readonly message: string;
  /** The offending field's path in the answer, e.g. `data[3].sequence_number`. */
  readonly field: string;
  /** The event's own sequence number when usable; `null` when it had none the poller could read. */
  readonly sequenceNumber: number | null;
  /** SHA-256 of the event's text as received (whitespace between tokens dropped). */
  readonly fingerprint: string;
}
