/**
 * Implausible sequence numbers (`sequence-jumps.ts`) through whole cycles over in-memory ports and
 * a virtual clock: the case (1, 2, 3 and 2^53 − 1, then 4 and 5 created afterwards) in
 * both feed modes, across runs, then the operator's decision either way.
 */
import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../../functions/adapters/local/memory-checkpoint-store.ts';
import type { BankingEvent } from '../../../functions/core/banking-event.ts';
import type { HeldJump } from '../../../functions/core/checkpoint/store.ts';
import { type PollCycleOptions, runPollCycle } from '../../../functions/core/poll-cycle.ts';
import type { StreamMessage } from '../../../functions/core/ports.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import {
  InMemoryFeed,
  InMemoryLookup,
  InMemoryPublisher,
  makeEvent,
  RecordingLogger,
  RecordingMetrics,
  ScriptedStream,
} from '../../support/in-memory-ports.ts';

const MAX = Number.MAX_SAFE_INTEGER;

/** One program's bank and checkpoint, shared by the runs of a test; each run gets fresh metrics. */
function world(initial: readonly BankingEvent[]) {
  const clock = new FakeClock();
  const feed = new InMemoryFeed(clock, initial, { limit: 100 });
  const lookup = new InMemoryLookup(clock);
  const publisher = new InMemoryPublisher();
  let checkpoints = new MemoryCheckpointStore({ now: () => clock.now() });
  let runs = 0;
  const run = async (options: Partial<PollCycleOptions> = {}, extra: { stream?: ScriptedStream } = {}) => {
    runs += 1;
    const metrics = new RecordingMetrics();
    const logger = new RecordingLogger();
    const summary = await runPollCycle(
      { feed, lookup, publisher, checkpoints, clock, metrics, logger, random: () => 0.5, ...extra },
      { program: 'default', owner: `run-${runs}`, remainingMs: 60_000, ...options },
    );
    return { summary, metrics, logger };
  };
  /** The operator's decision, as `jumps accept|reject` writes it between runs. */
  const decide = async (sequenceNumber: number, decision: NonNullable<HeldJump['decision']>) => {
    const state = await checkpoints.read();
    const heldJumps = (state.heldJumps ?? []).map((held) =>
      held.sequenceNumber === sequenceNumber ? { ...held, decision, decidedAt: clock.now() } : held,
    );
    checkpoints = new MemoryCheckpointStore({ initial: { ...state, heldJumps }, now: () => clock.now() });
  };
  /** The operator's `rewind`, as it writes the row between runs. */
  const moveCheckpoint = async (checkpoint: number) => {
    const state = await checkpoints.read();
    checkpoints = new MemoryCheckpointStore({ initial: { ...state, checkpoint }, now: () => clock.now() });
  };
  const published = () => publisher.accepted.filter((event) => event.type !== 'invalid_event');
  const quarantined = () => publisher.accepted.filter((event) => event.type === 'invalid_event');
  return {
    clock,
    feed,
    lookup,
    publisher,
    run,
    decide,
    moveCheckpoint,
    published,
    quarantined,
    store: () => checkpoints,
  };
}

const numbers = (events: readonly BankingEvent[]) => events.map((event) => event.sequence_number);
const maxGauge = (metrics: RecordingMetrics) =>
  Math.max(0, ...metrics.values.filter((m) => m.name === 'SequenceJumpsHeld').map((m) => m.value));

