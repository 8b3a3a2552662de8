import { describe, expect, it } from 'vitest';
import { CLASSIC_BUS_ENTRY_RULES } from '../../../functions/adapters/aws/eventbridge-entry-rules.ts';
import { MemoryCheckpointStore } from '../../../functions/adapters/local/memory-checkpoint-store.ts';
import type { CheckpointStore } from '../../../functions/core/checkpoint/store.ts';
import { computeDeadline, computeHardDeadline } from '../../../functions/core/cycle-budget.ts';
import {
  AuthenticationError,
  ConfigurationError,
  DeadlineExceededError,
  FeedCursorError,
  FeedProgramMismatchError,
  LeaseLostError,
  PublishError,
  UpstreamHttpError,
} from '../../../functions/core/errors.ts';
import { parsePollResponse } from '../../../functions/core/event-model.ts';
import { MAX_UNCOMMITTED, runPollCycle } from '../../../functions/core/poll-cycle.ts';
import { createRandom } from '../../../functions/simulator/seeded-random.ts';
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

function setup(eventCount: number, options: { limit?: number; committed?: number } = {}) {
  const clock = new FakeClock();
  const events = Array.from({ length: eventCount }, (_, i) => makeEvent(i + 1));
  const feed = new InMemoryFeed(clock, events, { limit: options.limit ?? 25 });
  const publisher = new InMemoryPublisher();
  const checkpoints = new MemoryCheckpointStore({
    initial: { checkpoint: options.committed ?? null },
    now: () => clock.now(),
  });
  const metrics = new RecordingMetrics();
  const logger = new RecordingLogger();
  const deps = { feed, publisher, checkpoints, clock, metrics, logger, random: () => 0.5 };
  return { clock, events, feed, publisher, checkpoints, metrics, logger, deps };
}

const invocation = { program: 'default', owner: 'req-1', remainingMs: 60_000 };

