/**
 * A worker's run over in-memory ports and a virtual clock: each program its own feed, bus view,
 * checkpoint row, metrics and logger, as the handler builds them. A misbehaving program (throws,
 * stalls past its turn, floods, credentials revoked) must not stop or shorten the others: the
 * assertions are on what the others published and on their cycle summaries, never on wall time.
 */
import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../../../functions/adapters/local/memory-checkpoint-store.ts';
import { MemoryProgramRegistry } from '../../../../functions/adapters/local/memory-program-registry.ts';
import type { FeedPage } from '../../../../functions/core/banking-event.ts';
import { AuthenticationError, ConfigurationError } from '../../../../functions/core/errors.ts';
import { assignedWorker } from '../../../../functions/core/fleet/assignment.ts';
import type { ProgramRecord } from '../../../../functions/core/fleet/program-record.ts';
import {
  type ProgramSlot,
  runWorker,
  type WorkerDeps,
  type WorkerOptions,
} from '../../../../functions/core/fleet/worker-run.ts';
import { type CycleSummary, runPollCycle } from '../../../../functions/core/poll-cycle.ts';
import type { EventFeed, PollRequest } from '../../../../functions/core/ports.ts';
import { FakeClock } from '../../../support/fake-clock.ts';
import {
  InMemoryFeed,
  InMemoryPublisher,
  makeEvent,
  RecordingLogger,
  RecordingMetrics,
} from '../../../support/in-memory-ports.ts';

type Behaviour =
  | { readonly kind: 'healthy'; readonly events: number }
  /** Its setup throws before any cycle (a program whose settings or secret are refused). */
  | { readonly kind: 'refused-setup' }
  /** The bank refuses its credentials. */
  | { readonly kind: 'revoked' }
  /** Its poll never answers and ignores every signal: the cycle never settles. */
  | { readonly kind: 'stalls' }
  /** A backlog far larger than a run publishes, in pages of 1,000. */
  | { readonly kind: 'floods'; readonly events: number };

/** A poll that never answers, whatever it is told. */
class StalledFeed implements EventFeed {
  polls = 0;
  poll(_request: PollRequest): Promise<FeedPage> {
    this.polls += 1;
    return new Promise<FeedPage>(() => {});
  }
}

/** One program's own ports, as the handler gives each program its own. */
interface ProgramWorld {
  readonly feed: EventFeed;
  readonly publisher: InMemoryPublisher;
  readonly checkpoints: MemoryCheckpointStore;
  readonly metrics: RecordingMetrics;
  readonly logger: RecordingLogger;
  readonly slots: ProgramSlot[];
  flushes: number;
}

