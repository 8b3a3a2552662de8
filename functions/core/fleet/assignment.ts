/**
 * Which worker serves which program: rendezvous (highest-random-weight) hashing. Each program
 * scores every worker id 0..n−1 with a hash of the pair (`scores`) and goes to the highest score. Nothing is
 * stored and nothing is coordinated: every worker computes the same answer from the program's
 * name and the worker count alone. Stable: a program stays on its worker while both exist. And a
 * change moves only what must move: adding a worker takes to it about 1/(n+1) of the programs
 * (those it now outscores) and moves no other; removing one moves only its own programs; adding
 * or removing a program moves no other program.
 *
 * The assignment decides who polls, not who may: the program's lease stays the one guard against
 * two holders. A program that moves is taken over through the lease's hand-over, exactly as
 * between two runs of one worker (the new worker waits for the old one's release, or for its lease
 * to expire).
 *
 * The hash is part of the deployment's behaviour: another hash would move most programs at once
 * (safely, through the lease, but all in one run). Keep it.
 */
import { createHash } from 'node:crypto';

/** The most workers a deployment runs: each is a schedule, one concurrent execution. */
export const MAX_WORKERS = 100;

/** MurmurHash3's finalizer: every input bit changes each output bit with probability about 1/2. */
function fmix32(value: number): number {
  let h = value;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * The scores of workers 0..n−1 for `program`: SHA-256 of the name once (64 bits of it, so any set
 * of names spreads evenly), then, per worker, those bits mixed with the worker's id by MurmurHash3's
 * finalizer into a 53-bit score. One digest per program and a few integer operations per worker:
 * 10,000 programs over 100 workers in a few milliseconds (SHA-256 per pair took seconds).
 */
function scores(program: string, workerCount: number): Float64Array {
  const digest = createHash('sha256').update(program).digest();
  const high = digest.readUInt32BE(0);
  const low = digest.readUInt32BE(4);
  const result = new Float64Array(workerCount);
  for (let worker = 0; worker < workerCount; worker += 1) {
    const a = fmix32(high ^ Math.imul(worker + 1, 0x9e3779b9));
    const b = fmix32(low ^ Math.imul(worker + 1, 0x7f4a7c15) ^ a);
    result[worker] = a * 2 ** 21 + (b >>> 11);
  }
  return result;
}

/**
 * The worker, 0 ≤ w < `workerCount`, that serves `program`. Ties (never seen with 64 bits) go to
 * the lower id.
 *
 * @example
 * assignedWorker('cards', 4); // the same number in every worker, at every run
 */
export function assignedWorker(program: string, workerCount: number): number {
  if (!Number.isSafeInteger(workerCount) || workerCount < 1 || workerCount > MAX_WORKERS) {
    throw new RangeError(`workerCount must be an integer from 1 to ${MAX_WORKERS}, got ${workerCount}`);
  }
  const byWorker = scores(program, workerCount);
  let best = 0;
  for (let worker = 1; worker < workerCount; worker += 1) {
    if (byWorker[worker]! > byWorker[best]!) best = worker;
  }
  return best;
}

/**
 * The programs of `programs` that `worker` serves, in their order.
 *
 * @example
 * programsOfWorker(activeRecords, 2, 4);
 */
export function programsOfWorker<P extends { readonly name: string }>(
  programs: readonly P[],
  worker: number,
  workerCount: number,
): P[] {
  return programs.filter((program) => assignedWorker(program.name, workerCount) === worker);
}
