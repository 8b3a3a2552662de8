/**
 * `npm run bench:fleet`: one deployment serving a fleet of programs (1,000 by default) with shard
 * workers, on this machine: the shipped bundle as `--workers` workers under the Lambda runtime
 * harness, each scheduled every minute with `{"worker": i}` (two alternating execution
 * environments per worker, as Lambda runs overlapping runs), each process held to Lambda's CPU
 * share of `--memory` by a cgroup; the programs as records in moto with their secrets; the bank
 * (the simulator, every program with its own credentials and feed) and the bus (a PutEvents
 * stand-in) in processes of their own (see `support/fleet-deployment.ts`).
 *
 * Phases, each a few scheduled runs (`--ticks`, 3 by default, after 2 runs of warm-up):
 *
 *   caught-up    every program gets events at `--rate` per second: delivery lag (the bank's
 *                created_dt to the bus accepting the event), pooled and per program
 *   backlog      a backlog of `--backlog` events on 10 % of the programs of half the workers
 *                (group B): its drain rate, and the other programs' lag beside group A's
 *   misbehaving  10 % of group B's programs misbehave (stall, 500s, floods, oversize pages that
 *                ignore `limit`, revoked credentials) while group A's do not: the others' p99 lag
 *                in B over A's, measured over the same minutes; then the groups swap roles
 *   kill         a backlog on a few programs of one worker, and its process SIGKILLed mid-drain:
 *                nothing lost, duplicates within the documented bound
 *   synth        `cdk synth` at `--synth` program counts: resources and template size, with the
 *                programs in props as the construct's defaults make them, and (where the construct
 *                offers it) the fleet's way: no resource per program
 *
 * Then every event is checked delivered, and the cost inputs per worker-month and program-month
 * are written. About 22 minutes with the defaults (the runs are the deployed minute);
 * `--quick` (200 programs, 4 workers, 2 runs per phase) about 16; `--phases synth` a few.
 *
 *   npm run bench:fleet -- [--programs 1000] [--workers 10] [--memory 1024] [--rate 0.05]
 *                          [--ticks 3] [--phases caught-up,backlog,misbehaving,kill,synth]
 *                          [--synth 1,100,1000,5000] [--seed 35] [--quick] [--out <file>]
 *                          [--afflictions stall,error-500,flood,oversize-pages,revoked]
 *                          [--loop-probe <dir>] [--lease-check-ms 100]
 *
 * `--afflictions`: the kinds the misbehaving programs take in turn (all by default), to tell their
 * effects apart. `--loop-probe`: each worker process writes its event loop's utilization and delay
 * once a second to `<dir>` (`support/loop-probe-hook.mjs`), and each compared window lists the
 * slowest 2 % of each group's events with when they were created, to set side by side.
 *
 * The misbehaving windows are also taken together (`misbehaving_both_halves`): each group of
 * workers on both sides once, so what the groups differ by on their own cancels out.
 *
 * Results: bench/results/fleet-<date>.json (or `--out`).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { ProgramMisbehaviour } from '../functions/simulator/banking-simulator.ts';
import { createRandom } from '../functions/simulator/seeded-random.ts';
import type { CallCounts } from './support/aws-call-counter.ts';
import { type OutputCost, outputCost } from './support/emf-metrics.ts';
import type { FleetDeployment, FleetSetup, RunOutcome, WorkerUsage } from './support/fleet-deployment.ts';
import {
  type DrainFigures,
  drainFigures,
  lagFigures,
  MINUTES_PER_MONTH,
  perMonth,
  ratio,
} from './support/fleet-figures.ts';
import { FLEET_VARIANT, PROPS_VARIANT, type SynthFigures, synthFigures } from './support/fleet-synth.ts';

const PHASES = ['caught-up', 'backlog', 'misbehaving', 'kill', 'synth'] as const;
type PhaseName = (typeof PHASES)[number];

const { values } = parseArgs({
  options: {
    programs: { type: 'string' },
    workers: { type: 'string' },
    memory: { type: 'string', default: '1024' },
    rate: { type: 'string', default: '0.05' },
    ticks: { type: 'string' },
    phases: { type: 'string', default: PHASES.join(',') },
    synth: { type: 'string', default: '1,100,1000,5000' },
    backlog: { type: 'string', default: '5000' },
    'flood-rate': { type: 'string', default: '200' },
    'oversize-page-events': { type: 'string', default: '5000' },
    'oversize-backlog': { type: 'string', default: '20000' },
    afflictions: { type: 'string' },
    'loop-probe': { type: 'string' },
    'max-concurrent': { type: 'string' },
    'stagger-ms': { type: 'string' },
    'lease-check-ms': { type: 'string' },
    'no-cpu-share': { type: 'boolean', default: false },
    seed: { type: 'string', default: '35' },
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});
const quick = values.quick ?? false;
const phases = new Set(
  (values.phases ?? '').split(',').map((name) => {
    if (!(PHASES as readonly string[]).includes(name))
      throw new Error(`--phases: ${name} is not one of ${PHASES.join(', ')}`);
    return name as PhaseName;
  }),
);
const programCount = Number(values.programs ?? (quick ? 200 : 1000));
const setup: FleetSetup = {
  programs: programCount,
  workers: Number(values.workers ?? (quick ? 4 : 10)),
  memoryMb: Number(values.memory),
  maxConcurrentPrograms: Number(values['max-concurrent'] ?? Math.min(1000, programCount)),
  seed: Number(values.seed),
  eventsPerSecond: Number(values.rate),
  // The real service holds an empty poll for a random time up to a minute.
  maxPollHoldMs: 60_000,
  busLatencyMs: 15,
  cpuShare: !(values['no-cpu-share'] ?? false),
  // The workers' runs spread over the minute: moto cannot take every worker's hand-over at once.
  staggerMs: Number(values['stagger-ms'] ?? Math.floor(60_000 / Number(values.workers ?? (quick ? 4 : 10)))),
  // The deployment's default (100 ms) where moto keeps up (200 programs); at 1,000 programs moto
  // cannot answer every waiting program's reads, so the lease is read every second there.
  leaseCheckIntervalMs: Number(values['lease-check-ms'] ?? (programCount <= 200 ? 100 : 1000)),
  ...(values['loop-probe'] === undefined ? {} : { loopProbeDir: path.resolve(values['loop-probe']) }),
};
// The workers' probe writes into it from their first run: a missing directory fails every run.
if (setup.loopProbeDir !== undefined) mkdirSync(setup.loopProbeDir, { recursive: true });
const ticksPerPhase = Number(values.ticks ?? (quick ? 2 : 3));
const INTERVAL_MS = 60_000;
const WARM_UP_TICKS = 2;
const SHARE_AFFLICTED = 0.1;
const AFFLICTIONS = ['stall', 'error-500', 'flood', 'oversize-pages', 'revoked'] as const;
type Affliction = (typeof AFFLICTIONS)[number];
/** The kinds the misbehaving programs take in turn: all of them, or `--afflictions` (to tell their effects apart). */
const afflictionsUsed: readonly Affliction[] = (values.afflictions ?? AFFLICTIONS.join(','))
  .split(',')
  .map((name) => {
    if (!(AFFLICTIONS as readonly string[]).includes(name))
      throw new Error(`--afflictions: ${name} is not one of ${AFFLICTIONS.join(', ')}`);
    return name as Affliction;
  });

