/**
 * A fleet deployment on one machine, for `bench/fleet.ts`: the shipped bundle as `workerCount`
 * shard workers, each scheduled every interval with `{"worker": i}` under the Lambda runtime
 * harness (two execution environments per worker, alternating, as Lambda runs overlapping runs),
 * each environment's process held to Lambda's CPU share of the worker's memory by a cgroup; the
 * programs as records in a programs table with their credentials under the deployment's secrets
 * prefix, all in moto (behind a proxy counting the calls); the bank (`fleet-bank.ts`) and the bus
 * (`fleet-bus.ts`) in processes of their own.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { DynamoDbProgramRegistry } from '../../functions/adapters/aws/dynamodb-program-registry.ts';
import { assignedWorker } from '../../functions/core/fleet/assignment.ts';
import type { SimulatorProgram } from '../../functions/simulator/banking-simulator.ts';
import {
  buildConstructLibrary,
  buildHandlerAsset,
  buildProgramSeederAsset,
} from '../../scripts/build/artifacts.ts';
import { type Invocation, LambdaContainer } from '../../test/support/lambda-runtime/lambda-container.ts';
import { type MotoServer, startMoto } from '../../test/support/moto-server.ts';
import { type PollerArtifact, synthPollerArtifact } from '../../test/support/poller-artifact.ts';
import { AwsCallCounter } from './aws-call-counter.ts';
import { ChildRpc } from './child-rpc.ts';
import { CpuShare } from './cpu-share.ts';
import type { BankMethods } from './fleet-bank.ts';
import type { BusMethods } from './fleet-bus.ts';
import { programNames } from './fleet-synth.ts';

export interface FleetSetup {
  readonly programs: number;
  readonly workers: number;
  /** Each worker's memory: its heap, and its CPU share (memory ÷ 1,769 MB of a core). */
  readonly memoryMb: number;
  /** `MAX_CONCURRENT_PROGRAMS`: at least the programs of a worker, or they take turns. */
  readonly maxConcurrentPrograms: number;
  readonly seed: number;
  /** Mean events created per second per program. */
  readonly eventsPerSecond: number;
  /** The bank's longest hold of an empty poll. */
  readonly maxPollHoldMs: number;
  /** PutEvents answers after this long. */
  readonly busLatencyMs: number;
  /** Puts each environment's process in a cgroup with Lambda's CPU share of `memoryMb`. */
  readonly cpuShare: boolean;
  /**
   * Time between two workers' schedules firing: moto serves a few hundred requests a second, so
   * the fleet's runs cannot all start in the same second as EventBridge Scheduler would start
   * them (DynamoDB and Secrets Manager take such bursts). 0: all at once.
   */
  readonly staggerMs: number;
  /** `LEASE_CHECK_INTERVAL_MS`: how often a waiting run reads a lease (default 100). */
  readonly leaseCheckIntervalMs: number;
  /**
   * Where each worker process writes its event loop's utilization and delay once a second
   * (`loop-probe-hook.mjs`). @default none
   */
  readonly loopProbeDir?: string;
}

/** One program of the fleet: its record's name, its bank's id, the worker rendezvous hashing gives it. */
export interface FleetProgram {
  readonly name: string;
  readonly programId: string;
  readonly worker: number;
}

const AWS_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_DEFAULT_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
};
export const SECRETS_PREFIX = 'banking-events-poller/FleetBench/';
const CHECKPOINT_TABLE = 'fleet-bench-checkpoints';
const PROGRAMS_TABLE = 'fleet-bench-programs';
const EMPTY_PROGRAMS_TABLE = 'fleet-bench-no-programs';

/** What one environment's process used: its CPU time and peak RSS, read from /proc. */
interface ProcessReading {
  readonly cpuMs: number;
  readonly rssMiB: number;
  readonly peakRssMiB: number;
}

function readProcess(pid: number): ProcessReading | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? 0);
    return {
      cpuMs: (Number(fields[11]) + Number(fields[12])) * 10,
      rssMiB: kib('VmRSS') / 1024,
      peakRssMiB: kib('VmHWM') / 1024,
    };
  } catch {
    return undefined;
  }
}

