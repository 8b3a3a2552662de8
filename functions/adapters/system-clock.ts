import { setMaxListeners } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { DeadlineExceededError } from '../core/errors.ts';
import type { Clock, Deadline } from '../core/ports.ts';

const NO_TIMER = (): void => {};

/**
 * The real clock. Its timers are ref'd on purpose: the cycle awaits them, and under Lambda an
 * event loop with nothing left in it ends the invocation with the handler still pending. Nothing
 * leaks past the cycle because sleeps end with their signal and the cycle clears its deadlines.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: async (ms, signal) => {
    try {
      await delay(Math.max(0, ms), undefined, { signal });
    } catch (error) {
      // timers/promises rejects with its own AbortError; the port promises the signal's reason.
      if (signal?.aborted) throw signal.reason;
      throw error;
    }
  },
  deadline: (epochMs): Deadline => {
    const controller = new AbortController();
    // Every batch waiting for a PutEvents slot listens to the cycle's deadlines: no leak, no warning.
    setMaxListeners(0, controller.signal);
    const fire = (): void => controller.abort(new DeadlineExceededError());
    const wait = epochMs - Date.now();
    if (wait <= 0) {
      fire();
      return { signal: controller.signal, clear: NO_TIMER };
    }
    const timer = setTimeout(fire, wait);
    return { signal: controller.signal, clear: () => clearTimeout(timer) };
  },
};