describe('runPollCycle', () => {
  it('publishes every event once, in pages, and checkpoints the last sequence number', async () => {
    const { deps, publisher, checkpoints, feed } = setup(60);

    const summary = await runPollCycle(deps, invocation);

    expect(publisher.accepted.map((e) => e.sequence_number)).toEqual(
      Array.from({ length: 60 }, (_, i) => i + 1),
    );
    expect(summary).toMatchObject({
      status: 'completed',
      published: 60,
      checkpoint: 60,
      startCheckpoint: null,
    });
    expect((await checkpoints.read()).checkpoint).toBe(60);
    // Cursor omitted first, then each page's last committed sequence number.
    expect(feed.requests.slice(0, 4)).toEqual([null, 25, 50, 60]);
  });

  it('resumes after the committed checkpoint and publishes nothing twice', async () => {
    const { deps, publisher } = setup(30, { committed: 20 });

    const summary = await runPollCycle(deps, invocation);

    expect(publisher.accepted.map((e) => e.sequence_number)).toEqual([
      21, 22, 23, 24, 25, 26, 27, 28, 29, 30,
    ]);
    expect(summary.startCheckpoint).toBe(20);
  });

  it('skips events at or below the checkpoint and ids repeated within a page', async () => {
    const { deps, publisher, feed, clock } = setup(0, { committed: 5 });
    const repeated = makeEvent(7);
    feed.script({
      page: {
        events: [makeEvent(4), makeEvent(5), makeEvent(6), repeated, { ...repeated }],
        lastSequenceNumber: 7,
      },
    });
    void clock;

    await runPollCycle(deps, invocation);

    expect(publisher.accepted.map((e) => e.sequence_number)).toEqual([6, 7]);
  });

  it('stops before the deadline: remaining time minus min(safety margin, a quarter of it)', async () => {
    const { deps, clock } = setup(0);
    const start = clock.now();

    const summary = await runPollCycle(deps, { ...invocation, remainingMs: 60_000, safetyMarginMs: 10_000 });

    // 20 s long-polls: the one started at 40 s is aborted at the 50 s deadline, losing nothing.
    expect(clock.now() - start).toBe(50_000);
    expect(summary).toMatchObject({ durationMs: 50_000, polls: 2, stopReason: 'deadline' });
    expect(computeDeadline(0, 8_000, 10_000)).toBe(6_000);
    expect(computeDeadline(0, 900_000, 10_000)).toBe(890_000);
  });

  it('does not start a poll when less than the minimum poll window is left', async () => {
    const { deps, feed } = setup(5);

    const summary = await runPollCycle(deps, { ...invocation, remainingMs: 2_000, minPollWindowMs: 2_000 });

    expect(feed.requests).toHaveLength(0);
    expect(summary.published).toBe(0);
  });

  it('checkpoints only the contiguous prefix when an entry stays rejected, then fails loudly', async () => {
    const { deps, publisher, checkpoints } = setup(10);
    publisher.rejectSequence(4);

    const run = runPollCycle(deps, { ...invocation, publish: { maxAttempts: 3 } });

    await expect(run).rejects.toBeInstanceOf(PublishError);
    await expect(run).rejects.toThrow(/sequence 4/);
    expect((await checkpoints.read()).checkpoint).toBe(3);
    // Events after 4 in the same batch were accepted; they come again next time (bounded duplicates).
    expect(publisher.accepted.map((e) => e.sequence_number)).toEqual([1, 2, 3, 5, 6, 7, 8, 9, 10]);
    expect((await checkpoints.read()).lease).toBeNull();
  });

  it('resends only the rejected entries and succeeds when they are accepted later', async () => {
    const { deps, publisher, metrics } = setup(10);
    publisher.rejectSequence(4, 2);
    publisher.rejectSequence(9, 1);

    const summary = await runPollCycle(deps, invocation);

    expect(summary.checkpoint).toBe(10);
    expect(publisher.batches[0]).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(publisher.batches[1]).toEqual([4, 9]);
    expect(publisher.batches[2]).toEqual([4]);
    expect(metrics.sum('PublishRetries')).toBe(3);
    expect(metrics.sum('FailedEntries')).toBe(3);
  });

  it('retries a poll after 503 honouring Retry-After, and after 500 with jittered backoff', async () => {
    const { deps, feed, clock, metrics } = setup(3);
    feed
      .script({ error: new UpstreamHttpError('busy', { status: 503, retryable: true, retryAfterMs: 7_000 }) })
      .script({ error: new UpstreamHttpError('boom', { status: 500, retryable: true }) });

    const summary = await runPollCycle(deps, invocation);

    expect(summary.published).toBe(3);
    // Second consecutive failure: full jitter over min(cap, 200·2¹) = 400 ms, with random() = 0.5.
    expect(clock.sleeps.slice(0, 2)).toEqual([7_000, 200]);
    expect(metrics.sum('PollErrors')).toBe(2);
  });

  it('gives up waiting when Retry-After is beyond the budget, without losing anything', async () => {
    const { deps, feed, clock, checkpoints } = setup(3);
    feed.script({ page: { events: [makeEvent(1)], lastSequenceNumber: 1 } });
    feed.script({
      error: new UpstreamHttpError('slow down', { status: 429, retryable: true, retryAfterMs: 120_000 }),
    });

    const summary = await runPollCycle(deps, invocation);

    expect(summary).toMatchObject({ published: 1, checkpoint: 1, stopReason: 'upstream-unavailable' });
    expect(clock.sleeps).toEqual([]);
    expect((await checkpoints.read()).checkpoint).toBe(1);
  });

  it('throws the last error when the feed never answered in the whole invocation', async () => {
    const { deps, feed } = setup(0);
    for (let i = 0; i < 200; i += 1) {
      feed.script({ error: new UpstreamHttpError('down', { status: 502, retryable: true }) });
    }

    await expect(runPollCycle(deps, invocation)).rejects.toMatchObject({ status: 502 });
  });

  it('stops at once on a non-retryable error and keeps the checkpoint', async () => {
    const { deps, feed, checkpoints, metrics } = setup(0, { committed: 9 });
    feed.script({ error: new AuthenticationError('refused') });

    await expect(runPollCycle(deps, invocation)).rejects.toBeInstanceOf(AuthenticationError);
    expect(await checkpoints.read()).toMatchObject({ checkpoint: 9, lease: null });
    expect(metrics.sum('CycleDurationMs')).toBe(0);
  });

  it('returns at once without polling when another invocation holds a live lease', async () => {
    const { deps, feed, checkpoints, clock, metrics } = setup(5);
    await checkpoints.acquireLease({ owner: 'other', expiresAt: clock.now() + 30_000, now: clock.now() });

    const summary = await runPollCycle(deps, invocation);

    expect(summary).toMatchObject({ status: 'lease-busy', published: 0 });
    expect(feed.requests).toHaveLength(0);
    expect(metrics.sum('LeaseBusy')).toBe(1);
  });

  it('takes over an expired lease', async () => {
    const { deps, checkpoints, clock } = setup(5);
    await checkpoints.acquireLease({
      owner: 'crashed',
      expiresAt: clock.now() - 1,
      now: clock.now() - 60_000,
    });

    const summary = await runPollCycle(deps, invocation);

    expect(summary).toMatchObject({ status: 'completed', published: 5 });
  });

  it('sets the lease expiry to the end of the invocation plus at most 5 s of skew', async () => {
    const { deps, checkpoints, clock } = setup(0);
    const start = clock.now();
    let seen: number | undefined;
    const original = checkpoints.acquireLease.bind(checkpoints);
    checkpoints.acquireLease = async (request) => {
      seen = request.expiresAt;
      return original(request);
    };

    await runPollCycle(deps, { ...invocation, remainingMs: 30_000, leaseSkewMs: 60_000 });

    expect(seen).toBe(start + 30_000 + 5_000);
  });

  it('reports lag from the newest published event, and 0 once caught up', async () => {
    const { deps, clock, metrics } = setup(0);
    const created = new Date(clock.now() - 90_000).toISOString();
    deps.feed.append(makeEvent(1, { created_dt: created }));

    await runPollCycle(deps, invocation);

    const lags = metrics.values.filter((m) => m.name === 'LagSeconds').map((m) => m.value);
    expect(lags[0]).toBe(90);
    expect(lags.at(-1)).toBe(0);
    expect(metrics.last('CheckpointSequence')).toBe(1);
    expect(metrics.sum('CycleDurationMs')).toBeGreaterThan(0);
  });

  it('stops polling when the stop signal fires, after committing what it published', async () => {
    const { deps, checkpoints } = setup(60, { limit: 10 });
    const stop = new AbortController();
    const publisherSend = deps.publisher.send.bind(deps.publisher);
    deps.publisher.send = async (batch, signal) => {
      const result = await publisherSend(batch, signal);
      if (batch[0]?.sequence_number === 11) stop.abort();
      return result;
    };

    const summary = await runPollCycle(deps, { ...invocation, stopSignal: stop.signal });

    // Pages already polled when Ctrl-C came are published (at most the four in flight), no more.
    expect(summary.stopReason).toBe('stopped');
    expect(summary.published).toBeGreaterThanOrEqual(20);
    expect(summary.published).toBeLessThan(60);
    expect(summary.checkpoint).toBe(summary.published);
    expect((await checkpoints.read()).checkpoint).toBe(summary.published);
  });
});

