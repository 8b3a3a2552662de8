/**
 * The cycle's two operator hooks: the start position of a program without a checkpoint, and what
 * it records for `status` (newest created_dt, the last cycle's outcome and error).
 */
import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../../functions/adapters/local/memory-checkpoint-store.ts';
import type { BankingEvent } from '../../../functions/core/banking-event.ts';
import type { CheckpointState, CheckpointStore } from '../../../functions/core/checkpoint/store.ts';
import { StartPositionIncompleteError, UpstreamHttpError } from '../../../functions/core/errors.ts';
import { runPollCycle } from '../../../functions/core/poll-cycle.ts';
import type { EventFeed } from '../../../functions/core/ports.ts';
import type { StartPosition } from '../../../functions/core/start-position.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import {
  InMemoryFeed,
  InMemoryPublisher,
  makeEvent,
  RecordingLogger,
  RecordingMetrics,
} from '../../support/in-memory-ports.ts';

/** The fake clock starts at 2026-11-22T00:00:00Z; makeEvent's events are a second older. */
const CREATED_LATER = '2026-11-22T00:00:00.500Z';
const LIMIT = 25;
/** Attempts per rejected entry before a run gives up (the pipeline's default). */
const PUBLISH_ATTEMPTS = 5;

function setup(events: BankingEvent[], initial: Partial<CheckpointState> = {}) {
  const clock = new FakeClock();
  const feed = new InMemoryFeed(clock, events, { limit: LIMIT });
  const publisher = new InMemoryPublisher();
  const checkpoints = new MemoryCheckpointStore({
    initial: { checkpoint: null, updatedAt: null, lease: null, feedProgramId: null, ...initial },
    now: () => clock.now(),
  });
  const logger = new RecordingLogger();
  const deps = {
    feed,
    publisher,
    checkpoints,
    clock,
    metrics: new RecordingMetrics(),
    logger,
    random: () => 0.5,
  };
  return { clock, feed, publisher, checkpoints, logger, deps };
}

const olderEvents = (count: number) => Array.from({ length: count }, (_, i) => makeEvent(i + 1));
/** Backlog for `latest`: created an hour before the first run, beyond the clock skew allowance. */
const backlog = (count: number) =>
  Array.from({ length: count }, (_, i) => makeEvent(i + 1, { created_dt: '2026-11-21T23:00:00.000+00:00' }));
const invocation = (startPosition?: StartPosition) => ({
  program: 'default',
  owner: 'req-1',
  remainingMs: 60_000,
  ...(startPosition === undefined ? {} : { startPosition: { position: startPosition, pageLimit: LIMIT } }),
});
const published = (publisher: InMemoryPublisher) => publisher.accepted.map((event) => event.sequence_number);

