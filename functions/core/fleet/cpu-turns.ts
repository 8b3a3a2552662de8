/**
 * Fair turns on the one thread a worker's programs share. Node runs whatever is ready in the
 * order it became ready, so a program with much to do (a flood, a backlog, pages that ignore
 * `limit`) has a dozen steps queued (pages being parsed, batches being signed) for every step of
 * a program that has one event to send, and that event waits behind all of them. Here each
 * program's CPU-heavy steps wait for a turn (`CpuTurns.take`), and turns go round the programs
 * that wait, one step of each in turn, one turn per pass of the event loop (`defer`), so that
 * what arrived from the network meanwhile is read between two turns: a program waits for at most
 * one step of each other program, whatever they have queued. A step is kept short too: a page is
 * parsed at most `STEP_PAGE_BYTES` at a time.
 *
 * It decides only the order of steps, not what they do: every cycle rule (checkpoint, lease,
 * budget) is the same with or without it, and a single program's run does without it.
 */
import type { CpuTurns } from '../ports.ts';
import { MIN_PROGRAM_PAGE_BYTES } from './memory-share.ts';

/**
 * The most of a page parsed in one turn: an honest page (100 ordinary events) fits, a longer one
 * (a bank that ignores `limit`) is read in parts, so that one turn is short.
 */
export const STEP_PAGE_BYTES = MIN_PROGRAM_PAGE_BYTES;

export class FairCpuTurns {
  readonly #defer: (serve: () => void) => void;
  /** Programs with a step waiting, in the order their turn comes (a Map keeps insertion order). */
  readonly #waiting = new Map<string, Array<() => void>>();
  #scheduled = false;

  /**
   * @param defer runs `serve` once the event loop has done what else is ready (the edge gives
   *   `setImmediate`, which keeps the process alive while a turn is due)
   */
  constructor(defer: (serve: () => void) => void) {
    this.#defer = defer;
  }

  /** One program's turns. */
  of(program: string): CpuTurns {
    return { take: () => this.#take(program), stepBytes: STEP_PAGE_BYTES };
  }

  /** Steps waiting, all programs together. */
  get waiting(): number {
    let count = 0;
    for (const queue of this.#waiting.values()) count += queue.length;
    return count;
  }

  #take(program: string): Promise<void> {
    return new Promise<void>((resolve) => {
      const queue = this.#waiting.get(program);
      if (queue === undefined) this.#waiting.set(program, [resolve]);
      else queue.push(resolve);
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    this.#defer(() => this.#serve());
  }

  /** Gives the first program in line one turn, and puts it at the back of the line if it has more. */
  #serve(): void {
    this.#scheduled = false;
    const first = this.#waiting.entries().next();
    if (first.done) return;
    const [program, queue] = first.value;
    this.#waiting.delete(program);
    const step = queue.shift();
    if (queue.length > 0) this.#waiting.set(program, queue);
    // The step runs in the microtasks right after this: before the next turn is served.
    step?.();
    if (this.#waiting.size > 0) this.#schedule();
  }
}