describe('a poll answer with 1, 2, 3 and an event numbered 2^53 − 1', () => {
  it('publishes 1..3, quarantines the jump once, looks nothing up, and publishes 4 and 5 created afterwards', async () => {
    const w = world([1, 2, 3, MAX].map((n) => makeEvent(n)));

    const first = await w.run();
    w.feed.append(makeEvent(4), makeEvent(5));
    const second = await w.run();

    expect(first.summary.checkpoint).toBe(3);
    expect(second.summary.checkpoint).toBe(5);
    expect(numbers(w.published())).toEqual([1, 2, 3, 4, 5]);
    const [copy, ...more] = w.quarantined();
    expect(more).toEqual([]);
    expect(JSON.parse(copy!.detail)).toMatchObject({
      sequence_number: MAX,
      error: { code: 'SEQUENCE_JUMP_HELD' },
    });
    // Gap repair never saw a gap: the held event was not registered.
    expect(w.lookup.bySequence).toEqual([]);
    expect(first.metrics.sum('SequenceGaps')).toBe(0);
    // Neither the cursor of a poll nor the checkpoint ever passed 5.
    expect(Math.max(...w.feed.requests.map((after) => after ?? 0))).toBe(5);
    expect((await w.store().read()).heldJumps).toEqual([
      {
        sequenceNumber: MAX,
        eventId: expect.any(String),
        fingerprint: copy!.invalid!.fingerprint,
        heldAt: expect.any(Number),
      },
    ]);
    expect(maxGauge(first.metrics)).toBe(1);
    expect(maxGauge(second.metrics)).toBe(1);
  });

  it('polls about once a second while the feed answers at once with the held event alone', async () => {
    const w = world([makeEvent(1), makeEvent(MAX)]);

    const { summary } = await w.run({ remainingMs: 60_000 });

    // 50 s of polling (60 s less the safety margin), paced like answers without events.
    expect(summary).toMatchObject({ checkpoint: 1, stopReason: 'deadline' });
    expect(w.feed.requests.length).toBeGreaterThan(10);
    expect(w.feed.requests.length).toBeLessThanOrEqual(52);
  });

  it('once accepted, publishes the event and moves the checkpoint past the numbers below it, without counting or looking them up', async () => {
    const w = world([1, 2, 3, MAX].map((n) => makeEvent(n)));
    await w.run();
    w.feed.append(makeEvent(4), makeEvent(5));
    await w.run();

    await w.decide(MAX, 'accepted');
    const third = await w.run();

    expect(numbers(w.published())).toEqual([1, 2, 3, 4, 5, MAX]);
    expect(w.quarantined()).toHaveLength(1);
    expect(third.summary.checkpoint).toBe(MAX);
    expect(third.metrics.sum('SequenceGaps')).toBe(0);
    expect(maxGauge(third.metrics)).toBe(0);
    expect(w.lookup.bySequence).toEqual([]);
    expect(await w.store().read()).toMatchObject({ checkpoint: MAX, heldJumps: [], openGaps: [] });
  });

  it('once rejected, passes the event over, stops counting it, and goes on with the numbers after the cursor', async () => {
    const w = world([1, 2, 3, MAX].map((n) => makeEvent(n)));
    await w.run();

    await w.decide(MAX, 'rejected');
    w.feed.append(makeEvent(4));
    const second = await w.run();

    expect(numbers(w.published())).toEqual([1, 2, 3, 4]);
    expect(w.quarantined()).toHaveLength(1);
    expect(second.summary.checkpoint).toBe(4);
    expect(maxGauge(second.metrics)).toBe(0);
    expect((await w.store().read()).heldJumps).toMatchObject([{ sequenceNumber: MAX, decision: 'rejected' }]);
  });

  it('quarantines a second, lower jump that comes while the first awaits a decision', async () => {
    const w = world([1, 2, 3, MAX].map((n) => makeEvent(n)));
    await w.run();

    w.feed.append(makeEvent(4), makeEvent(2_000_000));
    const second = await w.run();

    expect(numbers(w.quarantined())).toEqual([MAX, 2_000_000]);
    expect(second.summary.checkpoint).toBe(4);
    expect(maxGauge(second.metrics)).toBe(2);
  });

  it("does not take a page's last_sequence_number as the cursor", async () => {
    const w = world([]);
    w.feed.script({ page: { events: [makeEvent(1), makeEvent(2)], lastSequenceNumber: MAX } });

    await w.run({ remainingMs: 8_000 });

    expect(w.feed.requests.slice(0, 2)).toEqual([null, 2]);
  });
});

