/**
 * Server-Sent Events framing for `GET /events/stream`, as pure functions (no I/O), so the wire
 * format can be tested without a socket.
 */
import { dataWireText, type RawEvent } from './raw-event.ts';

/** Backlog events per message: big enough to replay quickly, small enough to keep messages modest. */
export const SSE_BATCH_SIZE = 50;

/** Every 15 s, so proxies and clients with idle timeouts keep a quiet stream open. */
export const SSE_HEARTBEAT_MS = 15_000;

/**
 * How the stream writes the inner `data.type`:
 * - `documented`: as the interface describes it, the lower-case event type, replacing a
 *   transaction's own `data.type` (card, fee...), which a stream consumer then cannot see;
 * - `type-preserved`: an event's own `data.type` is kept, the event type is added only where the
 *   data has none (a service that does not shadow the field).
 */
export type StreamShape = 'documented' | 'type-preserved';

/** An event as the stream carries it: the sequence number is a string, and `data.type` is set. */
export interface StreamEvent extends Omit<RawEvent, 'sequence_number' | 'data'> {
  readonly sequence_number: string;
  readonly data: Readonly<Record<string, unknown>> & { readonly type: string };
}

/** The stream shape of an event, as a value. */
export function toStreamEvent(event: RawEvent, shape: StreamShape = 'documented'): StreamEvent {
  return JSON.parse(streamEventText(event, shape)) as StreamEvent;
}

/**
 * The stream shape of an event, as the service writes it: the poll's wire text (so values a JSON
 * round trip would change still arrive as set) with `sequence_number` as a string and `data.type`
 * set as `shape` says.
 */
export function streamEventText(event: RawEvent, shape: StreamShape): string {
  const { data: _data, ...fields } = event;
  const head = JSON.stringify({ ...fields, sequence_number: String(event.sequence_number) });
  return `${head.slice(0, -1)},"data":${streamDataText(event, shape)}}`;
}

function streamDataText(event: RawEvent, shape: StreamShape): string {
  const eventType = event.type.toLowerCase();
  const ownType = Object.hasOwn(event.data, 'type');
  if (ownType && shape === 'type-preserved') return dataWireText(event);
  // The own value is replaced: the text of the other members no longer matters to anyone.
  if (ownType) return JSON.stringify({ ...event.data, type: eventType });
  const text = dataWireText(event).trim();
  const empty = text.slice(1, -1).trim() === '';
  return `${text.slice(0, -1)}${empty ? '' : ','}"type":${JSON.stringify(eventType)}}`;
}

/**
 * One SSE message for a non-empty batch: `id` is the highest sequence number in it, the cursor a
 * client resumes from. A payload with line breaks between its tokens (a data text given that
 * way) goes on several `data:` lines, which a client joins with line feeds.
 */
export function formatEventMessage(events: readonly RawEvent[], shape: StreamShape = 'documented'): string {
  const last = events.at(-1);
  if (last === undefined) throw new RangeError('An SSE message needs at least one event');
  const payload = `[${events.map((event) => streamEventText(event, shape)).join(',')}]`;
  const dataLines = payload
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}`)
    .join('\n');
  return `id: ${last.sequence_number}\n${dataLines}\n\n`;
}

/** A comment line: clients ignore it, intermediaries see traffic. */
export function formatComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
}
