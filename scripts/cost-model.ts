/**
 * What a deployment costs a month at a given number of programs, served by shared workers: every
 * billed item, as a formula of list prices and of usage that is measured, derived from the code,
 * estimated, or a placeholder until `npm run bench:fleet` measures it. docs/cost.md's fleet table
 * is rendered from this (`npm run generate:docs`; `cost-docs-renderer.ts`), so the table and the
 * formula cannot disagree; replacing a placeholder is changing its value here and regenerating.
 */
import { METRIC_PLANS } from '../functions/adapters/observability/metric-plan.ts';
import { programsThatFit } from '../functions/core/fleet/memory-share.ts';
import { METRIC_NAMES } from '../functions/core/ports.ts';
import { PER_PROGRAM_ALARMS_UP_TO } from '../infra/constructs/alarm-plan.ts';

/** US East (N. Virginia) on-demand list prices in USD, as docs/cost.md states them (2026). */
export const PRICES = {
  /** Lambda, arm64, per GB-second. */
  lambdaGbSecond: 0.000_013_333_4,
  lambdaRequest: 0.2 / 1e6,
  schedulerInvocation: 1 / 1e6,
  /** DynamoDB on demand, per read request unit (a strongly consistent read of ≤ 4 KB; half for eventually consistent). */
  dynamoDbRead: 0.125 / 1e6,
  dynamoDbWrite: 0.625 / 1e6,
  secretMonth: 0.4,
  secretCall: 0.05 / 10_000,
  /** A custom metric sent every hour of the month (first 10,000 metrics). */
  metricMonth: 0.3,
  /** A standard-resolution alarm metric; a Metrics Insights alarm per metric its query analyzes. */
  alarmMetricMonth: 0.1,
  dashboardMonth: 3,
  kmsKeyMonth: 1,
  logsIngestedGb: 0.5,
  logsStoredGbMonth: 0.03,
} as const;

/** Where a usage figure comes from; `placeholder` ones are replaced by fleet-bench's measurements. */
export type Provenance = 'measured' | 'derived' | 'estimated' | 'placeholder';

interface Usage {
  readonly value: number;
  readonly provenance: Provenance;
  readonly note: string;
}

/** The usage the formulas read. */
export const USAGE = {
  ticks: { value: 43_200, provenance: 'derived', note: '30 days of a 1-minute schedule' },
  runSeconds: {
    value: 65,
    provenance: 'measured',
    note: "a run polls until its timeout less the safety margin (docs/performance.md); a worker's the same",
  },
  programsPerWorker: {
    value: 50,
    provenance: 'derived',
    note: 'workers = ⌈programs ÷ 50⌉: each of its programs polled the whole run (`maxConcurrentPrograms` 50)',
  },
  workerBaseMb: {
    value: 72,
    provenance: 'measured',
    note: "a worker's peak RSS with no program (bench:fleet: 71.5 MiB)",
  },
  programMb: {
    value: 2.5,
    provenance: 'measured',
    note: "each program's share of a worker's peak RSS (bench:fleet: 1.5–1.7 MiB caught up, about 2.4 with misbehaving programs)",
  },
  minMemoryMb: { value: 256, provenance: 'derived', note: "the function's default memory" },
  recordBytes: {
    value: 600,
    provenance: 'estimated',
    note: 'a program record in the registry (name, secret, state, owner, a few settings)',
  },
  leaseChecksPerTick: {
    value: 3,
    provenance: 'derived',
    note:
      "the hand-over's strongly consistent reads: the next run sleeps until one check interval before the holder's " +
      'deadline (its lease expiry less skew and margin), reads then, at the deadline, and once more after the release ' +
      '(about 50 ms later with a quiet feed); 51 before, one every 100 ms of the ~5 s wait (poll-cycle.test.ts counts them)',
  },
  checkpointWrites: {
    value: 130_000,
    provenance: 'derived',
    note: 'a quiet feed: the lease taken and released each tick, and the few checkpoint writes (up to 5.3 million with events all the time)',
  },
  secretCalls: {
    value: 17_280,
    provenance: 'derived',
    note: "each program's secret read every 5 minutes (`CREDENTIALS_TTL_SECONDS`) by each of the two execution environments runs alternate on",
  },
  fleetSecretCalls: {
    value: 43_200,
    provenance: 'estimated',
    note:
      'with several workers, at most one read per program and run: the workers share one function, and a run lands on any of its ' +
      'containers, which has the secret cached only if it served that program within 5 minutes (docs/decisions/fleet.md)',
  },
  logKbPerRun: {
    value: 0.4,
    provenance: 'measured',
    note:
      "a healthy, quiet program's run in a worker: no line of its own (turn-log.ts), one EMF document of the " +
      "deployment's metrics, 408 bytes (poller-lambda-workers.test.ts's run, 2026-11-28); before, also its " +
      "'Lease taken' (445 B) and 'Cycle finished' (548 B) lines and the hand-over's two, 3.5 KB estimated",
  },
  workerLogKbPerRun: {
    value: 2.6,
    provenance: 'measured',
    note:
      "a worker's own lines a run: 'Worker run' 430 B, 'Worker run finished' 884 B with 3 programs (about 1.6 KB " +
      "with the 10 it names at most), its EMF document 264 B (measured as above), and Lambda's START, END and " +
      'REPORT lines, about 0.3 KB (estimated)',
  },
  perProgramMetrics: {
    value: 5,
    provenance: 'measured',
    note: 'metrics a quiet program sends every hour under per-program alarms (docs/cost.md, per program)',
  },
  stackAlarms: {
    value: 9,
    provenance: 'derived',
    note: "the default stack's alarms that are no program's (errors, throttles, DLQs, queues)",
  },
  perProgramAlarms: {
    value: 7,
    provenance: 'derived',
    note: 'lag, stall, rejected entries, sequence gaps, sequence jumps, lease busy, oversize pages',
  },
  conditionAlarms: {
    value: 7,
    provenance: 'derived',
    note: 'one per condition over every program (8 on the custom bus), in every deployment',
  },
} as const satisfies Record<string, Usage>;

