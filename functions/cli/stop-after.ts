import { CYCLE_DEFAULTS } from '../core/cycle/cycle-options.ts';

/**
 * `--duration`: a signal that aborts after that many seconds. A timer of our own rather than
 * `AbortSignal.timeout`: put into `AbortSignal.any`, Node 20 holds a timeout signal only weakly,
 * and once it is garbage-collected it never fires, so a run would go on past its duration. The
 * pending timer holds this controller; it is unref'd as `AbortSignal.timeout`'s is.
 */
export function stopAfter(seconds: number): AbortSignal {
  const controller = new AbortController();
  setTimeout(
    () => controller.abort(new DOMException(`--duration ${seconds} s elapsed`, 'TimeoutError')),
    seconds * 1000,
  ).unref();
  return controller.signal;
}

/** A cycle of the continuous run: a minute, polling to its end; the next starts where it stopped. */
export const RUN_CYCLE_MS = 60_000;

/**
 * The time budget of the next cycle of `run`, at `now`: a minute polled to its end, or with
 * `--duration` (ending at `endsAt`) what is left of it, kept back as a Lambda run keeps its margin,
 * so that publishing is abandoned at the hard deadline and the last checkpoint written and the
 * lease given back before the duration is up, not at the end of a minute. `undefined` once too
 * little is left for a poll: a cycle then would only take the lease and give it back.
 */
export function cycleBudget(
  endsAt: number | undefined,
  now: number,
): { remainingMs: number; safetyMarginMs: number } | undefined {
  const left = endsAt === undefined ? RUN_CYCLE_MS : endsAt - now;
  if (left < CYCLE_DEFAULTS.minPollWindowMs) return undefined;
  if (left >= RUN_CYCLE_MS) return { remainingMs: RUN_CYCLE_MS, safetyMarginMs: 0 };
  return { remainingMs: left, safetyMarginMs: CYCLE_DEFAULTS.safetyMarginMs };
}
