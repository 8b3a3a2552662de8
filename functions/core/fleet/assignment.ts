/**
 * Which worker serves which program: rendezvous (highest-random-weight) hashing. Each program
 * scores every worker id 0..n−1 with a hash of the pair and goes to the highest score. Nothing is
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

/**
 * The score of `worker` for `program`: the first 8 bytes of SHA-256 over both. A cryptographic hash
 * is more than needed, but it spreads any set of names evenly, and n × programs of them cost
 * milliseconds per run.
 */
function score(program: string, worker: number): bigint {
  return createHash('sha256').update(`${program}\u0000${worker}`).digest().readBigUInt64BE(0);
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
  let best = 0;
  let bestScore = -1n;
  for (let worker = 0; worker < workerCount; worker += 1) {
    const value = score(program, worker);
    if (value > bestScore) {
      best = worker;
      bestScore = value;
    }
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