const log = (line: string) =>
  process.stderr.write(`[bench:fleet ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const round = (value: number, digits = 0) => Math.round(value * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Machine-wide CPU (all processes) from /proc/stat, in ms. */
function machineCpu(): { busyMs: number; totalMs: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3]! + fields[4]!;
  const total = fields.reduce((sum, value) => sum + value, 0);
  return { busyMs: (total - idle) * 10, totalMs: total * 10 };
}

function processCpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

interface PhaseRecord {
  readonly name: string;
  readonly from: number;
  readonly to: number;
  readonly minutes: number;
  readonly workers: readonly WorkerUsage[];
  readonly calls: CallCounts;
  readonly output: OutputCost;
  readonly bank: unknown;
  readonly bus: unknown;
  readonly machine: {
    readonly loadAverage: readonly number[];
    /** Cores busy on average, all processes; and those of the bench's own (workers, bank, bus, moto, this). */
    readonly busyCores: number;
    readonly benchCores: number;
    readonly otherCores: number;
    /** Cores used by each service process the bench stands in with (moto, the bank, the bus, this one). */
    readonly serviceCores: Readonly<Record<string, number>>;
  };
  readonly runs: readonly RunOutcome[];
}

/** Runs the fleet's schedule, phase after phase, and keeps what each phase used. */
class Schedule {
  readonly records: PhaseRecord[] = [];
  #phaseStart = Date.now();
  #machine = machineCpu();
  #benchCpu = 0;
  #serviceCpu: Record<string, number> = {};
  #outcomesSeen = 0;

  constructor(private readonly fleet: FleetDeployment) {
    this.#benchCpu = this.benchCpuMs();
    this.#serviceCpu = this.serviceCpuMs();
  }

  serviceCpuMs(): Record<string, number> {
    const own = process.cpuUsage();
    return {
      moto_secrets: processCpuMs(this.fleet.moto.pid),
      moto_dynamodb: processCpuMs(this.fleet.motoDynamoDb.pid),
      bank: processCpuMs(this.fleet.bank.pid),
      bus: processCpuMs(this.fleet.bus.pid),
      orchestrator: (own.user + own.system) / 1000,
    };
  }

  benchCpuMs(): number {
    const own = process.cpuUsage();
    const pids: Array<number | undefined> = [
      this.fleet.bank.pid,
      this.fleet.bus.pid,
      this.fleet.moto.pid,
      this.fleet.motoDynamoDb.pid,
    ];
    for (const shard of this.fleet.shards) pids.push(...shard.pids);
    let total = (own.user + own.system) / 1000;
    for (const pid of pids) total += processCpuMs(pid);
    return total;
  }

  /** `ticks` scheduled runs of every worker, a minute apart; `during(tick)` is called after each fires. */
  async ticks(ticks: number, during?: (tick: number) => Promise<void>): Promise<void> {
    for (let tick = 0; tick < ticks; tick += 1) {
      const due = Date.now() + INTERVAL_MS;
      this.fleet.tick();
      await during?.(tick);
      await sleep(due - Date.now());
    }
  }

  /** Ends the current phase: what the workers, the bank, the bus and moto used in it. */
  close(name: string): PhaseRecord {
    const to = Date.now();
    const machine = machineCpu();
    const benchCpu = this.benchCpuMs();
    const wallMs = machine.totalMs - this.#machine.totalMs;
    const cores = os.availableParallelism();
    const busyCores = ((machine.busyMs - this.#machine.busyMs) / Math.max(1, wallMs)) * cores;
    const benchCores = (benchCpu - this.#benchCpu) / Math.max(1, to - this.#phaseStart);
    const serviceCpu = this.serviceCpuMs();
    const serviceCores = Object.fromEntries(
      Object.entries(serviceCpu).map(([name, ms]) => [
        name,
        round((ms - (this.#serviceCpu[name] ?? 0)) / Math.max(1, to - this.#phaseStart), 3),
      ]),
    );
    const record: PhaseRecord = {
      name,
      from: this.#phaseStart,
      to,
      minutes: (to - this.#phaseStart) / 60_000,
      workers: this.fleet.sampler.take(),
      calls: this.fleet.counter.take(),
      output: outputCost(this.fleet.shards.map((shard) => shard.takeOutput()).join('\n')),
      bank: undefined,
      bus: undefined,
      machine: {
        loadAverage: os.loadavg().map((value) => round(value, 1)),
        busyCores: round(busyCores, 2),
        benchCores: round(benchCores, 2),
        otherCores: round(Math.max(0, busyCores - benchCores), 2),
        serviceCores,
      },
      runs: this.fleet.outcomes.slice(this.#outcomesSeen),
    };
    this.#outcomesSeen = this.fleet.outcomes.length;
    this.#phaseStart = to;
    this.#machine = machine;
    this.#benchCpu = benchCpu;
    this.#serviceCpu = serviceCpu;
    this.records.push(record);
    return record;
  }

  async closeWithChildren(name: string): Promise<PhaseRecord> {
    const [bank, bus] = await Promise.all([this.fleet.bank.call('usage'), this.fleet.bus.call('usage')]);
    const record = { ...this.close(name), bank, bus };
    this.records[this.records.length - 1] = record;
    return record;
  }
}

/** 10 % of the programs of each of `workers` (at least one each), drawn with `seed`. */
function afflicted(fleet: FleetDeployment, workers: readonly number[], seed: number): string[] {
  const random = createRandom(seed);
  return workers.flatMap((worker) => {
    const own = fleet.programs
      .filter((program) => program.worker === worker)
      .map((program) => program.programId);
    const count = Math.max(1, Math.round(own.length * SHARE_AFFLICTED));
    for (let index = own.length - 1; index > 0; index -= 1) {
      const other = Math.floor(random.next() * (index + 1));
      [own[index], own[other]] = [own[other]!, own[index]!];
    }
    return own.slice(0, count);
  });
}

/** Makes the bank misbehave for `programIds`, the kinds taken in turn; returns who got what. */
async function afflict(
  fleet: FleetDeployment,
  programIds: readonly string[],
): Promise<Record<string, Affliction>> {
  const kinds: Record<string, Affliction> = {};
  const floods: Record<string, number> = {};
  const oversize: string[] = [];
  for (const [index, programId] of programIds.entries()) {
    const kind = afflictionsUsed[index % afflictionsUsed.length]!;
    kinds[programId] = kind;
    const misbehaviour: ProgramMisbehaviour | undefined =
      kind === 'stall'
        ? { kind: 'stall' }
        : kind === 'error-500'
          ? { kind: 'error', status: 500 }
          : kind === 'revoked'
            ? { kind: 'revoked' }
            : kind === 'oversize-pages'
              ? { kind: 'oversize-pages', pageEvents: Number(values['oversize-page-events']) }
              : undefined;
    if (misbehaviour !== undefined) await fleet.bank.call('misbehave', { programId, misbehaviour });
    if (kind === 'flood') floods[programId] = Number(values['flood-rate']);
    if (kind === 'oversize-pages') oversize.push(programId);
  }
  await fleet.bank.call('setRates', floods);
  await fleet.bank.call('backlog', { programIds: oversize, count: Number(values['oversize-backlog']) });
  return kinds;
}

async function heal(fleet: FleetDeployment, programIds: readonly string[]): Promise<void> {
  for (const programId of programIds) await fleet.bank.call('misbehave', { programId, misbehaviour: null });
  await fleet.bank.call(
    'setRates',
    Object.fromEntries(programIds.map((programId) => [programId, setup.eventsPerSecond])),
  );
}

function groupOf(
  fleet: FleetDeployment,
  workers: readonly number[],
  except: ReadonlySet<string> = new Set(),
) {
  return new Set(
    fleet.programs
      .filter((program) => workers.includes(program.worker) && !except.has(program.programId))
      .map((program) => program.programId),
  );
}

/** Two groups' lags over the same window, and the ratio of their p99s (and p50s). */
function sideBySide(
  lags: Readonly<Record<string, readonly number[]>>,
  affected: ReadonlySet<string>,
  control: ReadonlySet<string>,
) {
  const affectedFigures = lagFigures(lags, affected);
  const controlFigures = lagFigures(lags, control);
  return {
    others_in_affected_workers: affectedFigures,
    control_workers: controlFigures,
    p99_ratio: ratio(affectedFigures.pooled.p99, controlFigures.pooled.p99),
    p50_ratio: ratio(affectedFigures.pooled.p50, controlFigures.pooled.p50),
    median_program_p99_ratio: ratio(
      affectedFigures.perProgram.medianP99,
      controlFigures.perProgram.medianP99,
    ),
  };
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  const { FleetDeployment } = await import('./support/fleet-deployment.ts');
  const results: Record<string, unknown> = {
    at: new Date().toISOString(),
    machine: {
      cores: os.availableParallelism(),
      memory_gib: round(os.totalmem() / 1024 ** 3, 1),
      node_bench: process.version,
      load_average_at_start: os.loadavg().map((value) => round(value, 1)),
    },
    setup: { ...setup, ticksPerPhase, intervalMs: INTERVAL_MS, quick, afflictions: afflictionsUsed },
  };
  const problems: string[] = [];
  const fleetPhases = [...phases].filter((name) => name !== 'synth');
  if (fleetPhases.length > 0) {
    const fleet = await FleetDeployment.start(setup, log);
    try {
      await runFleet(fleet, results, problems);
    } finally {
      await fleet.close();
    }
  }
  if (phases.has('synth')) {
    // The app synthesizes the built construct library and its assets: build them as they are now.
    const { buildConstructLibrary, buildHandlerAsset, buildProgramSeederAsset } = await import(
      '../scripts/build/artifacts.ts'
    );
    await Promise.all([buildHandlerAsset(), buildProgramSeederAsset(), buildConstructLibrary()]);
    const counts = (values.synth ?? '').split(',').map(Number);
    const synths: SynthFigures[] = [];
    if (FLEET_VARIANT === undefined) problems.push('synth: the construct offers no fleet variant yet');
    for (const variant of [PROPS_VARIANT, FLEET_VARIANT]) {
      if (variant === undefined) continue;
      for (const count of counts) {
        log(`cdk synth with ${count} programs: ${variant.name}`);
        const figures = synthFigures(variant, count);
        log(
          figures.refused === undefined
            ? `  ${figures.resources} resources, ${figures.outputs} outputs, ${figures.templateBytes} bytes, ${figures.seconds} s`
            : `  refused: ${figures.refused}`,
        );
        if (
          variant === FLEET_VARIANT &&
          (figures.refused !== undefined || (figures.overQuotas ?? []).length > 0)
        )
          problems.push(
            `synth of ${count} programs the fleet's way: ${figures.refused ?? figures.overQuotas?.join(', ')}`,
          );
        synths.push(figures);
      }
    }
    results.synth = synths;
  }
  results.problems = problems;
  results.duration_minutes = round((Date.now() - startedAt) / 60_000, 1);
  const json = `${JSON.stringify(results, null, 2)}\n`;
  const day = new Date().toISOString().slice(0, 10);
  // A bare name goes to bench/results; a path is taken as it is.
  const out = path.resolve(import.meta.dirname, 'results', values.out ?? `fleet-${day}.json`);
  writeFileSync(out, json);
  log(`results in ${path.relative(process.cwd(), out)}`);
  if (problems.length > 0) {
    log(`problems:\n  ${problems.join('\n  ')}`);
    process.exitCode = 1;
  }
}

