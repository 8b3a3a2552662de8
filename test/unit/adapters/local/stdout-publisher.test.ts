import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { StdoutPublisher } from '../../../../functions/adapters/local/stdout-publisher.ts';
import { makeEvent } from '../../../support/in-memory-ports.ts';

describe('StdoutPublisher', () => {
  it('writes one NDJSON line per event, shaped like the EventBridge event a target receives', async () => {
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
    const publisher = new StdoutPublisher({ out, source: 'test.source' });
    const events = [makeEvent(1), makeEvent(2, { type: 'account_status' })];

    const outcomes = await publisher.send(events, new AbortController().signal);

    expect(outcomes).toEqual([{ ok: true }, { ok: true }]);
    const lines = chunks
      .join('')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    const { detail: _first, ...first } = events[0]!;
    const { detail: _second, ...second } = events[1]!;
    expect(lines).toEqual([
      { source: 'test.source', 'detail-type': 'transaction', time: events[0]!.created_dt, detail: first },
      { source: 'test.source', 'detail-type': 'account_status', time: events[1]!.created_dt, detail: second },
    ]);
  });

  it("writes each event's detail text exactly as it came, numbers digit for digit", async () => {
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
    const event = { ...makeEvent(1), detail: '{"id":"x","data":{"amount":9007199254740993,"fee":12.50}}' };

    await new StdoutPublisher({ out }).send([event], new AbortController().signal);

    expect(chunks.join('')).toContain(
      ',"detail":{"id":"x","data":{"amount":9007199254740993,"fee":12.50}}}\n',
    );
  });
});