describe('a row reading from the beginning of the feed', () => {
  it('holds a first event numbered 2^53 − 1 and publishes 1 and 2 created after it', async () => {
    const w = world([makeEvent(MAX)]);

    const first = await w.run();
    w.feed.append(makeEvent(1), makeEvent(2));
    const second = await w.run();

    expect(first.summary.checkpoint).toBeNull();
    expect(second.summary.checkpoint).toBe(2);
    expect(numbers(w.published())).toEqual([1, 2]);
    expect(numbers(w.quarantined())).toEqual([MAX]);
  });

  it('publishes a feed whose numbers start beyond the bound from its first run: its first two events corroborate each other', async () => {
    const w = world([48_000_000, 48_000_001].map((n) => makeEvent(n)));

    const first = await w.run();

    expect(maxGauge(first.metrics)).toBe(0);
    expect(w.quarantined()).toEqual([]);
    expect(numbers(w.published())).toEqual([48_000_000, 48_000_001]);
    expect(first.summary.checkpoint).toBe(48_000_001);
  });

  it('holds a lone first event beyond the bound, and publishes it once a later read corroborates it', async () => {
    const w = world([makeEvent(48_000_000)]);

    const first = await w.run();
    w.feed.append(makeEvent(48_000_001));
    const second = await w.run();
    const third = await w.run();

    expect(first.summary.checkpoint).toBeNull();
    expect(maxGauge(first.metrics)).toBe(1);
    expect(numbers(w.quarantined())).toEqual([48_000_000]);
    // The poll asks from the beginning again (the held event was never registered): 48,000,000
    // comes first, the next one corroborates it, and the checkpoint passes its record.
    expect(numbers(w.published())).toEqual([48_000_000, 48_000_001]);
    expect(second.summary.checkpoint).toBe(48_000_001);
    expect(await w.store().read()).toMatchObject({ checkpoint: 48_000_001, heldJumps: [] });
    expect(maxGauge(third.metrics)).toBe(0);
  });

  it('holds 1,000,000 and 2^53 − 1 as a first read, and publishes what the bank creates below them', async () => {
    const w = world([1_000_000, MAX].map((n) => makeEvent(n)));

    const first = await w.run();
    w.feed.append(makeEvent(1), makeEvent(2));
    const second = await w.run();

    expect(first.summary.checkpoint).toBeNull();
    expect(numbers(w.quarantined())).toEqual([1_000_000]);
    expect(numbers(w.published())).toEqual([1, 2]);
    expect(second.summary.checkpoint).toBe(2);
  });

  it('starting at latest over a backlog numbered from 48,000,000, passes it over on its first run without an operator', async () => {
    const old = { created_dt: '2020-01-01T00:00:00.000Z' };
    const w = world(Array.from({ length: 30 }, (_, i) => makeEvent(48_000_000 + i, old)));
    const latest = { startPosition: { position: { kind: 'latest' as const }, pageLimit: 10 } };

    const first = await w.run(latest);
    w.feed.append(makeEvent(48_000_030));
    const second = await w.run(latest);

    expect(first.summary.checkpoint).toBe(48_000_029);
    expect(maxGauge(first.metrics)).toBe(0);
    expect(w.quarantined()).toEqual([]);
    expect(numbers(w.published())).toEqual([48_000_030]);
    expect((await w.store().read()).heldJumps ?? []).toEqual([]);
    expect(second.summary.checkpoint).toBe(48_000_030);
  });

  it('starting at latest over a lone event beyond the bound, holds it until rewind --to latest passes it over', async () => {
    const w = world([makeEvent(48_000_000, { created_dt: '2020-01-01T00:00:00.000Z' })]);
    const latest = { startPosition: { position: { kind: 'latest' as const }, pageLimit: 10 } };

    const first = await w.run(latest);
    // The operator's rewind --to latest, which walks the feed as it is, between runs.
    await w.moveCheckpoint(48_000_000);
    w.feed.append(makeEvent(48_000_001));
    const second = await w.run(latest);

    expect(first.summary.checkpoint).toBeNull();
    expect(maxGauge(first.metrics)).toBe(1);
    expect(numbers(w.quarantined())).toEqual([48_000_000]);
    expect(numbers(w.published())).toEqual([48_000_001]);
    expect(maxGauge(second.metrics)).toBe(0);
    expect(await w.store().read()).toMatchObject({ checkpoint: 48_000_001, heldJumps: [] });
  });

  it('starting at latest, lands below a jump in the backlog and publishes what comes below it', async () => {
    const w = world([1, 2, 3, MAX].map((n) => makeEvent(n, { created_dt: '2020-01-01T00:00:00.000Z' })));
    const latest = { startPosition: { position: { kind: 'latest' as const }, pageLimit: 100 } };

    const first = await w.run(latest);
    w.feed.append(makeEvent(4), makeEvent(5));
    const second = await w.run(latest);

    expect(first.summary.checkpoint).toBe(3);
    expect(numbers(w.quarantined())).toEqual([MAX]);
    expect(numbers(w.published())).toEqual([4, 5]);
    expect(second.summary.checkpoint).toBe(5);
  });
});

