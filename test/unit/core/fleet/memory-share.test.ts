import { describe, expect, it } from 'vitest';
import {
  MIN_PROGRAM_HELD_BYTES,
  MIN_PROGRAM_PAGE_BYTES,
  PROGRAM_RESERVE_BYTES,
  programMemoryBudget,
  programsThatFit,
} from '../../../../functions/core/fleet/memory-share.ts';
import { memoryBudget } from '../../../../functions/core/memory-budget.ts';

const MiB = 1024 * 1024;

describe('programMemoryBudget', () => {
  it.each([128, 256, 1024])('gives one program of %i MB what a single program’s run has', (mb) => {
    expect(programMemoryBudget(mb * MiB, 1)).toEqual(memoryBudget(mb * MiB));
  });

  it.each([
    [256, 2],
    [256, 10],
    [1024, 40],
  ])(
    'divides %i MB among %i programs: together they hold and read within the room of one program alone',
    (mb, n) => {
      const room = mb * MiB - 112 * MiB;
      const part = programMemoryBudget(mb * MiB, n);

      expect(part.heldBytes * n).toBeLessThanOrEqual(room / 4);
      expect(part.pageBytes * n).toBeLessThanOrEqual(room / 20);
      expect(part.heldBytes).toBeGreaterThanOrEqual(MIN_PROGRAM_HELD_BYTES);
      expect(part.pageBytes).toBeGreaterThanOrEqual(MIN_PROGRAM_PAGE_BYTES);
    },
  );

  it('keeps back a reserve for each further program', () => {
    const two = programMemoryBudget(1024 * MiB, 2);
    const withoutReserve = Math.floor((1024 * MiB - 112 * MiB) / 4 / 2);

    expect(two.heldBytes).toBe(Math.floor((1024 * MiB - 112 * MiB - PROGRAM_RESERVE_BYTES) / 4 / 2));
    expect(two.heldBytes).toBeLessThan(withoutReserve);
  });
});

describe('programsThatFit', () => {
  it.each([128, 256, 512, 1024, 3008])(
    'runs at %i MB as many programs as each get their least useful part',
    (mb) => {
      const n = programsThatFit(mb * MiB);
      const room = (n: number) => mb * MiB - 112 * MiB - (n - 1) * PROGRAM_RESERVE_BYTES;

      expect(n).toBeGreaterThanOrEqual(1);
      // n fit, each with at least the least part of the room; one more would not.
      if (n > 1) {
        expect(room(n) / 20 / n).toBeGreaterThanOrEqual(MIN_PROGRAM_PAGE_BYTES);
        expect(room(n) / 4 / n).toBeGreaterThanOrEqual(MIN_PROGRAM_HELD_BYTES);
      }
      expect(
        room(n + 1) / 20 / (n + 1) < MIN_PROGRAM_PAGE_BYTES ||
          room(n + 1) / 4 / (n + 1) < MIN_PROGRAM_HELD_BYTES,
      ).toBe(true);
    },
  );

  it('grows with the memory: 256 MB runs about two dozen programs at once, 1 GB about six times that', () => {
    expect(programsThatFit(256 * MiB)).toBe(24);
    expect(programsThatFit(1024 * MiB)).toBeGreaterThan(5 * programsThatFit(256 * MiB));
  });
});
