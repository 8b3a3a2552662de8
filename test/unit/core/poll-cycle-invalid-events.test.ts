/**
 * The cycle with quarantined events: pages built by the real parser from answers holding bad
 * events, over in-memory ports and a virtual clock.
 */

import { describe, expect, it } from 'vitest';
import { CLASSIC_BUS_ENTRY_RULES } from '../../../functions/adapters/aws/eventbridge-entry-rules.ts';
import { MemoryCheckpointStore } from '../../../functions/adapters/local/memory-checkpoint-store.ts';
import type { FeedPage } from '../../../functions/core/banking-event.ts';
import { PublishError } from '../../../functions/core/errors.ts';
import { parsePollResponse } from '../../../functions/core/event-model.ts';
import { runPollCycle } from '../../../functions/core/poll-cycle.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import {
  InMemoryFeed,
  InMemoryPublisher,
  RecordingLogger,
  RecordingMetrics,
} from '../../support/in-memory-ports.ts';

const invocation = { program: 'default', owner: 'req-1', remainingMs: 60_000 };

function rawEvent(sequence: number | null, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: `e-${sequence}`,
    program_id: 'program-1',
    ...(sequence === null ? {} : { sequence_number: sequence }),
    created_dt: '2026-11-21T23:59:59.000+00:00',
    type: 'TRANSACTION',
    data: { amount: sequence },
    ...overrides,
  };
}

function answer(events: readonly unknown[], lastSequenceNumber?: number): FeedPage {
  const value = {
    data: events,
    ...(lastSequenceNumber === undefined ? {} : { last_sequence_number: lastSequenceNumber }),
  };
  return parsePollResponse(
    { text: JSON.stringify(value), value },
    { source: 'GET /events', status: 200 },
    CLASSIC_BUS_ENTRY_RULES,
  );
}

function setup(committed: number | null = null) {
  const clock = new FakeClock();
  const feed = new InMemoryFeed(clock);
  const publisher = new InMemoryPublisher();
  const checkpoints = new MemoryCheckpointStore({
    initial: { checkpoint: committed },
    now: () => clock.now(),
  });
  const metrics = new RecordingMetrics();
  const logger = new RecordingLogger();
  return {
    feed,
    publisher,
    checkpoints,
    metrics,
    logger,
    deps: { feed, publisher, checkpoints, clock, metrics, logger, random: () => 0.5 },
  };
}

describe('the cycle with events that fail validation', () => {
  it('publishes them as invalid_event beside the rest of the page and checkpoints past them', async () => {
    const { deps, feed, publisher, checkpoints, metrics, logger } = setup();
    feed.script({ page: answer([rawEvent(1), rawEvent(2, { id: 7 }), rawEvent(3)]) });
    // Without a number: placed just after the cursor (3), so at 4.
    feed.script({ page: answer([rawEvent(null), rawEvent(5)]) });

    const summary = await runPollCycle(deps, invocation);

    expect(publisher.accepted.map((e) => [e.sequence_number, e.type])).toEqual([
      [1, 'transaction'],
      [2, 'invalid_event'],
      [3, 'transaction'],
      [4, 'invalid_event'],
      [5, 'transaction'],
    ]);
    expect(summary.checkpoint).toBe(5);
    expect((await checkpoints.read()).checkpoint).toBe(5);
    expect(metrics.sum('InvalidEvents')).toBe(2);
    const warnings = logger.lines.filter((line) => line.message.startsWith('An event failed validation'));
    expect(warnings.map((line) => line.attributes?.field)).toEqual(['data[1].id', 'data[0].sequence_number']);
    // The log names the problem, never the payload.
    expect(JSON.stringify(warnings)).not.toContain('"amount"');
  });

  it('never lets the checkpoint pass an invalid event the bus did not accept', async () => {
    const { deps, feed, publisher, checkpoints } = setup();
    feed.script({ page: answer([rawEvent(1), rawEvent(2, { type: 9 }), rawEvent(3)]) });
    publisher.rejectSequence(2);

    await expect(runPollCycle(deps, { ...invocation, publish: { maxAttempts: 2 } })).rejects.toBeInstanceOf(
      PublishError,
    );

    expect((await checkpoints.read()).checkpoint).toBe(1);
  });

  it('holds the checkpoint at the cursor until an unnumbered invalid event of the page is accepted', async () => {
    const { deps, feed, publisher, checkpoints } = setup(10);
    // Without a number it sits just after the cursor (11), whatever its place in the page.
    feed.script({ page: answer([rawEvent(11), rawEvent(12), rawEvent(null, { type: 1 }), rawEvent(14)]) });
    publisher.rejectSequence(11);

    await expect(runPollCycle(deps, { ...invocation, publish: { maxAttempts: 2 } })).rejects.toBeInstanceOf(
      PublishError,
    );

    expect((await checkpoints.read()).checkpoint).toBe(10);
    expect(publisher.accepted.map((e) => [e.sequence_number, e.type])).toEqual([
      [12, 'transaction'],
      [14, 'transaction'],
    ]);
  });

  it('does not let a quarantined program_id decide which feed a new row belongs to', async () => {
    const { deps, feed, publisher, checkpoints } = setup();
    feed.script({ page: answer([rawEvent(1, { program_id: 'someone-else', id: 5 })]) });
    feed.script({ page: answer([rawEvent(2)]) });

    const summary = await runPollCycle(deps, invocation);

    expect(publisher.accepted.map((e) => e.type)).toEqual(['invalid_event', 'transaction']);
    expect(summary.checkpoint).toBe(2);
    expect((await checkpoints.read()).feedProgramId).toBe('program-1');
  });

  it('moves the checkpoint of a new row past quarantined events before any valid one arrives, and records the feed with the first valid one', async () => {
    const { deps, feed, publisher, checkpoints } = setup();
    feed.script({ page: answer([rawEvent(1, { type: 3 })]) });

    const first = await runPollCycle(deps, invocation);

    // Not published again at every run: the checkpoint moved, the row's feed is still unknown.
    expect(first.checkpoint).toBe(1);
    expect(await checkpoints.read()).toMatchObject({ checkpoint: 1, feedProgramId: null });

    feed.script({ page: answer([rawEvent(2)]) });
    const second = await runPollCycle(deps, { ...invocation, owner: 'req-2' });

    expect(publisher.accepted.map((e) => [e.sequence_number, e.type])).toEqual([
      [1, 'invalid_event'],
      [2, 'transaction'],
    ]);
    expect(second.checkpoint).toBe(2);
    expect((await checkpoints.read()).feedProgramId).toBe('program-1');
  });
});
