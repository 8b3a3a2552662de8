import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MEMORY_BUDGET,
  eventFootprint,
  footprintOf,
  MAX_PAGE_BYTES,
  MIN_HELD_BYTES,
  memoryBudget,
  RUNTIME_RESERVE_BYTES,
  withinRoom,
} from '../../../functions/core/memory-budget.ts';
import { makeEvent } from '../../support/in-memory-ports.ts';

const MiB = 1024 * 1024;

describe('memoryBudget', () => {
  it('grows with the memory, and keeps the runtime reserve, the page being read and its parse out of what events hold', () => {
    const sizes = [128, 256, 512, 1024, 3008].map((mb) => mb * MiB);
    const budgets = sizes.map(memoryBudget);

    for (const [index, budget] of budgets.entries()) {
      const memory = sizes[index]!;
      // A page's text, its parsed value and its events at once take about five times its size.
      expect(RUNTIME_RESERVE_BYTES + budget.heldBytes + 5 * budget.pageBytes).toBeLessThan(memory);
      expect(budget.pageBytes).toBeLessThanOrEqual(MAX_PAGE_BYTES);
      if (index > 0) expect(budget.heldBytes).toBeGreaterThan(budgets[index - 1]!.heldBytes);
    }
  });

  it('never gives less than its floor, however little memory', () => {
    expect(memoryBudget(16 * MiB).heldBytes).toBe(MIN_HELD_BYTES);
    expect(memoryBudget(0).pageBytes).toBeGreaterThan(0);
  });

  it("is a 256 MB function's when none is given", () => {
    expect(DEFAULT_MEMORY_BUDGET).toEqual(memoryBudget(256 * MiB));
  });
});

describe('eventFootprint', () => {
  it('counts an event by its text, twice over, plus what every event carries', () => {
    const small = makeEvent(1);
    const large = makeEvent(2, { data: { note: 'x'.repeat(10_000) } });

    expect(eventFootprint(large) - eventFootprint(small)).toBe(
      2 * (large.detail.length - small.detail.length),
    );
    expect(footprintOf([small, large])).toBe(eventFootprint(small) + eventFootprint(large));
  });
});

describe('withinRoom', () => {
  const events = [1, 2, 3, 4].map((n) => makeEvent(n));
  const each = eventFootprint(events[0]!);
  const numbers = (kept: readonly { sequence_number: number }[]) => kept.map((e) => e.sequence_number);

  it('keeps the first events whose footprints fit its bytes, with the reserved ones counted first', () => {
    expect(numbers(withinRoom(events, { bytes: 2 * each + 10, events: 100 }))).toEqual([1, 2]);
    expect(numbers(withinRoom(events, { bytes: 3 * each + 10, events: 100 }, [events[3]!]))).toEqual([1, 2]);
  });

  it('keeps no more events than it has room for, the reserved ones included', () => {
    expect(numbers(withinRoom(events, { bytes: 1e9, events: 3 }))).toEqual([1, 2, 3]);
    expect(numbers(withinRoom(events, { bytes: 1e9, events: 3 }, [events[3]!]))).toEqual([1, 2]);
  });

  it('keeps at least one event, so one larger than the room still goes through', () => {
    expect(numbers(withinRoom(events, { bytes: 1, events: 0 }))).toEqual([1]);
    expect(withinRoom([], { bytes: 1, events: 1 })).toEqual([]);
  });

  it('keeps them all without a room', () => {
    expect(withinRoom(events, undefined)).toBe(events);
  });
});