/** Resets a process's peak RSS (VmHWM) to its current RSS: `5` in clear_refs (Linux ≥ 4.0, as root). */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** What a worker's run answered (the worker summary), as far as the bench reads it. */
export interface RunOutcome {
  readonly worker: number;
  readonly tick: number;
  readonly kind: Invocation['outcome']['kind'];
  readonly coldStart: boolean;
  /** From the invoke to the answer: what Lambda bills. */
  readonly billedMs?: number;
  readonly summary?: {
    readonly programs?: Readonly<Record<string, number>>;
    readonly durationMs?: number;
    /** The run's worst programs (at most 10): those that failed carry their error code. */
    readonly worst?: readonly { readonly outcome?: string; readonly errorCode?: string }[];
  };
  readonly error?: string;
}

/** CPU and peak memory of one worker over a phase. */
export interface WorkerUsage {
  readonly worker: number;
  readonly programs: number;
  readonly cpuMs: number;
  /** Highest peak RSS of its environments' processes. */
  readonly peakRssMiB: number;
}

/**
 * Where the bench's processes get their CPU on a machine others share: all of them in one group
 * capped at `BENCH_CORES` (the others keep the rest) and weighted above an ordinary process, so
 * that a busy machine does not starve them; in it, each execution environment's process in a
 * group of its own with Lambda's share of the worker's memory as its quota, and the services
 * (moto, the bank, the bus, this process and its proxies), which run elsewhere in reality, in
 * groups weighted above the workers, so that they are not what the workers wait for.
 */
class FleetCpu {
  readonly #parent: CpuShare | undefined;
  readonly #groups: CpuShare[] = [];
  readonly problems: string[] = [];
  readonly #name = `fleet-bench-${process.pid}`;

