/** Exponential backoff with "full jitter": a uniformly random wait in [0, min(cap, base·2^attempt)). */
export interface BackoffOptions {
  /** Wait scale of the first retry. */
  readonly baseMs: number;
  /** Upper bound of any single wait. */
  readonly capMs: number;
}

/**
 * Full jitter spreads retries of many clients evenly instead of synchronising them into waves
 * (see the AWS Architecture Blog, "Exponential Backoff and Jitter").
 */
export function fullJitterDelay(
  attempt: number,
  options: BackoffOptions,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(options.capMs, options.baseMs * 2 ** Math.max(0, attempt));
  return Math.floor(random() * ceiling);
}
