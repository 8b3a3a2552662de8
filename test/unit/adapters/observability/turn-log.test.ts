import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../../../functions/adapters/local/memory-checkpoint-store.ts';
import { MAX_HELD_LINES, TurnLog } from '../../../../functions/adapters/observability/turn-log.ts';
import { reportOf, reportWithout } from '../../../../functions/core/fleet/worker-summary.ts';
import { type CycleSummary, runPollCycle } from '../../../../functions/core/poll-cycle.ts';
import { FakeClock } from '../../../support/fake-clock.ts';
import {
  InMemoryFeed,
  InMemoryPublisher,
  makeEvent,
  RecordingLogger,
  RecordingMetrics,
} from '../../../support/in-memory-ports.ts';

const START = Date.parse('2026-11-28T12:00:00.000Z');

function turnLog(hold = true) {
  const written = new RecordingLogger();
  let now = START;
  const log = new TurnLog(written, () => now, hold);
  return { written, log, later: (ms: number) => (now += ms) };
}

function completed(published: number) {
  return reportOf({
    program: 'cards',
    status: 'completed',
    published,
    lagSeconds: 0,
    checkpoint: 7,
  } as CycleSummary);
}

/** A healthy run's lines, as a cycle logs them. */
function healthyRun(log: TurnLog): void {
  log.info('Another invocation holds the lease; waiting for it to hand over', { waitMs: 20_000 });
  log.info('Lease handed over', { waitedMs: 5_100 });
  log.info('Lease taken; polling', { checkpoint: 7 });
  log.info('Cycle finished', { status: 'completed', published: 0 });
}

describe('TurnLog', () => {
  it('writes nothing of a turn that completed without publishing', () => {
    const { written, log } = turnLog();

    healthyRun(log);
    log.endTurn(completed(0));

    expect(written.lines).toEqual([]);
  });

  it('writes the held lines, in order and with the time each was logged, of a turn that published', () => {
    const { written, log, later } = turnLog();

    log.info('Lease taken; polling', { checkpoint: 7 });
    later(60_000);
    log.info('Cycle finished', { published: 3 });
    later(50);
    log.endTurn(completed(3));

    expect(written.lines).toEqual([
      {
        level: 'info',
        message: 'Lease taken; polling',
        attributes: { checkpoint: 7, loggedAt: '2026-11-28T12:00:00.000Z' },
      },
      {
        level: 'info',
        message: 'Cycle finished',
        attributes: { published: 3, loggedAt: '2026-11-28T12:01:00.000Z' },
      },
    ]);
  });

  it.each([
    ['failed', reportWithout('cards', 'failed', new Error('boom'))],
    ['abandoned', reportWithout('cards', 'abandoned')],
    ['not reached', reportWithout('cards', 'not-reached')],
    [
      'lease busy',
      reportOf({
        program: 'cards',
        status: 'lease-busy',
        published: 0,
        lagSeconds: null,
        checkpoint: null,
      } as CycleSummary),
    ],
  ])('writes the held lines of a turn that ended %s', (_, report) => {
    const { written, log } = turnLog();

    healthyRun(log);
    log.endTurn(report);

    expect(written.lines.map((line) => line.message)).toEqual([
      'Another invocation holds the lease; waiting for it to hand over',
      'Lease handed over',
      'Lease taken; polling',
      'Cycle finished',
    ]);
  });

  it('writes what led to a warning or an error before it, and every line after it as it comes', () => {
    const { written, log } = turnLog();

    log.info('Lease taken; polling');
    log.warn('Poll failed; retrying', { status: 503 });
    log.info('Cycle finished', { published: 0 });
    log.endTurn(completed(0));

    expect(written.lines.map((line) => [line.level, line.message])).toEqual([
      ['info', 'Lease taken; polling'],
      ['warn', 'Poll failed; retrying'],
      ['info', 'Cycle finished'],
    ]);
  });

  it('holds no more than its bound: past it, the turn writes as it goes', () => {
    const { written, log } = turnLog();

    for (let i = 0; i <= MAX_HELD_LINES; i += 1) log.info(`line ${i}`);
    log.info('one more');

    expect(written.lines).toHaveLength(MAX_HELD_LINES + 2);
    expect(written.lines.at(-1)).toEqual({ level: 'info', message: 'one more', attributes: undefined });
  });

  it('writes what a cycle left behind logs after its turn', () => {
    const { written, log } = turnLog();

    log.endTurn(completed(0));
    log.info('Cycle finished', { published: 0 });

    expect(written.lines.map((line) => line.message)).toEqual(['Cycle finished']);
  });

  it('holds nothing while not told to (log level DEBUG), and never holds debug lines', () => {
    const unheld = turnLog(false);
    unheld.log.info('Lease taken; polling');
    expect(unheld.written.lines.map((line) => line.message)).toEqual(['Lease taken; polling']);

    const { written, log } = turnLog();
    log.debug('a detail');
    expect(written.lines.map((line) => line.level)).toEqual(['debug']);
  });
});

describe('TurnLog over real cycles', () => {
  /**
   * A program's cycle as a worker runs it, its predecessor handing the lease over at its deadline;
   * with `latest`, the program's first run (no predecessor).
   */
  async function turnAfterHandOver(events: ReturnType<typeof makeEvent>[], startPosition?: 'latest') {
    const clock = new FakeClock();
    const checkpoints = new MemoryCheckpointStore({ initial: { checkpoint: null }, now: () => clock.now() });
    const start = clock.now();
    if (startPosition === undefined) {
      await checkpoints.acquireLease({ owner: 'predecessor', expiresAt: start + 20_000, now: start });
      void clock.sleep(5_050).then(() => checkpoints.releaseLease('predecessor'));
    }
    const written = new RecordingLogger();
    const log = new TurnLog(written, () => clock.now(), true);
    const summary = await runPollCycle(
      {
        feed: new InMemoryFeed(clock, events, { limit: 25 }),
        publisher: new InMemoryPublisher(),
        checkpoints,
        clock,
        metrics: new RecordingMetrics(),
        logger: log,
        random: () => 0.5,
      },
      {
        program: 'cards',
        owner: 'successor',
        remainingMs: 75_000,
        leaseWaitMs: 20_000,
        ...(startPosition === undefined
          ? {}
          : { startPosition: { position: { kind: startPosition }, pageLimit: 25 } }),
      },
    );
    log.endTurn(reportOf(summary));
    // Debug lines are never held (nor written at the deployed log level).
    return written.lines.filter((line) => line.level !== 'debug').map((line) => line.message);
  }

  it('writes nothing of a healthy run on a quiet feed, its hand-over included', async () => {
    expect(await turnAfterHandOver([])).toEqual([]);
  });

  it('writes every line of a run that published', async () => {
    expect(await turnAfterHandOver([makeEvent(1), makeEvent(2)])).toEqual([
      'Another invocation holds the lease; waiting for it to hand over',
      'Lease handed over',
      'Lease taken; polling',
      'Cycle finished',
    ]);
  });

  it('writes a quiet run that said something of its own: the start position passing events over', async () => {
    const old = Array.from({ length: 3 }, (_, i) =>
      makeEvent(i + 1, { created_dt: '2026-11-21T23:00:00.000+00:00' }),
    );

    const lines = await turnAfterHandOver(old, 'latest');

    expect(lines).toContain(
      'Start position "latest": passed over the events created before the first run without publishing them',
    );
    expect(lines).toContain('Cycle finished');
  });
});
