import { describe, expect, it } from 'vitest';
import { PublishGate } from '../../../functions/core/publish-gate.ts';
import { FakeClock } from '../../support/fake-clock.ts';

const live = () => new AbortController().signal;

describe('PublishGate', () => {
  it('lets at most `concurrency` requests in, and the next in arrival order when one is released', async () => {
    const gate = new PublishGate(new FakeClock(), { concurrency: 2 });
    const admitted: number[] = [];
    await gate.acquire(live());
    await gate.acquire(live());

    const third = gate.acquire(live()).then(() => admitted.push(3));
    const fourth = gate.acquire(live()).then(() => admitted.push(4));
    await Promise.resolve();
    expect(admitted).toEqual([]);
    gate.release('ok');
    await third;
    gate.release('ok');
    await fourth;

    expect(admitted).toEqual([3, 4]);
  });

  it('halves the limit when throttled and grows it back by one after a streak of successes', () => {
    const gate = new PublishGate(new FakeClock(), { concurrency: 8 });
    const cycle = (outcome: 'ok' | 'throttled') => {
      void gate.acquire(live());
      gate.release(outcome);
    };

    cycle('throttled');
    expect(gate.limit).toBe(4);
    cycle('throttled');
    expect(gate.limit).toBe(2);
    for (let i = 0; i < 2; i += 1) cycle('ok');
    expect(gate.limit).toBe(3);
    for (let i = 0; i < 3; i += 1) cycle('ok');
    expect(gate.limit).toBe(4);
  });

  it('starts no more than the rate cap allows in any second, however many slots are free', async () => {
    const clock = new FakeClock();
    const gate = new PublishGate(clock, { concurrency: 50, maxRequestsPerSecond: 20 });
    const startedAt: number[] = [];

    await Promise.all(
      Array.from({ length: 60 }, async () => {
        await gate.acquire(live());
        startedAt.push(clock.now());
        gate.release('ok');
      }),
    );

    const first = startedAt[0]!;
    for (const start of startedAt) {
      const inWindow = startedAt.filter((t) => t >= start && t < start + 1000).length;
      expect(inWindow).toBeLessThanOrEqual(20);
    }
    expect(startedAt.at(-1)! - first).toBeGreaterThanOrEqual(59 * 50);
  });

  it('gives up waiting, and gives the slot on, when the signal aborts', async () => {
    const gate = new PublishGate(new FakeClock(), { concurrency: 1 });
    await gate.acquire(live());
    const controller = new AbortController();

    const waiting = gate.acquire(controller.signal);
    controller.abort(new Error('deadline'));

    await expect(waiting).rejects.toThrow('deadline');
    gate.release('ok');
    await gate.acquire(live());
  });
});
