/**
 * The fleet bench's arithmetic, with no I/O: delivery lags pooled and per program, the ratio of
 * two groups' lags measured over the same minutes, drain rates, and the cost inputs (per
 * worker-month and per program-month) from what a phase counted.
 */

export interface Percentiles {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

export function percentiles(values: readonly number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? Number.NaN };
}

export interface LagFigures {
  readonly programs: number;
  /** Every event of these programs together. */
  readonly pooled: Percentiles;
  /** Per program (programs with at least `MIN_EVENTS_PER_PROGRAM` events): the spread of their p50 and p99. */
  readonly perProgram: {
    readonly programsCounted: number;
    readonly medianP50: number;
    readonly medianP99: number;
    /** The p99 that 99 % of the programs stay under. */
    readonly p99OfP99: number;
    readonly worstP99: number;
  };
  /**
   * Each program's worst lag (every program with an event): with a few events a program, its p99
   * is its worst, so this is the per-program figure that holds at any rate. Median over the
   * programs, the value 99 % of them stay under, and the worst.
   */
  readonly perProgramMax: { readonly median: number; readonly p99: number; readonly max: number };
}

/** A program's p99 from fewer events than this is its maximum, nothing more: left out of the spread. */
export const MIN_EVENTS_PER_PROGRAM = 10;

/** Lags of the programs in `only` (all when absent), pooled and per program. */
export function lagFigures(
  lagsByProgram: Readonly<Record<string, readonly number[]>>,
  only?: ReadonlySet<string>,
): LagFigures {
  const pooled: number[] = [];
  const p50s: number[] = [];
  const p99s: number[] = [];
  const maxima: number[] = [];
  let programs = 0;
  for (const [programId, lags] of Object.entries(lagsByProgram)) {
    if (only !== undefined && !only.has(programId)) continue;
    programs += 1;
    pooled.push(...lags);
    if (lags.length > 0) maxima.push(Math.max(...lags));
    if (lags.length < MIN_EVENTS_PER_PROGRAM) continue;
    const own = percentiles(lags);
    p50s.push(own.p50);
    p99s.push(own.p99);
  }
  const spreadOfP50 = percentiles(p50s);
  const spreadOfP99 = percentiles(p99s);
  return {
    programs,
    pooled: percentiles(pooled),
    perProgram: {
      programsCounted: p99s.length,
      medianP50: spreadOfP50.p50,
      medianP99: spreadOfP99.p50,
      p99OfP99: spreadOfP99.p99,
      worstP99: spreadOfP99.max,
    },
    perProgramMax: (({ p50, p99, max }) => ({ median: p50, p99, max }))(percentiles(maxima)),
  };
}

/** `value ÷ base`, two decimals. */
export function ratio(value: number, base: number): number {
  return Math.round((value / base) * 100) / 100;
}

export interface DrainFigures {
  readonly programs: number;
  readonly events: number;
  readonly delivered: number;
  /** From the first event of any backlog accepted to the last: seconds. */
  readonly seconds: number;
  /** Events of all backlogs per second over that time. */
  readonly eventsPerSecond: number;
  /** Per program: its own backlog's rate (first to last of its events), median and slowest. */
  readonly perProgramEventsPerSecond: { readonly median: number; readonly slowest: number };
}

export function drainFigures(
  drains: Readonly<Record<string, { accepted: number; first: number; last: number }>>,
  eventsPerProgram: number,
): DrainFigures {
  const entries = Object.values(drains);
  const delivered = entries.reduce((total, drain) => total + drain.accepted, 0);
  const first = Math.min(...entries.map((drain) => drain.first));
  const last = Math.max(...entries.map((drain) => drain.last));
  const seconds = (last - first) / 1000;
  const rates = entries
    .filter((drain) => drain.accepted > 1 && drain.last > drain.first)
    .map((drain) => (drain.accepted - 1) / ((drain.last - drain.first) / 1000));
  const spread = percentiles(rates);
  return {
    programs: entries.length,
    events: eventsPerProgram * entries.length,
    delivered,
    seconds: Math.round(seconds * 10) / 10,
    eventsPerSecond: Math.round(delivered / Math.max(seconds, 0.001)),
    perProgramEventsPerSecond: {
      median: Math.round(spread.p50),
      slowest: Math.round(rates.length === 0 ? Number.NaN : Math.min(...rates)),
    },
  };
}

/** Minutes in a 30-day month: one scheduled run of each worker per minute. */
export const MINUTES_PER_MONTH = 43_200;

/** Scales a count over `minutes` of the bench to a 30-day month. */
export function perMonth(count: number, minutes: number): number {
  return Math.round((count / minutes) * MINUTES_PER_MONTH);
}
