import { describe, expect, it } from 'vitest';
import { GapLedger } from '../../../functions/core/gap-ledger.ts';

const HOUR = 3_600_000;

describe('GapLedger', () => {
  it('remembers skipped numbers and says which are still unpublished', () => {
    const ledger = new GapLedger([]);

    ledger.record([{ from: 5, to: 7 }], 0);

    expect([4, 5, 6, 7, 8].map((n) => ledger.includes(n))).toEqual([false, true, true, true, false]);
    expect(ledger.changed).toBe(true);
  });

  it('splits a gap when a number in its middle is published late', () => {
    const ledger = new GapLedger([{ from: 5, to: 7, seenAt: 0 }]);

    ledger.fill(6);
    ledger.fill(99);

    expect(ledger.open).toEqual([
      { from: 5, to: 5, seenAt: 0 },
      { from: 7, to: 7, seenAt: 0 },
    ]);
  });

  it('does not record again a gap it already holds (seen again after a failed run)', () => {
    const ledger = new GapLedger([{ from: 5, to: 7, seenAt: 0 }]);

    ledger.record([{ from: 5, to: 7 }], 1_000);

    expect(ledger.open).toEqual([{ from: 5, to: 7, seenAt: 0 }]);
    expect(ledger.changed).toBe(false);
  });

  it('forgets gaps older than the retention, and the oldest beyond the size bound', () => {
    const ledger = new GapLedger(
      [
        { from: 1, to: 1, seenAt: 0 },
        { from: 3, to: 3, seenAt: 20 * HOUR },
        { from: 5, to: 5, seenAt: 21 * HOUR },
        { from: 7, to: 7, seenAt: 22 * HOUR },
      ],
      { retentionMs: 24 * HOUR, maxGaps: 2 },
    );

    const forgotten = ledger.prune(25 * HOUR);

    expect(forgotten.map((gap) => gap.from)).toEqual([1, 3]);
    expect(ledger.open.map((gap) => gap.from)).toEqual([5, 7]);
    expect(ledger.changed).toBe(true);
    ledger.written();
    expect(ledger.changed).toBe(false);
  });

  it('keeps to its bound within a run: the lowest ranges are let go as new ones are recorded', () => {
    const ledger = new GapLedger([], { maxGaps: 3 });

    const first = ledger.record(
      [
        { from: 2, to: 2 },
        { from: 4, to: 5 },
      ],
      0,
    );
    const second = ledger.record(
      [
        { from: 7, to: 7 },
        { from: 9, to: 9 },
      ],
      1,
    );

    expect(first).toEqual([]);
    expect(second).toEqual([{ from: 2, to: 2, seenAt: 0 }]);
    expect(ledger.open.map((gap) => gap.from)).toEqual([4, 7, 9]);
    expect(ledger.includes(2)).toBe(false);
  });

  it('answers for every number among thousands of ranges, and fills any of them', () => {
    const ledger = new GapLedger([], { maxGaps: 10_000 });
    // Every even number from 2 to 10 000 skipped, one range each, recorded a page at a time.
    for (let page = 0; page < 50; page += 1) {
      const gaps = Array.from({ length: 100 }, (_, i) => {
        const n = 2 * (page * 100 + i + 1);
        return { from: n, to: n };
      });
      ledger.record(gaps, page);
    }

    ledger.fill(5_000);

    expect(ledger.open).toHaveLength(4_999);
    for (let n = 1; n <= 10_001; n += 1) expect(ledger.includes(n)).toBe(n % 2 === 0 && n !== 5_000);
  });
});
