import { DeadlineExceededError } from '../../functions/core/errors.ts';
import type { Clock } from '../../functions/core/ports.ts';

/**
 * A virtual clock: `sleep` advances time at once, and signals from `signalAt` abort when time
 * passes their moment. A whole Lambda budget runs in microseconds, deterministically.
 */
export class FakeClock implements Clock {
  #now: number;
  readonly #timers: Array<{ at: number; controller: AbortController }> = [];
  readonly sleeps: number[] = [];

  constructor(start = Date.parse('2026-11-22T00:00:00.000Z')) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  advance(ms: number): void {
    this.#now += ms;
    for (const timer of this.#timers) {
      if (!timer.controller.signal.aborted && timer.at <= this.#now) {
        timer.controller.abort(new DeadlineExceededError());
      }
    }
  }

  /**
   * What a long-poll does: waits up to `ms`, but returns early (throwing the abort reason) when
   * `signal` aborts because time reached one of its deadlines.
   */
  hold(ms: number, signal: AbortSignal): void {
    const end = this.#now + ms;
    while (this.#now < end) {
      const next = this.#timers
        .filter((t) => !t.controller.signal.aborted && t.at > this.#now && t.at <= end)
        .reduce((min, t) => Math.min(min, t.at), end);
      this.advance(next - this.#now);
      signal.throwIfAborted();
    }
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    this.sleeps.push(ms);
    this.advance(ms);
    signal?.throwIfAborted();
  }

  signalAt(epochMs: number): AbortSignal {
    const controller = new AbortController();
    this.#timers.push({ at: epochMs, controller });
    if (epochMs <= this.#now) controller.abort(new DeadlineExceededError());
    return controller.signal;
  }
}
