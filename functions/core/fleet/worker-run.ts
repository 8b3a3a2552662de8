/**
 * One worker's run: the active programs rendezvous hashing assigns it (`assignment.ts`), each
 * polled by its own poll cycle, several at once, each behind a bulkhead.
 *
 * A program's cycle is the single program's cycle, unchanged (`runPollCycle`: its lease,
 * checkpoint and every no-loss rule), over deps of its own that the edge builds (`runProgram`:
 * credentials, token and connections of its secret; its settings; its metrics and logger). The
 * worker only decides when each runs and for how long, and contains what goes wrong:
 *
 * - **Time.** At most `maxConcurrentPrograms` cycles run at once. With no more programs than
 *   that, each has the whole run, as a single program's invocation would. With more, they take
 *   turns: the run is cut into as many equal turns as rounds are needed, and a program starts
 *   when a lane frees (early, when one before it ended early), for at most one turn. A program
 *   whose cycle has not settled when its turn is over is left behind (`abandoned`): the worker
 *   stops waiting, its lane goes to the next program, and its lease keeps anyone else out until
 *   it expires, as a crashed invocation's would.
 * - **Failure.** A program that throws, or cannot be set up, is logged with its error and counted
 *   (`CycleFailures`, with its `Program`), never the worker's failure: the others go on. Only the
 *   registry staying unreadable fails the run (it is read again, with backoff, while a program
 *   could still be given a turn), since then no program can be assigned.
 * - **Memory.** Each running program is told how many run at once (`programsInFlight`); the edge
 *   gives it that part of the byte budget (`memory-share.ts`), and caps `maxConcurrentPrograms`
 *   at what the memory holds.
 * - **The thread.** The programs in flight share one event loop: each takes turns on it
 *   (`cpu-turns.ts`: one CPU-heavy step of each program in turn), so that a program with much to
 *   do (a flood, a backlog, oversize pages) does not queue all its steps ahead of another's one
 *   event, and parses a page in short steps; and each spends from a budget of CPU time, so that
 *   one that drains is held to its share and never gets the process paused with the others in it.
 *
 * The answer is bounded (`worker-summary.ts`): counts, and the worst programs.
 */
import { DeadlineExceededError } from '../errors.ts';
import type { CycleSummary } from '../poll-cycle.ts';
import type { Clock, CpuTurns, CycleLogger, MetricsSink } from '../ports.ts';
import { programsOfWorker } from './assignment.ts';
import { type CpuMeter, FairCpuTurns } from './cpu-turns.ts';
import type { ProgramRecord } from './program-record.ts';
import type { ProgramRegistry, RefusedRecord } from './program-registry.ts';
import {
  type ProgramReport,
  reportOf,
  reportWithout,
  summarizeWorker,
  type WorkerSummary,
} from './worker-summary.ts';

/** What one program's turn gets from the worker. */
export interface ProgramSlot {
  /** Time the program's cycle may take from its start (its `remainingMs`): the rest of the run, or one turn. */
  readonly remainingMs: number;
  /** Aborted when the program's turn is over: its cycle's `stopSignal`. */
  readonly stopSignal: AbortSignal;
  /** Programs running at once in this run (this one included): each holds its part of the memory (`memory-share.ts`). */
  readonly programsInFlight: number;
  /** The program's own metrics (with its `Program`) and logger (with its `program` key). */
  readonly metrics: MetricsSink;
  readonly logger: CycleLogger;
  /** Its turns on the thread the programs in flight share (the cycle's `cpuTurns`); absent without `WorkerDeps.defer`. */
  readonly cpuTurns?: CpuTurns;
}

/** A program's metrics and logger, and the means to send them once its turn is over. */
export interface ProgramObservation {
  readonly metrics: MetricsSink;
  readonly logger: CycleLogger;
  /** The turn is over, as `report` says: its metrics are sent (and its log lines, as the edge decides). */
  flush(report: ProgramReport): void;
}

export interface WorkerDeps {
  readonly registry: ProgramRegistry;
  readonly clock: Clock;
  /** The worker's own logger and metrics: no program's. */
  readonly logger: CycleLogger;
  readonly metrics: MetricsSink;
  /** A program's metrics and logger. */
  observe(program: string): ProgramObservation;
  /**
   * Runs one program's poll cycle over deps of its own. It may throw (the program's setup or its
   * cycle failed): the worker contains it.
   */
  runProgram(record: ProgramRecord, slot: ProgramSlot): Promise<CycleSummary>;
  /**
   * Runs a function once the event loop has done what else is ready (the edge: `setImmediate`):
   * how the programs' turns on the thread are served (`cpu-turns.ts`). @default none: no turns,
   * each program's steps run in the order the loop has them
   */
  readonly defer?: (serve: () => void) => void;
  /**
   * The process's CPU: with it, each program's steps spend from a budget of CPU time, so that one
   * that drains never gets the process paused with the others' events in it (`cpu-turns.ts`).
   * Only with `defer`. @default none: turns take programs in turn, at whatever pace
   */
  readonly cpuMeter?: CpuMeter;
}

