import type { Clock } from '../ports.ts';

/**
 * "Something changed": parts of the stream reader that run side by side (the connection, lookups,
 * the reads) wake whoever waits for news, each time a round of waiting starts afresh.
 */
export class ChangeSignal {
  #round = newRound();

  /** Wakes every current waiter. */
  notify(): void {
    this.#round.resolve();
    this.#round = newRound();
  }

  /** Resolves at the next `notify`, or at `until` (epoch ms, on `clock`) or when `signal` aborts. */
  async wait(clock: Clock, signal: AbortSignal, until?: number): Promise<void> {
    const changed = this.#round.promise;
    if (until === undefined) {
      await changed;
      return;
    }
    const wait = until - clock.now();
    if (wait <= 0) return;
    const timer = new AbortController();
    try {
      await Promise.race([
        changed,
        clock.sleep(wait, AbortSignal.any([timer.signal, signal])).catch(() => {}),
      ]);
    } finally {
      timer.abort();
    }
  }
}

/** A promise and its resolver: one round of "something changed". */
function newRound(): { readonly promise: Promise<void>; readonly resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}
