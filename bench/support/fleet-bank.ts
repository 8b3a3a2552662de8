/**
 * The fleet bench's banking service, in a process of its own (`ChildRpc.fork`): the simulator
 * serving every program of the fleet, each with its own client credentials and feed, and the
 * traffic on them: events created per program at seeded random times (a Poisson process of a
 * given rate, a flood being a high one), backlogs appended at once, and programs the bank
 * misbehaves for (`faults.misbehave`). Its own CPU, memory and event-loop delay are reported, so
 * that a bank slower than the workers would show.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import {
  type ProgramMisbehaviour,
  type RunningSimulator,
  type SimulatorProgram,
  startSimulator,
} from '../../functions/simulator/banking-simulator.ts';
import { createRandom, type Random } from '../../functions/simulator/seeded-random.ts';
import { serveRpc } from './child-rpc.ts';

export interface BankOptions {
  readonly programs: number;
  readonly seed: number;
  /** Longest hold of an empty `GET /events` (the real service's is random, at most a minute). */
  readonly maxPollHoldMs: number;
  /** Mean events created per second per program (a Poisson process); per program overrides with `setRates`. */
  readonly eventsPerSecond: number;
  /** How often arrivals due are created. @default 50 */
  readonly tickMs?: number;
  /** Creates no event until `pauseTraffic(false)`. @default false */
  readonly paused?: boolean;
}

export interface BankUsage {
  readonly cpuMs: number;
  readonly rssMiB: number;
  readonly heapMiB: number;
  /** Event-loop delay since the last `usage()`: how late the bank answered because it was busy. */
  readonly eventLoopDelayMs: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly eventsCreated: number;
  readonly pollRequests: number;
  readonly heldPolls: number;
}

let simulator: RunningSimulator | undefined;
let traffic: Traffic | undefined;
const delay = monitorEventLoopDelay({ resolution: 10 });

/** Arrivals of each program at its rate: the next arrival time of each, drawn exponentially. */
class Traffic {
  readonly #programs: readonly SimulatorProgram[];
  readonly #random: Random;
  readonly #defaultRate: number;
  readonly #rates = new Map<string, number>();
  readonly #next: number[];
  readonly #timer: NodeJS.Timeout;
  #paused = false;
  created = 0;

  constructor(programs: readonly SimulatorProgram[], options: BankOptions) {
    this.#programs = programs;
    this.#random = createRandom(options.seed);
    this.#defaultRate = options.eventsPerSecond;
    const now = Date.now();
    this.#next = programs.map(() => now + this.#gap(options.eventsPerSecond));
    this.#timer = setInterval(() => this.#tick(), options.tickMs ?? 50);
    this.#paused = options.paused ?? false;
  }

  setRates(rates: Readonly<Record<string, number>>): void {
    const now = Date.now();
    for (const [index, program] of this.#programs.entries()) {
      const rate = rates[program.programId];
      if (rate === undefined) continue;
      if (!(rate >= 0)) throw new RangeError(`rate of ${program.programId} must be >= 0, got ${rate}`);
      if (rate === this.#defaultRate) this.#rates.delete(program.programId);
      else this.#rates.set(program.programId, rate);
      this.#next[index] = now + this.#gap(rate);
    }
  }

  pause(paused: boolean): void {
    if (this.#paused && !paused) {
      // Resuming does not create the arrivals of the pause all at once.
      const now = Date.now();
      for (const [index, program] of this.#programs.entries()) {
        this.#next[index] = now + this.#gap(this.#rate(program.programId));
      }
    }
    this.#paused = paused;
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  #rate(programId: string): number {
    return this.#rates.get(programId) ?? this.#defaultRate;
  }

  #gap(rate: number): number {
    return rate > 0 ? (-Math.log(1 - this.#random.next()) / rate) * 1000 : Number.POSITIVE_INFINITY;
  }

  #tick(): void {
    if (this.#paused || simulator === undefined) return;
    const now = Date.now();
    for (const [index, program] of this.#programs.entries()) {
      let due = 0;
      let next = this.#next[index]!;
      const rate = this.#rate(program.programId);
      while (next <= now) {
        due += 1;
        next += this.#gap(rate);
      }
      this.#next[index] = next;
      if (due > 0) {
        simulator.generate(due, { programId: program.programId });
        this.created += due;
      }
    }
  }
}

export const bankMethods = {
  async start(options: BankOptions): Promise<{ url: string; programs: readonly SimulatorProgram[] }> {
    simulator = await startSimulator({
      seed: options.seed,
      programs: Array.from({ length: options.programs }, (_, index) => ({
        clientId: `fleet-client-${index + 1}`,
        clientSecret: `fleet-secret-${index + 1}-${options.seed}`,
      })),
      maxPollHoldMs: options.maxPollHoldMs,
      unknownTypeRatio: 0,
    });
    traffic = new Traffic(simulator.programs, options);
    delay.enable();
    return { url: simulator.url, programs: simulator.programs };
  },
  /** Per-program rates (events per second) replacing the default; the default rate restores one. */
  setRates(rates: Readonly<Record<string, number>>): void {
    traffic!.setRates(rates);
  },
  pauseTraffic(paused: boolean): void {
    traffic!.pause(paused);
  },
  /** Appends `count` events to each program at once; returns the sequence range each got. */
  backlog(request: { readonly programIds: readonly string[]; readonly count: number }) {
    const ranges: Record<string, { from: number; to: number }> = {};
    for (const programId of request.programIds) {
      const created = simulator!.generate(request.count, { programId });
      traffic!.created += created.length;
      ranges[programId] = { from: created[0]!.sequence_number, to: created.at(-1)!.sequence_number };
    }
    return ranges;
  },
  misbehave(request: {
    readonly programId: string;
    readonly misbehaviour: ProgramMisbehaviour | null;
  }): void {
    simulator!.faults.misbehave(request.programId, request.misbehaviour ?? undefined);
  },
  /** The last sequence number of each program's feed (the simulator leaves none unused here). */
  lastSequences(): Record<string, number> {
    const last: Record<string, number> = {};
    for (const program of simulator!.programs) {
      last[program.programId] = simulator!.events(program.programId).at(-1)?.sequence_number ?? 0;
    }
    return last;
  },
  usage(): BankUsage {
    const cpu = process.cpuUsage();
    const memory = process.memoryUsage();
    const ms = (ns: number) => Math.round(ns / 1e5) / 10;
    const usage: BankUsage = {
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      rssMiB: Math.round(memory.rss / 1024 / 1024),
      heapMiB: Math.round(memory.heapUsed / 1024 / 1024),
      eventLoopDelayMs: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) },
      eventsCreated: traffic?.created ?? 0,
      pollRequests: simulator?.stats.pollRequests ?? 0,
      heldPolls: simulator?.stats.heldPolls ?? 0,
    };
    delay.reset();
    return usage;
  },
  async close(): Promise<void> {
    traffic?.stop();
    await simulator?.close();
  },
};

export type BankMethods = typeof bankMethods;

if (process.send !== undefined && process.argv[1] === import.meta.filename) serveRpc(bankMethods);
