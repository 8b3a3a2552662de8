/**
 * Where a program without a checkpoint starts, as Kinesis and Kafka consumers choose it:
 * `beginning` (every event the feed still has), a sequence number (the first event to publish), or
 * `latest` (only events created from now on). The interface has no "newest sequence number" query,
 * so `latest` fast-forwards through the pages without publishing them; the cycle (on a program's
 * first run) and the CLI (`rewind --to latest`) share that walk. It tells backlog from new events
 * by sequence number where a run has seen the end of the feed, and only otherwise by `created_dt`,
 * a time stamped by the bank's clock, not ours.
 */

import type { BankingEvent } from './banking-event.ts';
import { ConfigurationError } from './errors.ts';
import type { FeedRead } from './feed-reader.ts';

export type StartPosition =
  | { readonly kind: 'beginning' }
  | { readonly kind: 'latest' }
  /** The first event to publish; the checkpoint starts just below it. */
  | { readonly kind: 'sequence'; readonly sequenceNumber: number };

export const START_POSITION_EXPECTED =
  '"beginning", "latest", or a sequence number (the first event to publish, 1 or more)';

/**
 * Parses `beginning`, `latest` or a positive integer; `where` names the source in the error
 * (an environment variable, a context key, a flag).
 */
export function parseStartPosition(value: unknown, where: string): StartPosition {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  if (text === 'beginning' || text === 'latest') return { kind: text };
  if (/^\d+$/.test(text)) {
    const sequenceNumber = Number(text);
    if (Number.isSafeInteger(sequenceNumber) && sequenceNumber >= 1)
      return { kind: 'sequence', sequenceNumber };
  }
  throw new ConfigurationError(`${where} must be ${START_POSITION_EXPECTED}, got ${JSON.stringify(value)}`, {
    where,
  });
}

export function formatStartPosition(position: StartPosition): string {
  return position.kind === 'sequence' ? String(position.sequenceNumber) : position.kind;
}

/** The cursor a position gives without reading the feed: `null` (from the start) or the number below it. */
export function initialCursor(position: Exclude<StartPosition, { kind: 'latest' }>): number | null {
  return position.kind === 'sequence' && position.sequenceNumber > 1 ? position.sequenceNumber - 1 : null;
}

/** The defaults of `StartPositionOptions`. */
export const START_POSITION_DEFAULTS = Object.freeze({
  /**
   * How far the bank's clock may be behind ours before `latest` could take a new event for
   * backlog: 10 minutes, the skew the product promises to lose nothing under even where no number
   * can decide (events that arrive while the first run's first poll is held).
   */
  clockSkewAllowanceMs: 600_000,
});

/** What the cycle is given: the position, and the page size that tells a last page from a full one. */
export interface StartPositionOptions {
  readonly position: StartPosition;
  /** Events per poll asked of the feed: a page with fewer is the end of the feed. */
  readonly pageLimit: number;
  /**
   * `latest` without a recorded landing: an event stamped up to this long before the first run
   * began is taken as new, so a bank clock behind ours by as much loses nothing (and up to this
   * much backlog may be published). @default START_POSITION_DEFAULTS.clockSkewAllowanceMs
   */
  readonly clockSkewAllowanceMs?: number;
}

/** Reads the feed one page at a time: `FeedReader.next`, with its retries and pacing. */
export interface PageSource {
  next(after: number | null): Promise<FeedRead>;
}

export interface FastForwardProgress {
  readonly pages: number;
  /** Events passed over without publishing. */
  readonly skipped: number;
  /** The sequence number reached so far (the landing point, if it ends here). */
  readonly reached: number | null;
}

export type FastForwardResult =
  | (FastForwardProgress & {
      readonly kind: 'landed';
      /** The `program_id` of the events passed over; `null` when there were none. */
      readonly feedProgramId: string | null;
      /**
       * The highest sequence number the walk's answers held, new events included (`from`, or 0,
       * when they held none): every event above it was created after the walk saw the end of the
       * feed, whatever its `created_dt`.
       */
      readonly highestSeen: number;
    })
  /** The reader closed (deadline, Ctrl-C) before the end of the feed: the walk proves nothing. */
  | (FastForwardProgress & { readonly kind: 'interrupted' });

export interface FastForwardOptions {
  /** Start after this sequence number (`null`: the beginning of the feed). */
  readonly from: number | null;
  /**
   * Epoch ms: an event whose `created_dt` is at or after it is new, and the walk lands just before
   * it (the walk's start, less any allowance for the bank's clock).
   */
  readonly startedAt: number;
  /**
   * An event with a sequence number above this one is new whatever its `created_dt`: a run saw
   * the end of the feed there (no clock involved). @default none: `created_dt` alone decides
   */
  readonly newAbove?: number | null;
  readonly pageLimit: number;
  readonly onPage?: (progress: FastForwardProgress) => void;
}

/**
 * Pages through the feed without publishing, to the last event that existed when the walk began.
 * It lands on the first of: an answer with nothing new, a page shorter than `pageLimit` (the end of
 * the feed, without waiting out one more long poll), or a page holding an event created since the
 * walk began (landing just before it, so events that arrive meanwhile are still published).
 *
 * @example
 * const result = await fastForward(reader, { from: null, startedAt: Date.now(), pageLimit: 100 });
 * if (result.kind === 'landed') checkpoint = result.reached;
 */
export async function fastForward(
  source: PageSource,
  options: FastForwardOptions,
): Promise<FastForwardResult> {
  let reached = options.from;
  let pages = 0;
  let skipped = 0;
  let feedProgramId: string | null = null;
  let highestSeen = options.from ?? 0;
  const progress = (): FastForwardProgress => ({ pages, skipped, reached });
  const landed = (): FastForwardResult => ({ kind: 'landed', feedProgramId, highestSeen, ...progress() });
  for (;;) {
    const read = await source.next(reached);
    if (read.kind === 'closed') return { kind: 'interrupted', ...progress() };
    if (read.kind === 'caught-up') return landed();
    pages += 1;
    highestSeen = Math.max(highestSeen, read.events.at(-1)?.sequence_number ?? 0);
    const older = eventsBefore(read.events, options.startedAt, options.newAbove ?? null);
    if (older.length > 0) {
      // A quarantined event's program_id proves nothing about the feed.
      feedProgramId ??= older.find((event) => event.invalid === undefined)?.program_id ?? null;
      reached = older.at(-1)!.sequence_number;
      skipped += older.length;
    }
    options.onPage?.(progress());
    if (older.length < read.events.length || read.events.length < options.pageLimit) return landed();
  }
}

/**
 * The leading events that are backlog: created before `epochMs`, and not above `newAbove`
 * (events arrive in sequence order).
 */
function eventsBefore(
  events: readonly BankingEvent[],
  epochMs: number,
  newAbove: number | null,
): readonly BankingEvent[] {
  const firstNew = events.findIndex(
    (event) =>
      (newAbove !== null && event.sequence_number > newAbove) || Date.parse(event.created_dt) >= epochMs,
  );
  return firstNew === -1 ? events : events.slice(0, firstNew);
}
