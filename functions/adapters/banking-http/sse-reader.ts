/**
 * Server-Sent Events off a response body: bytes are decoded as UTF-8 with a streaming decoder (a
 * character split across chunks survives; invalid UTF-8 is an error, never a replacement
 * character in an event we publish), and framed by eventsource-parser (multi-line `data:`, CRLF,
 * comments, `retry:`, a message split anywhere across chunks).
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { PayloadValidationError } from '../../core/errors.ts';
import type { SseMessage } from '../../core/stream/stream-payload.ts';

export type SseItem =
  | { readonly kind: 'message'; readonly message: SseMessage }
  | { readonly kind: 'retry'; readonly retryMs: number };

export interface SseReadOptions {
  /** Names the stream in errors, e.g. `GET /events/stream`. */
  readonly source: string;
  /** The largest message accepted, in characters; a longer one is an error, not a growing buffer. */
  readonly maxMessageChars: number;
}

/**
 * Yields the messages (and reconnection delays) of an SSE body, in order. Comments (heartbeats)
 * and messages without data are dropped; an unknown field is ignored, as the format requires.
 *
 * @throws PayloadValidationError when the body is not UTF-8 or a message exceeds `maxMessageChars`.
 */
export async function* readServerSentEvents(
  body: AsyncIterable<Uint8Array | string>,
  options: SseReadOptions,
): AsyncGenerator<SseItem> {
  const pending: SseItem[] = [];
  let failure: PayloadValidationError | undefined;
  const parser = createParser({
    maxBufferSize: options.maxMessageChars,
    onEvent: (event: EventSourceMessage) => {
      if (event.data.trim() === '') return;
      pending.push({ kind: 'message', message: event });
    },
    onRetry: (retryMs) => pending.push({ kind: 'retry', retryMs }),
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') {
        failure ??= new PayloadValidationError(
          `${options.source}: a message is longer than ${options.maxMessageChars} characters`,
          { source: options.source, maxMessageChars: options.maxMessageChars },
        );
      }
    },
  });
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const encoder = new TextEncoder();
  for await (const chunk of body) {
    let text: string;
    try {
      text = decoder.decode(typeof chunk === 'string' ? encoder.encode(chunk) : chunk, { stream: true });
    } catch {
      throw new PayloadValidationError(`${options.source}: the stream is not valid UTF-8`, {
        source: options.source,
      });
    }
    parser.feed(text);
    if (failure !== undefined) throw failure;
    while (pending.length > 0) yield pending.shift()!;
  }
}
