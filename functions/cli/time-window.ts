/**
 * `--since`/`--until` as the AWS CLI's users write them: an ISO 8601 time, or a duration ago
 * (`90s`, `30m`, `2h`, `7d`). Pure, so the forms are unit-tested.
 */
import { UsageError } from './cli-errors.ts';

const UNIT_MS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseInstant(value: string, flag: string, now: number): number {
  const text = value.trim();
  const relative = /^(\d+)\s*([smhd])$/.exec(text);
  if (relative !== null) return now - Number(relative[1]) * UNIT_MS[relative[2]!]!;
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    const at = Date.parse(text);
    if (!Number.isNaN(at)) return at;
  }
  throw new UsageError(
    `${flag} must be an ISO 8601 time or a duration ago, got ${JSON.stringify(value)}`,
    `e.g. ${flag} 2026-01-01T10:00:00Z or ${flag} 2h`,
  );
}

export interface TimeWindow {
  readonly since: number;
  readonly until: number;
}

export function parseWindow(since: string, until: string | undefined, now: number): TimeWindow {
  const window = {
    since: parseInstant(since, '--since', now),
    until: until === undefined ? now : parseInstant(until, '--until', now),
  };
  if (window.until <= window.since) {
    throw new UsageError(
      `--until ${new Date(window.until).toISOString()} is not after --since ${new Date(window.since).toISOString()}`,
      'give the window in order: --since EARLIER --until LATER',
    );
  }
  if (window.until > now + 60_000) {
    throw new UsageError(
      '--until is in the future',
      'the archive holds only what was published; leave --until out for "now"',
    );
  }
  return window;
}