async function runFleet(fleet: FleetDeployment, results: Record<string, unknown>, problems: string[]) {
  const workers = fleet.shards.map((shard) => shard.worker);
  const groupA = workers.filter((worker) => worker % 2 === 0);
  const groupB = workers.filter((worker) => worker % 2 === 1);
  results.workers = fleet.shards.map((shard) => ({ worker: shard.worker, programs: shard.programs }));
  results.artifact = {
    timeout_s: fleet.artifact.timeoutSeconds,
    lease_wait_ms: fleet.environment.LEASE_WAIT_MS,
    poll_limit: fleet.environment.POLL_LIMIT ?? 100,
  };
  const schedule = new Schedule(fleet);
  const windows: Array<{
    name: string;
    from: number;
    to: number;
    compare?: { affected: Set<string>; control: Set<string> };
  }> = [];

  log(`warm-up: ${WARM_UP_TICKS} runs of ${setup.workers} workers over ${setup.programs} programs`);
  await fleet.bank.call('pauseTraffic', false);
  await schedule.ticks(WARM_UP_TICKS);
  await schedule.closeWithChildren('warm-up');

  if (phases.has('caught-up')) {
    log(`caught-up: ${ticksPerPhase} runs, ${setup.eventsPerSecond} events/s per program`);
    await schedule.ticks(ticksPerPhase);
    const record = await schedule.closeWithChildren('caught-up');
    windows.push({
      name: 'caught-up',
      from: record.from,
      to: record.to,
      compare: { affected: groupOf(fleet, groupB), control: groupOf(fleet, groupA) },
    });
  }

  let backlog: { ranges: Record<string, { from: number; to: number }>; programs: string[] } | undefined;
  if (phases.has('backlog')) {
    const programs = afflicted(fleet, groupB, setup.seed + 1);
    log(`backlog: ${values.backlog} events on ${programs.length} programs of workers ${groupB.join(', ')}`);
    const ranges = await fleet.bank.call('backlog', { programIds: programs, count: Number(values.backlog) });
    backlog = { ranges, programs };
    await schedule.ticks(ticksPerPhase);
    const record = await schedule.closeWithChildren('backlog');
    windows.push({
      name: 'backlog',
      from: record.from,
      to: record.to,
      compare: { affected: groupOf(fleet, groupB, new Set(programs)), control: groupOf(fleet, groupA) },
    });
  }

  const misbehaving: Array<{ half: string; kinds: Record<string, Affliction> }> = [];
  if (phases.has('misbehaving')) {
    for (const [half, affectedWorkers, controlWorkers] of [
      ['B misbehaving, A control', groupB, groupA],
      ['A misbehaving, B control', groupA, groupB],
    ] as const) {
      const programs = afflicted(fleet, affectedWorkers, setup.seed + 2 + misbehaving.length);
      log(`misbehaving (${half}): ${programs.length} programs`);
      const kinds = await afflict(fleet, programs);
      misbehaving.push({ half, kinds });
      await schedule.ticks(ticksPerPhase);
      const record = await schedule.closeWithChildren(`misbehaving: ${half}`);
      windows.push({
        name: `misbehaving: ${half}`,
        from: record.from,
        to: record.to,
        compare: {
          affected: groupOf(fleet, affectedWorkers, new Set(programs)),
          control: groupOf(fleet, controlWorkers),
        },
      });
      await heal(fleet, programs);
      log('recovery: 1 run, not measured');
      await schedule.ticks(1);
      await schedule.closeWithChildren(`recovery after ${half}`);
    }
  }

  let kill: Record<string, unknown> | undefined;
  if (phases.has('kill')) {
    const worker = groupA[0] ?? 0;
    const programs = fleet.programs
      .filter((program) => program.worker === worker)
      .slice(0, 5)
      .map((program) => program.programId);
    log(
      `kill: a backlog of ${values.backlog} on ${programs.length} programs of worker ${worker}, its process killed mid-drain`,
    );
    let killed: { at: number; pids: number[]; deliveredBefore: number } | undefined;
    await schedule.ticks(3, async (tick) => {
      if (tick !== 0) return;
      await sleep(15_000);
      const ranges = await fleet.bank.call('backlog', {
        programIds: programs,
        count: Number(values.backlog),
      });
      const total = programs.length * Number(values.backlog);
      // Mid-drain: once a fifth of the backlog is on the bus.
      for (let waited = 0; waited < 40_000; waited += 100) {
        const drains = await fleet.bus.call('drains', ranges);
        const delivered = Object.values(drains).reduce((sum, drain) => sum + drain.accepted, 0);
        if (delivered >= total / 5) {
          const pids: number[] = [];
          for (const container of fleet.shards[worker]!.containers) {
            if (!container.invocationInFlight) continue;
            pids.push(container.pid!);
            await container.kill('SIGKILL');
          }
          killed = { at: Date.now(), pids, deliveredBefore: delivered };
          log(`killed ${pids.join(', ')} with ${delivered} of ${total} backlog events on the bus`);
          return;
        }
        await sleep(100);
      }
    });
    const record = await schedule.closeWithChildren('kill');
    kill = { worker, programs, killed, window: { from: record.from, to: record.to } };
    if (killed === undefined)
      problems.push('kill: the backlog never reached a fifth on the bus; nothing was killed');
  }

  log('final: every program behaving, until every event is on the bus (at most 4 runs)');
  let last = await fleet.bank.call('lastSequences');
  await fleet.bank.call('pauseTraffic', true);
  for (let tick = 0; tick < 4; tick += 1) {
    last = await fleet.bank.call('lastSequences');
    const delivery = await fleet.bus.call('delivery', last);
    if (Object.values(delivery).every((program) => program.missing === 0)) break;
    await schedule.ticks(1);
  }
  await fleet.settled();
  await schedule.closeWithChildren('final');
  const delivery = await fleet.bus.call('delivery', await fleet.bank.call('lastSequences'));

  // Figures.
  const pollLimit = Number(fleet.environment.POLL_LIMIT ?? 100);
  const duplicateBound = 500 + 4 * pollLimit;
  const missing = Object.entries(delivery).filter(([, program]) => program.missing > 0);
  for (const [programId, program] of missing.slice(0, 10)) {
    problems.push(
      `program ${programId}: ${program.missing} events never delivered (first ${program.firstMissing.join(', ')})`,
    );
  }
  const overBound = Object.entries(delivery).filter(([, program]) => program.duplicates > duplicateBound);
  for (const [programId, program] of overBound) {
    problems.push(
      `program ${programId}: ${program.duplicates} duplicates, over the bound of ${duplicateBound}`,
    );
  }
  const duplicates = Object.values(delivery).map((program) => program.duplicates);
  results.delivery = {
    programs: Object.keys(delivery).length,
    events: Object.values(last).reduce((sum, value) => sum + value, 0),
    programs_missing_events: missing.length,
    events_missing: missing.reduce((sum, [, program]) => sum + program.missing, 0),
    duplicate_bound_per_cut: duplicateBound,
    programs_with_duplicates: duplicates.filter((count) => count > 0).length,
    duplicates_total: duplicates.reduce((sum, count) => sum + count, 0),
    duplicates_max_per_program: Math.max(0, ...duplicates),
  };
  if (kill !== undefined) {
    const killedPrograms = kill.programs as string[];
    kill.duplicates = Object.fromEntries(
      killedPrograms.map((programId) => [programId, delivery[programId]?.duplicates ?? 0]),
    );
    kill.missing = killedPrograms.reduce((sum, programId) => sum + (delivery[programId]?.missing ?? 0), 0);
    const window = kill.window as { from: number; to: number };
    const shardLags = await fleet.bus.call('lags', window);
    kill.shard_lag = lagFigures(shardLags, groupOf(fleet, [kill.worker as number], new Set(killedPrograms)));
    results.kill = kill;
  }

  const phasesOut: Record<string, unknown>[] = [];
  const misbehavingLags: Array<{
    lags: Record<string, number[]>;
    affected: Set<string>;
    control: Set<string>;
  }> = [];
  for (const window of windows) {
    const lags = await fleet.bus.call('lags', window);
    if (window.name.startsWith('misbehaving') && window.compare !== undefined)
      misbehavingLags.push({ lags, ...window.compare });
    const slowest =
      setup.loopProbeDir === undefined || window.compare === undefined
        ? {}
        : { slowest_events: slowestEvents(await fleet.bus.call('timedLags', window), window) };
    const all = lagFigures(lags);
    const record = schedule.records.find((candidate) => candidate.name === window.name)!;
    phasesOut.push({
      name: window.name,
      from: window.from,
      to: window.to,
      minutes: round(record.minutes, 2),
      lag_all_programs: all,
      ...(window.compare === undefined
        ? {}
        : { side_by_side: sideBySide(lags, window.compare.affected, window.compare.control) }),
      ...slowest,
      ...usageFigures(record),
    });
  }
  results.phases = phasesOut;
  if (misbehavingLags.length === 2) results.misbehaving_both_halves = bothHalves(misbehavingLags);
  results.other_phases = schedule.records
    .filter((record) => !windows.some((window) => window.name === record.name))
    .map((record) => ({ name: record.name, minutes: round(record.minutes, 2), ...usageFigures(record) }));
  if (backlog !== undefined) {
    const drains = await fleet.bus.call('drains', backlog.ranges);
    const byWorker: Record<string, DrainFigures> = {};
    for (const worker of groupB) {
      const own = Object.fromEntries(
        Object.entries(drains).filter(
          ([programId]) =>
            fleet.programs.find((program) => program.programId === programId)?.worker === worker,
        ),
      );
      byWorker[worker] = drainFigures(own, Number(values.backlog));
    }
    results.backlog_drain = { all: drainFigures(drains, Number(values.backlog)), by_worker: byWorker };
  }
  results.misbehaving = misbehaving.map(({ half, kinds }) => ({
    half,
    programs: Object.keys(kinds).length,
    kinds: Object.fromEntries(
      AFFLICTIONS.map((kind) => [kind, Object.values(kinds).filter((value) => value === kind).length]),
    ),
  }));
  const caughtUp = schedule.records.find((record) => record.name === 'caught-up');
  if (caughtUp !== undefined) {
    const emptyWorkerPeakRssMiB = await fleet.emptyWorkerPeakRssMiB(10_000);
    results.memory = memoryFigures(caughtUp, schedule.records, emptyWorkerPeakRssMiB);
    results.cost_inputs = costInputs(caughtUp, fleet);
  }
  results.runs = runFigures(fleet.outcomes);
  if (setup.loopProbeDir !== undefined)
    results.loop_probe = {
      dir: setup.loopProbeDir,
      pids: Object.fromEntries(fleet.shards.map((shard) => [shard.worker, shard.pids])),
    };
}