function fleet(behaviours: Readonly<Record<string, Behaviour>>, seed: readonly unknown[] = []) {
  const clock = new FakeClock();
  const worlds = new Map<string, ProgramWorld>();
  for (const [name, behaviour] of Object.entries(behaviours)) {
    const events =
      behaviour.kind === 'healthy' || behaviour.kind === 'floods'
        ? Array.from({ length: behaviour.events }, (_, i) => makeEvent(i + 1, { program_id: `bank-${name}` }))
        : [];
    const feed =
      behaviour.kind === 'stalls'
        ? new StalledFeed()
        : new InMemoryFeed(clock, events, { limit: behaviour.kind === 'floods' ? 1_000 : 25 });
    if (behaviour.kind === 'revoked') {
      (feed as InMemoryFeed).script({ error: new AuthenticationError('token endpoint answered 401') });
    }
    worlds.set(name, {
      feed,
      publisher: new InMemoryPublisher(),
      checkpoints: new MemoryCheckpointStore({ now: () => clock.now() }),
      metrics: new RecordingMetrics(),
      logger: new RecordingLogger(),
      slots: [],
      flushes: 0,
    });
  }
  const records = Object.keys(behaviours).map(
    (name): ProgramRecord => ({
      name,
      secretId: `bep/Test/${name}`,
      state: 'active',
      owner: 'operator',
      settings: {},
      revision: 1,
    }),
  );
  const registry = new MemoryProgramRegistry([...records, ...seed]);
  const workerLogger = new RecordingLogger();
  const workerMetrics = new RecordingMetrics();
  const deps: WorkerDeps = {
    registry,
    clock,
    logger: workerLogger,
    metrics: workerMetrics,
    observe: (program) => {
      const world = worlds.get(program)!;
      return {
        metrics: world.metrics,
        logger: world.logger,
        flush: () => {
          world.flushes += 1;
        },
      };
    },
    runProgram: async (record, slot): Promise<CycleSummary> => {
      const world = worlds.get(record.name)!;
      world.slots.push(slot);
      if (behaviours[record.name]?.kind === 'refused-setup') {
        throw new ConfigurationError(`Program ${record.name}: settings.pollLimit must be an integer`);
      }
      return runPollCycle(
        {
          feed: world.feed,
          publisher: world.publisher,
          checkpoints: world.checkpoints,
          clock,
          metrics: slot.metrics,
          logger: slot.logger,
          random: () => 0.5,
          // As the handler wires it: the program's turns on the shared thread, when it has them.
          ...(slot.cpuTurns === undefined ? {} : { cpuTurns: slot.cpuTurns }),
        },
        {
          program: record.name,
          owner: 'worker-run-1',
          remainingMs: slot.remainingMs,
          stopSignal: slot.stopSignal,
        },
      );
    },
  };
  return { clock, worlds, registry, deps, workerLogger, workerMetrics };
}

const options: WorkerOptions = { worker: 0, workerCount: 1, remainingMs: 75_000, maxConcurrentPrograms: 50 };

function published(world: ProgramWorld | undefined): number[] {
  return world!.publisher.accepted.map((event) => event.sequence_number);
}

