import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ClaimCheckLocation, ClaimCheckStore } from '../../../functions/core/ports.ts';
import {
  deliverAnswer,
  jsonBytes,
  LAMBDA_RESPONSE_MAX_BYTES,
  ReplayPage,
} from '../../../functions/poller/operator-answer.ts';
import type { EventResult } from '../../../functions/poller/operator-request.ts';
import { makeEvent } from '../../support/in-memory-ports.ts';

/** Objects kept in memory, as the claim-check bucket keeps them. */
class MemoryAnswers implements ClaimCheckStore {
  readonly objects = new Map<string, string>();
  async put(key: string, body: string): Promise<ClaimCheckLocation> {
    this.objects.set(key, body);
    return { bucket: 'claims', key };
  }
}

/** An event whose JSON is about `bytes` long: its text twice (`data` and the escaped `detail`). */
function eventOf(sequence: number, bytes: number) {
  return makeEvent(sequence, { data: { note: 'x'.repeat(Math.floor(bytes / 2)) } });
}

describe('ReplayPage', () => {
  it('takes events and missing numbers in order while they fit, and cuts before the first that does not', () => {
    const events = [1, 2, 4, 5].map((sequence) => eventOf(sequence, 1_000));
    // Room for the envelope (and its reserve), events 1 and 2 and the number 3, each with a comma.
    const room =
      jsonBytes({ kind: 'replay' }) +
      64 +
      (jsonBytes(events[0]) + 1) +
      (jsonBytes(events[1]) + 1) +
      ('3'.length + 1);
    const page = new ReplayPage({ kind: 'replay' }, room);

    const taken = page.admit({ events, missing: [3], through: 5 }, true);

    expect(taken.events.map((event) => event.sequence_number)).toEqual([1, 2]);
    expect(taken).toMatchObject({ missing: [3], through: 3, full: true });
    expect(page.bytes).toBe(room);
  });

  it('measures the whole event, data and escaped detail, not the detail alone', () => {
    const event = makeEvent(1, { data: { quote: '"'.repeat(1_000) } });
    const page = new ReplayPage({});
    const before = page.bytes;

    page.admit({ events: [event], missing: [], through: 1 }, true);

    // A quote is two bytes in `data` (\") and four in the answer's escape of `detail` (\\\"): the
    // answer is far more than the detail's own length.
    expect(page.bytes - before).toBe(jsonBytes(event) + 1);
    expect(page.bytes - before).toBeGreaterThan(2.5 * event.detail.length);
  });

  it('always takes the first item of a page, so every answer moves the replay on', () => {
    const page = new ReplayPage({}, 100);

    const taken = page.admit({ events: [eventOf(7, 5_000), eventOf(8, 10)], missing: [], through: 8 }, true);

    expect(taken.events.map((event) => event.sequence_number)).toEqual([7]);
    expect(taken).toMatchObject({ through: 7, full: true });
  });

  it('counts only missing numbers when publishing: the events are on the bus, not in the answer', () => {
    const page = new ReplayPage({}, 200);

    const taken = page.admit({ events: [eventOf(1, 5_000)], missing: [2, 3], through: 3 }, false);

    expect(taken).toEqual({ events: [], missing: [2, 3], through: 3, full: false });
  });
});

describe('deliverAnswer', () => {
  const large = (): EventResult => ({
    kind: 'event',
    found: true,
    event: eventOf(9, LAMBDA_RESPONSE_MAX_BYTES),
  });

  it('returns an answer within the limit as it is', async () => {
    const result: EventResult = { kind: 'event', found: true, event: makeEvent(1) };

    expect(
      await deliverAnswer(result, {
        program: 'p',
        store: new MemoryAnswers(),
        signal: new AbortController().signal,
      }),
    ).toBe(result);
  });

  it('leaves a larger one in the bucket and answers where, with its size and digest', async () => {
    const store = new MemoryAnswers();
    const result = large();

    const answer = await deliverAnswer(result, {
      program: 'cards',
      store,
      signal: new AbortController().signal,
    });

    const text = JSON.stringify(result);
    const sha256 = createHash('sha256').update(text).digest('hex');
    expect(answer).toEqual({
      kind: 'stored-answer',
      answers: 'event',
      stored: {
        bucket: 'claims',
        key: `operator-answers/cards/event-${sha256}.json`,
        bytes: Buffer.byteLength(text),
        sha256,
      },
    });
    expect(store.objects.get(`operator-answers/cards/event-${sha256}.json`)).toBe(text);
    expect(jsonBytes(answer)).toBeLessThan(1_000);
  });

  it('without a bucket, answers how large it was', async () => {
    const result = large();

    const answer = await deliverAnswer(result, {
      program: 'p',
      store: undefined,
      signal: new AbortController().signal,
    });

    expect(answer).toEqual({
      kind: 'oversize-answer',
      answers: 'event',
      oversize: { bytes: jsonBytes(result), maxBytes: LAMBDA_RESPONSE_MAX_BYTES },
    });
  });
});
