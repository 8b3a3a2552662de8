/**
 * `--duration` stops a run even when the garbage collector runs meanwhile: inside `AbortSignal.any`,
 * Node 20 holds its sources weakly, and an `AbortSignal.timeout` collected there never fires.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { stopAfter } from '../../../functions/cli/stop-after.ts';

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
