/**
 * Fair turns on a worker's one thread, over a `defer` the test drives by hand (one call = one pass
 * of the event loop): what runs, in which order, and how many steps a pass. The CPU a step uses
 * and the time are a meter the test sets by hand: no time is measured.
 */
import { describe, expect, it } from 'vitest';
import {
  BUCKET_MS,
  type CpuMeter,
  FairCpuTurns,
  STEP_PAGE_BYTES,
} from '../../../../functions/core/fleet/cpu-turns.ts';
import { MIN_PROGRAM_PAGE_BYTES } from '../../../../functions/core/fleet/memory-share.ts';

/** Passes of the event loop, run one at a time by the test. */
class Passes {
  readonly #due: Array<() => void> = [];
  readonly defer = (serve: () => void) => {
    this.#due.push(serve);
  };

  get pending(): number {
    return this.#due.length;
  }

  /** Runs one pass (what was deferred first), then lets its microtasks run. */
  async next(): Promise<void> {
    this.#due.shift()?.();
    await new Promise<void>((resolve) => queueMicrotask(resolve));
    await Promise.resolve();
  }

  async all(): Promise<void> {
    while (this.#due.length > 0) await this.next();
  }
}

/** The process's CPU and time as the test sets them; the turns' waits for budget are kept in `timers`. */
class Meter implements CpuMeter {
  readonly share = 0.25;
  readonly timers: Array<{ ms: number; serve: () => void }> = [];
  #now = 1_000;
  #cpu = 0;

  cpuMs = () => this.#cpu;
  now = () => this.#now;
  after = (ms: number, serve: () => void) => {
    this.timers.push({ ms, serve });
  };

  /** CPU used (and the time it took). */
  use(ms: number): void {
    this.#cpu += ms;
    this.#now += ms;
  }

