/**
 * `--duration` stops a run even when the garbage collector runs meanwhile: inside `AbortSignal.any`,
 * Node 20 holds its sources weakly, and an `AbortSignal.timeout` collected there never fires.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { cycleBudget, RUN_CYCLE_MS, stopAfter } from '../../../functions/cli/stop-after.ts';
import { computeDeadline, computeHardDeadline } from '../../../functions/core/cycle-budget.ts';

/** A full collection, as V8 runs one when it likes. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

describe('stopAfter', () => {
  it('aborts a combined stop signal after the time, though a collection ran meanwhile', async () => {
    const stop = AbortSignal.any([new AbortController().signal, stopAfter(0.2)]);
    const aborted = new Promise<unknown>((resolve) => {
      stop.addEventListener('abort', () => resolve(stop.reason));
    });

    // Once the task that made the signals is over (V8 keeps weak targets alive until then).
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();

    // Waits for the abort itself: a signal that never fires fails the test by its timeout.
    await expect(aborted).resolves.toMatchObject({ name: 'TimeoutError' });
  });
});

describe('cycleBudget', () => {
  const now = Date.parse('2026-11-28T10:00:00Z');

  it('polls a whole minute to its end without --duration', () => {
    expect(cycleBudget(undefined, now)).toEqual({ remainingMs: RUN_CYCLE_MS, safetyMarginMs: 0 });
    expect(cycleBudget(now + 10 * RUN_CYCLE_MS, now)).toEqual({
      remainingMs: RUN_CYCLE_MS,
      safetyMarginMs: 0,
    });
  });

  it('ends the last cycle of --duration before it is up, publishing and the last writes included', () => {
    const endsAt = now + 25_000;
    const budget = cycleBudget(endsAt, now)!;

    expect(now + budget.remainingMs).toBe(endsAt);
    // Polling stops with a margin; publishing is abandoned before the end, not a minute later.
    expect(computeDeadline(now, budget.remainingMs, budget.safetyMarginMs)).toBeLessThan(endsAt);
    expect(computeHardDeadline(now, budget.remainingMs)).toBeLessThan(endsAt);
  });

  it('starts no cycle with less than a poll window left', () => {
    expect(cycleBudget(now + 1_999, now)).toBeUndefined();
    expect(cycleBudget(now - 1, now)).toBeUndefined();
    expect(cycleBudget(now + 2_000, now)).toBeDefined();
  });
});