/**
 * The two misbehaving windows together: the others in the workers with misbehaving programs (B's
 * in the first, A's in the second) against the control workers (A's, then B's). Each group of
 * workers is on both sides once, so what one group's workers differ by on their own (their place
 * in the schedule's stagger, say: the caught-up window shows it) cancels out, and each side has
 * twice the events.
 */
function bothHalves(
  halves: ReadonlyArray<{
    lags: Readonly<Record<string, number[]>>;
    affected: ReadonlySet<string>;
    control: ReadonlySet<string>;
  }>,
) {
  const merged: Record<string, number[]> = {};
  const affected = new Set<string>();
  const control = new Set<string>();
  halves.forEach((half, index) => {
    for (const [programId, lags] of Object.entries(half.lags)) {
      const key = `${programId}#${index}`;
      merged[key] = lags;
      if (half.affected.has(programId)) affected.add(key);
      if (half.control.has(programId)) control.add(key);
    }
  });
  return sideBySide(merged, affected, control);
}

/**
 * The slowest 2 % of each group's events in a window, as [seconds into the window, lag ms,
 * program]: when a group's tail happened, to set beside the workers' event-loop timeline.
 */
function slowestEvents(
  timed: Readonly<Record<string, ReadonlyArray<readonly [number, number]>>>,
  window: { from: number; compare?: { affected: Set<string>; control: Set<string> } },
) {
  const of = (group: ReadonlySet<string>) => {
    const events = Object.entries(timed)
      .filter(([programId]) => group.has(programId))
      .flatMap(([programId, lags]) =>
        lags.map(([createdAt, lag]) => [round((createdAt - window.from) / 1000, 1), lag, programId] as const),
      )
      .sort((a, b) => b[1] - a[1]);
    return events.slice(0, Math.ceil(events.length * 0.02));
  };
  return { affected: of(window.compare!.affected), control: of(window.compare!.control) };
}