describe('start position of a program without a checkpoint', () => {
  it('latest: passes over the existing events, commits where it landed, and publishes what is created later', async () => {
    const { deps, publisher, checkpoints } = setup([
      ...backlog(60),
      makeEvent(61, { created_dt: CREATED_LATER }),
      makeEvent(62, { created_dt: CREATED_LATER }),
    ]);

    const summary = await runPollCycle(deps, invocation({ kind: 'latest' }));

    expect(published(publisher)).toEqual([61, 62]);
    expect(summary).toMatchObject({ published: 2, checkpoint: 62 });
    expect((await checkpoints.read()).feedProgramId).toBe('program-1');
  });

  it('latest on a quiet feed: records the landing point although nothing is published', async () => {
    const { deps, publisher, checkpoints, logger } = setup(backlog(30));

    await runPollCycle(deps, invocation({ kind: 'latest' }));

    expect(published(publisher)).toEqual([]);
    expect(await checkpoints.read()).toMatchObject({ checkpoint: 30, start: { position: 'latest' } });
    expect(
      logger.lines.find((line) => line.message.startsWith('Start position "latest"'))?.attributes,
    ).toEqual({
      checkpoint: 30,
      skipped: 30,
      pages: 2,
      highestSeen: 30,
      firstRunStartedAt: '2026-11-22T00:00:00.000Z',
      clockSkewAllowanceMs: 600_000,
    });
  });

  it('latest on an empty feed: records that it started from nothing, and a later run publishes what was created in between', async () => {
    const { deps, publisher, feed, checkpoints } = setup([]);
    await runPollCycle(deps, invocation({ kind: 'latest' }));
    const afterFirst = await checkpoints.read();
    feed.append(makeEvent(1), makeEvent(2));

    await runPollCycle(deps, { ...invocation({ kind: 'latest' }), owner: 'req-2' });

    expect(afterFirst).toMatchObject({ checkpoint: null, start: { position: 'latest' } });
    expect(published(publisher)).toEqual([1, 2]);
  });

  it('latest on an empty feed, first run refused by the bus: the next run publishes every event created since', async () => {
    const { deps, publisher, feed, clock } = setup([]);
    const firstRunStart = clock.now();
    // Events arrive while the first run polls; the bus refuses them all, so the run fails.
    feed.append(
      makeEvent(1, { created_dt: new Date(firstRunStart + 1).toISOString() }),
      makeEvent(2, { created_dt: new Date(firstRunStart + 1).toISOString() }),
    );
    const empty = { events: [], lastSequenceNumber: 0 };
    feed.script({ page: empty });
    publisher.rejectSequence(1, PUBLISH_ATTEMPTS);

    await expect(runPollCycle(deps, invocation({ kind: 'latest' }))).rejects.toMatchObject({
      code: 'PUBLISH_FAILED',
    });
    expect(published(publisher)).toEqual([2]);
    clock.advance(60_000);
    // The second run finds no checkpoint, yet must not pass over 1 and 2 as if it were the first.
    await runPollCycle(deps, { ...invocation({ kind: 'latest' }), owner: 'req-2' });

    expect(published(publisher)).toEqual([2, 1, 2]);
  });

  it('latest on an empty feed, once recorded, trusts no clock: events stamped long before the first run are published', async () => {
    const { deps, publisher, feed, checkpoints, clock } = setup([]);
    await runPollCycle(deps, invocation({ kind: 'latest' }));
    const afterFirst = await checkpoints.read();
    // Created after the first run, by a bank whose clock is 10 minutes (then a day) behind ours.
    const stamped = (offsetMs: number) => new Date(clock.now() + offsetMs).toISOString();
    feed.append(
      makeEvent(1, { created_dt: stamped(-600_000) }),
      makeEvent(2, { created_dt: stamped(-86_400_000) }),
    );

    await runPollCycle(deps, { ...invocation({ kind: 'latest' }), owner: 'req-2' });

    expect(afterFirst).toMatchObject({ checkpoint: null, highestSeen: 0, start: { position: 'latest' } });
    expect(published(publisher)).toEqual([1, 2]);
  });

  it("latest, the bank's clock 20 minutes behind, a first run whose landing was refused: the next run publishes every event above the highest number it saw", async () => {
    const { deps, publisher, feed, checkpoints, clock } = setup(backlog(3));
    const firstRunStart = clock.now();
    let refusals = 1;
    const refusing: CheckpointStore = {
      acquireLease: (request) => checkpoints.acquireLease(request),
      recordHighestSeen: (request) => checkpoints.recordHighestSeen(request),
      recordStart: async (request) => {
        if (refusals-- > 0)
          throw new UpstreamHttpError('injected: the landing write failed', { status: 500, retryable: true });
        return checkpoints.recordStart(request);
      },
      commit: (request) => checkpoints.commit(request),
      releaseLease: (owner, options) => checkpoints.releaseLease(owner, options),
      read: () => checkpoints.read(),
    };
    await expect(
      runPollCycle({ ...deps, checkpoints: refusing }, invocation({ kind: 'latest' })),
    ).rejects.toThrow('the landing write failed');
    const afterFirst = await checkpoints.read();
    // Created one second after the first run began, stamped 20 minutes earlier: beyond the allowance.
    const stamped = new Date(firstRunStart + 1_000 - 1_200_000).toISOString();
    feed.append(makeEvent(4, { created_dt: stamped }), makeEvent(5, { created_dt: stamped }));
    clock.advance(60_000);

    await runPollCycle(
      { ...deps, checkpoints: refusing },
      { ...invocation({ kind: 'latest' }), owner: 'req-2' },
    );

    expect(afterFirst).toMatchObject({ checkpoint: null, highestSeen: 3 });
    expect(afterFirst.start ?? null).toBeNull();
    expect(published(publisher)).toEqual([4, 5]);
  });

  it.each([
    { allowanceMs: 600_000, expected: [1, 2] },
    { allowanceMs: 0, expected: [] },
  ])(
    "latest, nothing recorded by a first run that never read the feed, the bank's clock 30 s behind: the allowance ($allowanceMs ms) decides",
    async ({ allowanceMs, expected }) => {
      const { deps, publisher, feed, clock } = setup([]);
      const firstRunStart = clock.now();
      const down: EventFeed = {
        poll: () => Promise.reject(new UpstreamHttpError('unavailable', { status: 503, retryable: true })),
      };
      const latest = {
        position: { kind: 'latest' } as const,
        pageLimit: LIMIT,
        clockSkewAllowanceMs: allowanceMs,
      };
      await expect(
        runPollCycle({ ...deps, feed: down }, { ...invocation(), startPosition: latest }),
      ).rejects.toBeDefined();
      const stamped = new Date(firstRunStart + 1_000 - 30_000).toISOString();
      feed.append(makeEvent(1, { created_dt: stamped }), makeEvent(2, { created_dt: stamped }));
      clock.advance(60_000);

      await runPollCycle(deps, { ...invocation(), owner: 'req-2', startPosition: latest });

      expect(published(publisher)).toEqual(expected);
    },
  );

  it('latest: a first run that died walking the feed leaves the next to land where the first would have', async () => {
    const { deps, publisher, feed, checkpoints, clock } = setup(backlog(2 * LIMIT));
    const firstRunStart = clock.now();
    // The first run reads one page of older events, then the service fails until its deadline.
    let polls = 0;
    let outage = true;
    const flaky: EventFeed = {
      poll: (request) => {
        polls += 1;
        if (outage && polls > 1) {
          return Promise.reject(new UpstreamHttpError('unavailable', { status: 503, retryable: true }));
        }
        return feed.poll(request);
      },
    };
    await expect(
      runPollCycle({ ...deps, feed: flaky }, invocation({ kind: 'latest' })),
    ).rejects.toBeInstanceOf(StartPositionIncompleteError);
    outage = false;
    // Meanwhile, events are created after the first run began; more older ones were there already.
    const created = (offsetMs: number) => new Date(firstRunStart + offsetMs).toISOString();
    feed.append(
      makeEvent(2 * LIMIT + 1, { created_dt: created(10) }),
      makeEvent(2 * LIMIT + 2, { created_dt: created(20_000) }),
    );
    clock.advance(120_000);

    await runPollCycle({ ...deps, feed: flaky }, { ...invocation({ kind: 'latest' }), owner: 'req-2' });

    expect((await checkpoints.read()).firstLeasedAt).toBe(firstRunStart);
    expect(published(publisher)).toEqual([2 * LIMIT + 1, 2 * LIMIT + 2]);
  });

  it('a sequence number: publishes from that event on', async () => {
    const { deps, publisher } = setup(backlog(30));

    await runPollCycle(deps, invocation({ kind: 'sequence', sequenceNumber: 26 }));

    expect(published(publisher)).toEqual([26, 27, 28, 29, 30]);
  });

  it('a sequence number: records the checkpoint below it before reading, so a first run that fails changes nothing', async () => {
    const { deps, publisher, checkpoints } = setup(backlog(30));
    publisher.rejectSequence(26, PUBLISH_ATTEMPTS);

    await expect(
      runPollCycle(deps, invocation({ kind: 'sequence', sequenceNumber: 26 })),
    ).rejects.toMatchObject({ code: 'PUBLISH_FAILED' });
    const afterFirst = await checkpoints.read();
    // Applied once: a later run set to `latest` reads on from 25, it does not fast-forward.
    await runPollCycle(deps, { ...invocation({ kind: 'latest' }), owner: 'req-2' });

    expect(afterFirst).toMatchObject({ checkpoint: 25, start: { position: '26' } });
    expect(published(publisher).filter((sequence) => sequence === 26)).toEqual([26]);
    expect((await checkpoints.read()).checkpoint).toBe(30);
  });

  it('beginning: recorded before reading, so a later run set to latest does not pass over unpublished events', async () => {
    const { deps, publisher, checkpoints } = setup(backlog(5));
    publisher.rejectSequence(1, PUBLISH_ATTEMPTS);

    await expect(runPollCycle(deps, invocation({ kind: 'beginning' }))).rejects.toBeDefined();
    await runPollCycle(deps, { ...invocation({ kind: 'latest' }), owner: 'req-2' });

    expect((await checkpoints.read()).start).toMatchObject({ position: 'beginning' });
    expect(new Set(published(publisher))).toEqual(new Set([1, 2, 3, 4, 5]));
  });

  it('is ignored once the program has a checkpoint', async () => {
    const { deps, publisher } = setup(backlog(30), { checkpoint: 27, feedProgramId: 'program-1' });

    await runPollCycle(deps, invocation({ kind: 'latest' }));

    expect(published(publisher)).toEqual([28, 29, 30]);
  });

  it('latest that cannot reach the end of the feed in time fails, publishing and recording nothing', async () => {
    const { deps, feed, publisher, checkpoints } = setup([]);
    feed.script({ page: { events: backlog(LIMIT), lastSequenceNumber: LIMIT } });
    for (let i = 0; i < 50; i++) {
      feed.script({
        error: new UpstreamHttpError('unavailable', { status: 503, retryable: true, retryAfterMs: 5_000 }),
      });
    }

    const error = await runPollCycle(deps, invocation({ kind: 'latest' })).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(StartPositionIncompleteError);
    expect((error as StartPositionIncompleteError).context).toMatchObject({ reached: LIMIT, pages: 1 });
    expect((error as Error).message).toContain('banking-events-poller rewind --program default --to latest');
    expect(published(publisher)).toEqual([]);
    expect((await checkpoints.read()).checkpoint).toBeNull();
  });
});

