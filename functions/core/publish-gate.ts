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
  /** Epoch ms at which the next request may start under the rate cap. */
  #nextStartAt = Number.NEGATIVE_INFINITY;
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
    this.#intervalMs = rate === undefined ? 0 : 1000 / rate;
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

  async #paceStart(signal: AbortSignal): Promise<void> {
    if (this.#intervalMs === 0) return;
    const now = this.#clock.now();
    const startAt = Math.max(now, this.#nextStartAt);
    this.#nextStartAt = startAt + this.#intervalMs;
    if (startAt > now) await this.#clock.sleep(startAt - now, signal);
  }
}