  /** Runs the wait that is due, once its time has passed. */
  async elapse(): Promise<void> {
    const timer = this.timers.shift();
    if (timer === undefined) throw new Error('no wait is due');
    this.#now += timer.ms;
    timer.serve();
    await new Promise<void>((resolve) => queueMicrotask(resolve));
    await Promise.resolve();
  }
}

/** `steps` steps of `program`, each taking its turn first and logging itself once it runs. */
function queueSteps(turns: FairCpuTurns, program: string, steps: number, log: string[]): Promise<void>[] {
  const cpu = turns.of(program);
  return Array.from({ length: steps }, async (_, index) => {
    await cpu.take();
    log.push(`${program}${index + 1}`);
  });
}

describe('FairCpuTurns', () => {
  it('runs no step before its turn comes, and one step a pass of the loop', async () => {
    const passes = new Passes();
    const turns = new FairCpuTurns(passes.defer);
    const log: string[] = [];

    queueSteps(turns, 'flood', 3, log);
    await Promise.resolve();

    expect(log).toEqual([]);
    expect(turns.waiting).toBe(3);
    await passes.next();
    expect(log).toEqual(['flood1']);
    await passes.next();
    expect(log).toEqual(['flood1', 'flood2']);
    await passes.all();
    expect(log).toEqual(['flood1', 'flood2', 'flood3']);
    expect(turns.waiting).toBe(0);
  });

  it('lets a program with one step go after one step of a program with many queued, not after all of them', async () => {
    const passes = new Passes();
    const turns = new FairCpuTurns(passes.defer);
    const log: string[] = [];

    const flood = queueSteps(turns, 'flood', 6, log);
    const quiet = queueSteps(turns, 'quiet', 1, log);
    await passes.all();
    await Promise.all([...flood, ...quiet]);

    expect(log).toEqual(['flood1', 'quiet1', 'flood2', 'flood3', 'flood4', 'flood5', 'flood6']);
  });

  it('goes round the programs that wait, one step of each in turn, each in its own order', async () => {
    const passes = new Passes();
    const turns = new FairCpuTurns(passes.defer);
    const log: string[] = [];

    queueSteps(turns, 'a', 3, log);
    queueSteps(turns, 'b', 2, log);
    queueSteps(turns, 'c', 1, log);
    await passes.all();

    expect(log).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
  });

  it('puts a program that comes back after its turn at the back of the line', async () => {
    const passes = new Passes();
    const turns = new FairCpuTurns(passes.defer);
    const log: string[] = [];
    const a = turns.of('a');

    queueSteps(turns, 'b', 2, log);
    // a's step, once run, takes another turn at once: as a cycle's next step would.
    void a.take().then(async () => {
      log.push('a1');
      await a.take();
      log.push('a2');
    });
    queueSteps(turns, 'c', 2, log);
    await passes.all();

    // a asked again while c and b waited: behind them, as b is behind c once served.
    expect(log).toEqual(['b1', 'a1', 'c1', 'b2', 'a2', 'c2']);
  });

  it('asks for a pass only while a step waits', async () => {
    const passes = new Passes();
    const turns = new FairCpuTurns(passes.defer);

    expect(passes.pending).toBe(0);
    queueSteps(turns, 'a', 2, []);
    queueSteps(turns, 'b', 2, []);
    expect(passes.pending).toBe(1);
    await passes.all();

    expect(passes.pending).toBe(0);
    expect(turns.waiting).toBe(0);
  });

  it('parses a page in steps no longer than an honest page', () => {
    const turns = new FairCpuTurns(() => {});

    expect(turns.of('a').stepBytes).toBe(STEP_PAGE_BYTES);
    expect(STEP_PAGE_BYTES).toBe(MIN_PROGRAM_PAGE_BYTES);
  });

  describe('with a budget of CPU time for each program', () => {
    /** Turns over passes the test runs and a meter it sets, and the log of the steps run. */
    function metered() {
      const passes = new Passes();
      const meter = new Meter();
      return { passes, meter, turns: new FairCpuTurns(passes.defer, meter), log: [] as string[] };
    }

    /** Steps of `program` that each use `ms` of CPU once they run. */
    function cpuSteps(
      turns: FairCpuTurns,
      meter: Meter,
      program: string,
      steps: number,
      ms: number,
      log: string[],
    ) {
      const cpu = turns.of(program);
      return Array.from({ length: steps }, async (_, index) => {
        await cpu.take();
        log.push(`${program}${index + 1}`);
        meter.use(ms);
      });
    }

    it('serves in turn, as without a meter, while every program has budget', async () => {
      const { passes, meter, turns, log } = metered();

      cpuSteps(turns, meter, 'a', 3, 1, log);
      cpuSteps(turns, meter, 'b', 2, 1, log);
      await passes.all();

      expect(log).toEqual(['a1', 'b1', 'a2', 'b2', 'a3']);
      expect(meter.timers).toEqual([]);
    });

    it('holds a program that has spent its budget and serves the others meanwhile', async () => {
      const { passes, meter, turns, log } = metered();

      // Each of the flood's steps uses more than a whole budget: after one, it is in debt.
      cpuSteps(turns, meter, 'flood', 6, BUCKET_MS + 10, log);
      cpuSteps(turns, meter, 'quiet', 2, 1, log);
      await passes.all();

      expect(log).toEqual(['flood1', 'quiet1', 'quiet2']);
      // Only the flood waits, in debt: the turns wait for its budget to refill, not for a pass.
      expect(passes.pending).toBe(0);
      expect(meter.timers).toEqual([{ ms: expect.any(Number), serve: expect.any(Function) }]);
    });

    it('waits exactly until the budget has refilled at the program share, then goes on', async () => {
      const { passes, meter, turns, log } = metered();

      const flood = cpuSteps(turns, meter, 'flood', 4, 2 * BUCKET_MS, log);
      await passes.all();
      // Its first step cost twice its budget (charged when the next turn was due): it owes one budget.
      expect(log).toEqual(['flood1']);
      // Refilled at a quarter of a core: one budget owed is four budgets' time to wait.
      expect(meter.timers.map(({ ms }) => ms)).toEqual([BUCKET_MS / meter.share]);

      const waits: number[] = [];
      for (let step = 2; step <= 4; step += 1) {
        await meter.elapse();
        expect(log.at(-1)).toBe(`flood${step}`);
        await passes.all();
        waits.push(...meter.timers.map(({ ms }) => ms));
      }
      await Promise.all(flood);
      expect(log).toEqual(['flood1', 'flood2', 'flood3', 'flood4']);
      // From then on a step of 40 ms and the wait after it take 160 ms: the program used its share of them.
      const stepAndWait = (2 * BUCKET_MS) / meter.share;
      expect(waits).toEqual([stepAndWait - 2 * BUCKET_MS, stepAndWait - 2 * BUCKET_MS]);
    });

    it('charges a program its own steps, not the CPU the process used while nothing waited for a turn', async () => {
      const { passes, meter, turns, log } = metered();

      await Promise.all([cpuSteps(turns, meter, 'a', 1, 1, log)[0], passes.all()]);
      await passes.all();
      // Others' work, outside any turn: a great deal of CPU, with a's budget untouched by it.
      meter.use(10 * BUCKET_MS);
      cpuSteps(turns, meter, 'a', 1, 1, log);
      await passes.all();

      expect(log).toEqual(['a1', 'a1']);
      expect(meter.timers).toEqual([]);
    });

    it('holds the programs that drain to one budget together, and lets a light one go while they wait', async () => {
      const { passes, meter, turns, log } = metered();

      // Each drain's first step leaves it budget of its own, but the two spend the shared one.
      cpuSteps(turns, meter, 'drainA', 5, 15, log);
      cpuSteps(turns, meter, 'drainB', 5, 15, log);
      await passes.all();
      expect(log).toEqual(['drainA1', 'drainB1']);
      expect(meter.timers).toHaveLength(1);

      // One event of a quiet program comes while they wait: it is served on the next pass, not after the wait.
      cpuSteps(turns, meter, 'quiet', 1, 1, log);
      await passes.all();
      expect(log).toEqual(['drainA1', 'drainB1', 'quiet1']);
      expect(meter.timers).toHaveLength(1);
    });

    it('charges the shared budget all the CPU the process used, turns or not: a drain waits while the answers use it', async () => {
      const { passes, meter, turns, log } = metered();

      await Promise.all([...cpuSteps(turns, meter, 'drain', 1, 18, log), passes.all()]);
      await passes.all();
      // After its chain of turns, CPU no turn is charged for (its answers, the garbage collector).
      meter.use(30);
      cpuSteps(turns, meter, 'drain', 1, 18, log);
      await passes.all();

      // It has a little budget of its own left, but the process has used the shared one: it waits.
      expect(log).toEqual(['drain1']);
      expect(meter.timers).toHaveLength(1);
    });
  });
});