describe('what the cycle records for status', () => {
  it('records the newest created_dt with the commit, and the completed cycle with its lag', async () => {
    const { deps, checkpoints, clock } = setup(olderEvents(3));

    await runPollCycle(deps, invocation());

    const state = await checkpoints.read();
    expect(state.newestCreatedDt).toBe('2026-11-21T23:59:59.000+00:00');
    expect(state.lastCycle).toEqual({
      endedAt: new Date(clock.now()).toISOString(),
      outcome: 'completed',
      published: 3,
      lagSeconds: 0,
    });
    expect(state.lastError ?? null).toBeNull();
  });

  it('records a failed cycle with its code and message, then keeps that error after a later success', async () => {
    const { deps, checkpoints, feed } = setup(olderEvents(2));
    feed.script({ error: new UpstreamHttpError('GET /events: HTTP 400', { status: 400, retryable: false }) });

    await expect(runPollCycle(deps, invocation())).rejects.toBeInstanceOf(UpstreamHttpError);
    const failed = await checkpoints.read();
    await runPollCycle(deps, { ...invocation(), owner: 'req-2' });
    const recovered = await checkpoints.read();

    expect(failed.lastCycle).toMatchObject({
      outcome: 'failed',
      error: { code: 'UPSTREAM_HTTP_ERROR', message: 'GET /events: HTTP 400' },
    });
    expect(recovered.lastCycle).toMatchObject({ outcome: 'completed', published: 2 });
    expect(recovered.lastError).toMatchObject({ code: 'UPSTREAM_HTTP_ERROR', at: failed.lastCycle!.endedAt });
  });
});