function usageFigures(record: PhaseRecord) {
  const cpuPerWorker = record.workers.map((worker) => worker.cpuMs / (record.minutes * 60_000));
  return {
    machine: record.machine,
    workers_cpu_cores: {
      mean: round(cpuPerWorker.reduce((sum, value) => sum + value, 0) / Math.max(1, cpuPerWorker.length), 3),
      max: round(Math.max(0, ...cpuPerWorker), 3),
      by_worker: Object.fromEntries(
        record.workers.map((worker, index) => [worker.worker, round(cpuPerWorker[index]!, 3)]),
      ),
    },
    workers_peak_rss_mib: Object.fromEntries(
      record.workers.map((worker) => [worker.worker, worker.peakRssMiB]),
    ),
    bank: record.bank,
    bus: record.bus,
    aws_calls: record.calls.byOperation,
    aws_latency_ms: record.calls.latencyMs,
    runs: {
      count: record.runs.length,
      by_outcome: countBy(record.runs.map((run) => run.kind)),
      program_outcomes: sumPrograms(record.runs),
      // Why programs failed: the codes of the failed among each run's worst (a sample of at most 10 a run).
      failed_error_codes: countBy(
        record.runs.flatMap((run) =>
          (run.summary?.worst ?? [])
            .filter((program) => program.outcome === 'failed')
            .map((program) => program.errorCode ?? 'none'),
        ),
      ),
    },
  };
}

function countBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

function sumPrograms(runs: readonly RunOutcome[]): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const run of runs) {
    for (const [key, value] of Object.entries(run.summary?.programs ?? {})) {
      if (typeof value === 'number') totals[key] = (totals[key] ?? 0) + value;
    }
  }
  return totals;
}

function memoryFigures(
  caughtUp: PhaseRecord,
  records: readonly PhaseRecord[],
  emptyWorkerPeakRssMiB: number,
) {
  const perProgram = caughtUp.workers.map(
    (worker) => (worker.peakRssMiB - emptyWorkerPeakRssMiB) / worker.programs,
  );
  return {
    empty_worker_peak_rss_mib: emptyWorkerPeakRssMiB,
    caught_up_peak_rss_mib: {
      max: Math.max(...caughtUp.workers.map((worker) => worker.peakRssMiB)),
      by_worker: Object.fromEntries(caughtUp.workers.map((worker) => [worker.worker, worker.peakRssMiB])),
    },
    per_program_mib: {
      mean: round(perProgram.reduce((sum, value) => sum + value, 0) / perProgram.length, 3),
      max: round(Math.max(...perProgram), 3),
    },
    peak_rss_mib_by_phase: Object.fromEntries(
      records.map((record) => [
        record.name,
        Math.max(0, ...record.workers.map((worker) => worker.peakRssMiB)),
      ]),
    ),
  };
}

