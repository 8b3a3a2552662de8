/**
 * A program's log in one turn of a worker's run: its info lines are held until the turn ends, and
 * written only when the turn says something an operator reads per program. A thousand programs'
 * healthy runs would otherwise write about 4 lines each a minute (lease waited for, handed over,
 * taken, cycle finished), most of a fleet's log bill, that the worker's bounded summary line
 * ("Worker run finished": counts and the worst programs) and each program's last cycle in its
 * checkpoint row (`status`) already carry.
 *
 * Written, held lines first in their order, each with the time it was logged (`loggedAt`):
 * - at once, from a warning or an error on (what led to it comes with it);
 * - at the turn's end, unless the program completed without publishing and logged only the
 *   routine lines (`ROUTINE_MESSAGES`): written when its lease was busy, it failed, was left
 *   behind or not reached, or published events (which run published what stays traceable);
 * - past `MAX_HELD_LINES`, and whatever is logged after the turn's end (a cycle left behind).
 *
 * Debug lines are never held: an operator who turns `POWERTOOLS_LOG_LEVEL` to DEBUG sees every line.
 */
import type { ProgramReport } from '../../core/fleet/worker-summary.ts';
import type { CycleLogger } from '../../core/ports.ts';

/** Info lines held at most in one turn; beyond, the turn's lines are written as they come. */
export const MAX_HELD_LINES = 64;

/**
 * The lines every healthy run logs, which a quiet one may leave unwritten. Any other info line
 * (the start position passing events over, events read but not sent in time, events coming
 * again…) says something of that run: its turn is written. The test drives real cycles through
 * this log, so a message renamed in the core shows there.
 */
export const ROUTINE_MESSAGES: ReadonlySet<string> = new Set([
  'Another invocation holds the lease; waiting for it to hand over',
  'Lease handed over',
  'Lease taken; polling',
  'Cycle finished',
]);

interface HeldLine {
  readonly message: string;
  readonly attributes: Record<string, unknown> | undefined;
  readonly loggedAt: number;
}

export class TurnLog implements CycleLogger {
  readonly #write: CycleLogger;
  readonly #now: () => number;
  #held: HeldLine[] | null;

  /**
   * @param write the program's logger (its `program` key), that writes a line at once
   * @param now the time each held line was logged, written with it
   * @param hold whether info lines are held at all (not while the log level is DEBUG or finer)
   */
  constructor(write: CycleLogger, now: () => number, hold: boolean) {
    this.#write = write;
    this.#now = now;
    this.#held = hold ? [] : null;
  }

  debug(message: string, attributes?: Record<string, unknown>): void {
    this.#write.debug(message, attributes);
  }

  info(message: string, attributes?: Record<string, unknown>): void {
    if (this.#held === null) {
      this.#write.info(message, attributes);
      return;
    }
    this.#held.push({ message, attributes, loggedAt: this.#now() });
    if (this.#held.length > MAX_HELD_LINES) this.#release();
  }

  warn(message: string, attributes?: Record<string, unknown>): void {
    this.#release();
    this.#write.warn(message, attributes);
  }

  error(message: string, attributes?: Record<string, unknown>): void {
    this.#release();
    this.#write.error(message, attributes);
  }

  /** The turn is over: its held lines are written unless `report` is a quiet, healthy run; nothing is held after. */
  endTurn(report: ProgramReport): void {
    const routine = this.#held?.every((line) => ROUTINE_MESSAGES.has(line.message)) ?? false;
    if (routine && report.outcome === 'completed' && report.published === 0) this.#held = null;
    else this.#release();
  }

  /** Writes the held lines and holds no more. */
  #release(): void {
    const held = this.#held;
    this.#held = null;
    for (const line of held ?? []) {
      this.#write.info(line.message, { ...line.attributes, loggedAt: new Date(line.loggedAt).toISOString() });
    }
  }
}
