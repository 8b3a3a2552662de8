/** The virtual clock's hold on real work (`FakeClock.during`), which the property on moto relies on. */
import { setTimeout as realDelay } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { FakeClock } from '../../support/fake-clock.ts';

it('stands still while real work is in flight, then jumps to the next timer', async () => {
  const clock = new FakeClock();
  const start = clock.now();
  let woke = false;
  const sleeper = clock.sleep(1_000).then(() => {
    woke = true;
  });

  const seen = await clock.during(async () => {
    await realDelay(30);
    return { now: clock.now(), woke };
  });
  await sleeper;

  expect(seen).toEqual({ now: start, woke: false });
  expect(clock.now()).toBe(start + 1_000);
});
