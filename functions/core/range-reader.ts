/**
 * Reads a closed range of sequence numbers from the feed, for `replay`: pages through
 * `GET /events` from just below the range, and looks up by sequence number (`/event/sequence/:n`)
 * whatever the pages skipped, or everything once the feed turns out to ignore the cursor. Pure
 * logic over two calls, so its fallbacks are unit-tested without a server.
 */

import type { BankingEvent, FeedPage } from './banking-event.ts';
import { DeadlineExceededError, UpstreamHttpError } from './errors.ts';
import { selectNewEvents } from './event-model.ts';
import type { Clock, PollRequest } from './ports.ts';

export interface RangeSource {
  poll(request: PollRequest): Promise<FeedPage>;
  /** The event, or `null` when the feed has none with that number. */
  fetchEventBySequence(sequenceNumber: number, signal: AbortSignal): Promise<BankingEvent | null>;
}

export interface RangeChunk {
  /** Events of the range, ascending. */
  readonly events: readonly BankingEvent[];
  /** Numbers of the range the feed has no event for (looked up: 404). */
  readonly missing: readonly number[];
  /** Every number up to this one has been accounted for (in this chunk or before). */
  readonly through: number;
  /** The feed had nothing after `through`: the numbers after it, up to the range's end, do not exist yet. */
  readonly endOfFeed: boolean;
}

export interface RangeOptions {
  readonly from: number;
  readonly to: number;
  /** Stops reading (an interrupted read throws the signal's reason). */
  readonly signal: AbortSignal;
  /** A poll still held after this long means nothing is new: the feed ends before the range does. */
  readonly pollHoldMs: number;
  /** Attempts per poll for retryable failures (5xx, 429, gateway timeouts). @default 3 */
  readonly maxAttempts?: number;
  readonly clock: Clock;
}

/**
 * Yields the range in ascending chunks, one per page.
 *
 * @example
 * for await (const chunk of readRange(feed, { from: 100, to: 250, signal, pollHoldMs: 10_000, clock })) publish(chunk.events);
 */
export async function* readRange(source: RangeSource, options: RangeOptions): AsyncGenerator<RangeChunk> {
  const { from, to, signal } = options;
  let next = from;
  let cursor: number | null = from > 1 ? from - 1 : null;
  while (next <= to) {
    const page = await pollOnce(source, cursor, options);
    if (page === 'nothing-new' || page.events.length === 0) {
      yield { events: [], missing: [], through: next - 1, endOfFeed: true };
      return;
    }
    const fresh = selectNewEvents(page.events, cursor);
    if (fresh.length === 0) {
      // Only events at or below the cursor: the feed ignores it. Ask for each number instead.
      yield await lookUp(source, next, to, signal);
      return;
    }
    const top = Math.min(to, fresh.at(-1)!.sequence_number);
    const inRange = fresh.filter((event) => event.sequence_number >= next && event.sequence_number <= top);
    const chunk = await lookUp(source, next, top, signal, inRange);
    yield chunk;
    next = top + 1;
    cursor = fresh.at(-1)!.sequence_number;
  }
}

/** Numbers `from..to` not already in `known`, looked up one by one; merged and sorted. */
async function lookUp(
  source: RangeSource,
  from: number,
  to: number,
  signal: AbortSignal,
  known: readonly BankingEvent[] = [],
): Promise<RangeChunk> {
  const present = new Set(known.map((event) => event.sequence_number));
  const found: BankingEvent[] = [...known];
  const missing: number[] = [];
  for (let sequence = from; sequence <= to; sequence += 1) {
    if (present.has(sequence)) continue;
    signal.throwIfAborted();
    const event = await source.fetchEventBySequence(sequence, signal);
    if (event === null) missing.push(sequence);
    else found.push(event);
  }
  found.sort((a, b) => a.sequence_number - b.sequence_number);
  return { events: found, missing, through: to, endOfFeed: false };
}

/** One page after `cursor`, retried a few times on retryable failures; `nothing-new` once a poll outlasts the hold. */
async function pollOnce(
  source: RangeSource,
  cursor: number | null,
  options: RangeOptions,
): Promise<FeedPage | 'nothing-new'> {
  const attempts = options.maxAttempts ?? 3;
  for (let attempt = 1; ; attempt += 1) {
    const hold = AbortSignal.timeout(options.pollHoldMs);
    try {
      const page = await source.poll({ after: cursor, signal: AbortSignal.any([options.signal, hold]) });
      if (!page.timedOut) return page;
      if (attempt >= attempts) return 'nothing-new';
    } catch (error) {
      options.signal.throwIfAborted();
      if (hold.aborted && error instanceof DeadlineExceededError) return 'nothing-new';
      if (!(error instanceof UpstreamHttpError && error.retryable) || attempt >= attempts) throw error;
    }
    await options.clock.sleep(500 * 2 ** (attempt - 1), options.signal);
  }
}