/** Metrics the handler sends for the whole deployment under `PROGRAM_METRICS=alarmed`, at most one each an hour. */
export const DEPLOYMENT_METRICS = METRIC_NAMES.filter((name) => METRIC_PLANS[name].ofDeployment).length;
/** Metrics a worker sends of its own every run (the others only when not 0). */
export const WORKER_METRICS_EVERY_RUN = METRIC_NAMES.filter(
  (name) => METRIC_PLANS[name].ofWorker === true && METRIC_PLANS[name].kind === 'gauge',
).length;

/** One billed item of a month, for the whole deployment. */
export interface CostLine {
  readonly item: string;
  readonly dollars: number;
}

export interface FleetCost {
  readonly programs: number;
  readonly workers: number;
  readonly workerMemoryMb: number;
  readonly perProgramAlarms: boolean;
  readonly lines: readonly CostLine[];
  readonly total: number;
  readonly perProgram: number;
}

type UsageValues = { readonly [K in keyof typeof USAGE]: number };

/**
 * A worker's memory, in 64 MB steps from `minMb`: enough for the byte budget to let `programs` run
 * at once (`programsThatFit`, the code's own rule) and above the peak RSS measured for them.
 */
export function workerMemoryFor(programs: number, minMb: number, peakMb: number): number {
  for (let mb = Math.max(minMb, Math.ceil(peakMb / 64) * 64); ; mb += 64) {
    if (programsThatFit(mb * 1024 * 1024) >= programs) return mb;
  }
}

/**
 * The month of a deployment of `programs` programs, healthy and with quiet feeds, item by item;
 * `overrides` replaces usage figures (what a setting changes).
 */
export function fleetCost(programs: number, overrides: Partial<UsageValues> = {}): FleetCost {
  const u = <K extends keyof typeof USAGE>(key: K): number => overrides[key] ?? USAGE[key].value;
  const workers = Math.ceil(programs / u('programsPerWorker'));
  const perWorker = Math.ceil(programs / workers);
  const workerMemoryMb = workerMemoryFor(
    perWorker,
    u('minMemoryMb'),
    u('workerBaseMb') + u('programMb') * perWorker,
  );
  const perProgramAlarms = programs <= PER_PROGRAM_ALARMS_UP_TO;
  const runs = workers * u('ticks');
  const scanUnits = Math.max(0.5, (0.5 * programs * u('recordBytes')) / 4096);
  const lines: CostLine[] = [
    {
      item: 'lambdaDuration',
      dollars: runs * u('runSeconds') * (workerMemoryMb / 1024) * PRICES.lambdaGbSecond,
    },
    { item: 'lambdaRequests', dollars: runs * PRICES.lambdaRequest },
    { item: 'scheduler', dollars: runs * PRICES.schedulerInvocation },
    { item: 'registryScan', dollars: runs * scanUnits * PRICES.dynamoDbRead },
    { item: 'leaseChecks', dollars: programs * u('ticks') * u('leaseChecksPerTick') * PRICES.dynamoDbRead },
    { item: 'checkpointWrites', dollars: programs * u('checkpointWrites') * PRICES.dynamoDbWrite },
    {
      item: 'secrets',
      dollars:
        programs *
        (PRICES.secretMonth + (workers > 1 ? u('fleetSecretCalls') : u('secretCalls')) * PRICES.secretCall),
    },
    {
      item: 'metrics',
      // A worker's own metrics are sent under either plan.
      dollars:
        ((perProgramAlarms ? programs * u('perProgramMetrics') : DEPLOYMENT_METRICS) +
          workers * WORKER_METRICS_EVERY_RUN) *
        PRICES.metricMonth,
    },
    {
      item: 'alarms',
      // The alarms over every program exist whatever the props (the registry may hold programs no
      // per-program alarm names), each worker's stall alarm with them.
      dollars:
        (u('stackAlarms') +
          u('conditionAlarms') +
          workers +
          (perProgramAlarms ? programs * u('perProgramAlarms') : 0)) *
        PRICES.alarmMetricMonth,
    },
    { item: 'dashboard', dollars: PRICES.dashboardMonth },
    { item: 'kms', dollars: PRICES.kmsKeyMonth },
    {
      item: 'logs',
      dollars:
        ((u('ticks') * (programs * u('logKbPerRun') + workers * u('workerLogKbPerRun'))) / 1024 / 1024) *
        (PRICES.logsIngestedGb + PRICES.logsStoredGbMonth),
    },
  ];
  const total = lines.reduce((sum, line) => sum + line.dollars, 0);
  return { programs, workers, workerMemoryMb, perProgramAlarms, lines, total, perProgram: total / programs };
}

/**
 * What a worker that keeps its containers would read of its programs' secrets (as one worker does
 * today): not built; a function per worker, or a longer-lived cache, would (docs/decisions/fleet.md).
 */
export const SECRETS_CACHED_PER_WORKER: Partial<UsageValues> = { fleetSecretCalls: USAGE.secretCalls.value };

/** Today's design, per program and month with a quiet feed (docs/cost.md, "Per program, per month"). */
export const TODAY_PER_PROGRAM = 12.29;
/** The same when the goal was set (issue 35), before the hand-over's reads were timed on the holder's deadline. */
export const GOAL_BASELINE_PER_PROGRAM = 12.44;
/** The scales docs/cost.md's fleet table shows. */
export const FLEET_SCALES = [1, 10, 100, 1_000] as const;
