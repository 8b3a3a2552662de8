import { describe, expect, it } from 'vitest';
import { planBatches } from '../../../functions/core/batch-planner.ts';
import { makeEvent } from '../../support/in-memory-ports.ts';

const sizes = new Map<number, number>();
const sizeOf = (event: { sequence_number: number }) => sizes.get(event.sequence_number) ?? 100;

describe('planBatches', () => {
  it('caps batches at the entry count', () => {
    const events = Array.from({ length: 23 }, (_, i) => makeEvent(i + 1));
    const plan = planBatches(
      events,
      { maxEntriesPerBatch: 10, maxBatchBytes: 1_000_000, maxEntryBytes: 1_000_000 },
      sizeOf,
    );
    expect(plan.batches.map((b) => b.length)).toEqual([10, 10, 3]);
  });

  it('caps batches at the byte limit, counting every entry', () => {
    const events = Array.from({ length: 5 }, (_, i) => makeEvent(i + 1));
    const plan = planBatches(
      events,
      { maxEntriesPerBatch: 10, maxBatchBytes: 250, maxEntryBytes: 250 },
      sizeOf,
    );
    expect(plan.batches.map((b) => b.map((e) => e.sequence_number))).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('stops at an event too large on its own, keeping the ones before it', () => {
    sizes.set(3, 5_000);
    const events = Array.from({ length: 5 }, (_, i) => makeEvent(i + 1));
    const plan = planBatches(
      events,
      { maxEntriesPerBatch: 10, maxBatchBytes: 1_000, maxEntryBytes: 1_000 },
      sizeOf,
    );
    expect(plan.batches.map((b) => b.map((e) => e.sequence_number))).toEqual([[1, 2]]);
    expect(plan.oversize).toMatchObject({ event: { sequence_number: 3 }, sizeBytes: 5_000 });
    sizes.clear();
  });
});
