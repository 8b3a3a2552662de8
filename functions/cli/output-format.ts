/**
 * How values look to a person: times with their age, durations, key/value tables. `--json`
 * output never goes through here: it prints the values themselves.
 */
import Table from 'cli-table3';

/** `42 s`, `3 min 5 s`, `2 h 10 min`, `3 d 4 h`: the two largest units. */
export function formatDuration(ms: number): string {
  const seconds = Math.round(Math.abs(ms) / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min${seconds % 60 ? ` ${seconds % 60} s` : ''}`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
  const days = Math.floor(hours / 24);
  return `${days} d${hours % 24 ? ` ${hours % 24} h` : ''}`;
}

/** `2026-01-01T10:00:00.000Z (3 min ago)` or `(in 20 s)`; `never` for null. */
export function formatInstant(epochMsOrIso: number | string | null | undefined, now: number): string {
  if (epochMsOrIso === null || epochMsOrIso === undefined) return 'never';
  const at = typeof epochMsOrIso === 'number' ? epochMsOrIso : Date.parse(epochMsOrIso);
  if (Number.isNaN(at)) return String(epochMsOrIso);
  return `${new Date(at).toISOString()} (${formatAge(at, now)})`;
}

/** `3 min ago` or `in 20 s`: an instant by its distance from now alone, for a line of a table. */
export function formatAge(epochMsOrIso: number | string, now: number): string {
  const at = typeof epochMsOrIso === 'number' ? epochMsOrIso : Date.parse(epochMsOrIso);
  if (Number.isNaN(at)) return String(epochMsOrIso);
  return at <= now ? `${formatDuration(now - at)} ago` : `in ${formatDuration(at - now)}`;
}

/** `1.5 s`, `0 s` (caught up), `unknown`. */
export function formatLag(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return 'unknown';
  return seconds < 60 ? `${Number(seconds.toFixed(1))} s` : formatDuration(seconds * 1000);
}

/** Rows without a rule between each: a status table reads top to bottom. */
const COMPACT = { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' } as const;

/** A two-column table of labelled values, under a title row. */
export function keyValueTable(
  title: string,
  rows: ReadonlyArray<readonly [string, string]>,
  color: boolean,
): string {
  const table = new Table({
    head: [title, ''],
    style: color ? { head: ['cyan'] } : { head: [], border: [] },
    wordWrap: true,
    colWidths: [18, 72],
    chars: COMPACT,
  });
  for (const [key, value] of rows) table.push([key, value]);
  return table.toString();
}

/** A table with a header row. */
export function gridTable(
  head: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
  color: boolean,
): string {
  const table = new Table({
    head: [...head],
    style: color ? { head: ['cyan'] } : { head: [], border: [] },
    chars: COMPACT,
  });
  for (const row of rows) table.push([...row]);
  return table.toString();
}

/** JSON for `--json`: two-space indented, one document per command. */
export function toJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