const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('runWorker', () => {
  it("runs every assigned program's cycle over its own ports, and sums them up", async () => {
    const { worlds, deps } = fleet({
      cards: { kind: 'healthy', events: 40 },
      loans: { kind: 'healthy', events: 7 },
      savings: { kind: 'healthy', events: 0 },
    });

    const summary = await runWorker(deps, options);

    expect(published(worlds.get('cards'))).toEqual(upTo(40));
    expect(published(worlds.get('loans'))).toEqual(upTo(7));
    expect((await worlds.get('cards')!.checkpoints.read()).checkpoint).toBe(40);
    expect(summary).toMatchObject({
      worker: 0,
      workerCount: 1,
      programs: { assigned: 3, completed: 3, failed: 0, abandoned: 0, notReached: 0, leaseBusy: 0 },
      published: 47,
    });
    for (const world of worlds.values()) {
      expect(world.metrics.sum('EventsPublished')).toBe(world.publisher.accepted.length);
      expect(world.flushes).toBe(1);
    }
  });

  it('runs them at once: each has the whole run, and a share of the memory', async () => {
    const { worlds, deps } = fleet({ a: { kind: 'healthy', events: 1 }, b: { kind: 'healthy', events: 1 } });

    await runWorker(deps, options);

    for (const world of worlds.values()) {
      expect(world.slots).toHaveLength(1);
      expect(world.slots[0]!.remainingMs).toBeGreaterThan(options.remainingMs - 2_000);
      expect(world.slots[0]!.programsInFlight).toBe(2);
    }
  });

  it.each<[string, Behaviour, string]>([
    ['throws before its cycle (its setup refused)', { kind: 'refused-setup' }, 'failed'],
    ['has its credentials revoked', { kind: 'revoked' }, 'failed'],
    ['stalls past its turn', { kind: 'stalls' }, 'abandoned'],
  ])(
    'contains a program that %s: the others publish everything and complete',
    async (_name, behaviour, outcome) => {
      const { worlds, deps, clock } = fleet({
        cards: { kind: 'healthy', events: 60 },
        bad: behaviour,
        loans: { kind: 'healthy', events: 30 },
      });

      const summary = await runWorker(deps, options);

      expect(published(worlds.get('cards'))).toEqual(upTo(60));
      expect(published(worlds.get('loans'))).toEqual(upTo(30));
      expect(summary.programs).toMatchObject({ assigned: 3, completed: 2, [outcome]: 1 });
      expect(summary.worst[0]).toMatchObject({ program: 'bad', outcome });
      expect(summary.worst.slice(1).map((report) => report.outcome)).toEqual(['completed', 'completed']);
      expect(worlds.get('bad')!.metrics.sum('CycleFailures')).toBe(1);
      expect(worlds.get('cards')!.metrics.sum('CycleFailures')).toBe(0);
      expect(worlds.get('bad')!.logger.lines.filter((line) => line.level === 'error')).toHaveLength(1);
      // The worker ends with its run: no deadline of any cycle is left behind on the clock.
      expect(clock.now()).toBeLessThanOrEqual(Date.parse('2026-11-22T00:00:00.000Z') + options.remainingMs);
    },
  );

  it('gives up on a stalled program at the end of its turn and tells its cycle to stop', async () => {
    const { worlds, deps } = fleet({ stuck: { kind: 'stalls' } });

    const summary = await runWorker(deps, options);

    expect(summary.programs.abandoned).toBe(1);
    expect(worlds.get('stuck')!.slots[0]!.stopSignal.aborted).toBe(true);
  });

  it("keeps a flooding program's backlog its own: the others catch up, it goes on next run", async () => {
    const { worlds, deps } = fleet({
      flood: { kind: 'floods', events: 20_000 },
      cards: { kind: 'healthy', events: 50 },
    });

    const summary = await runWorker(deps, options);

    expect(published(worlds.get('cards'))).toEqual(upTo(50));
    expect(summary.programs.completed).toBe(2);
    const flood = published(worlds.get('flood'));
    expect(flood).toEqual(upTo(flood.length));
    expect((await worlds.get('flood')!.checkpoints.read()).checkpoint).toBe(flood.length);
  });

  it('gives each program in flight turns of its own on the shared thread when the edge can defer, and loses nothing', async () => {
    const { worlds, deps, clock } = fleet({
      flood: { kind: 'floods', events: 5_000 },
      cards: { kind: 'healthy', events: 50 },
      loans: { kind: 'healthy', events: 30 },
    });
    let passes = 0;

    const summary = await runWorker(
      {
        ...deps,
        // A pass of the real event loop, time standing still meanwhile (as it does on a real clock).
        defer: (serve) => {
          passes += 1;
          void clock.during(
            () =>
              new Promise<void>((resolve) =>
                setImmediate(() => {
                  serve();
                  resolve();
                }),
              ),
          );
        },
      },
      options,
    );

    expect(summary.programs.completed).toBe(3);
    expect(published(worlds.get('cards'))).toEqual(upTo(50));
    expect(published(worlds.get('loans'))).toEqual(upTo(30));
    const flood = published(worlds.get('flood'));
    expect(flood).toEqual(upTo(flood.length));
    expect((await worlds.get('flood')!.checkpoints.read()).checkpoint).toBe(flood.length);
    const turns = ['flood', 'cards', 'loans'].map((name) => worlds.get(name)!.slots[0]!.cpuTurns);
    expect(turns.every((cpu) => cpu !== undefined)).toBe(true);
    expect(new Set(turns).size).toBe(3);
    // Every page parsed and request sent took a turn: at least one pass each.
    expect(passes).toBeGreaterThanOrEqual(worlds.get('cards')!.publisher.batches.length);
  });

  it('gives no turns without the means to defer: each program has the thread as the loop gives it', async () => {
    const { worlds, deps } = fleet({ cards: { kind: 'healthy', events: 5 } });

    await runWorker(deps, options);

    expect(worlds.get('cards')!.slots[0]!.cpuTurns).toBeUndefined();
  });

  it('reports a program whose lease another run holds, and runs the others', async () => {
    const { worlds, deps, clock } = fleet({
      held: { kind: 'healthy', events: 5 },
      cards: { kind: 'healthy', events: 5 },
    });
    await worlds.get('held')!.checkpoints.acquireLease({
      owner: 'another-run',
      now: clock.now(),
      expiresAt: clock.now() + 10 * 60_000,
    });

    const summary = await runWorker(deps, options);

    expect(summary.programs).toMatchObject({ completed: 1, leaseBusy: 1 });
    expect(published(worlds.get('held'))).toEqual([]);
    expect(published(worlds.get('cards'))).toEqual(upTo(5));
  });

  it('polls only the active programs assigned to this worker', async () => {
    const names = Array.from({ length: 12 }, (_, i) => `program-${i}`);
    const { worlds, deps, registry } = fleet(
      Object.fromEntries(names.map((name) => [name, { kind: 'healthy', events: 2 } as Behaviour])),
    );
    const { revision, ...paused } = (await registry.get('program-0'))!;
    await registry.put({ ...paused, state: 'paused' }, revision);

    const summary = await runWorker(deps, { ...options, worker: 1, workerCount: 3 });

    const mine = names.filter((name) => name !== 'program-0' && assignedWorker(name, 3) === 1);
    expect(mine.length).toBeGreaterThan(0);
    expect(summary.programs.assigned).toBe(mine.length);
    for (const name of names) {
      expect(published(worlds.get(name)), name).toEqual(mine.includes(name) ? [1, 2] : []);
    }
  });

  it('refuses a malformed registry item alone, counted and logged, and runs the others', async () => {
    const { worlds, deps, workerMetrics, workerLogger } = fleet({ cards: { kind: 'healthy', events: 3 } }, [
      { name: 'loans', secretId: 'bep/Test/loans', state: 'stopped', owner: 'operator', revision: 1 },
    ]);

    const summary = await runWorker(deps, options);

    expect(published(worlds.get('cards'))).toEqual([1, 2, 3]);
    expect(summary.programs).toMatchObject({ completed: 1, refusedRecords: 1 });
    expect(workerMetrics.sum('ProgramRecordsRefused')).toBe(1);
    expect(
      workerLogger.lines.some((line) => line.level === 'error' && line.attributes?.record === 'loans'),
    ).toBe(true);
  });

  it('fails the run when the registry cannot be read: no program can be assigned', async () => {
    const { deps } = fleet({ cards: { kind: 'healthy', events: 3 } });
    const broken: WorkerDeps = {
      ...deps,
      registry: { ...deps.registry, list: async () => Promise.reject(new Error('table unreachable')) },
    };

    await expect(runWorker(broken, options)).rejects.toThrow('table unreachable');
  });

  it('reads the registry again after a failure, and polls every program once it answers', async () => {
    const { worlds, deps, clock, workerLogger } = fleet({ cards: { kind: 'healthy', events: 3 } });
    let failures = 2;
    const flaky: WorkerDeps = {
      ...deps,
      registry: {
        ...deps.registry,
        list: (signal) =>
          failures-- > 0 ? Promise.reject(new Error('throttled')) : deps.registry.list(signal),
      },
    };

    const summary = await runWorker(flaky, options);

    expect(published(worlds.get('cards'))).toEqual(upTo(3));
    expect(summary.programs.completed).toBe(1);
    expect(clock.sleeps.slice(0, 2)).toEqual([250, 500]);
    expect(
      workerLogger.lines.filter((line) => line.message.startsWith('Program registry not read')),
    ).toHaveLength(2);
  });

  it('gives up reading the registry once no program could still be given a turn', async () => {
    const { deps, clock } = fleet({ cards: { kind: 'healthy', events: 3 } });
    const start = clock.now();
    let reads = 0;
    const broken: WorkerDeps = {
      ...deps,
      registry: {
        ...deps.registry,
        list: async () => {
          reads += 1;
          throw new Error('table unreachable');
        },
      },
    };

    await expect(runWorker(broken, options)).rejects.toThrow('table unreachable');
    // 75 s less the 1 s reserve and a 5 s turn: the last read starts before 69 s.
    expect(clock.now() - start).toBeLessThanOrEqual(69_000);
    expect(reads).toBeGreaterThan(2);
  });
});