export interface WorkerOptions {
  readonly worker: number;
  readonly workerCount: number;
  /** Time left in the invocation at start (`context.getRemainingTimeInMillis()`). */
  readonly remainingMs: number;
  readonly maxConcurrentPrograms: number;
  /** Kept back at the end of the run for the worker's own flush and answer. @default 1_000 */
  readonly reserveMs?: number;
  /** No program starts with less than this left of the run: its cycle could not poll. @default 5_000 */
  readonly minTurnMs?: number;
}

export const WORKER_DEFAULTS = Object.freeze({ reserveMs: 1_000, minTurnMs: 5_000 });

/** Where the run stands: what every lane reads. */
interface Run {
  readonly deps: WorkerDeps;
  /** Epoch ms after which no program's turn may last. */
  readonly end: number;
  readonly turnMs: number;
  readonly minTurnMs: number;
  readonly lanes: number;
  readonly queue: ProgramRecord[];
  readonly reports: ProgramReport[];
  readonly cpuTurns: FairCpuTurns | undefined;
}

/**
 * Lists the registry, takes this worker's active programs and runs them, at most
 * `maxConcurrentPrograms` at once, each for at most its turn.
 *
 * @throws what the registry's `list` throws: no program can be assigned without it.
 */
export async function runWorker(deps: WorkerDeps, options: WorkerOptions): Promise<WorkerSummary> {
  const start = deps.clock.now();
  const end = start + options.remainingMs - (options.reserveMs ?? WORKER_DEFAULTS.reserveMs);
  const listing = await listWithin(deps, end, end - (options.minTurnMs ?? WORKER_DEFAULTS.minTurnMs));
  reportRefused(deps, listing.refused);
  const active = listing.records.filter((record) => record.state === 'active');
  const mine = programsOfWorker(active, options.worker, options.workerCount);
  const lanes = Math.max(1, Math.min(mine.length, options.maxConcurrentPrograms));
  const rounds = Math.max(1, Math.ceil(mine.length / options.maxConcurrentPrograms));
  const minTurnMs = options.minTurnMs ?? WORKER_DEFAULTS.minTurnMs;
  const usableMs = end - deps.clock.now();
  const turnMs = Math.max(minTurnMs, Math.floor(usableMs / rounds));
  const run: Run = {
    deps,
    end,
    turnMs,
    minTurnMs,
    lanes,
    queue: inTurnOrder(mine, lanes * Math.max(1, Math.floor(usableMs / turnMs)), start),
    reports: [],
    cpuTurns: deps.defer === undefined ? undefined : new FairCpuTurns(deps.defer, deps.cpuMeter),
  };
  deps.logger.info('Worker run', {
    worker: options.worker,
    workerCount: options.workerCount,
    programs: mine.length,
    lanes,
    turnMs: run.turnMs,
  });
  await Promise.all(Array.from({ length: lanes }, () => lane(run)));
  const summary = summarizeWorker(
    { worker: options.worker, workerCount: options.workerCount, refusedRecords: listing.refused.length },
    run.reports,
    deps.clock.now() - start,
  );
  if (summary.programs.notReached > 0)
    deps.metrics.add('ProgramsNotReached', 'Count', summary.programs.notReached);
  // The worker's liveness: its stall alarm counts these, one a run.
  deps.metrics.add('WorkerDurationMs', 'Milliseconds', summary.durationMs);
  deps.logger.info('Worker run finished', { ...summary });
  return summary;
}

/**
 * The order programs take their turns in: by name, the same at every run, so that each program's
 * turn falls at the same point of every run and hands over to its own turn in the next run. When
 * fewer turns fit than there are programs, the order starts `capacity` further along at each
 * minute, so that the programs left out differ from run to run.
 */
function inTurnOrder(programs: readonly ProgramRecord[], capacity: number, start: number): ProgramRecord[] {
  if (programs.length <= capacity) return [...programs];
  const offset = (Math.floor(start / 60_000) * capacity) % programs.length;
  return [...programs.slice(offset), ...programs.slice(0, offset)];
}

