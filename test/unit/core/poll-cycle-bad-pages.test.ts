/**
 * A page that cannot be read at all, and one id at two sequence numbers: what the cycle does
 * with them, on in-memory ports and a fake clock.
 */
import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../../functions/adapters/local/memory-checkpoint-store.ts';
import { PageUnreadableError } from '../../../functions/core/errors.ts';
import { runPollCycle } from '../../../functions/core/poll-cycle.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import {
  InMemoryFeed,
  InMemoryPublisher,
  makeEvent,
  RecordingLogger,
  RecordingMetrics,
} from '../../support/in-memory-ports.ts';

function setup(eventCount: number) {
  const clock = new FakeClock();
  const feed = new InMemoryFeed(
    clock,
    Array.from({ length: eventCount }, (_, i) => makeEvent(i + 1)),
    { limit: 25 },
  );
  const publisher = new InMemoryPublisher();
  const checkpoints = new MemoryCheckpointStore({ initial: { checkpoint: null }, now: () => clock.now() });
  const metrics = new RecordingMetrics();
  const logger = new RecordingLogger();
  const deps = { feed, publisher, checkpoints, clock, metrics, logger, random: () => 0.5 };
  return { clock, feed, publisher, checkpoints, metrics, logger, deps };
}

const invocation = { program: 'default', owner: 'req-1', remainingMs: 60_000 };
const unreadable = () => new PageUnreadableError('GET /events (HTTP 200): body is not JSON', { status: 200 });

describe('a page that cannot be read', () => {
  it('is tried again within the budget, and the events it held are published once it reads', async () => {
    const { deps, feed, publisher, metrics, logger } = setup(3);
    feed.script({ error: unreadable() }).script({ error: unreadable() });

    const summary = await runPollCycle(deps, invocation);

    expect(publisher.accepted.map((event) => event.sequence_number)).toEqual([1, 2, 3]);
    expect(summary).toMatchObject({ checkpoint: 3, pollErrors: 2 });
    expect(metrics.sum('PollErrors')).toBe(2);
    expect(
      logger.lines.filter((line) => line.message.startsWith('A page of the feed could not be read')),
    ).toHaveLength(2);
  });

  it('fails the cycle with PAGE_UNREADABLE once no retry fits, keeping what was published before it', async () => {
    const { deps, feed, publisher, checkpoints } = setup(0);
    feed.script({ page: { events: [makeEvent(1), makeEvent(2)], lastSequenceNumber: 2 } });
    for (let i = 0; i < 1_000; i += 1) feed.script({ error: unreadable() });

    const error = await runPollCycle(deps, invocation).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(PageUnreadableError);
    expect(error).toMatchObject({ code: 'PAGE_UNREADABLE' });
    // Tried again while the budget allowed, never taken for "no events".
    expect(feed.requests.filter((after) => after === 2).length).toBeGreaterThan(5);
    expect(publisher.accepted.map((event) => event.sequence_number)).toEqual([1, 2]);
    expect(await checkpoints.read()).toMatchObject({
      checkpoint: 2,
      lastError: { code: 'PAGE_UNREADABLE' },
    });
  });
});

describe('one id at two sequence numbers in a page', () => {
  it('publishes both, counts DuplicateEventIds and logs both numbers; no gap is left', async () => {
    const { deps, feed, publisher, metrics, logger, checkpoints } = setup(0);
    const first = makeEvent(1, { id: 'shared-id' });
    const second = makeEvent(2, { id: 'shared-id' });
    feed.script({ page: { events: [first, second, { ...second }, makeEvent(3)], lastSequenceNumber: 3 } });

    await runPollCycle(deps, invocation);

    expect(publisher.accepted.map((event) => [event.id, event.sequence_number])).toEqual([
      ['shared-id', 1],
      ['shared-id', 2],
      [expect.any(String), 3],
    ]);
    expect(metrics.sum('DuplicateEventIds')).toBe(1);
    expect(metrics.sum('SequenceGaps')).toBe(0);
    expect(logger.lines).toContainEqual({
      level: 'warn',
      message: 'The feed gave one event id to two sequence numbers; publishing both',
      attributes: { eventId: 'shared-id', firstSequenceNumber: 1, sequenceNumber: 2 },
    });
    expect(await checkpoints.read()).toMatchObject({ checkpoint: 3, openGaps: [] });
  });
});
