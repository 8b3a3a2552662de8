import type { Clock } from './ports.ts';

export interface PublishGateOptions {
  /** PutEvents requests in flight at once, at most. */
  readonly concurrency: number;
  /**
   * Requests started per second, at most: the PutEvents quota is per account and region and
   * shared with other producers. @default no cap
   */
  readonly maxRequestsPerSecond?: number;
}

/** How a request went, for the adaptive limit. */
export type RequestOutcome = 'ok' | 'throttled' | 'failed';

/**
 * Admits PutEvents requests: at most `limit` in flight (adaptive: halved when EventBridge
 * throttles, grown back by one after `limit` requests in a row went through, up to
 * `concurrency`), and no faster than the optional rate cap (a token bucket of capacity one,
 * so no burst ever exceeds the cap). Waiters are served in arrival order, so a page's batches
 * start in sequence order.
 */
export class PublishGate {
  readonly #clock: Clock;
  readonly #max: number;
  readonly #intervalMs: number;
  #limit: number;
  #inFlight = 0;
  #streak = 0;
  /** When the last request started under the rate cap, and the wait for it (one at a time). */
  #lastStartAt = Number.NEGATIVE_INFINITY;
  #pacing: Promise<void> = Promise.resolve();
  readonly #waiting: Array<() => void> = [];

  constructor(clock: Clock, options: PublishGateOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
      throw new RangeError(`concurrency must be a positive integer, got ${options.concurrency}`);
    }
    const rate = options.maxRequestsPerSecond;
    if (rate !== undefined && !(rate > 0)) {
      throw new RangeError(`maxRequestsPerSecond must be positive, got ${rate}`);
    }
    this.#clock = clock;
    this.#max = options.concurrency;
    this.#limit = options.concurrency;
    // 1 % of slack, so that network jitter cannot show the receiver one request too many in a second.
    this.#intervalMs = rate === undefined ? 0 : (1000 / rate) * 1.01;
  }

  /** Requests allowed in flight right now. */
  get limit(): number {
    return this.#limit;
  }

  /** Waits for a slot and for the rate cap; rejects with the signal's reason if it aborts first. */
  async acquire(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.#inFlight >= this.#limit || this.#waiting.length > 0) {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          const index = this.#waiting.indexOf(admit);
          if (index !== -1) this.#waiting.splice(index, 1);
          reject(signal.reason);
        };
        const admit = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        this.#waiting.push(admit);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    } else {
      this.#inFlight += 1;
    }
    // The slot is ours from here (taken above, or handed over by release()).
    try {
      await this.#paceStart(signal);
    } catch (error) {
      this.#inFlight -= 1;
      this.#admitNext();
      throw error;
    }
  }

  /** Gives the slot back, telling how the request went. */
  release(outcome: RequestOutcome): void {
    this.#inFlight -= 1;
    if (outcome === 'throttled') {
      this.#limit = Math.max(1, Math.floor(this.#limit / 2));
      this.#streak = 0;
    } else if (outcome === 'ok') {
      this.#streak += 1;
      if (this.#streak >= this.#limit && this.#limit < this.#max) {
        this.#limit += 1;
        this.#streak = 0;
      }
    }
    this.#admitNext();
  }

  #admitNext(): void {
    while (this.#inFlight < this.#limit && this.#waiting.length > 0) {
      this.#inFlight += 1;
      this.#waiting.shift()!();
    }
  }

  /**
   * Spaces request starts by the interval, measured from when the previous one actually started:
   * a start delayed by a busy event loop pushes the next one back too, so no second ever sees
   * more than the cap.
   */
  async #paceStart(signal: AbortSignal): Promise<void> {
    if (this.#intervalMs === 0) return;
    const previous = this.#pacing;
    let done!: () => void;
    this.#pacing = new Promise<void>((resolve) => {
      done = resolve;
    });
    try {
      await previous;
      const wait = this.#lastStartAt + this.#intervalMs - this.#clock.now();
      if (wait > 0) await this.#clock.sleep(wait, signal);
      this.#lastStartAt = this.#clock.now();
    } finally {
      done();
    }
  }
}