/** Pauses between failed listings: a table throttled or slow for a moment is read again soon. */
const LIST_RETRY_BACKOFF: { readonly firstMs: number; readonly capMs: number } = Object.freeze({
  firstMs: 250,
  capMs: 2_000,
});

/**
 * The registry's listing, tried again after a failure while a program could still be given a turn
 * (`latestMs`), and given up at the end of the run. Without it no program is polled this run, so
 * a moment's throttling would cost every program a minute.
 */
async function listWithin(deps: WorkerDeps, end: number, latestMs: number) {
  const deadline = deps.clock.deadline(end);
  try {
    for (
      let pauseMs = LIST_RETRY_BACKOFF.firstMs;
      ;
      pauseMs = Math.min(pauseMs * 2, LIST_RETRY_BACKOFF.capMs)
    ) {
      try {
        return await deps.registry.list(deadline.signal);
      } catch (error) {
        if (deadline.signal.aborted || deps.clock.now() + pauseMs > latestMs) throw error;
        deps.logger.warn('Program registry not read; trying again', { error, pauseMs });
        await deps.clock.sleep(pauseMs, deadline.signal).catch(() => {
          throw error;
        });
      }
    }
  } finally {
    deadline.clear();
  }
}

function reportRefused(deps: WorkerDeps, refused: readonly RefusedRecord[]): void {
  if (refused.length === 0) return;
  deps.metrics.add('ProgramRecordsRefused', 'Count', refused.length);
  for (const item of refused) {
    deps.logger.error('Program record refused; that program is not polled, the others are', {
      record: item.key,
      error: item.error,
    });
  }
}

/** One lane: programs one after another from the queue, each for at most its turn. */
async function lane(run: Run): Promise<void> {
  for (let record = run.queue.shift(); record !== undefined; record = run.queue.shift()) {
    const left = run.end - run.deps.clock.now();
    if (left < run.minTurnMs) {
      const report = reportWithout(record.name, 'not-reached');
      run.reports.push(report);
      const observation = run.deps.observe(record.name);
      observation.logger.warn(
        'Program not reached in this run: too many programs for the lanes and the time',
      );
      // A run of the program all the same, without a healthy cycle: its metrics (none) are sent,
      // which counts it in StalledRuns.
      observation.flush(report);
      continue;
    }
    run.reports.push(await turn(run, record, Math.min(run.turnMs, left)));
  }
}

/** One program's turn: its cycle, contained, for at most `remainingMs`. */
async function turn(run: Run, record: ProgramRecord, remainingMs: number): Promise<ProgramReport> {
  const { deps } = run;
  const observation = deps.observe(record.name);
  const stop = new AbortController();
  const settled = new AbortController();
  const slot: ProgramSlot = {
    remainingMs,
    stopSignal: stop.signal,
    programsInFlight: run.lanes,
    metrics: observation.metrics,
    logger: observation.logger,
    ...(run.cpuTurns === undefined ? {} : { cpuTurns: run.cpuTurns.of(record.name) }),
  };
  let leftBehind = false;
  const cycle = Promise.resolve()
    .then(() => deps.runProgram(record, slot))
    .then(reportOf, (error: unknown) =>
      // A cycle left behind that fails later is not counted again: its turn was reported.
      leftBehind ? reportWithout(record.name, 'abandoned') : failed(record, observation, error),
    );
  // The worker waits for the cycle at most to the end of its turn (a wait that keeps the process alive).
  const turnOver = deps.clock.sleep(remainingMs, settled.signal).then(
    () => 'over' as const,
    () => 'settled' as const,
  );
  let report = reportWithout(record.name, 'abandoned');
  try {
    const outcome = await Promise.race([cycle, turnOver]);
    if (outcome !== 'over' && outcome !== 'settled') {
      report = outcome;
      return report;
    }
    leftBehind = true;
    stop.abort(new DeadlineExceededError(`Program ${record.name}'s turn is over`, { program: record.name }));
    observation.metrics.add('CycleFailures', 'Count', 1);
    observation.logger.error('Program left behind: its cycle had not ended when its turn was over', {
      remainingMs,
    });
    return report;
  } finally {
    settled.abort();
    observation.flush(report);
  }
}

function failed(record: ProgramRecord, observation: ProgramObservation, error: unknown): ProgramReport {
  observation.metrics.add('CycleFailures', 'Count', 1);
  observation.logger.error('Poll cycle failed; the checkpoint stays at the last published event', { error });
  return reportWithout(record.name, 'failed', error);
}