describe('runPollCycle with a misconfigured bus', () => {
  it('does not retry a configuration error and reports its message', async () => {
    const { deps, publisher, checkpoints } = setup(3);
    publisher.failNextRequests(new ConfigurationError('EventBridge bus missing-bus does not exist'));

    await expect(runPollCycle(deps, invocation)).rejects.toThrow(
      /first: .*sequence 1: CONFIGURATION_INVALID: EventBridge bus missing-bus does not exist/,
    );
    expect(publisher.batches).toHaveLength(1);
    expect((await checkpoints.read()).checkpoint).toBeNull();
  });
});

describe('runPollCycle at the deadline', () => {
  it('lets a PutEvents in flight at the soft deadline finish and commits it', async () => {
    const { deps, publisher, clock, checkpoints } = setup(5);
    const send = publisher.send.bind(publisher);
    publisher.send = async (batch, signal) => {
      clock.advance(52_000); // a slow PutEvents that outlasts the 50 s soft deadline
      return send(batch, signal);
    };

    const summary = await runPollCycle(deps, { ...invocation, remainingMs: 60_000, safetyMarginMs: 10_000 });

    expect(summary).toMatchObject({ published: 5, checkpoint: 5 });
    expect((await checkpoints.read()).checkpoint).toBe(5);
    expect(computeHardDeadline(0, 60_000)).toBe(59_000);
    expect(computeHardDeadline(0, 4_000)).toBe(3_600);
  });
});

describe('runPollCycle with sequence gaps', () => {
  it('publishes around a gap and warns with the missing range', async () => {
    const { deps, feed, publisher, logger, metrics } = setup(0, { committed: 3 });
    feed.script({ page: { events: [makeEvent(4), makeEvent(7)], lastSequenceNumber: 7 } });

    const summary = await runPollCycle(deps, invocation);

    expect(publisher.accepted.map((e) => e.sequence_number)).toEqual([4, 7]);
    expect(summary.checkpoint).toBe(7);
    expect(metrics.sum('SequenceGaps')).toBe(2);
    expect(logger.lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        attributes: expect.objectContaining({ gaps: [{ from: 5, to: 6 }] }),
      }),
    );
  });
});

describe('runPollCycle with a checkpoint write that hangs', () => {
  it(`reads no further page once ${MAX_UNCOMMITTED} accepted numbers wait for it, and goes on when it lands`, async () => {
    const { deps, publisher, checkpoints } = setup(3_000, { limit: 100 });
    // The first write hangs until released (a DynamoDB call held, a lease being taken over).
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let writes = 0;
    let acceptedWhileHeld = 0;
    const slowStore: CheckpointStore = {
      acquireLease: (request) => checkpoints.acquireLease(request),
      recordStart: (request) => checkpoints.recordStart(request),
      recordHighestSeen: (request) => checkpoints.recordHighestSeen(request),
      releaseLease: (owner, options) => checkpoints.releaseLease(owner, options),
      read: () => checkpoints.read(),
      commit: async (request) => {
        if (writes++ === 0) {
          // Give the pump every chance to run ahead, then look at what it did meanwhile.
          for (let turn = 0; turn < 200; turn += 1) await deps.clock.sleep(10);
          acceptedWhileHeld = publisher.accepted.length;
          release();
        }
        await held;
        return checkpoints.commit(request);
      },
    };

    const summary = await runPollCycle({ ...deps, checkpoints: slowStore }, invocation);

    // The window, plus the pages already being published when it filled (4 of 100).
    expect(acceptedWhileHeld).toBeGreaterThan(0);
    expect(acceptedWhileHeld).toBeLessThanOrEqual(MAX_UNCOMMITTED + 4 * 100);
    expect(summary).toMatchObject({ published: 3_000, checkpoint: 3_000 });
  });
});