describe('runWorker with more programs than lanes', () => {
  it('gives each program one turn of the run, a lane freed early going to the next', async () => {
    const { worlds, deps } = fleet({
      a: { kind: 'healthy', events: 3 },
      b: { kind: 'refused-setup' },
      c: { kind: 'healthy', events: 3 },
      d: { kind: 'healthy', events: 3 },
      e: { kind: 'healthy', events: 3 },
    });

    const summary = await runWorker(deps, { ...options, maxConcurrentPrograms: 2 });

    expect(summary.programs).toMatchObject({ assigned: 5, completed: 4, failed: 1, notReached: 0 });
    const turn = Math.floor((options.remainingMs - 1_000) / 3);
    for (const name of ['a', 'c', 'd', 'e']) {
      expect(published(worlds.get(name)), name).toEqual([1, 2, 3]);
      expect(worlds.get(name)!.slots[0]!.remainingMs, name).toBeLessThanOrEqual(turn);
      expect(worlds.get(name)!.slots[0]!.programsInFlight).toBe(2);
    }
  });

  it('names the programs whose turn never came, and counts them', async () => {
    const names = ['a', 'b', 'c', 'd'];
    const { worlds, deps, workerMetrics } = fleet(
      Object.fromEntries(names.map((name) => [name, { kind: 'healthy', events: 1 } as Behaviour])),
    );

    // One lane and 12 s: two turns of the least (5 s) fit, two programs wait for a later run.
    const summary = await runWorker(deps, { ...options, maxConcurrentPrograms: 1, remainingMs: 12_000 });

    expect(summary.programs).toMatchObject({ completed: 2, notReached: 2 });
    expect(workerMetrics.sum('ProgramsNotReached')).toBe(2);
    const reached = names.filter((name) => published(worlds.get(name)).length > 0);
    expect(reached).toHaveLength(2);
    // A program not reached still has its run's metrics sent (none: the sink counts it stalled),
    // with a warning on its own logger.
    for (const name of names) expect(worlds.get(name)!.flushes, name).toBe(1);
    for (const name of names.filter((candidate) => !reached.includes(candidate))) {
      expect(
        worlds.get(name)!.logger.lines.map((line) => line.message),
        name,
      ).toContain('Program not reached in this run: too many programs for the lanes and the time');
    }
  });
});

