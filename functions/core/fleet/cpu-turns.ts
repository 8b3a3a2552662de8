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
 * Turns alone share the thread, not the CPU: a program that drains (a backlog, a flood, pages
 * that ignore `limit`) keeps the thread busy turn after turn, and once the process has used its
 * CPU share (Lambda's, proportional to memory) the whole process is paused for the rest of the
 * quota's period, every program's events with it. So with a `CpuMeter` turns spend from budgets
 * of CPU time (token buckets of `BUCKET_MS` at most, refilled at `share` of a core): the CPU used
 * from one turn to the next turn served is charged to the program served, and all the CPU the
 * process uses (turns or not: a drain's answers, its writes, the garbage collector, since the
 * quota counts it all) to the budget all programs share. A program with budget enough for a step
 * or two (`LIGHT_MS`: one with an event to send) goes in turn whatever the others spent; one that
 * drains goes only while its budget and the shared one last, and otherwise waits for them to refill while the others go on. However
 * many drain at once, together they keep to `share`, and so, since their next pages are parsed
 * in turns, does everything downstream of their reads.
 *
 * It decides only the order and pace of steps, not what they do: every cycle rule (checkpoint, lease,
 * budget) is the same with or without it, and a single program's run does without it.
 */
import type { CpuTurns } from '../ports.ts';
import { MIN_PROGRAM_PAGE_BYTES } from './memory-share.ts';

/**
 * The most of a page parsed in one turn: an honest page (100 ordinary events) fits, a longer one
 * (a bank that ignores `limit`) is read in parts, so that one turn is short.
 */
export const STEP_PAGE_BYTES = MIN_PROGRAM_PAGE_BYTES;

/** The most CPU time a budget holds: a burst this long, then its share. */
export const BUCKET_MS = 20;

/** Budget left above which a program is light: it goes in turn, even when the shared budget is spent. */
export const LIGHT_MS = BUCKET_MS / 2;

/** The CPU the process uses, and the means to wait for a program's budget to refill. */
export interface CpuMeter {
  /** CPU time the process has used, in milliseconds, never decreasing (the edge: `process.cpuUsage`). */
  cpuMs(): number;
  /** A monotonic now, in milliseconds. */
  now(): number;
  /** Runs `serve` after `ms` (a timer: it keeps the process alive while a turn is due). */
  after(ms: number, serve: () => void): void;
  /** Of a core, what the programs' steps may use in the long run, together (and so each): above 0, at most 1. */
  readonly share: number;
}

/** A program's budget of CPU time. */
interface Bucket {
  tokensMs: number;
  at: number;
}

export class FairCpuTurns {
  readonly #defer: (serve: () => void) => void;
  readonly #meter: CpuMeter | undefined;
  /** Programs with a step waiting, in the order their turn comes (a Map keeps insertion order). */
  readonly #waiting = new Map<string, Array<() => void>>();
  readonly #buckets = new Map<string, Bucket>();
  /** The budget all programs spend from. */
  #shared: Bucket | undefined;
  /** The process's CPU when the shared budget was last charged: it is charged all the CPU used since. */
  #sharedCpuMs: number | undefined;
  /** The program served last and the process's CPU then: what the next turn charges it. */
  #charge: { program: string; cpuMs: number } | undefined;
  /** A pass of the loop is asked for (`defer`). */
  #scheduled = false;
  /** A wait for budget is under way (`CpuMeter.after`): a light program that comes meanwhile still gets a pass. */
  #waitingForBudget = false;

  /**
   * @param defer runs `serve` once the event loop has done what else is ready (the edge gives
   *   `setImmediate`, which keeps the process alive while a turn is due)
   * @param meter the process's CPU, to hold each program to its share; without it, turns only
   *   take programs in turn
   */
  constructor(defer: (serve: () => void) => void, meter?: CpuMeter) {
    this.#defer = defer;
    this.#meter = meter;
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
    this.#defer(() => {
      this.#scheduled = false;
      this.#serve();
    });
  }

  /** Gives the first program in line that has budget one turn, and puts it at the back of the line if it has more. */
  #serve(): void {
    // One reading of the process's CPU a turn: it charges the last turn, the shared budget, and is the next charge's start.
    const cpuMs = this.#meter?.cpuMs();
    const sharedMs = cpuMs === undefined ? 0 : this.#settle(cpuMs);
    const program = this.#nextProgram(sharedMs);
    if (program === undefined) {
      if (this.#waiting.size > 0) this.#waitForBudget(sharedMs);
      return;
    }
    const queue = this.#waiting.get(program) ?? [];
    this.#waiting.delete(program);
    const step = queue.shift();
    if (queue.length > 0) this.#waiting.set(program, queue);
    if (cpuMs !== undefined) this.#charge = { program, cpuMs };
    // The step runs in the microtasks right after this: before the next turn is served.
    step?.();
    if (this.#waiting.size > 0) this.#schedule();
    // The chain ends here: its last step is charged once the loop has run it.
    else if (cpuMs !== undefined) this.#defer(() => this.#settle(this.#meter!.cpuMs()));
  }

  /** The first program in line that is light, or has budget of its own and in the shared one (any, without a meter). */
  #nextProgram(sharedMs: number): string | undefined {
    for (const program of this.#waiting.keys()) {
      if (this.#meter === undefined || this.#waitMs(program, sharedMs) === 0) return program;
    }
    return undefined;
  }

  /**
   * How long `program` has to wait for budget, with `sharedMs` left in the shared one: 0 when it
   * may go now (a step may cost more than is left: the debt is waited out).
   */
  #waitMs(program: string, sharedMs: number): number {
    const own = this.#refilled(this.#bucketOf(program)).tokensMs;
    if (own >= LIGHT_MS) return 0;
    return Math.max(0, -own, -sharedMs) / this.#meter!.share;
  }

  /** Charges the last turn and the shared budget up to `cpuMs`; the shared budget left. */
  #settle(cpuMs: number): number {
    this.#chargeLastTurn(cpuMs);
    return this.#sharedNow(cpuMs).tokensMs;
  }

  /**
   * Charges the program served last with the CPU used since: its step, and what the loop did
   * before this turn (mostly its own answers, when it drains). Only within a chain of turns: after
   * a pause with nothing waiting, that CPU was nobody's turn.
   */
  #chargeLastTurn(cpuMs: number): void {
    const charge = this.#charge;
    if (charge === undefined) return;
    this.#charge = undefined;
    const used = Math.max(0, cpuMs - charge.cpuMs);
    this.#refilled(this.#bucketOf(charge.program)).tokensMs -= used;
  }

  /** Every waiting program has spent its budget: serve again when the first one's has refilled. */
  #waitForBudget(sharedMs: number): void {
    const meter = this.#meter;
    if (meter === undefined || this.#waitingForBudget) return;
    let soonestMs = Number.POSITIVE_INFINITY;
    for (const program of this.#waiting.keys()) {
      soonestMs = Math.min(soonestMs, this.#waitMs(program, sharedMs));
    }
    this.#waitingForBudget = true;
    meter.after(Math.max(1, Math.ceil(soonestMs)), () => {
      this.#waitingForBudget = false;
      this.#serve();
    });
  }

  #bucketOf(program: string): Bucket {
    let bucket = this.#buckets.get(program);
    if (bucket === undefined) {
      bucket = { tokensMs: BUCKET_MS, at: this.#meter!.now() };
      this.#buckets.set(program, bucket);
    }
    return bucket;
  }

  /**
   * The shared budget, refilled to now and charged all the CPU the process used since it was last
   * read: turns, and what no turn is charged for (a drain's answers after its chain of turns, its
   * writes, the garbage collector), since the quota counts it all.
   */
  #sharedNow(cpuMs: number): Bucket {
    const meter = this.#meter!;
    const now = meter.now();
    this.#shared ??= { tokensMs: BUCKET_MS, at: now };
    const shared = this.#shared;
    // Refilled and charged over the same span, then capped: a long idle span with a little CPU in it refills.
    const used = Math.max(0, cpuMs - (this.#sharedCpuMs ?? cpuMs));
    shared.tokensMs = Math.min(BUCKET_MS, shared.tokensMs + (now - shared.at) * meter.share - used);
    shared.at = now;
    this.#sharedCpuMs = cpuMs;
    return shared;
  }

  /** `bucket`, refilled to now at the share. */
  #refilled(bucket: Bucket): Bucket {
    const now = this.#meter!.now();
    bucket.tokensMs = Math.min(BUCKET_MS, bucket.tokensMs + (now - bucket.at) * this.#meter!.share);
    bucket.at = now;
    return bucket;
  }
}
