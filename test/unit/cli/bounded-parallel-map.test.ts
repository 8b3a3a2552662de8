import { describe, expect, it } from 'vitest';
import { boundedParallelMap } from '../../../functions/cli/bounded-parallel-map.ts';

/** Work whose completions the test releases in an order of its choosing. */
function controlledWork() {
  const pending = new Map<number, () => void>();
  let running = 0;
  let mostAtOnce = 0;
  const work = async (item: number): Promise<string> => {
    running += 1;
    mostAtOnce = Math.max(mostAtOnce, running);
    await new Promise<void>((resolve) => pending.set(item, resolve));
    running -= 1;
    return `done ${item}`;
  };
  const release = async (item: number) => {
    const resolve = pending.get(item);
    if (resolve === undefined) throw new Error(`item ${item} has not started`);
    pending.delete(item);
    resolve();
    // Every promise settled by then: the lane that ran it has taken its next item.
    await new Promise((settled) => setImmediate(settled));
  };
  return { work, release, started: () => [...pending.keys()], mostAtOnce: () => mostAtOnce };
}

describe('boundedParallelMap', () => {
  it('runs at most `limit` at once, starts the next as one ends, and keeps the items order', async () => {
    const { work, release, started, mostAtOnce } = controlledWork();

    const all = boundedParallelMap([0, 1, 2, 3, 4], 2, work);
    expect(started()).toEqual([0, 1]);
    await release(1);
    expect(started()).toEqual([0, 2]);
    await release(2);
    await release(3);
    expect(started()).toEqual([0, 4]);
    await release(4);
    await release(0);

    expect(await all).toEqual(['done 0', 'done 1', 'done 2', 'done 3', 'done 4']);
    expect(mostAtOnce()).toBe(2);
  });

  it('takes fewer items than the limit, and none', async () => {
    expect(await boundedParallelMap([1, 2], 8, async (item) => item * 10)).toEqual([10, 20]);
    expect(await boundedParallelMap([], 8, async (item: number) => item)).toEqual([]);
  });

  it('refuses a limit that is not a whole number of at least 1', async () => {
    for (const limit of [0, -1, 1.5, Number.NaN]) {
      await expect(boundedParallelMap([1], limit, async (item) => item)).rejects.toThrow(
        `limit must be a whole number of at least 1, got ${limit}`,
      );
    }
  });
});
