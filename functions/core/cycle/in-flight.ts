/**
 * Publishing under way: the pages handed to the pipeline (and late events found by re-checks)
 * whose publishing the read loop does not wait for, and their events and the bytes these take
 * (`eventFootprint`) until it ends. A failure goes to `onFailure`; `onSettled` runs each time one
 * ends (a stream's micro-batch waits for that).
 */
export class InFlight {
  readonly #running = new Set<Promise<void>>();
  readonly #onFailure: (error: unknown) => void;
  readonly #onSettled: () => void;
  #bytes = 0;
  #events = 0;

  constructor(handlers: { onFailure: (error: unknown) => void; onSettled: () => void }) {
    this.#onFailure = handlers.onFailure;
    this.#onSettled = handlers.onSettled;
  }

  get size(): number {
    return this.#running.size;
  }

  /** Bytes the events being published take, by `eventFootprint`. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Events being published. */
  get events(): number {
    return this.#events;
  }

  /** Tracks `work`, which holds `events` taking `bytes` until it ends. */
  add(work: Promise<void>, held: { readonly events: number; readonly bytes: number }): void {
    this.#bytes += held.bytes;
    this.#events += held.events;
    const tracked: Promise<void> = work
      .catch((error: unknown) => this.#onFailure(error))
      .finally(() => {
        this.#bytes -= held.bytes;
        this.#events -= held.events;
        this.#running.delete(tracked);
        this.#onSettled();
      });
    this.#running.add(tracked);
  }

  /** Resolves when one of them has ended (never rejects). */
  async oneSettled(): Promise<void> {
    await Promise.race(this.#running);
  }

  /** Resolves when all of them have ended (never rejects). */
  async allSettled(): Promise<void> {
    await Promise.all(this.#running);
  }
}