describe('runPollCycle repairing gaps', () => {
  it('publishes a skipped event the lookup finds with its page, in order, and records what stays missing', async () => {
    const { deps, feed, publisher, metrics, checkpoints, clock } = setup(0, { committed: 3 });
    const lookup = new InMemoryLookup(clock, [makeEvent(5)]);
    feed.script({ page: { events: [makeEvent(4), makeEvent(7)], lastSequenceNumber: 7 } });

    const summary = await runPollCycle({ ...deps, lookup }, invocation);

    expect(publisher.batches[0]).toEqual([4, 5, 7]);
    expect(summary).toMatchObject({ published: 3, checkpoint: 7 });
    expect(metrics.sum('SequenceGaps')).toBe(2);
    expect(metrics.sum('GapsRepaired')).toBe(1);
    expect((await checkpoints.read()).openGaps).toEqual([{ from: 6, to: 6, seenAt: expect.any(Number) }]);
  });

  it('looks a young gap up again while it polls, and publishes the event filled in late', async () => {
    const { deps, feed, publisher, metrics, checkpoints, clock } = setup(0, { committed: 3 });
    const lookup = new InMemoryLookup(clock);
    feed.script({ page: { events: [makeEvent(4), makeEvent(6)], lastSequenceNumber: 6 } });
    const filled = makeEvent(5);
    // The service fills 5 in after the run has passed it.
    void clock.sleep(5_000).then(() => lookup.add(filled));

    await runPollCycle({ ...deps, lookup }, invocation);

    expect(publisher.accepted.map((e) => e.sequence_number)).toEqual([4, 6, 5]);
    expect(metrics.sum('GapsRepaired')).toBe(1);
    expect(lookup.bySequence.filter((n) => n === 5).length).toBeGreaterThanOrEqual(3);
    expect((await checkpoints.read()).openGaps).toEqual([]);
  });

  it('publishes a skipped event that fails validation as invalid_event, and counts it', async () => {
    const { deps, feed, publisher, metrics, clock } = setup(0, { committed: 3 });
    const value = { data: [{ id: 'e-5', program_id: 'program-1', sequence_number: 5, type: 'TRANSACTION' }] };
    const [broken] = parsePollResponse(
      { text: JSON.stringify(value), value },
      { source: 'GET /events', status: 200 },
      CLASSIC_BUS_ENTRY_RULES,
    ).events;
    const lookup = new InMemoryLookup(clock, [broken!]);
    feed.script({ page: { events: [makeEvent(4), makeEvent(6)], lastSequenceNumber: 6 } });

    const summary = await runPollCycle({ ...deps, lookup }, invocation);

    expect(publisher.accepted.map((e) => [e.sequence_number, e.type])).toEqual([
      [4, 'transaction'],
      [5, 'invalid_event'],
      [6, 'transaction'],
    ]);
    expect(summary.checkpoint).toBe(6);
    expect(metrics.sum('InvalidEvents')).toBe(1);
  });

  it('gives a gap up after its grace, once, and writes that with the checkpoint', async () => {
    const { deps, checkpoints, metrics, clock } = setup(0, { committed: 10 });
    const lookup = new InMemoryLookup(clock);
    await checkpoints.acquireLease({ owner: 'before', expiresAt: clock.now() + 1, now: clock.now() });
    await checkpoints.commit({
      owner: 'before',
      sequenceNumber: 10,
      feedProgramId: 'program-1',
      openGaps: [{ from: 8, to: 9, seenAt: clock.now() - 400_000 }],
    });
    await checkpoints.releaseLease('before');

    await runPollCycle({ ...deps, lookup }, invocation);
    await runPollCycle({ ...deps, lookup }, { ...invocation, owner: 'req-2' });

    expect(metrics.sum('GapsUnfilled')).toBe(2);
    expect(lookup.bySequence).toEqual([]);
    expect((await checkpoints.read()).openGaps).toEqual([
      { from: 8, to: 9, seenAt: expect.any(Number), gaveUpAt: expect.any(Number) },
    ]);
  });

  it('does no lookups with gap repair turned off', async () => {
    const { deps, feed, publisher, clock } = setup(0, { committed: 3 });
    const lookup = new InMemoryLookup(clock, [makeEvent(5)]);
    feed.script({ page: { events: [makeEvent(4), makeEvent(6)], lastSequenceNumber: 6 } });

    await runPollCycle({ ...deps, lookup }, { ...invocation, gapRepair: { maxLookups: 0 } });

    expect(publisher.accepted.map((e) => e.sequence_number)).toEqual([4, 6]);
    expect(lookup.bySequence).toEqual([]);
  });
});

describe('runPollCycle in stream mode', () => {
  it('publishes what the stream delivers and checkpoints it, with the same guarantees', async () => {
    const { deps, publisher, checkpoints, clock, metrics } = setup(0, { committed: 2 });
    const stream = new ScriptedStream(clock);
    const message = (from: number, to: number) => ({
      kind: 'events' as const,
      lastEventId: to,
      events: Array.from({ length: to - from + 1 }, (_, i) => ({
        event: makeEvent(from + i),
        needsRecovery: false,
      })),
    });
    stream.connection(
      { message: message(3, 14) },
      { afterMs: 2_000, message: message(15, 16) },
      { end: true },
    );

    const summary = await runPollCycle({ ...deps, stream }, { ...invocation, feedMode: 'stream' });

    expect(publisher.accepted.map((e) => e.sequence_number)).toEqual(
      Array.from({ length: 14 }, (_, i) => i + 3),
    );
    expect(summary).toMatchObject({ published: 14, checkpoint: 16, lagSeconds: 0, stopReason: 'deadline' });
    expect(stream.opens[0]).toBe(2);
    expect(stream.opens[1]).toBe(16);
    expect((await checkpoints.read()).checkpoint).toBe(16);
    expect(metrics.sum('CycleDurationMs')).toBeGreaterThan(0);
  });

  it('refuses stream mode without a stream, before it takes the lease', async () => {
    const { deps, checkpoints } = setup(0);

    await expect(runPollCycle(deps, { ...invocation, feedMode: 'stream' })).rejects.toThrow(
      ConfigurationError,
    );
    expect((await checkpoints.read()).lease).toBeNull();
  });
});

describe('runPollCycle with a feed that ignores the cursor', () => {
  it('backs off instead of looping, never reports caught up, and fails with a cursor error', async () => {
    const clock = new FakeClock();
    const feed = new InMemoryFeed(clock, [makeEvent(1), makeEvent(2)], { ignoreCursor: true });
    const publisher = new InMemoryPublisher();
    const checkpoints = new MemoryCheckpointStore({ now: () => clock.now() });
    const metrics = new RecordingMetrics();
    const deps = {
      feed,
      publisher,
      checkpoints,
      clock,
      metrics,
      logger: new RecordingLogger(),
      random: () => 0.5,
    };

    const run = runPollCycle(deps, invocation);

    // The first poll publishes 1 and 2; every later answer is the same old page.
    await expect(run).resolves.toMatchObject({ published: 2, checkpoint: 2 });
    expect(feed.requests.length).toBeLessThan(30);
    expect(metrics.sum('PollErrors')).toBe(feed.requests.length - 1);
    expect(metrics.values.filter((m) => m.name === 'LagSeconds').map((m) => m.value)).not.toContain(0);

    const again = runPollCycle(deps, { ...invocation, owner: 'req-2' });
    await expect(again).rejects.toBeInstanceOf(FeedCursorError);
    await expect(again).rejects.toThrow(/only events at or below the cursor 2: .*check POLL_CURSOR_PARAM/);
    expect((await checkpoints.read()).checkpoint).toBe(2);
  });
});

