import { describe, expect, it } from 'vitest';
import {
  readServerSentEvents,
  type SseItem,
} from '../../../../functions/adapters/banking-http/sse-reader.ts';
import { PayloadValidationError } from '../../../../functions/core/errors.ts';

const OPTIONS = { source: 'GET /events/stream', maxMessageChars: 1_000 };

async function* chunks(parts: ReadonlyArray<Uint8Array | string>): AsyncGenerator<Uint8Array | string> {
  for (const part of parts) yield part;
}

async function read(parts: ReadonlyArray<Uint8Array | string>, options = OPTIONS): Promise<SseItem[]> {
  const items: SseItem[] = [];
  for await (const item of readServerSentEvents(chunks(parts), options)) items.push(item);
  return items;
}

/** The bytes of `text` cut into pieces of `size` bytes: multibyte characters are split too. */
function bytesIn(text: string, size: number): Uint8Array[] {
  const bytes = new TextEncoder().encode(text);
  const pieces: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) pieces.push(bytes.subarray(i, i + size));
  return pieces;
}

const STREAM =
  '\uFEFF: welcome\r\n\r\n' +
  'id: 7\r\ndata: [{"note":"Café 😀 日本",\r\ndata: "n":1}]\r\n\r\n' +
  ': ping\n\n' +
  'retry: 2500\n\n' +
  'event: notice\ndata:\n\n' +
  'id: 9\ndata: [2]\n\n' +
  'id: 10\rdata: [3]\r\r' +
  'id: 11\ndata: [4';

const EXPECTED: SseItem[] = [
  { kind: 'message', message: { id: '7', data: '[{"note":"Café 😀 日本",\n"n":1}]' } },
  { kind: 'retry', retryMs: 2500 },
  { kind: 'message', message: { id: '9', data: '[2]' } },
  { kind: 'message', message: { id: '10', data: '[3]' } },
];

describe('readServerSentEvents', () => {
  it('reads messages with CRLF, CR and LF line ends, comments, retry, multi-line data and a BOM', async () => {
    expect(await read([STREAM])).toEqual(EXPECTED);
  });

  it.each([1, 2, 3, 5, 7, 64])('gives the same messages when the bytes arrive %i at a time', async (size) => {
    expect(await read(bytesIn(STREAM, size))).toEqual(EXPECTED);
  });

  it('gives the same messages whatever two pieces the stream is cut into', async () => {
    const bytes = new TextEncoder().encode(STREAM);
    for (let cut = 1; cut < bytes.length; cut += 1) {
      expect(await read([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(EXPECTED);
    }
  });

  it('drops a message the connection ended in the middle of', async () => {
    expect(await read(['id: 1\ndata: [1]\n\nid: 2\ndata: [{"id":"'])).toEqual([
      { kind: 'message', message: { id: '1', data: '[1]' } },
    ]);
  });

  it('refuses bytes that are not UTF-8, naming the stream', async () => {
    const invalid = new Uint8Array([0x64, 0x61, 0x74, 0x61, 0x3a, 0x20, 0xc3, 0x28, 0x0a, 0x0a]);
    const error = await read([invalid]).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PayloadValidationError);
    expect((error as Error).message).toBe('GET /events/stream: the stream is not valid UTF-8');
  });

  it('refuses a message longer than the bound instead of buffering it', async () => {
    const long = `data: ${'x'.repeat(2_000)}`;
    await expect(read(bytesIn(long, 100), { ...OPTIONS, maxMessageChars: 1_000 })).rejects.toThrow(
      /GET \/events\/stream: a message is longer than 1000 characters/,
    );
  });
});
