/**
 * A worker's memory among the programs it runs at once. A single program's run holds at most
 * `memoryBudget(limit)` (`../memory-budget.ts`): a quarter of what is left past the runtime's
 * reserve for the events it holds, a twentieth for the page it reads. With `n` programs in flight,
 * each gets a `1/n` part of both, after a reserve for each further program's own bookkeeping
 * (its upstream's connections and caches, its cycle's state): so what they hold and read together
 * stays within the quarter and the twentieth one program alone may use (a single program's page is
 * also capped at `MAX_PAGE_BYTES`, a bound on one page, not on the room), and a program that floods
 * or whose bank ignores `limit` fills its own part, never another's.
 *
 * Below some size a part is useless (a page of ordinary events must fit), so the memory also
 * bounds how many programs run at once (`programsThatFit`): a worker with more programs than fit
 * runs them in turns (`worker-run.ts`).
 */
import { MAX_PAGE_BYTES, type MemoryBudget, RUNTIME_RESERVE_BYTES } from '../memory-budget.ts';

const MiB = 1024 * 1024;

/**
 * What each program beyond the first takes whatever it reads: its connections (a TLS session, an
 * undici pool), its credentials and token, its cycle's bookkeeping. An estimate, to be measured at
 * scale (`npm run bench:fleet`).
 */
export const PROGRAM_RESERVE_BYTES = 1 * MiB;
/** The least a program may hold of the events it reads: a few pages of ordinary events. */
export const MIN_PROGRAM_HELD_BYTES = 1 * MiB;
/** The least of a page a program reads at once: a page of 100 ordinary events fits. */
export const MIN_PROGRAM_PAGE_BYTES = 256 * 1024;

/** What is left for events when `inFlight` programs run at once. */
function usableBytes(memoryLimitBytes: number, inFlight: number): number {
  return Math.max(0, memoryLimitBytes - RUNTIME_RESERVE_BYTES - (inFlight - 1) * PROGRAM_RESERVE_BYTES);
}

/**
 * One program's budget when `inFlight` programs run at once in a process of `memoryLimitBytes`.
 *
 * @example
 * programMemoryBudget(256 * 1024 * 1024, 1); // as memoryBudget(256 MiB): one program alone
 */
export function programMemoryBudget(memoryLimitBytes: number, inFlight: number): MemoryBudget {
  const n = Math.max(1, inFlight);
  const usable = usableBytes(memoryLimitBytes, n);
  return Object.freeze({
    heldBytes: Math.max(MIN_PROGRAM_HELD_BYTES, Math.floor(usable / 4 / n)),
    pageBytes: Math.min(MAX_PAGE_BYTES, Math.max(MIN_PROGRAM_PAGE_BYTES, Math.floor(usable / 20 / n))),
  });
}

/**
 * How many programs fit at once in a process of `memoryLimitBytes`, each with at least the least
 * useful part; at least one.
 *
 * @example
 * programsThatFit(256 * 1024 * 1024); // 24
 */
export function programsThatFit(memoryLimitBytes: number): number {
  let n = 1;
  for (;;) {
    const next = n + 1;
    const usable = usableBytes(memoryLimitBytes, next);
    if (usable / 4 / next < MIN_PROGRAM_HELD_BYTES || usable / 20 / next < MIN_PROGRAM_PAGE_BYTES) return n;
    n = next;
  }
}