describe('runPollCycle against an upstream that answers empty at once', () => {
  it('paces empty polls to at most one per second instead of looping hot', async () => {
    const clock = new FakeClock();
    const feed = new InMemoryFeed(clock, [], { holdMs: 0 });
    const deps = {
      feed,
      publisher: new InMemoryPublisher(),
      checkpoints: new MemoryCheckpointStore({ now: () => clock.now() }),
      clock,
      metrics: new RecordingMetrics(),
      logger: new RecordingLogger(),
    };

    await runPollCycle(deps, { ...invocation, remainingMs: 60_000 });

    // 50 s of budget (60 s minus the 10 s margin), less the final 2 s poll window.
    expect(feed.requests.length).toBeGreaterThanOrEqual(45);
    expect(feed.requests.length).toBeLessThanOrEqual(50);
  });
});

describe('runPollCycle when the feed numbers two distinct events alike', () => {
  it('publishes both rather than dropping one or stopping', async () => {
    const { deps, feed, publisher } = setup(0, { committed: 1 });
    const first = makeEvent(2);
    const second = makeEvent(2, { id: 'another-event' });
    feed.script({ page: { events: [first, second, makeEvent(3)], lastSequenceNumber: 3 } });

    const summary = await runPollCycle(deps, invocation);

    expect(publisher.accepted.map((e) => e.id)).toEqual([first.id, 'another-event', expect.any(String)]);
    expect(summary.checkpoint).toBe(3);
  });
});

describe('runPollCycle against a throttling upstream that says Retry-After: 0', () => {
  it('still backs off, so the requests stay few', async () => {
    const { deps, feed, clock } = setup(0);
    for (let i = 0; i < 1_000; i += 1) {
      feed.script({
        error: new UpstreamHttpError('slow down', { status: 429, retryable: true, retryAfterMs: 0 }),
      });
    }

    await expect(runPollCycle(deps, invocation)).rejects.toMatchObject({ status: 429 });

    expect(feed.requests.length).toBeLessThan(40);
    expect(Math.min(...clock.sleeps)).toBeGreaterThanOrEqual(100);
  });
});

describe('runPollCycle when the checkpoint store hangs', () => {
  it('bounds the commit and the lease release by the end of the invocation', async () => {
    const { deps, checkpoints, clock, logger } = setup(3);
    const signals: Array<AbortSignal | undefined> = [];
    checkpoints.commit = async ({ signal }) => {
      signals.push(signal);
      clock.advance(70_000); // DynamoDB hangs past the end of the invocation
      signal?.throwIfAborted();
    };
    const release = checkpoints.releaseLease.bind(checkpoints);
    checkpoints.releaseLease = async (owner, options) => {
      signals.push(options?.signal);
      return release(owner, options);
    };

    await expect(runPollCycle(deps, invocation)).rejects.toMatchObject({ code: 'DEADLINE_EXCEEDED' });

    expect(signals).toHaveLength(2);
    expect(signals.every((signal) => signal?.aborted)).toBe(true);
    expect(logger.lines.some((line) => line.message.startsWith('Could not release the lease'))).toBe(true);
  });
});

describe('runPollCycle against a gateway that times polls out (408/504)', () => {
  const timedOut = { page: { events: [], lastSequenceNumber: null, timedOut: true } } as const;

  it('counts PollTimeouts, never reports caught up, and is not a healthy cycle when every poll timed out', async () => {
    const { deps, feed, metrics, logger } = setup(0);
    for (let i = 0; i < 100; i += 1) feed.script(timedOut);

    const summary = await runPollCycle(deps, invocation);

    expect(summary.pollTimeouts).toBe(summary.polls);
    expect(summary.polls).toBeGreaterThanOrEqual(45);
    expect(metrics.sum('PollTimeouts')).toBe(summary.polls);
    expect(metrics.values.some((m) => m.name === 'LagSeconds')).toBe(false);
    expect(summary.lagSeconds).toBeNull();
    expect(metrics.sum('CycleDurationMs')).toBe(0);
    expect(logger.lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: expect.stringMatching(/Every poll .* gateway timeout/),
      }),
    );
  });

  it('paces timed-out polls like empty ones instead of looping hot', async () => {
    const { deps, feed } = setup(0);
    for (let i = 0; i < 1_000; i += 1) feed.script(timedOut);

    await runPollCycle(deps, invocation);

    // 50 s of budget at one request per second at most.
    expect(feed.requests.length).toBeLessThanOrEqual(50);
  });

  it('is a healthy cycle once the feed really answers, and reports lag 0 only then', async () => {
    const { deps, feed, metrics } = setup(0);
    feed.script(timedOut).script(timedOut);

    const summary = await runPollCycle(deps, invocation);

    expect(summary.pollTimeouts).toBe(2);
    expect(summary.polls).toBeGreaterThan(2);
    expect(metrics.sum('CycleDurationMs')).toBeGreaterThan(0);
    expect(metrics.last('LagSeconds')).toBe(0);
  });
});

describe('runPollCycle bound to one feed', () => {
  it("refuses events of another program_id than the row's: nothing published, checkpoint untouched", async () => {
    const { deps, feed, publisher, checkpoints } = setup(0);
    feed.append(makeEvent(1), makeEvent(2));
    await runPollCycle(deps, invocation);
    feed.append(makeEvent(3, { program_id: 'program-2' }), makeEvent(4, { program_id: 'program-2' }));

    const run = runPollCycle(deps, { ...invocation, owner: 'req-2' });

    await expect(run).rejects.toBeInstanceOf(FeedProgramMismatchError);
    await expect(run).rejects.toMatchObject({
      code: 'FEED_PROGRAM_MISMATCH',
      context: { expectedProgramId: 'program-1', receivedProgramId: 'program-2', sequenceNumber: 3 },
    });
    expect(publisher.accepted.map((e) => e.sequence_number)).toEqual([1, 2]);
    expect(await checkpoints.read()).toMatchObject({
      checkpoint: 2,
      feedProgramId: 'program-1',
      lease: null,
    });
  });

  it('refuses a first page that mixes programs before the row has recorded one', async () => {
    const { deps, feed, publisher, checkpoints } = setup(0);
    feed.append(makeEvent(1), makeEvent(2, { program_id: 'program-2' }));

    await expect(runPollCycle(deps, invocation)).rejects.toBeInstanceOf(FeedProgramMismatchError);
    expect(publisher.accepted).toEqual([]);
    expect(await checkpoints.read()).toMatchObject({ checkpoint: null, feedProgramId: null });
  });
});

