import { describe, expect, it } from 'vitest';
import { AuthenticationError, UpstreamHttpError } from '../../../functions/core/errors.ts';
import { GapLedger } from '../../../functions/core/gap-ledger.ts';
import { GapRepair } from '../../../functions/core/gap-repair.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import {
  InMemoryLookup,
  makeEvent,
  RecordingLogger,
  RecordingMetrics,
} from '../../support/in-memory-ports.ts';

function setup(options: { maxLookups?: number; graceMs?: number; maxJump?: number } = {}) {
  const clock = new FakeClock();
  const lookup = new InMemoryLookup(clock);
  const metrics = new RecordingMetrics();
  const logger = new RecordingLogger();
  const repair = new GapRepair({ lookup, clock, metrics, logger }, options);
  const signal = new AbortController().signal;
  return { clock, lookup, metrics, logger, repair, signal };
}

describe('GapRepair', () => {
  it('looks up every skipped number and returns the events found, ascending', async () => {
    const { repair, lookup, metrics, signal } = setup();
    lookup.add(makeEvent(7), makeEvent(4));

    const found = await repair.fill(
      [
        { from: 3, to: 4 },
        { from: 6, to: 7 },
      ],
      signal,
    );

    expect(found.map((event) => event.sequence_number)).toEqual([4, 7]);
    expect([...lookup.bySequence].sort()).toEqual([3, 4, 6, 7]);
    expect(metrics.sum('GapsRepaired')).toBe(2);
  });

  it('spends no lookup on a gap only a jump beyond the bound opens, first looks and re-checks alike', async () => {
    const { repair, lookup, clock, signal } = setup({ maxJump: 100 });
    // Recorded by a version that trusted 2^53 − 1 after 3; and an accepted jump's numbers.
    const ledger = new GapLedger([{ from: 4, to: Number.MAX_SAFE_INTEGER - 1, seenAt: clock.now() }]);

    await repair.fill(
      [
        { from: 4, to: 103 },
        { from: 200, to: 201 },
      ],
      signal,
    );
    const hasWork = repair.hasWork(ledger, clock.now());
    await repair.recheck(ledger, signal);

    expect(lookup.bySequence).toEqual([200, 201]);
    expect(hasWork).toBe(false);
  });

  it('makes at most maxLookups lookups per invocation, first looks and re-checks together', async () => {
    const { repair, lookup, clock, signal } = setup({ maxLookups: 5 });
    const ledger = new GapLedger([{ from: 100, to: 199, seenAt: clock.now() }]);

    await repair.fill([{ from: 1, to: 3 }], signal);
    await repair.recheck(ledger, signal);
    clock.advance(60_000);
    await repair.recheck(ledger, signal);

    expect(lookup.bySequence).toEqual([1, 2, 3, 100, 101]);
    expect(repair.hasWork(ledger, clock.now())).toBe(false);
  });

  it('looks a young gap up again as its age doubles: at 1, 2, 4, 8... seconds', async () => {
    const { repair, lookup, clock, signal } = setup();
    const seenAt = clock.now();
    const ledger = new GapLedger([{ from: 5, to: 5, seenAt }]);
    const lookedAt: number[] = [];
    for (let second = 0; second <= 64; second += 1) {
      const before = lookup.bySequence.length;
      await repair.recheck(ledger, signal);
      if (lookup.bySequence.length > before) lookedAt.push((clock.now() - seenAt) / 1000);
      clock.advance(1_000);
    }

    expect(lookedAt).toEqual([0, 1, 2, 4, 8, 16, 32, 64]);
  });

  it('publishes what a re-check finds, and gives up a gap past its grace once, counting its numbers', async () => {
    const { repair, lookup, clock, metrics, logger, signal } = setup({ graceMs: 10_000 });
    const ledger = new GapLedger([
      { from: 5, to: 6, seenAt: clock.now() },
      { from: 9, to: 11, seenAt: clock.now() - 20_000 },
    ]);
    lookup.add(makeEvent(6));

    const found = await repair.recheck(ledger, signal);
    ledger.fill(6);
    clock.advance(11_000);
    await repair.recheck(ledger, signal);
    await repair.recheck(ledger, signal);

    expect(found.map((event) => event.sequence_number)).toEqual([6]);
    expect(metrics.sum('GapsUnfilled')).toBe(3 + 1);
    expect(ledger.open).toEqual([
      { from: 5, to: 5, seenAt: expect.any(Number), gaveUpAt: expect.any(Number) },
      { from: 9, to: 11, seenAt: expect.any(Number), gaveUpAt: expect.any(Number) },
    ]);
    expect(ledger.changed).toBe(true);
    expect(repair.hasWork(ledger, clock.now())).toBe(false);
    expect(logger.lines.filter((line) => line.message.startsWith('No event turned up'))).toHaveLength(2);
  });

  it('tries a failed lookup again later, and stops looking up for the run when the service refuses', async () => {
    const { repair, lookup, clock, logger, signal } = setup();
    const ledger = new GapLedger([{ from: 1, to: 3, seenAt: clock.now() }]);
    lookup.failNext(new UpstreamHttpError('503', { status: 503, retryable: true }));

    await repair.recheck(ledger, signal);
    lookup.failNext(new UpstreamHttpError('400', { status: 400, retryable: false }));
    clock.advance(1_000);
    await repair.recheck(ledger, signal);
    clock.advance(1_000);
    await repair.recheck(ledger, signal);

    // The lookups already under way when the refusal came finish; none starts after it.
    expect(lookup.bySequence).toEqual([1, 2, 3, 1, 2, 3]);
    expect(repair.hasWork(ledger, clock.now())).toBe(false);
    expect(logger.lines.some((line) => line.message.includes('no gap repair for the rest of this run'))).toBe(
      true,
    );
  });

  it('leaves an authentication failure to the cycle', async () => {
    const { repair, lookup, signal } = setup();
    const refused = new AuthenticationError('refused');
    lookup.failNext(refused);

    await expect(repair.fill([{ from: 1, to: 1 }], signal)).rejects.toBe(refused);
  });
});
