/**
 * Rendezvous assignment: every worker computes the same owner for a program; the programs spread
 * evenly; and a change of the worker count or of the programs moves only what must move. Names are
 * drawn from a seeded generator, so every run checks the same sets.
 */
import { describe, expect, it } from 'vitest';
import {
  assignedWorker,
  MAX_WORKERS,
  programsOfWorker,
} from '../../../../functions/core/fleet/assignment.ts';
import { createRandom } from '../../../../functions/simulator/seeded-random.ts';

/** `count` distinct program names, as operators write them (a word, a number, a suffix). */
function programNames(seed: number, count: number): string[] {
  const random = createRandom(seed);
  const words = ['cards', 'loans', 'payroll', 'savings', 'fx', 'treasury', 'merchant', 'wallet'];
  const names = new Set<string>();
  while (names.size < count) names.add(`${random.pick(words)}-${random.int(1, 99_999)}.${random.hex(3)}`);
  return [...names];
}

function owners(names: readonly string[], workers: number): Map<string, number> {
  return new Map(names.map((name) => [name, assignedWorker(name, workers)]));
}

describe('assignedWorker', () => {
  const names = programNames(35, 1_000);

  it('gives each program one worker in 0..n−1, the same at every call', () => {
    for (const name of names.slice(0, 50)) {
      const worker = assignedWorker(name, 7);

      expect(worker).toBeGreaterThanOrEqual(0);
      expect(worker).toBeLessThan(7);
      expect(assignedWorker(name, 7)).toBe(worker);
    }
  });

  it('gives every program to the one worker there is', () => {
    expect(names.every((name) => assignedWorker(name, 1) === 0)).toBe(true);
  });

  it.each([4, 10, 25])('spreads 1,000 programs over %i workers as evenly as a fair draw would', (n) => {
    const counts = Array.from({ length: n }, () => 0);
    for (const worker of owners(names, n).values()) counts[worker]! += 1;
    const mean = names.length / n;
    // A fair draw of each program: binomial counts, within 4 standard deviations of the mean.
    const spread = 4 * Math.sqrt(mean * (1 - 1 / n));

    expect(Math.min(...counts)).toBeGreaterThan(mean - spread);
    expect(Math.max(...counts)).toBeLessThan(mean + spread);
  });

  it.each([1, 3, 9, 24])(
    'moves only programs to the new worker when %i workers become one more, about 1/(n+1) of them',
    (n) => {
      const before = owners(names, n);
      const after = owners(names, n + 1);
      const moved = names.filter((name) => before.get(name) !== after.get(name));

      expect(moved.every((name) => after.get(name) === n)).toBe(true);
      const expected = names.length / (n + 1);
      const spread = 4 * Math.sqrt(expected * (1 - 1 / (n + 1)));
      expect(moved.length).toBeGreaterThan(expected - spread);
      expect(moved.length).toBeLessThan(expected + spread);
    },
  );

  it.each([2, 5, 10])('moves only the last worker’s programs when %i workers become one fewer', (n) => {
    const before = owners(names, n);
    const after = owners(names, n - 1);

    for (const name of names) {
      if (before.get(name) !== n - 1) expect(after.get(name), name).toBe(before.get(name));
    }
  });

  it('moves no other program when programs are added or removed', () => {
    const before = owners(names.slice(0, 800), 10);
    const after = owners([...names.slice(100, 800), ...programNames(36, 300)], 10);

    for (const name of names.slice(100, 800)) expect(after.get(name), name).toBe(before.get(name));
  });

  it.each([0, -1, 1.5, MAX_WORKERS + 1, Number.NaN])('refuses a worker count of %s', (n) => {
    expect(() => assignedWorker('cards', n)).toThrow(RangeError);
  });
});

describe('programsOfWorker', () => {
  it('splits the programs among the workers: each in exactly one, in the given order', () => {
    const programs = programNames(37, 200).map((name) => ({ name }));
    const shares = Array.from({ length: 6 }, (_, worker) => programsOfWorker(programs, worker, 6));

    expect(
      shares
        .flat()
        .map((program) => program.name)
        .sort(),
    ).toEqual(programs.map((p) => p.name).sort());
    for (const share of shares) {
      expect(share).toEqual(programs.filter((program) => share.includes(program)));
    }
  });
});
