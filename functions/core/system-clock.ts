import { setTimeout as delay } from 'node:timers/promises';
import { DeadlineExceededError } from './errors.ts';
import type { Clock } from './ports.ts';

/** The real clock. Timers are unref'd so a pending wait never keeps a process alive on its own. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: async (ms, signal) => {
    await delay(Math.max(0, ms), undefined, { signal, ref: false });
  },
  signalAt: (epochMs) => {
    const controller = new AbortController();
    const wait = epochMs - Date.now();
    const fire = () => controller.abort(new DeadlineExceededError());
    if (wait <= 0) fire();
    else setTimeout(fire, wait).unref();
    return controller.signal;
  },
};
