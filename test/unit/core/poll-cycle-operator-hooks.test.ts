/**
 * The cycle's two operator hooks: the start position of a program without a checkpoint, and what
 * it records for `status` (newest created_dt, the last cycle's outcome and error).
 */
import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../../functions/adapters/local/memory-checkpoint-store.ts';
import { StartPositionIncompleteError, UpstreamHttpError } from '../../../functions/core/errors.ts';
import type { BankingEvent } from '../../../functions/core/event-model.ts';
import { runPollCycle } from '../../../functions/core/poll-cycle.ts';
import type { CheckpointState } from '../../../functions/core/ports.ts';
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
      ...olderEvents(60),
      makeEvent(61, { created_dt: CREATED_LATER }),
      makeEvent(62, { created_dt: CREATED_LATER }),
    ]);

    const summary = await runPollCycle(deps, invocation({ kind: 'latest' }));

    expect(published(publisher)).toEqual([61, 62]);
    expect(summary).toMatchObject({ published: 2, checkpoint: 62 });
    expect((await checkpoints.read()).feedProgramId).toBe('program-1');
  });

  it('latest on a quiet feed: records the landing point although nothing is published', async () => {
    const { deps, publisher, checkpoints, logger } = setup(olderEvents(30));

    await runPollCycle(deps, invocation({ kind: 'latest' }));

    expect(published(publisher)).toEqual([]);
    expect((await checkpoints.read()).checkpoint).toBe(30);
    expect(
      logger.lines.find((line) => line.message.startsWith('Start position "latest"'))?.attributes,
    ).toEqual({
      checkpoint: 30,
      skipped: 30,
      pages: 2,
    });
  });

  it('latest on an empty feed: records nothing, and a later run publishes what was created in between', async () => {
    const { deps, publisher, feed } = setup([]);
    await runPollCycle(deps, invocation({ kind: 'latest' }));
    feed.append(makeEvent(1), makeEvent(2));

    await runPollCycle(deps, { ...invocation({ kind: 'latest' }), owner: 'req-2' });

    expect(published(publisher)).toEqual([1, 2]);
  });

  it('a sequence number: publishes from that event on', async () => {
    const { deps, publisher } = setup(olderEvents(30));

    await runPollCycle(deps, invocation({ kind: 'sequence', sequenceNumber: 26 }));

    expect(published(publisher)).toEqual([26, 27, 28, 29, 30]);
  });

  it('is ignored once the program has a checkpoint', async () => {
    const { deps, publisher } = setup(olderEvents(30), { checkpoint: 27, feedProgramId: 'program-1' });

    await runPollCycle(deps, invocation({ kind: 'latest' }));

    expect(published(publisher)).toEqual([28, 29, 30]);
  });

  it('latest that cannot reach the end of the feed in time fails, publishing and recording nothing', async () => {
    const { deps, feed, publisher, checkpoints } = setup([]);
    feed.script({ page: { events: olderEvents(LIMIT), lastSequenceNumber: LIMIT } });
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
