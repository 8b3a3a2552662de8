import { DeadlineExceededError } from './errors.ts';
import type { Clock, Deadline } from './ports.ts';

/**
 * The end of useful work: the configured margin, but never more than a quarter of the time
 * left, so short invocations (tests, tight timeouts) still poll. The construct derives the
 * function timeout from the same rule.
 */
export function computeDeadline(startedAt: number, remainingMs: number, safetyMarginMs: number): number {
  return startedAt + remainingMs - Math.min(safetyMarginMs, Math.floor(remainingMs / 4));
}

/** When work in flight must be abandoned: a second (or a tenth of short budgets) before Lambda's end. */
export function computeHardDeadline(startedAt: number, remainingMs: number): number {
  return startedAt + remainingMs - Math.min(1_000, Math.floor(remainingMs / 10));
}

/** The longest a PutEvents request is given to be answered before the hard deadline. */
const MAX_ANSWER_WAIT_MS = 2_000;

/**
 * One invocation's time limits and the timers that enforce them.
 *
 * - `deadline` (soft): no poll starts or continues after it; aborting a poll loses nothing.
 * - `hardDeadline`: a PutEvents or checkpoint write still in flight is abandoned; whatever it
 *   carried is sent again next time, since the checkpoint did not move.
 * - `end`: Lambda's own end of the invocation.
 *
 * Every signal handed out is backed by a timer that `dispose()` clears, so nothing outlives the
 * cycle: under Lambda a leftover timer would fire inside a later invocation of the same container.
 * `dispose()` also aborts every signal that has not fired yet: a wait still holding one (a token
 * request nobody awaits any more, say) ends with the cycle instead of never, which would keep the
 * CLI's process alive and hand the stuck request to the next warm invocation.
 */
export class CycleBudget {
  readonly startedAt: number;
  readonly remainingMs: number;
  readonly deadline: number;
  readonly hardDeadline: number;
  readonly end: number;
  readonly #clock: Clock;
  readonly #timers: Deadline[] = [];
  /** Aborted by `dispose()`: every signal handed out follows it. */
  readonly #ended = new AbortController();
  #deadlineSignal: AbortSignal | undefined;
  #workSignal: AbortSignal | undefined;
  #startSignal: AbortSignal | undefined;

  constructor(clock: Clock, remainingMs: number, safetyMarginMs: number) {
    this.#clock = clock;
    this.startedAt = clock.now();
    this.remainingMs = remainingMs;
    this.deadline = computeDeadline(this.startedAt, remainingMs, safetyMarginMs);
    this.hardDeadline = Math.max(this.deadline, computeHardDeadline(this.startedAt, remainingMs));
    this.end = this.startedAt + remainingMs;
  }

  /** Aborts at the soft deadline. */
  get deadlineSignal(): AbortSignal {
    this.#deadlineSignal ??= this.#at(this.deadline);
    return this.#deadlineSignal;
  }

  /** Aborts at the hard deadline: bounds PutEvents calls, waits between them, and commits. */
  get workSignal(): AbortSignal {
    this.#workSignal ??= this.#at(this.hardDeadline);
    return this.#workSignal;
  }

  /**
   * Aborts when no PutEvents request should start any more: halfway from the soft to the hard
   * deadline, at most 2 s before the hard one, so that those under way are answered before it.
   */
  get startSignal(): AbortSignal {
    this.#startSignal ??= this.#at(
      this.hardDeadline - Math.min(MAX_ANSWER_WAIT_MS, Math.floor((this.hardDeadline - this.deadline) / 2)),
    );
    return this.#startSignal;
  }

  /** A signal that aborts `reserveMs` before the end, for a last write that must be answered in time. */
  signalBeforeEnd(reserveMs: number): AbortSignal {
    return this.#at(this.end - reserveMs);
  }

  /** Milliseconds until the soft deadline (negative once it has passed). */
  untilDeadline(): number {
    return this.deadline - this.#clock.now();
  }

  elapsed(): number {
    return this.#clock.now() - this.startedAt;
  }

  /** Clears every timer this budget started and aborts every signal it handed out that has not fired. */
  dispose(): void {
    for (const timer of this.#timers.splice(0)) timer.clear();
    if (!this.#ended.signal.aborted) {
      this.#ended.abort(new DeadlineExceededError('The cycle ended; what still waited on it was cut short'));
    }
  }

  #at(epochMs: number): AbortSignal {
    // After `dispose()` no timer starts (nothing would clear it): the signal is aborted already.
    if (this.#ended.signal.aborted) return this.#ended.signal;
    const timer = this.#clock.deadline(epochMs);
    this.#timers.push(timer);
    return AbortSignal.any([timer.signal, this.#ended.signal]);
  }
}
