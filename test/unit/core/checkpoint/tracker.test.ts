import { describe, expect, it } from 'vitest';
import { CheckpointTracker } from '../../../../functions/core/checkpoint/tracker.ts';

describe('CheckpointTracker', () => {
  it('advances only over the contiguous prefix of accepted events', () => {
    const tracker = new CheckpointTracker(4);
    tracker.track([5, 6, 7, 8]);

    tracker.accept(6);
    tracker.accept(8);
    expect(tracker.safeCheckpoint).toBe(4);

    tracker.accept(5);
    expect(tracker.safeCheckpoint).toBe(6);

    tracker.accept(7);
    expect(tracker.safeCheckpoint).toBe(8);
    expect(tracker.pendingCount).toBe(0);
  });

  it('handles sequence gaps upstream (the prefix is over tracked events)', () => {
    const tracker = new CheckpointTracker(null);
    tracker.track([10, 12, 15]);
    tracker.accept(10);
    tracker.accept(12);
    expect(tracker.safeCheckpoint).toBe(12);
    expect(tracker.highestTracked).toBe(15);
  });

  it('works across several batches in flight at once', () => {
    const tracker = new CheckpointTracker(0);
    tracker.track([1, 2, 3]);
    tracker.track([4, 5, 6]);
    for (const sequence of [4, 5, 6, 2, 3]) tracker.accept(sequence);
    expect(tracker.safeCheckpoint).toBe(0);
    tracker.accept(1);
    expect(tracker.safeCheckpoint).toBe(6);
  });

  it('refuses out-of-order tracking and unknown acceptances', () => {
    const tracker = new CheckpointTracker(5);
    expect(() => tracker.track([5])).toThrow(RangeError);
    tracker.track([7]);
    expect(() => tracker.track([6])).toThrow(/out of order/);
    expect(() => tracker.accept(9)).toThrow(/never tracked/);
  });
});

describe('CheckpointTracker with two events under one sequence number', () => {
  it('passes the number only once both are accepted', () => {
    const tracker = new CheckpointTracker(4);
    tracker.track([5, 6, 6, 7]);

    tracker.accept(5);
    tracker.accept(6);
    expect(tracker.safeCheckpoint).toBe(5);

    tracker.accept(7);
    expect(tracker.safeCheckpoint).toBe(5);

    tracker.accept(6);
    expect(tracker.safeCheckpoint).toBe(7);
    expect(() => tracker.accept(6)).toThrow(/never tracked/);
  });
});
