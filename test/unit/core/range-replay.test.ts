import { describe, expect, it } from 'vitest';
import type { BankingEvent, FeedPage } from '../../../functions/core/banking-event.ts';
import type { PollRequest } from '../../../functions/core/ports.ts';
import { PublishPipeline } from '../../../functions/core/publish-pipeline.ts';
import type { RangeSource } from '../../../functions/core/range-reader.ts';
import { type ReplayStep, replayRange } from '../../../functions/core/range-replay.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import {
  InMemoryPublisher,
  makeEvent,
  RecordingLogger,
  RecordingMetrics,
} from '../../support/in-memory-ports.ts';

/** Sequence numbers 1..count in pages of 3; nothing after the last. */
function feedOf(count: number): RangeSource {
  const events = Array.from({ length: count }, (_, index) => makeEvent(index + 1));
  return {
    async poll(request: PollRequest): Promise<FeedPage> {
      const page = events.filter((event) => event.sequence_number > (request.after ?? 0)).slice(0, 3);
      return { events: page, lastSequenceNumber: page.at(-1)?.sequence_number ?? null };
    },
    async fetchEventBySequence(sequence: number): Promise<BankingEvent | null> {
      return events.find((event) => event.sequence_number === sequence) ?? null;
    },
  };
}

async function steps(
  source: RangeSource,
  publisher: InMemoryPublisher | undefined,
  from: number,
  to: number,
) {
  const clock = new FakeClock();
  const pipeline =
    publisher === undefined
      ? undefined
      : new PublishPipeline(
          { publisher, clock, metrics: new RecordingMetrics(), logger: new RecordingLogger() },
          { maxAttempts: 1 },
        );
  const seen: ReplayStep[] = [];
  for await (const step of replayRange(source, pipeline, {
    from,
    to,
    signal: new AbortController().signal,
    pollHoldMs: 1_000,
    clock,
  }))
    seen.push(step);
  return seen;
}

describe('replayRange', () => {
  it('publishes the range chunk by chunk, each before the next is read', async () => {
    const publisher = new InMemoryPublisher();

    const seen = await steps(feedOf(10), publisher, 2, 8);

    expect(seen.map((step) => [step.through, step.published])).toEqual([
      [4, 3],
      [7, 3],
      [8, 1],
    ]);
    expect(publisher.accepted.map((event) => event.sequence_number)).toEqual([2, 3, 4, 5, 6, 7, 8]);
    expect(publisher.batches).toEqual([[2, 3, 4], [5, 6, 7], [8]]);
  });

  it('ends with the reason when the bus refuses part of a chunk, reading no further', async () => {
    const publisher = new InMemoryPublisher();
    publisher.rejectSequence(6);

    const seen = await steps(feedOf(10), publisher, 1, 10);

    expect(seen.at(-1)?.failure).toEqual({
      kind: 'rejected',
      count: 1,
      sequenceNumber: 6,
      errorCode: 'InternalFailure',
      errorMessage: 'scripted rejection',
    });
    expect(seen.slice(0, -1).map((step) => step.through)).toEqual([3]);
    expect(publisher.batches).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
  });

  it('sends nothing on a dry run and says where the feed ends', async () => {
    const seen = await steps(feedOf(5), undefined, 4, 9);

    expect(seen.map((step) => [step.events.map((event) => event.sequence_number), step.endOfFeed])).toEqual([
      [[4, 5], false],
      [[], true],
    ]);
    expect(seen[0]?.published).toBe(2);
    expect(seen[1]?.through).toBe(5);
  });
});
