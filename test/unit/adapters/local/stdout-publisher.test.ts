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
    expect(lines).toEqual([
      { source: 'test.source', 'detail-type': 'transaction', time: events[0]!.created_dt, detail: events[0] },
      {
        source: 'test.source',
        'detail-type': 'account_status',
        time: events[1]!.created_dt,
        detail: events[1],
      },
    ]);
  });
});