describe('in stream mode, 1, 2, 3 and 2^53 − 1 in one message', () => {
  const message = (lastEventId: number | null, ...events: Array<number | BankingEvent>): StreamMessage => ({
    kind: 'events',
    lastEventId,
    events: events.map((event) => ({
      event: typeof event === 'number' ? makeEvent(event) : event,
      needsRecovery: false,
    })),
  });

  it('publishes 1..3, quarantines the jump once, publishes 4 and 5, and never resumes past 5', async () => {
    const w = world([]);
    const stream = new ScriptedStream(w.clock);
    const jump = makeEvent(MAX);
    stream.connection(
      { message: message(MAX, 1, 2, 3, jump) },
      { afterMs: 2_000, message: message(5, 4, 5) },
      { afterMs: 1_000, end: true },
    );
    // The next connection, after 5, brings the held event again.
    stream.connection({ message: message(MAX, jump) });

    const { summary, metrics } = await w.run({ feedMode: 'stream' }, { stream });

    expect(numbers(w.published())).toEqual([1, 2, 3, 4, 5]);
    expect(numbers(w.quarantined())).toEqual([MAX]);
    expect(summary.checkpoint).toBe(5);
    expect(stream.opens.slice(0, 2)).toEqual([null, 5]);
    expect(maxGauge(metrics)).toBe(1);
  });

  it("waits for a row's lone first event beyond the bound to be corroborated, as long as a micro-batch lingers", async () => {
    const w = world([]);
    const stream = new ScriptedStream(w.clock);
    // One event per message, the second 50 ms after the first: within the 100 ms linger.
    stream.connection(
      { message: message(48_000_000, 48_000_000) },
      { afterMs: 50, message: message(48_000_001, 48_000_001) },
      { afterMs: 1_000, message: message(48_000_002, 48_000_002) },
      { afterMs: 1_000, end: true },
    );

    const { summary, metrics } = await w.run({ feedMode: 'stream' }, { stream });

    expect(numbers(w.published())).toEqual([48_000_000, 48_000_001, 48_000_002]);
    expect(w.quarantined()).toEqual([]);
    expect(maxGauge(metrics)).toBe(0);
    expect(summary.checkpoint).toBe(48_000_002);
  });

  it('holds a lone first event the linger did not see corroborated, and never passes it by', async () => {
    const w = world([]);
    const stream = new ScriptedStream(w.clock);
    stream.connection(
      { message: message(48_000_000, 48_000_000) },
      { afterMs: 2_000, message: message(48_000_002, 48_000_001, 48_000_002) },
      { afterMs: 1_000, end: true },
    );

    const { summary } = await w.run({ feedMode: 'stream' }, { stream });

    expect(numbers(w.quarantined())[0]).toBe(48_000_000);
    expect(w.published()).toEqual([]);
    expect(summary.checkpoint).toBeNull();
  });

  it('does not resume after a message id implausibly far past the events before it', async () => {
    const w = world([]);
    const stream = new ScriptedStream(w.clock);
    stream.connection(
      { message: message(2, 1, 2) },
      { message: message(MAX) },
      { afterMs: 1_000, end: true },
    );
    stream.connection({ afterMs: 1_000, message: message(3, 3) });

    const { summary } = await w.run({ feedMode: 'stream' }, { stream });

    expect(stream.opens.slice(0, 2)).toEqual([null, 2]);
    expect(summary.checkpoint).toBe(3);
  });
});