describe('runPollCycle at the end of the invocation', () => {
  it('reports a PutEvents cut off by the invocation end as DEADLINE_EXCEEDED, checkpoint before it', async () => {
    const { deps, publisher, clock, checkpoints } = setup(20, { limit: 10 });
    const send = publisher.send.bind(publisher);
    publisher.send = async (batch, signal) => {
      if (batch[0]!.sequence_number === 11) await clock.sleep(60_000, signal); // hangs past Lambda's end
      return send(batch, signal);
    };

    const run = runPollCycle(deps, invocation);

    await expect(run).rejects.toBeInstanceOf(DeadlineExceededError);
    await expect(run).rejects.toThrow(/ended while 10 event\(s\) were being published .*stays at 10/);
    expect((await checkpoints.read()).checkpoint).toBe(10);
  });

  it.each([
    ['completes', (_: ReturnType<typeof setup>) => {}],
    [
      'fails',
      ({ feed }: ReturnType<typeof setup>) => feed.script({ error: new AuthenticationError('refused') }),
    ],
    [
      'finds the lease busy',
      ({ checkpoints, clock }: ReturnType<typeof setup>) =>
        void checkpoints.acquireLease({ owner: 'other', expiresAt: clock.now() + 90_000, now: clock.now() }),
    ],
  ])('leaves no deadline timer running when it %s', async (_label, arrange) => {
    const context = setup(5);
    arrange(context);

    await runPollCycle(context.deps, invocation).catch(() => undefined);

    expect(context.clock.activeDeadlines).toBe(0);
  });
});

describe('runPollCycle with late events', () => {
  it('publishes an event filled late into a gap it recorded, and remembers that the gap is closed', async () => {
    const { deps, feed, publisher, checkpoints, metrics } = setup(0, { committed: 3 });
    feed.script({ page: { events: [makeEvent(4), makeEvent(7)], lastSequenceNumber: 7 } });
    await runPollCycle(deps, invocation);
    expect((await checkpoints.read()).openGaps).toEqual([{ from: 5, to: 6, seenAt: expect.any(Number) }]);
    const late = makeEvent(6);
    feed.script({ page: { events: [late, makeEvent(8)], lastSequenceNumber: 8 } });

    await runPollCycle(deps, { ...invocation, owner: 'req-2' });

    expect(publisher.accepted.map((e) => e.sequence_number)).toEqual([4, 7, 6, 8]);
    expect(metrics.sum('LateEvents')).toBe(1);
    expect(await checkpoints.read()).toMatchObject({
      checkpoint: 8,
      openGaps: [{ from: 5, to: 5, seenAt: expect.any(Number) }],
    });
  });

  it('counts an event sent again but does not publish it again', async () => {
    const { deps, feed, publisher, metrics, logger } = setup(3);
    await runPollCycle(deps, invocation);
    const resent = publisher.accepted[1]!;
    feed.script({ page: { events: [resent, makeEvent(4)], lastSequenceNumber: 4 } });

    await runPollCycle(deps, { ...invocation, owner: 'req-2' });

    expect(publisher.accepted.map((e) => e.sequence_number)).toEqual([1, 2, 3, 4]);
    expect(metrics.sum('LateEvents')).toBe(1);
    expect(logger.lines).toContainEqual(
      expect.objectContaining({
        message: expect.stringMatching(/came again; they were published before/),
        attributes: expect.objectContaining({ events: [{ id: resent.id, sequence_number: 2 }] }),
      }),
    );
  });

  it('writes the closed gap even when the checkpoint does not move', async () => {
    const { deps, feed, checkpoints } = setup(0, {
      committed: 3,
    });
    feed.script({ page: { events: [makeEvent(5)], lastSequenceNumber: 5 } });
    await runPollCycle(deps, invocation);
    feed.script({ page: { events: [makeEvent(4)], lastSequenceNumber: 5 } });

    await runPollCycle(deps, { ...invocation, owner: 'req-2' });

    expect(await checkpoints.read()).toMatchObject({ checkpoint: 5, openGaps: [] });
  });
});