  constructor(enabled: boolean) {
    if (!enabled) return;
    const parent = CpuShare.capped(BENCH_CORES, this.#name, { shares: 16 * 1024 });
    if (parent.available) this.#parent = parent.share;
    else this.problems.push(parent.reason);
  }

  /** The quota of a worker's environment, or undefined where no group can be made. */
  environment(memoryMb: number, name: string): CpuShare | undefined {
    if (this.#parent === undefined) return undefined;
    const made = CpuShare.create(memoryMb, `${this.#name}/${name}`, { shares: 4 * 1024 });
    if (!made.available) {
      this.problems.push(made.reason);
      return undefined;
    }
    this.#groups.push(made.share);
    return made.share;
  }

  /** A service's process, weighted above the workers. */
  service(pid: number | undefined, name: string): void {
    if (this.#parent === undefined || pid === undefined) return;
    const made = CpuShare.weighted(`${this.#name}/${name}`, 8 * 1024);
    if (!made.available) {
      this.problems.push(made.reason);
      return;
    }
    made.share.add(pid);
    this.#groups.push(made.share);
  }

  dispose(): void {
    for (const group of this.#groups.splice(0)) group.dispose();
    this.#parent?.dispose();
  }
}

/** What the bench's processes may take of the machine together: the others keep the rest. */
const BENCH_CORES = 1.5;

/** One shard: a worker's two alternating execution environments. */
class Shard {
  readonly containers: LambdaContainer[];
  readonly #pids = new Set<number>();

  constructor(
    readonly worker: number,
    readonly programs: number,
    spec: {
      codeDir: string;
      environment: Record<string, string>;
      timeoutMs: number;
      memoryMb: number;
      nodeArgs?: readonly string[];
    },
    cpu: FleetCpu,
  ) {
    this.containers = [0, 1].map((slot) => {
      const share = cpu.environment(spec.memoryMb, `worker-${worker}-${slot}`);
      return new LambdaContainer({
        ...spec,
        functionName: 'banking-events-poller-fleet',
        onProcessStart: (pid) => {
          this.#pids.add(pid);
          share?.add(pid);
        },
      });
    });
  }

  readonly #outputTaken = [0, 0];

  /** What its environments wrote since the last call. */
  takeOutput(): string {
    return this.containers
      .map((container, slot) => {
        const output = container.output;
        const taken = output.slice(this.#outputTaken[slot]);
        this.#outputTaken[slot] = output.length;
        return taken;
      })
      .join('');
  }

  /** Every process any of its environments ran. */
  get pids(): readonly number[] {
    return [...this.#pids];
  }

  /** The environment for tick `tick`, and whether it is free (its last run over). */
  async invoke(tick: number): Promise<RunOutcome> {
    const container = this.containers[tick % 2]!;
    if (container.invocationInFlight) {
      return { worker: this.worker, tick, kind: 'error', coldStart: false, error: 'environment still busy' };
    }
    const started = performance.now();
    const invocation = await container.invoke({ worker: this.worker });
    const billedMs = Math.round(performance.now() - started);
    const { outcome } = invocation;
    return {
      worker: this.worker,
      tick,
      kind: outcome.kind,
      coldStart: invocation.coldStart,
      billedMs,
      ...(outcome.kind === 'response'
        ? { summary: outcome.result as RunOutcome['summary'] }
        : outcome.kind === 'error'
          ? { error: `${outcome.errorType}: ${outcome.errorMessage}`.slice(0, 500) }
          : {}),
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.containers.map((container) => container.close()));
  }
}

/** Per-process CPU readings at the start of the current phase, and peak RSS since. */
class ProcessSampler {
  readonly #start = new Map<number, number>();
  readonly #last = new Map<number, ProcessReading>();
  readonly #timer: NodeJS.Timeout;

  constructor(private readonly shards: readonly Shard[]) {
    this.#timer = setInterval(() => this.sample(), 2_000);
  }

  sample(): void {
    for (const shard of this.shards) {
      for (const pid of shard.pids) {
        const reading = readProcess(pid);
        if (reading === undefined) continue;
        if (!this.#start.has(pid)) this.#start.set(pid, 0);
        const previous = this.#last.get(pid);
        this.#last.set(pid, {
          ...reading,
          peakRssMiB: Math.max(reading.peakRssMiB, previous?.peakRssMiB ?? 0),
        });
      }
    }
  }

  /** Usage per worker since the last call (or the start), and a new phase from now. */
  take(): WorkerUsage[] {
    this.sample();
    const usage = this.shards.map((shard) => {
      let cpuMs = 0;
      let peakRssMiB = 0;
      for (const pid of shard.pids) {
        const last = this.#last.get(pid);
        if (last === undefined) continue;
        cpuMs += last.cpuMs - (this.#start.get(pid) ?? 0);
        peakRssMiB = Math.max(peakRssMiB, last.peakRssMiB);
      }
      return { worker: shard.worker, programs: shard.programs, cpuMs, peakRssMiB: round(peakRssMiB, 1) };
    });
    for (const [pid, last] of this.#last) {
      this.#start.set(pid, last.cpuMs);
      // Peaks start again from the current RSS (a process reset where the kernel allows it).
      this.#last.set(pid, { ...last, peakRssMiB: resetPeak(pid) ? last.rssMiB : last.peakRssMiB });
    }
    return usage;
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

const round = (value: number, digits = 0) => Math.round(value * 10 ** digits) / 10 ** digits;

export class FleetDeployment {
  readonly outcomes: RunOutcome[] = [];
  readonly #runs = new Set<Promise<void>>();
  #tick = 0;

  private constructor(
    readonly setup: FleetSetup,
    readonly artifact: PollerArtifact,
    readonly moto: MotoServer,
    readonly motoDynamoDb: MotoServer,
    readonly counter: AwsCallCounter,
    readonly bank: ChildRpc<BankMethods>,
    readonly bus: ChildRpc<BusMethods>,
    readonly programs: readonly FleetProgram[],
    readonly shards: readonly Shard[],
    readonly sampler: ProcessSampler,
    readonly workdir: string,
    readonly environment: Readonly<Record<string, string>>,
    readonly cpu: FleetCpu,
  ) {}

  static async start(setup: FleetSetup, log: (line: string) => void): Promise<FleetDeployment> {
    const workdir = mkdtempSync(path.join(tmpdir(), 'fleet-bench-'));
    log('building the handler and the construct library, synthesizing the app');
    await Promise.all([buildHandlerAsset(), buildProgramSeederAsset(), buildConstructLibrary()]);
    const artifact = synthPollerArtifact(path.join(workdir, 'cdk.out'));
    // Two motos, DynamoDB apart: each serves one request at a time, and the checkpoint writes
    // alone keep one busy (a conditional UpdateItem costs moto ~5 ms of CPU).
    const [moto, motoDynamoDb] = await Promise.all([startMoto(), startMoto()]);
    const counter = await AwsCallCounter.start(moto.endpoint, motoDynamoDb.endpoint);
    const config = {
      region: AWS_ENV.AWS_REGION,
      endpoint: counter.endpoint,
      credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
    };
    const dynamodb = new DynamoDBClient(config);
    const secrets = new SecretsManagerClient(config);
    const bank = ChildRpc.fork<BankMethods>(path.join(import.meta.dirname, 'fleet-bank.ts'));
    const bus = ChildRpc.fork<BusMethods>(path.join(import.meta.dirname, 'fleet-bus.ts'));
    const cpu = new FleetCpu(setup.cpuShare);
    cpu.service(moto.pid, 'moto');
    cpu.service(motoDynamoDb.pid, 'moto-dynamodb');
    cpu.service(bank.pid, 'bank');
    cpu.service(bus.pid, 'bus');
    // This process: the Runtime API of every environment and the proxy in front of moto.
    cpu.service(process.pid, 'orchestrator');
    try {
      const [{ url, programs: bankPrograms }, { endpoint: busEndpoint }] = await Promise.all([
        bank.call('start', {
          programs: setup.programs,
          seed: setup.seed,
          maxPollHoldMs: setup.maxPollHoldMs,
          eventsPerSecond: setup.eventsPerSecond,
          // No event before the workers run: the bench starts the traffic.
          paused: true,
        }),
        bus.call('start', { latencyMs: setup.busLatencyMs }),
      ]);
      for (const table of [CHECKPOINT_TABLE, PROGRAMS_TABLE, EMPTY_PROGRAMS_TABLE]) {
        await dynamodb.send(
          new CreateTableCommand({
            TableName: table,
            AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
            KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
            BillingMode: 'PAY_PER_REQUEST',
          }),
        );
      }
      const names = programNames(setup.programs);
      log(`creating ${names.length} secrets and program records in moto`);
      const registry = new DynamoDbProgramRegistry({ client: dynamodb, tableName: PROGRAMS_TABLE });
      await inBatches(names, 8, async (name, index) => {
        const program = bankPrograms[index] as SimulatorProgram;
        const secretId = `${SECRETS_PREFIX}${name}`;
        await secrets.send(
          new CreateSecretCommand({
            Name: secretId,
            SecretString: JSON.stringify({
              base_url: url,
              client_id: program.clientId,
              client_secret: program.clientSecret,
            }),
          }),
        );
        await registry.put({ name, secretId, state: 'active', owner: 'operator', settings: {} }, 'absent');
      });
      counter.take();
      const programs = names.map((name, index) => ({
        name,
        programId: bankPrograms[index]!.programId,
        worker: assignedWorker(name, setup.workers),
      }));
      const environment: Record<string, string> = {
        ...artifact.environment,
        ...AWS_ENV,
        AWS_ENDPOINT_URL: counter.endpoint,
        AWS_ENDPOINT_URL_EVENTBRIDGE: busEndpoint,
        EVENT_BUS_NAME: 'fleet-bench-bus',
        CHECKPOINT_TABLE,
        PROGRAMS_TABLE,
        WORKER_COUNT: String(setup.workers),
        MAX_CONCURRENT_PROGRAMS: String(setup.maxConcurrentPrograms),
        SECRETS_PREFIX,
        // The default program (a legacy `{}` invocation's) is one of the fleet's.
        DEFAULT_PROGRAM: names[0]!,
        SECRET_ID: `${SECRETS_PREFIX}${names[0]}`,
        LEASE_CHECK_INTERVAL_MS: String(setup.leaseCheckIntervalMs),
        POWERTOOLS_LOG_LEVEL: 'WARN',
      };
      const spec = {
        codeDir: artifact.codeDir,
        environment,
        timeoutMs: artifact.timeoutSeconds * 1000,
        memoryMb: setup.memoryMb,
        ...(setup.loopProbeDir === undefined
          ? {}
          : { nodeArgs: ['--import', path.join(import.meta.dirname, 'loop-probe-hook.mjs')] }),
      };
      if (setup.loopProbeDir !== undefined) environment.BENCH_LOOP_DIR = setup.loopProbeDir;
      const shards = Array.from(
        { length: setup.workers },
        (_, worker) =>
          new Shard(worker, programs.filter((program) => program.worker === worker).length, spec, cpu),
      );
      if (cpu.problems.length > 0) log(`no CPU share: ${cpu.problems[0]}`);
      return new FleetDeployment(
        setup,
        artifact,
        moto,
        motoDynamoDb,
        counter,
        bank,
        bus,
        programs,
        shards,
        new ProcessSampler(shards),
        workdir,
        environment,
        cpu,
      );
    } catch (error) {
      await Promise.allSettled([
        bank.close(),
        bus.close(),
        counter.close(),
        moto.stop(),
        motoDynamoDb.stop(),
      ]);
      cpu.dispose();
      throw error;
    } finally {
      dynamodb.destroy();
      secrets.destroy();
    }
  }

  /** The function's timeout: how long a run may last. */
  get timeoutMs(): number {
    return this.artifact.timeoutSeconds * 1000;
  }

  /**
   * Fires every worker's schedule once (the next environment of each), `staggerMs` apart; the runs
   * go on in the background.
   */
  tick(): number {
    const tick = this.#tick;
    this.#tick += 1;
    for (const shard of this.shards) {
      const run: Promise<void> = new Promise((resolve) =>
        setTimeout(resolve, shard.worker * this.setup.staggerMs),
      )
        .then(() => shard.invoke(tick))
        .then(
          (outcome) => {
            this.outcomes.push(outcome);
            this.#runs.delete(run);
          },
          (error: unknown) => {
            this.outcomes.push({
              worker: shard.worker,
              tick,
              kind: 'error',
              coldStart: false,
              error: String(error),
            });
            this.#runs.delete(run);
          },
        );
      this.#runs.add(run);
    }
    return tick;
  }

  /** Kills the process of `worker`'s environment that runs now (a crash mid-run); its pid, if one ran. */
  async killRunning(worker: number): Promise<number | undefined> {
    const shard = this.shards[worker]!;
    const running = shard.containers.find((container) => container.invocationInFlight);
    const pid = running?.pid;
    await running?.kill('SIGKILL');
    return pid;
  }

  /** Resolves once every run started so far has ended. */
  async settled(): Promise<void> {
    while (this.#runs.size > 0) await Promise.all([...this.#runs]);
  }

  /**
   * Peak RSS of one worker environment serving no program (a worker over an empty programs table),
   * warm, after two runs of `runMs`: what a worker costs before its programs.
   */
  async emptyWorkerPeakRssMiB(runMs: number): Promise<number> {
    const container = new LambdaContainer({
      codeDir: this.artifact.codeDir,
      environment: { ...this.environment, PROGRAMS_TABLE: EMPTY_PROGRAMS_TABLE, WORKER_COUNT: '1' },
      timeoutMs: runMs,
      memoryMb: this.setup.memoryMb,
    });
    try {
      await container.invoke({ worker: 0 });
      await container.invoke({ worker: 0 });
      return round(readProcess(container.pid!)?.peakRssMiB ?? Number.NaN, 1);
    } finally {
      await container.close();
    }
  }

  async close(): Promise<void> {
    this.sampler.stop();
    await Promise.allSettled(this.shards.map((shard) => shard.close()));
    await Promise.allSettled([this.bank.call('close'), this.bus.call('close')]);
    await Promise.allSettled([this.bank.close(), this.bus.close()]);
    await this.counter.close();
    await Promise.all([this.moto.stop(), this.motoDynamoDb.stop()]);
    this.cpu.dispose();
    rmSync(this.workdir, { recursive: true, force: true });
  }
}

/** Runs `task` over `items`, `concurrency` at a time. */
async function inBatches<T>(
  items: readonly T[],
  concurrency: number,
  task: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const index = next;
        next += 1;
        await task(items[index]!, index);
      }
    }),
  );
}
