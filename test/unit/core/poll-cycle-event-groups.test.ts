import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../../functions/adapters/local/memory-checkpoint-store.ts';
import { PublishError } from '../../../functions/core/errors.ts';
import { runPollCycle } from '../../../functions/core/poll-cycle.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import { FifoBus } from '../../support/fifo-bus.ts';
import { InMemoryFeed, makeEvent, RecordingLogger, RecordingMetrics } from '../../support/in-memory-ports.ts';

/** A feed of `count` events and a bus with one group for the whole feed (`program`). */
function setup(count: number, maxEntriesPerBatch: number) {
  const clock = new FakeClock();
  const events = Array.from({ length: count }, (_, i) => makeEvent(i + 1));
  const feed = new InMemoryFeed(clock, events, { limit: 25 });
  const bus = new FifoBus(clock, {
    group: (event) => event.program_id,
    limits: { maxEntriesPerBatch, maxBatchBytes: 256 * 1024, maxEntryBytes: 256 * 1024 },
  });
  const checkpoints = new MemoryCheckpointStore({ initial: { checkpoint: null }, now: () => clock.now() });
  const deps = {
    feed,
    publisher: bus,
    checkpoints,
    clock,
    metrics: new RecordingMetrics(),
    logger: new RecordingLogger(),
    random: () => 0.5,
  };
  return { bus, checkpoints, deps };
}

const invocation = { program: 'default', owner: 'req-1', remainingMs: 60_000 };
const delivered = (bus: FifoBus) => bus.accepted.map((event) => event.sequence_number);

describe('runPollCycle with event groups', () => {
  it('publishes a one-group feed in order, one request at a time, and checkpoints it all', async () => {
    const { bus, deps } = setup(60, 10);

    const summary = await runPollCycle(deps, invocation);

    expect(delivered(bus)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect(bus.maxInFlight).toBe(1);
    expect(summary.checkpoint).toBe(60);
  });

  it('sends nothing of the group after an event rejected for good; the next run delivers the rest in order, once', async () => {
    const { bus, checkpoints, deps } = setup(30, 2);
    bus.rejectSequence(4);

    const first = runPollCycle(deps, { ...invocation, publish: { maxAttempts: 3 } });

    await expect(first).rejects.toBeInstanceOf(PublishError);
    expect(delivered(bus)).toEqual([1, 2, 3]);
    expect((await checkpoints.read()).checkpoint).toBe(3);

    bus.rejectSequence(4, 0);
    const second = await runPollCycle(deps, { ...invocation, owner: 'req-2' });

    expect(second.checkpoint).toBe(30);
    // What a FIFO subscriber of the group got over both runs: the feed, in order, nothing twice.
    expect(delivered(bus)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
  });
});
