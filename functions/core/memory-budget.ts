/**
 * What the cycle may hold in memory, in bytes rather than in pages. A bank that ignores `limit`
 * may answer 65,000 events (about 9 MB of text) to a request for 100, and four such pages read
 * ahead take a 256 MB function past its memory: an out-of-memory crash at every run, and the feed
 * stopped for good. So what the cycle holds (pages read ahead and being published, events buffered
 * from the stream) is counted with an estimate of what each event takes (`eventFootprint`), against
 * a budget derived from the process's memory (`memoryBudget`); and a page's body is read at most
 * `pageBytes` at a time (`page-prefix.ts`).
 *
 * The core does not know where the number comes from: the Lambda handler gives the function's
 * memory, the CLI V8's heap limit.
 */
import type { BankingEvent } from './banking-event.ts';

const MiB = 1024 * 1024;

/**
 * What the runtime takes before the cycle holds any event: Node, the bundle, the SDK clients, their
 * connections, and the cycle's own bookkeeping (the handler's process peaks near 60 MiB caught up).
 */
export const RUNTIME_RESERVE_BYTES = 112 * MiB;
/** The smallest budget, whatever the memory: below it a page of ordinary events would not fit. */
export const MIN_HELD_BYTES = 4 * MiB;
/** The most of a page's body read at once: beyond it a page is read in parts whatever the memory. */
export const MAX_PAGE_BYTES = 10 * MiB;
const MIN_PAGE_BYTES = 256 * 1024;

/**
 * Bytes an event is counted for while the cycle holds it: its text twice over (the `detail` that
 * is published, and the parsed `data` beside it, which takes about as much), plus what every event
 * carries whatever its size (the object, its id, type and timestamps). An estimate, measured on
 * the feed's own events (`npm run bench:page-memory`); the budget leaves room for its error.
 */
export function eventFootprint(event: BankingEvent): number {
  return 2 * event.detail.length + EVENT_OVERHEAD_BYTES;
}
const EVENT_OVERHEAD_BYTES = 320;

/** The bytes of `events` by `eventFootprint`. */
export function footprintOf(events: readonly BankingEvent[]): number {
  let bytes = 0;
  for (const event of events) bytes += eventFootprint(event);
  return bytes;
}

/**
 * What one read may return: events whose footprints add up to at most `bytes`, and at most
 * `events` of them; at least one, though, so that a large event still goes through.
 */
export interface ReadRoom {
  readonly bytes: number;
  readonly events: number;
}

/**
 * The first of `events` that fit `room` once `reserved` (late events going with them) is counted;
 * at least one. All of them without a room.
 */
export function withinRoom(
  events: readonly BankingEvent[],
  room: ReadRoom | undefined,
  reserved: readonly BankingEvent[] = [],
): readonly BankingEvent[] {
  if (room === undefined) return events;
  let bytes = footprintOf(reserved);
  let count = 0;
  for (const event of events) {
    bytes += eventFootprint(event);
    if (count > 0 && (bytes > room.bytes || reserved.length + count >= room.events)) break;
    count += 1;
  }
  return count === events.length ? events : events.slice(0, count);
}

/** What the cycle may hold, and read at once. */
export interface MemoryBudget {
  /**
   * Bytes the events the cycle holds may take (`eventFootprint` of each): pages read ahead and
   * being published, and events buffered from the stream.
   */
  readonly heldBytes: number;
  /** Bytes of a page's body read at once; a longer body is read in parts (`page-prefix.ts`). */
  readonly pageBytes: number;
}

/**
 * The budget of a process that may use `memoryLimitBytes` in all. Of what is left past the
 * runtime's reserve, a quarter for the events held and a twentieth for the page being read (its
 * text, its parsed value and its events at once take about five times its size); the rest is the
 * garbage collector's room and the margin for the estimate's error. Measured at 128, 256 and 512
 * MB with a bank that ignores `limit` (docs/performance.md, "A bank that ignores limit").
 *
 * @example
 * memoryBudget(256 * 1024 * 1024); // { heldBytes: 48 MiB, pageBytes: 9.6 MiB }
 */
export function memoryBudget(memoryLimitBytes: number): MemoryBudget {
  const usable = Math.max(0, memoryLimitBytes - RUNTIME_RESERVE_BYTES);
  return Object.freeze({
    heldBytes: Math.max(MIN_HELD_BYTES, Math.floor(usable / 4)),
    pageBytes: Math.min(MAX_PAGE_BYTES, Math.max(MIN_PAGE_BYTES, Math.floor(usable / 20))),
  });
}

/** The budget of a process of 256 MB (the function's default memory): the cycle's when none is given. */
export const DEFAULT_MEMORY_BUDGET: MemoryBudget = memoryBudget(256 * MiB);
