/**
 * Fair turns on a worker's one thread, over a `defer` the test drives by hand (one call = one pass
 * of the event loop): what runs, in which order, and how many steps a pass. No time is measured.
 */
import { describe, expect, it } from 'vitest';
import { FairCpuTurns, STEP_PAGE_BYTES } from '../../../../functions/core/fleet/cpu-turns.ts';
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
});