describe('runPollCycle publishing concurrently', () => {
  /** The feed and the bus with latencies on the virtual clock; counts what overlaps. */
  function withLatencies(
    context: ReturnType<typeof setup>,
    latency: { pollMs: number; publishMs: () => number },
  ) {
    const { feed, publisher, clock } = context;
    const seen = { inFlight: 0, maxInFlight: 0, pollsDuringPublish: 0 };
    const poll = feed.poll.bind(feed);
    feed.poll = async (request) => {
      if (seen.inFlight > 0) seen.pollsDuringPublish += 1;
      await clock.sleep(latency.pollMs, request.signal);
      return poll(request);
    };
    const send = publisher.send.bind(publisher);
    publisher.send = async (batch, signal) => {
      seen.inFlight += 1;
      seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
      try {
        await clock.sleep(latency.publishMs(), signal);
        return await send(batch, signal);
      } finally {
        seen.inFlight -= 1;
      }
    };
    return seen;
  }

  it('polls the next page while the last ones publish, with up to `concurrency` PutEvents in flight', async () => {
    const context = setup(1_000, { limit: 100 });
    const seen = withLatencies(context, { pollMs: 25, publishMs: () => 15 });

    const summary = await runPollCycle(context.deps, { ...invocation, publish: { concurrency: 8 } });

    expect(summary).toMatchObject({ published: 1_000, checkpoint: 1_000 });
    expect(context.publisher.accepted.map((e) => e.sequence_number)).toEqual(
      Array.from({ length: 1_000 }, (_, i) => i + 1),
    );
    expect(seen.maxInFlight).toBe(8);
    expect(seen.pollsDuringPublish).toBeGreaterThanOrEqual(9);
  });

  it.each(Array.from({ length: 20 }, (_, i) => i + 1))(
    'never commits past an event the bus has not accepted, however batches interleave (seed %i)',
    async (seed) => {
      // Seeded, so every run of a test sees the same latencies.
      const random = createRandom(seed).next;
      const context = setup(600, { limit: 100 });
      const { publisher, checkpoints } = context;
      for (let sequence = 1; sequence <= 600; sequence += 1) {
        if (random() < 0.03) publisher.rejectSequence(sequence, 1 + Math.floor(random() * 2));
      }
      withLatencies(context, { pollMs: 10, publishMs: () => 1 + Math.floor(random() * 40) });
      const commits: number[] = [];
      const commit = checkpoints.commit.bind(checkpoints);
      checkpoints.commit = async (request) => {
        const accepted = new Set(publisher.accepted.map((e) => e.sequence_number));
        for (let n = 1; n <= request.sequenceNumber; n += 1) expect(accepted.has(n)).toBe(true);
        commits.push(request.sequenceNumber);
        return commit(request);
      };

      const summary = await runPollCycle({ ...context.deps, random }, invocation);

      expect(summary.checkpoint).toBe(600);
      expect(commits).toEqual([...commits].sort((a, b) => a - b));
      expect(new Set(publisher.accepted.map((e) => e.sequence_number)).size).toBe(600);
    },
  );

  it('stops sending once a batch fails for good: later pages are not published', async () => {
    const context = setup(2_000, { limit: 100 });
    context.publisher.rejectSequence(150);
    withLatencies(context, { pollMs: 25, publishMs: () => 15 });

    const run = runPollCycle(context.deps, { ...invocation, publish: { maxAttempts: 2 } });

    await expect(run).rejects.toBeInstanceOf(PublishError);
    expect((await context.checkpoints.read()).checkpoint).toBe(149);
    // Page 2 failed; at most the four pages in flight then were sent.
    expect(Math.max(...context.publisher.accepted.map((e) => e.sequence_number))).toBeLessThanOrEqual(600);
    expect(context.feed.requests.length).toBeLessThanOrEqual(7);
  });

  it('stops publishing at once when a checkpoint write finds the lease taken over', async () => {
    const context = setup(2_000, { limit: 100 });
    withLatencies(context, { pollMs: 25, publishMs: () => 15 });
    context.checkpoints.commit = async () => {
      throw new LeaseLostError('taken over');
    };

    await expect(runPollCycle(context.deps, invocation)).rejects.toBeInstanceOf(LeaseLostError);
    expect(context.publisher.accepted.length).toBeLessThanOrEqual(300);
  });
});

describe('runPollCycle handing the lease over', () => {
  const waiting = { ...invocation, owner: 'successor', leaseWaitMs: 20_000 };

  it('waits for the holder to release at its deadline, and takes over within one check interval', async () => {
    const { deps, checkpoints, clock, metrics } = setup(5);
    const start = clock.now();
    // The holder's deadline is 3 s away: its lease expires 10 s of margin and 5 s of skew after.
    await checkpoints.acquireLease({ owner: 'predecessor', expiresAt: start + 18_000, now: start });
    void clock.sleep(3_000).then(() => checkpoints.releaseLease('predecessor'));

    const summary = await runPollCycle(deps, waiting);

    expect(summary).toMatchObject({ status: 'completed', published: 5 });
    const waited = metrics.last('HandoverWaitMs')!;
    expect(waited).toBeGreaterThanOrEqual(3_000);
    expect(waited).toBeLessThanOrEqual(3_100);
    expect(metrics.sum('LeaseBusy')).toBe(0);
  });

  it('takes over a crashed holder once its lease expires', async () => {
    const { deps, checkpoints, clock } = setup(5);
    const start = clock.now();
    await checkpoints.acquireLease({ owner: 'crashed', expiresAt: start + 4_000, now: start });

    const summary = await runPollCycle(deps, waiting);

    expect(summary).toMatchObject({ status: 'completed', published: 5 });
  });

  it('gives up after the wait, counting LeaseBusy, when the holder neither releases nor expires', async () => {
    const { deps, checkpoints, clock, metrics, feed } = setup(5);
    await checkpoints.acquireLease({ owner: 'stuck', expiresAt: clock.now() + 600_000, now: clock.now() });
    const start = clock.now();

    const summary = await runPollCycle(deps, waiting);

    expect(summary.status).toBe('lease-busy');
    expect(clock.now() - start).toBe(20_000);
    expect(metrics.sum('LeaseBusy')).toBe(1);
    expect(feed.requests).toHaveLength(0);
  });

  it('never waits so long that no poll would fit before its own deadline', async () => {
    const { deps, checkpoints, clock } = setup(5);
    await checkpoints.acquireLease({ owner: 'stuck', expiresAt: clock.now() + 600_000, now: clock.now() });
    const start = clock.now();

    await runPollCycle(deps, { ...waiting, remainingMs: 10_000, leaseWaitMs: 60_000 });

    // 10 s budget: deadline at 7.5 s, minus the 2 s minimum poll window.
    expect(clock.now() - start).toBe(5_500);
  });
});

