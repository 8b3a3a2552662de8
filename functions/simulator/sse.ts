/**
 * Server-Sent Events framing for `GET /events/stream`, as pure functions (no I/O), so the wire
 * format can be tested without a socket.
 */
import type { RawEvent } from './raw-event.ts';

/** Backlog events per message: big enough to replay quickly, small enough to keep messages modest. */
export const SSE_BATCH_SIZE = 50;

/** Every 15 s, so proxies and clients with idle timeouts keep a quiet stream open. */
export const SSE_HEARTBEAT_MS = 15_000;

/** An event as the stream carries it: the sequence number is a string, and `data.type` repeats the type. */
export interface StreamEvent extends Omit<RawEvent, 'sequence_number' | 'data'> {
  readonly sequence_number: string;
  readonly data: Readonly<Record<string, unknown>> & { readonly type: string };
}

/**
 * The stream shape of an event. The interface says the inner `data` carries `type` with the
 * lower-case event type; for transactions that shadows the transaction's own `data.type`
 * (card, fee...), exactly as the interface describes, so a stream consumer cannot see it.
 */
export function toStreamEvent(event: RawEvent): StreamEvent {
  return {
    ...event,
    sequence_number: String(event.sequence_number),
    data: { ...event.data, type: event.type.toLowerCase() },
  };
}

/**
 * One SSE message for a non-empty batch: `id` is the highest sequence number in it, the cursor a
 * client resumes from. JSON.stringify escapes newlines, so the payload always fits one data line.
 */
export function formatEventMessage(events: readonly RawEvent[]): string {
  const last = events.at(-1);
  if (last === undefined) throw new RangeError('An SSE message needs at least one event');
  return `id: ${last.sequence_number}\ndata: ${JSON.stringify(events.map(toStreamEvent))}\n\n`;
}

/** A comment line: clients ignore it, intermediaries see traffic. */
export function formatComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
}
