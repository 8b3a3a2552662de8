/**
 * docs/cost.md's fleet table, rendered from the cost model (`cost-model.ts`): one row per billed
 * item with its formula, one column per scale, the total, the cost per program and its ratio to
 * today's. `npm run generate:docs` writes it; the unit tests check it is fresh.
 */
import {
  DEPLOYMENT_METRICS,
  FLEET_SCALES,
  type FleetCost,
  fleetCost,
  GOAL_BASELINE_PER_PROGRAM,
  PRICES,
  SECRETS_CACHED_PER_WORKER,
  TODAY_PER_PROGRAM,
  USAGE,
  WORKER_METRICS_EVERY_RUN,
} from './cost-model.ts';
import type { DocsTable } from './settings-docs-renderer.ts';

/** What each line of the model is, and its formula as the table states it. */
const ITEMS: Readonly<Record<string, { readonly name: string; readonly formula: string }>> = {
  lambdaDuration: {
    name: 'Lambda duration (arm64)',
    formula: `workers × ${n(USAGE.ticks.value)} runs × ~${USAGE.runSeconds.value} s × GB × $${PRICES.lambdaGbSecond} per GB-s`,
  },
  lambdaRequests: { name: 'Lambda requests', formula: 'workers × 43,200 × $0.20 per million' },
  scheduler: { name: 'EventBridge Scheduler', formula: 'workers × 43,200 invocations × $1.00 per million' },
  registryScan: {
    name: 'DynamoDB: registry scan',
    formula: `workers × 43,200 scans × ½ RRU per 4 KB of ${USAGE.recordBytes.value}-byte records × $0.125 per million`,
  },
  leaseChecks: {
    name: 'DynamoDB: checkpoint reads',
    formula: `programs × 43,200 × ${USAGE.leaseChecksPerTick.value} strongly consistent reads × $0.125 per million`,
  },
  checkpointWrites: {
    name: 'DynamoDB: checkpoint and lease writes',
    formula: `programs × ${n(USAGE.checkpointWrites.value)} WRU (a quiet feed) × $0.625 per million`,
  },
  secrets: {
    name: 'Secrets Manager',
    formula:
      `programs × ($0.40 + ${n(USAGE.secretCalls.value)} calls with one worker, up to ${n(USAGE.fleetSecretCalls.value)} ` +
      'with more (a read a run) × $0.05 per 10,000)',
  },
  metrics: {
    name: 'CloudWatch custom metrics',
    formula:
      `(per-program alarms: programs × ${USAGE.perProgramMetrics.value}; without: ${DEPLOYMENT_METRICS} of the ` +
      `deployment, none of a healthy program) + ${WORKER_METRICS_EVERY_RUN} a worker; × $0.30`,
  },
  alarms: {
    name: 'CloudWatch alarms',
    formula:
      `${USAGE.stackAlarms.value} of the stack + ${USAGE.conditionAlarms.value} over every program + 1 a worker ` +
      `(+ ${USAGE.perProgramAlarms.value} a program with per-program alarms); × $0.10 per alarm metric`,
  },
  dashboard: { name: 'CloudWatch dashboard', formula: '$3.00' },
  kms: { name: 'KMS key (alarm topic)', formula: '$1.00' },
  logs: {
    name: 'CloudWatch Logs',
    formula:
      `43,200 runs × (programs × ${USAGE.logKbPerRun.value} KB + workers × ${USAGE.workerLogKbPerRun.value} KB), ` +
      "measured (a healthy program's run: the deployment's metrics document alone) × ($0.50 ingested + $0.03 stored) per GB",
  },
};

/** `1,234`. */
function n(value: number): string {
  return value.toLocaleString('en-US');
}

/** `$1,234.56`, or `$0.004` below a cent. */
function dollars(value: number): string {
  if (value > 0 && value < 0.01) return `$${value.toFixed(3)}`;
  return `$${value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

const row = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;

/** The goal: a program at 1,000 programs costs at most this share of today's. */
const GOAL_RATIO = 0.1;

export const COST_TABLE: DocsTable = {
  file: 'docs/cost.md',
  name: 'cost:fleet',
  source: 'scripts/cost-model.ts',
  render() {
    const costs: readonly FleetCost[] = FLEET_SCALES.map((programs) => fleetCost(programs));
    const header = [
      'Item',
      'Formula, a month',
      ...FLEET_SCALES.map((programs) => `${n(programs)} program${programs === 1 ? '' : 's'}`),
    ];
    const layout = row([
      'Workers × memory',
      `⌈programs ÷ ${USAGE.programsPerWorker.value}⌉ × the least memory from 256 MB, in 64 MB steps, in which the byte budget runs a worker's programs at once (\`programsThatFit\`) and above their measured peak (${USAGE.workerBaseMb.value} MiB + ${USAGE.programMb.value} MiB a program)`,
      ...costs.map((cost) => `${cost.workers} × ${n(cost.workerMemoryMb)} MB`),
    ]);
    const items = Object.entries(ITEMS).map(([item, { name, formula }]) =>
      row([
        name,
        formula,
        ...costs.map((cost) => dollars(cost.lines.find((line) => line.item === item)!.dollars)),
      ]),
    );
    return [
      row(header),
      row(header.map(() => '---')),
      layout,
      ...items,
      row(['**A month**', '', ...costs.map((cost) => `**${dollars(cost.total)}**`)]),
      row([
        '**A program-month**',
        'the month ÷ programs',
        ...costs.map((cost) => `**${dollars(cost.perProgram)}**`),
      ]),
      row([
        `÷ today's ${dollars(TODAY_PER_PROGRAM)} a program`,
        'goal: at most 0.10 at 1,000 programs',
        ...costs.map((cost) => (cost.perProgram / TODAY_PER_PROGRAM).toFixed(2)),
      ]),
      '',
      verdict(costs.at(-1)!, fleetCost(FLEET_SCALES.at(-1)!, SECRETS_CACHED_PER_WORKER)),
    ].join('\n');
  },
};

/** What the table says of the goal at its largest scale, and the three largest items there. */
function verdict(cost: FleetCost, cached: FleetCost): string {
  const ratio = cost.perProgram / TODAY_PER_PROGRAM;
  const cachedRatio = cached.perProgram / TODAY_PER_PROGRAM;
  const met = (value: number) => (value <= GOAL_RATIO ? 'met' : 'not met');
  const largest = [...cost.lines]
    .sort((a, b) => b.dollars - a.dollars)
    .slice(0, 3)
    .map((line) => `${ITEMS[line.item]!.name} ${dollars(line.dollars / cost.programs)}`);
  return (
    `**At ${n(cost.programs)} programs:** ${dollars(cost.perProgram)} a program-month, ${ratio.toFixed(3)} of today's ` +
    `${dollars(TODAY_PER_PROGRAM)} (${(cost.perProgram / GOAL_BASELINE_PER_PROGRAM).toFixed(3)} of the ` +
    `${dollars(GOAL_BASELINE_PER_PROGRAM)} the goal was set on, before the hand-over's reads were timed): the goal ` +
    `(at most ${GOAL_RATIO.toFixed(2)}) is ${met(ratio)} with the defaults; with each program's secret read no more ` +
    `often than with one worker (workers that keep their containers: not built), ${dollars(cached.perProgram)}, ` +
    `${cachedRatio.toFixed(3)}: ${met(cachedRatio)}. The largest items a program: ${largest.join(', ')}.`
  );
}