/** What fleet-obs's cost table needs, from the caught-up phase (the steady state of a month). */
function costInputs(caughtUp: PhaseRecord, fleet: FleetDeployment) {
  const minutes = caughtUp.minutes;
  const runs = caughtUp.runs.filter((run) => run.billedMs !== undefined);
  const meanBilledMs = runs.reduce((sum, run) => sum + run.billedMs!, 0) / Math.max(1, runs.length);
  const programs = setup.programs;
  const byTable = caughtUp.calls.byTable;
  const tableCalls = (prefix: string) =>
    Object.fromEntries(
      Object.entries(byTable)
        .filter(([key]) => key.startsWith(prefix))
        .map(([key, count]) => [key.slice(prefix.length + 1), perMonth(count / programs, minutes)]),
    );
  const ops = caughtUp.calls.byOperation;
  const secretCalls = Object.entries(ops)
    .filter(([operation]) => operation.startsWith('secretsmanager.'))
    .reduce((sum, [, count]) => sum + count, 0);
  const series = caughtUp.output.series.size;
  const perProgramSeries = Object.values(caughtUp.output.seriesByMetric).reduce(
    (sum, group) => sum + group.perProgram,
    0,
  );
  return {
    basis: `the caught-up phase: ${round(minutes, 1)} minutes, ${programs} programs at ${setup.eventsPerSecond} events/s each, ${setup.workers} workers at ${setup.memoryMb} MB`,
    worker: {
      memory_mb: setup.memoryMb,
      invocations_per_month: MINUTES_PER_MONTH,
      mean_billed_duration_s: round(meanBilledMs / 1000, 1),
      gb_seconds_per_month: round((setup.memoryMb / 1024) * (meanBilledMs / 1000) * MINUTES_PER_MONTH, 0),
      programs_per_worker: round(programs / setup.workers, 1),
    },
    per_program_month: {
      dynamodb_checkpoint_table: tableCalls('fleet-bench-checkpoints'),
      dynamodb_programs_table: tableCalls('fleet-bench-programs'),
      secrets_manager_calls: perMonth(secretCalls / programs, minutes),
      events: round(setup.eventsPerSecond * 60 * MINUTES_PER_MONTH, 0),
      emf_bytes: perMonth(caughtUp.output.emfBytes / programs, minutes),
      log_bytes: perMonth(caughtUp.output.logBytes / programs, minutes),
      metric_datapoints: perMonth(caughtUp.output.datapoints / programs, minutes),
    },
    metric_series: {
      seen_in_phase: series,
      with_program_dimension: perProgramSeries,
      per_program: round(perProgramSeries / programs, 2),
      deployment_wide: series - perProgramSeries,
      by_metric: caughtUp.output.seriesByMetric,
    },
    note:
      'Requests are counted at moto (behind the counting proxy); DynamoDB read and write units depend on item sizes, ' +
      'which the cost table applies. A metric series costs for the hours it is sent; those seen here were sent ' +
      `within ${round(minutes, 1)} minutes. Worker count: ${fleet.shards.length}.`,
  };
}

function runFigures(outcomes: readonly RunOutcome[]) {
  const billed = outcomes.filter((run) => run.billedMs !== undefined).map((run) => run.billedMs!);
  return {
    count: outcomes.length,
    by_outcome: countBy(outcomes.map((run) => run.kind)),
    cold_starts: outcomes.filter((run) => run.coldStart).length,
    billed_ms: {
      mean: round(billed.reduce((sum, value) => sum + value, 0) / Math.max(1, billed.length)),
      max: Math.max(0, ...billed),
    },
    errors: outcomes
      .filter((run) => run.error !== undefined)
      .slice(0, 10)
      .map((run) => `worker ${run.worker} tick ${run.tick}: ${run.error}`),
  };
}

await main();
