import { DeadlineExceededError } from '../../functions/core/errors.ts';
import type { Clock, Deadline } from '../../functions/core/ports.ts';

interface Timer {
  readonly at: number;
  readonly fire: () => void;
  readonly kind: 'sleep' | 'deadline';
  done: boolean;
}

/**
 * A virtual clock for the cycle's unit tests. Time stands still while there is work to do and
 * jumps to the next timer once everything is waiting: when nothing but timers is left (checked
 * with `setImmediate`, after every pending promise has run), it advances to the earliest one
 * and fires it. So concurrent activities (a long poll held while batches are published) share
 * one timeline, and a whole Lambda budget runs in microseconds, deterministically.
 *
 * `advance(ms)` jumps by hand, firing what falls due: a step that "took" that long. `during(work)`
 * holds time still while real I/O is in flight.
 * `activeDeadlines` counts the deadline timers nobody cleared yet, the ones that would outlive a
 * cycle on a real clock.
 */
export class FakeClock implements Clock {
  #now: number;
  readonly #timers: Timer[] = [];
  #advanceScheduled = false;
  /** Real work in flight (`during`): time stands still until it is done. */
  #busy = 0;
  readonly sleeps: number[] = [];

  constructor(start = Date.parse('2026-11-22T00:00:00.000Z')) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  advance(ms: number): void {
    this.#runUntil(this.#now + ms);
  }

  /** Resolves once virtual time has reached `now + ms`; rejects with the reason as soon as `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.sleeps.push(ms);
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        timer.done = true;
        reject(signal!.reason);
      };
      const timer = this.#add(this.#now + Math.max(0, ms), 'sleep', () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  deadline(epochMs: number): Deadline {
    const controller = new AbortController();
    const fire = () => controller.abort(new DeadlineExceededError());
    if (epochMs <= this.#now) {
      fire();
      return { signal: controller.signal, clear: () => {} };
    }
    const timer = this.#add(epochMs, 'deadline', fire);
    return {
      signal: controller.signal,
      clear: () => {
        timer.done = true;
      },
    };
  }

  /**
   * Runs real asynchronous work (a request to moto) with time standing still: otherwise, while it
   * is in flight, only timers seem left and the clock would jump ahead, past deadlines the work
   * never reached on a real clock.
   */
  async during<T>(work: () => Promise<T>): Promise<T> {
    this.#busy += 1;
    try {
      return await work();
    } finally {
      this.#busy -= 1;
      this.#scheduleAdvance();
    }
  }

  /** Deadlines neither fired nor cleared. */
  get activeDeadlines(): number {
    return this.#timers.filter((timer) => timer.kind === 'deadline' && !timer.done).length;
  }

  #add(at: number, kind: Timer['kind'], fire: () => void): Timer {
    const timer: Timer = { at, fire, kind, done: false };
    this.#timers.push(timer);
    this.#scheduleAdvance();
    return timer;
  }

  /** Fires, in time order, every timer due by `until`, and moves time there. */
  #runUntil(until: number): void {
    for (;;) {
      const next = this.#earliest();
      if (next === undefined || next.at > until) break;
      this.#now = Math.max(this.#now, next.at);
      next.done = true;
      next.fire();
    }
    this.#now = Math.max(this.#now, until);
    this.#prune();
  }

  #earliest(): Timer | undefined {
    let earliest: Timer | undefined;
    for (const timer of this.#timers) {
      if (!timer.done && (earliest === undefined || timer.at < earliest.at)) earliest = timer;
    }
    return earliest;
  }

  #prune(): void {
    for (let i = this.#timers.length - 1; i >= 0; i -= 1)
      if (this.#timers[i]!.done) this.#timers.splice(i, 1);
  }

  /** Once every pending promise has run, jumps to the earliest timer if someone is sleeping. */
  #scheduleAdvance(): void {
    if (this.#advanceScheduled) return;
    this.#advanceScheduled = true;
    setImmediate(() => {
      this.#advanceScheduled = false;
      if (this.#busy > 0) return;
      if (!this.#timers.some((timer) => timer.kind === 'sleep' && !timer.done)) return;
      const next = this.#earliest();
      if (next !== undefined) this.#runUntil(next.at);
      if (this.#timers.some((timer) => !timer.done)) this.#scheduleAdvance();
    });
  }
}
