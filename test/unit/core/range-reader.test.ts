import { describe, expect, it } from 'vitest';
import type { BankingEvent, FeedPage } from '../../../functions/core/banking-event.ts';
import { UpstreamHttpError } from '../../../functions/core/errors.ts';
import type { PollRequest } from '../../../functions/core/ports.ts';
import { type RangeChunk, type RangeSource, readRange } from '../../../functions/core/range-reader.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import { makeEvent } from '../../support/in-memory-ports.ts';

/** A feed of the given sequence numbers, pages of `limit`; optionally ignoring the cursor. */
class NumberedFeed implements RangeSource {
  readonly polls: Array<number | null> = [];
  readonly lookups: number[] = [];
  readonly #events: BankingEvent[];
  failures: unknown[] = [];

  constructor(
    sequences: readonly number[],
    private readonly options: { limit?: number; ignoreCursor?: boolean; pageHides?: readonly number[] } = {},
  ) {
    this.#events = sequences.map((sequence) => makeEvent(sequence));
  }

  async poll(request: PollRequest): Promise<FeedPage> {
    this.polls.push(request.after);
    const failure = this.failures.shift();
    if (failure !== undefined) throw failure;
    const after = this.options.ignoreCursor ? 0 : (request.after ?? 0);
    const hidden = new Set(this.options.pageHides ?? []);
    const events = this.#events
      .filter((event) => event.sequence_number > after && !hidden.has(event.sequence_number))
      .slice(0, this.options.limit ?? 3);
    return { events, lastSequenceNumber: events.at(-1)?.sequence_number ?? null };
  }

  async fetchEventBySequence(sequenceNumber: number): Promise<BankingEvent | null> {
    this.lookups.push(sequenceNumber);
    return this.#events.find((event) => event.sequence_number === sequenceNumber) ?? null;
  }
}

async function read(feed: RangeSource, from: number, to: number): Promise<RangeChunk[]> {
  const chunks: RangeChunk[] = [];
  const options = {
    from,
    to,
    signal: new AbortController().signal,
    pollHoldMs: 1_000,
    clock: new FakeClock(),
  };
  for await (const chunk of readRange(feed, options)) chunks.push(chunk);
  return chunks;
}

const sequences = (chunks: readonly RangeChunk[]) =>
  chunks.flatMap((chunk) => chunk.events.map((e) => e.sequence_number));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('readRange', () => {
  it('pages from just below the range and yields exactly the range', async () => {
    const feed = new NumberedFeed(range(1, 20));

    const chunks = await read(feed, 5, 11);

    expect(sequences(chunks)).toEqual(range(5, 11));
    expect(feed.polls).toEqual([4, 7, 10]);
    expect(chunks.at(-1)).toMatchObject({ through: 11, endOfFeed: false });
    expect(feed.lookups).toEqual([]);
  });

  it('looks up numbers a page skipped, and reports those the feed has no event for', async () => {
    const feed = new NumberedFeed([1, 2, 3, 4, 5, 7, 8, 9], { pageHides: [3], limit: 10 });

    const chunks = await read(feed, 2, 8);

    expect(sequences(chunks)).toEqual([2, 3, 4, 5, 7, 8]);
    expect(feed.lookups).toEqual([3, 6]);
    expect(chunks.flatMap((chunk) => chunk.missing)).toEqual([6]);
  });

  it('falls back to lookups for the whole range when the feed ignores the cursor', async () => {
    const feed = new NumberedFeed(range(1, 10), { ignoreCursor: true });

    const chunks = await read(feed, 6, 8);

    expect(sequences(chunks)).toEqual([6, 7, 8]);
    expect(feed.lookups).toEqual([6, 7, 8]);
  });

  it('stops at the end of the feed when the range goes beyond it', async () => {
    const feed = new NumberedFeed(range(1, 4));

    const chunks = await read(feed, 3, 50);

    expect(sequences(chunks)).toEqual([3, 4]);
    expect(chunks.at(-1)).toEqual({ events: [], missing: [], through: 4, endOfFeed: true });
  });

  it('retries a retryable failure, then gives up on a lasting one', async () => {
    const flaky = new NumberedFeed(range(1, 4));
    flaky.failures = [new UpstreamHttpError('busy', { status: 503, retryable: true })];
    const broken = new NumberedFeed(range(1, 4));
    broken.failures = Array.from(
      { length: 3 },
      () => new UpstreamHttpError('down', { status: 503, retryable: true }),
    );

    expect(sequences(await read(flaky, 1, 2))).toEqual([1, 2]);
    await expect(read(broken, 1, 2)).rejects.toThrow('down');
  });
});
