import { DeadlineExceededError } from '../../functions/core/errors.ts';
import type { Clock, Deadline } from '../../functions/core/ports.ts';

/**
 * A virtual clock: `sleep` advances time at once, and deadlines abort when time passes their
 * moment. A whole Lambda budget runs in microseconds, deterministically. `activeDeadlines` counts
 * the deadline timers nobody cleared yet, the ones that would outlive a cycle on a real clock.
 */
export class FakeClock implements Clock {
  #now: number;
  readonly #timers: Array<{ at: number; controller: AbortController; cleared: boolean }> = [];
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
      if (!timer.cleared && !timer.controller.signal.aborted && timer.at <= this.#now) {
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
        .filter((t) => !t.cleared && !t.controller.signal.aborted && t.at > this.#now && t.at <= end)
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

  deadline(epochMs: number): Deadline {
    const controller = new AbortController();
    const timer = { at: epochMs, controller, cleared: false };
    this.#timers.push(timer);
    if (epochMs <= this.#now) controller.abort(new DeadlineExceededError());
    return {
      signal: controller.signal,
      clear: () => {
        timer.cleared = true;
      },
    };
  }

  /** Deadlines neither fired nor cleared. */
  get activeDeadlines(): number {
    return this.#timers.filter((timer) => !timer.cleared && !timer.controller.signal.aborted).length;
  }
}
