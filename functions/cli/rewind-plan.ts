/**
 * The decisions of `rewind`, without I/O: what `--to` means, whether a target is allowed, and the
 * sentence that says what will happen. Unit-tested on their own.
 */
import { UsageError } from './cli-errors.ts';

/** `--to`: a checkpoint value, the beginning of the feed, or the newest event (by fast-forward). */
export type RewindTarget =
  | { readonly kind: 'sequence'; readonly checkpoint: number }
  | { readonly kind: 'latest' };

export function parseRewindTarget(value: string): RewindTarget {
  const text = value.trim();
  if (text === 'latest') return { kind: 'latest' };
  if (text === 'beginning') return { kind: 'sequence', checkpoint: 0 };
  if (/^\d+$/.test(text) && Number.isSafeInteger(Number(text)))
    return { kind: 'sequence', checkpoint: Number(text) };
  throw new UsageError(
    `--to must be a sequence number, "beginning" or "latest", got ${JSON.stringify(value)}`,
    'pass the checkpoint to set: the last sequence number taken as published (events after it are published again)',
  );
}

/** Refuses a numeric move forward unless asked for: moving forward skips events. */
export function checkDirection(current: number | null, target: number, allowForward: boolean): void {
  if (current !== null && target > current && !allowForward) {
    throw new UsageError(
      `--to ${target} is beyond the checkpoint ${current}: that skips events ${current + 1}..${target} instead of publishing them again`,
      'pass --allow-forward if that is what you mean (e.g. past an event too large for the bus), or --to latest',
    );
  }
}

/**
 * Refuses a target below the oldest event the feed still has: events between them would be asked
 * for again but can no longer be published.
 */
export function checkRetention(target: number, oldestRetained: number | null): void {
  if (oldestRetained === null || target === 0 || target + 1 >= oldestRetained) return;
  throw new UsageError(
    `--to ${target} is past the oldest event the banking service still has (${oldestRetained}): events ${target + 1}..${oldestRetained - 1} cannot be published again`,
    `pass --to ${oldestRetained - 1} or more (or --to beginning for everything it has)`,
  );
}

/** One sentence: before → after, and what the next run will do. */
export function describeMove(program: string, current: number | null, target: number): string {
  const before = current === null ? 'none' : String(current);
  if (current === null)
    return `Program ${program}: checkpoint ${before} → ${target}; the next run publishes from ${target + 1} on.`;
  if (target < current) {
    return `Program ${program}: checkpoint ${before} → ${target}; the next run publishes events ${target + 1}..${current} again (${current - target}) and then continues.`;
  }
  if (target === current) return `Program ${program}: checkpoint ${before} → ${target}: no change.`;
  return `Program ${program}: checkpoint ${before} → ${target}; events ${current + 1}..${target} (${target - current}) will never be published.`;
}
