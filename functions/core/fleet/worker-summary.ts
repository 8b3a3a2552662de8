/**
 * What a worker's run answers: counts over its programs and the worst few of them, never a list
 * as long as the programs (a thousand programs' summaries would pass Lambda's 6 MB response limit
 * and say less). A program's own summary is in its log line ("Cycle finished") when it published,
 * warned or did not complete (a healthy, quiet program's turn writes no line: the edge's
 * `turn-log.ts`), and in its metrics.
 */
import { PollerError } from '../errors.ts';
import type { CycleSummary } from '../poll-cycle.ts';

/** How one program's turn ended. */
export type ProgramOutcome =
  /** Its cycle ran to its end. */
  | 'completed'
  /** Another run held its lease and did not hand it over. */
  | 'lease-busy'
  /** Its cycle threw, or the program could not be set up (settings, secret): contained, the others ran. */
  | 'failed'
  /** Its cycle had not settled when its turn was over: left behind, the worker went on. */
  | 'abandoned'
  /** Its turn never came: too little of the run was left. */
  | 'not-reached';

export interface ProgramReport {
  readonly program: string;
  readonly outcome: ProgramOutcome;
  /**
   * Events its cycle reported publishing. A cycle that failed or was left behind reports none here
   * (its error carries no tally): what it did publish is in its metrics and its row's last cycle.
   */
  readonly published: number;
  readonly lagSeconds: number | null;
  readonly checkpoint: number | null;
  /** The error's stable code (or its class name) when the program failed. */
  readonly errorCode?: string;
}

export interface WorkerSummary {
  readonly worker: number;
  readonly workerCount: number;
  readonly programs: {
    /** Active programs assigned to this worker. */
    readonly assigned: number;
    readonly completed: number;
    readonly leaseBusy: number;
    readonly failed: number;
    readonly abandoned: number;
    readonly notReached: number;
    /** Registry items refused as malformed (they have no worker: counted by every worker). */
    readonly refusedRecords: number;
  };
  /** Events published by all of this worker's programs. */
  readonly published: number;
  /** The largest lag among the programs that report one. */
  readonly maxLagSeconds: number | null;
  /** At most `WORST_PROGRAMS`, the worst first (see `worstFirst`). */
  readonly worst: readonly ProgramReport[];
  readonly durationMs: number;
}

/** Programs named in a worker's summary. */
export const WORST_PROGRAMS = 10;
/** Characters of an error's class name a report keeps (a code is always short). */
const MAX_ERROR_NAME_CHARS = 64;

const OUTCOME_RANK: Readonly<Record<ProgramOutcome, number>> = {
  failed: 0,
  abandoned: 1,
  'not-reached': 2,
  'lease-busy': 3,
  completed: 4,
};

/** A program's report from its cycle's summary. */
export function reportOf(summary: CycleSummary): ProgramReport {
  return {
    program: summary.program,
    outcome: summary.status === 'lease-busy' ? 'lease-busy' : 'completed',
    published: summary.published,
    lagSeconds: summary.lagSeconds,
    checkpoint: summary.checkpoint,
  };
}

/** A program's report when it did not complete: failed (with `error`), abandoned or not reached. */
export function reportWithout(
  program: string,
  outcome: Exclude<ProgramOutcome, 'completed' | 'lease-busy'>,
  error?: unknown,
): ProgramReport {
  return {
    program,
    outcome,
    published: 0,
    lagSeconds: null,
    checkpoint: null,
    ...(error === undefined ? {} : { errorCode: errorCodeOf(error) }),
  };
}

function errorCodeOf(error: unknown): string {
  if (error instanceof PollerError) return error.code;
  const name = error instanceof Error ? error.name : typeof error;
  return name.slice(0, MAX_ERROR_NAME_CHARS);
}

/** Worst first: failed, abandoned, not reached, lease busy, completed; within each, the largest lag first. */
export function worstFirst(a: ProgramReport, b: ProgramReport): number {
  return (
    OUTCOME_RANK[a.outcome] - OUTCOME_RANK[b.outcome] ||
    (b.lagSeconds ?? -1) - (a.lagSeconds ?? -1) ||
    (a.program < b.program ? -1 : a.program > b.program ? 1 : 0)
  );
}

/** The worker's summary of its programs' reports. */
export function summarizeWorker(
  run: { readonly worker: number; readonly workerCount: number; readonly refusedRecords: number },
  reports: readonly ProgramReport[],
  durationMs: number,
): WorkerSummary {
  const count = (outcome: ProgramOutcome) => reports.filter((report) => report.outcome === outcome).length;
  const lags = reports.flatMap((report) => (report.lagSeconds === null ? [] : [report.lagSeconds]));
  return {
    worker: run.worker,
    workerCount: run.workerCount,
    programs: {
      assigned: reports.length,
      completed: count('completed'),
      leaseBusy: count('lease-busy'),
      failed: count('failed'),
      abandoned: count('abandoned'),
      notReached: count('not-reached'),
      refusedRecords: run.refusedRecords,
    },
    published: reports.reduce((sum, report) => sum + report.published, 0),
    maxLagSeconds: lags.length === 0 ? null : Math.max(...lags),
    worst: [...reports].sort(worstFirst).slice(0, WORST_PROGRAMS),
    durationMs,
  };
}