describe('runPollCycle handing the lease over: the reads of the wait', () => {
  // The schedule's defaults: ticks every 60 s, timeout 75 s, margin 10 s, skew 5 s, min poll window
  // 2 s, lease wait 20 s. The holder started 60 s ago: its lease expires at 20 s, it stops polling
  // 5 s after this run starts (a quiet feed: its last poll cut there) or up to 2 s earlier (a poll
  // that returns within its min poll window is its last).
  const successor = { ...invocation, owner: 'successor', remainingMs: 75_000, leaseWaitMs: 20_000 };

  function countingReads(checkpoints: MemoryCheckpointStore, clock: FakeClock): number[] {
    const reads: number[] = [];
    const read = checkpoints.read.bind(checkpoints);
    checkpoints.read = async () => {
      reads.push(clock.now());
      return read();
    };
    return reads;
  }

  it('reads the lease only from one check before the holder may stop: 23 reads when it stops last, not 51', async () => {
    const { deps, checkpoints, clock, metrics } = setup(5);
    const start = clock.now();
    await checkpoints.acquireLease({ owner: 'predecessor', expiresAt: start + 20_000, now: start });
    const reads = countingReads(checkpoints, clock);
    // At its deadline the holder publishes what it holds and releases 50 ms later.
    void clock.sleep(5_050).then(() => checkpoints.releaseLease('predecessor'));

    const summary = await runPollCycle(deps, successor);

    expect(summary).toMatchObject({ status: 'completed', published: 5 });
    expect(reads.map((at) => at - start)).toEqual(Array.from({ length: 23 }, (_, i) => 2_900 + i * 100));
    expect(metrics.last('HandoverWaitMs')).toBe(5_100);
  });

  it('takes over within one check from a holder whose last poll ended inside its min poll window', async () => {
    const { deps, checkpoints, clock, metrics } = setup(5);
    const start = clock.now();
    await checkpoints.acquireLease({ owner: 'predecessor', expiresAt: start + 20_000, now: start });
    const reads = countingReads(checkpoints, clock);
    // Its last poll returned 1.8 s before its deadline: no poll starts then, so it ends there.
    void clock.sleep(3_250).then(() => checkpoints.releaseLease('predecessor'));

    const summary = await runPollCycle(deps, successor);

    expect(summary).toMatchObject({ status: 'completed', published: 5 });
    expect(reads.map((at) => at - start)).toEqual([2_900, 3_000, 3_100, 3_200, 3_300]);
    expect(metrics.last('HandoverWaitMs')).toBe(3_300);
  });

  it('finds a holder that released early no later than when it was due', async () => {
    const { deps, checkpoints, clock, metrics } = setup(5);
    const start = clock.now();
    await checkpoints.acquireLease({ owner: 'predecessor', expiresAt: start + 20_000, now: start });
    const reads = countingReads(checkpoints, clock);
    void clock.sleep(1_000).then(() => checkpoints.releaseLease('predecessor'));

    const summary = await runPollCycle(deps, successor);

    expect(summary.status).toBe('completed');
    expect(reads.map((at) => at - start)).toEqual([2_900]);
    expect(metrics.last('HandoverWaitMs')).toBe(2_900);
  });

  it('looks again only when a run that took the lease meanwhile is due, reading once at the end of its wait', async () => {
    const { deps, checkpoints, clock, metrics } = setup(5);
    const start = clock.now();
    await checkpoints.acquireLease({ owner: 'predecessor', expiresAt: start + 20_000, now: start });
    const reads = countingReads(checkpoints, clock);
    void clock.sleep(5_050).then(async () => {
      await checkpoints.releaseLease('predecessor');
      // Another waiter wins the conditional write first; its lease runs well past this run's wait.
      await checkpoints.acquireLease({
        owner: 'other-waiter',
        expiresAt: clock.now() + 80_000,
        now: clock.now(),
      });
    });

    const summary = await runPollCycle(deps, successor);

    expect(summary.status).toBe('lease-busy');
    expect(reads.map((at) => at - start)).toEqual([
      ...Array.from({ length: 23 }, (_, i) => 2_900 + i * 100),
      20_000,
    ]);
    expect(metrics.sum('LeaseBusy')).toBe(1);
  });

  it('never sleeps past its own wait when the holder is due after it', async () => {
    const { deps, checkpoints, clock } = setup(5);
    const start = clock.now();
    await checkpoints.acquireLease({ owner: 'stuck', expiresAt: start + 600_000, now: start });
    const reads = countingReads(checkpoints, clock);

    const summary = await runPollCycle(deps, successor);

    expect(summary.status).toBe('lease-busy');
    expect(reads.map((at) => at - start)).toEqual([20_000]);
  });
});

describe('runPollCycle after a long poll that ends early', () => {
  it('polls again at once after one quick empty answer, and waits only after a second in a row', async () => {
    const { deps, feed, clock } = setup(0);
    const empty = { page: { events: [], lastSequenceNumber: null } } as const;
    feed.script(empty).script({ page: { events: [makeEvent(1)], lastSequenceNumber: 1 } });
    feed.script(empty).script(empty);
    const sent: number[] = [];
    const poll = feed.poll.bind(feed);
    feed.poll = async (request) => {
      sent.push(clock.now());
      return poll(request);
    };

    await runPollCycle(deps, invocation);

    const gaps = sent.slice(1, 5).map((at, i) => at - sent[i]!);
    // empty → at once; events → at once; empty → at once; empty again → 1 s after the last was sent.
    expect(gaps).toEqual([0, 0, 0, 1_000]);
  });
});