describe("the worker's liveness", () => {
  it('counts every run it finishes in WorkerDurationMs, with or without programs', async () => {
    const busy = fleet({ a: { kind: 'healthy', events: 2 } });
    const idle = fleet({});

    const summary = await runWorker(busy.deps, options);
    await runWorker(idle.deps, options);

    expect(busy.workerMetrics.values.filter((metric) => metric.name === 'WorkerDurationMs')).toEqual([
      expect.objectContaining({ value: summary.durationMs }),
    ]);
    expect(idle.workerMetrics.values.filter((metric) => metric.name === 'WorkerDurationMs')).toHaveLength(1);
  });
});

describe("the worker's answer", () => {
  it('names at most 10 programs, the worst first, however many it ran', async () => {
    const names = Array.from({ length: 40 }, (_, i) => `p-${String(i).padStart(2, '0')}`);
    const { deps } = fleet(
      Object.fromEntries(
        names.map((name, i) => [
          name,
          (i % 13 === 0 ? { kind: 'revoked' } : { kind: 'healthy', events: 1 }) as Behaviour,
        ]),
      ),
    );

    const summary = await runWorker(deps, options);

    expect(summary.programs.assigned).toBe(40);
    expect(summary.worst).toHaveLength(10);
    expect(
      summary.worst.slice(0, 4).map((report) => [report.program, report.outcome, report.errorCode]),
    ).toEqual([
      ['p-00', 'failed', 'AUTHENTICATION_FAILED'],
      ['p-13', 'failed', 'AUTHENTICATION_FAILED'],
      ['p-26', 'failed', 'AUTHENTICATION_FAILED'],
      ['p-39', 'failed', 'AUTHENTICATION_FAILED'],
    ]);
    expect(JSON.stringify(summary).length).toBeLessThan(4_000);
  });
});
