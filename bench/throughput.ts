/**
 * Throughput of the shipped handler against a baseline and a bound, side by side in one run.
 *
 *   ours    the bundle `cdk deploy` ships, in its own process under the runtime-faithful invoker,
 *           invocation after invocation until the backlog is drained
 *   naive   bench/naive-poller.ts, bundled the same way: poll, PutEvents batch by batch, commit
 *   bound   min(page ÷ upstream latency, concurrency × 10 ÷ publish latency), and the simulator's
 *           own page-rate ceiling (sequential polls as fast as it answers)
 *
 * The banking service is the simulator with a per-answer latency; EventBridge is a stand-in that
 * speaks PutEvents (bench/support/put-events-standin.ts) with its own latency; DynamoDB and
 * Secrets Manager are moto. Every run ends with the no-loss check: every event at or below the
 * final checkpoint accepted at least once, and the checkpoint never moved backwards.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { CreateTableCommand, DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { request } from 'undici';
import { type RunningSimulator, startSimulator } from '../functions/simulator/banking-simulator.ts';
import { buildConstructLibrary, buildHandlerAsset } from '../scripts/build/artifacts.ts';
import { AwsFaultProxy } from '../test/support/aws-fault-proxy.ts';
import { LambdaContainer } from '../test/support/lambda-runtime/lambda-container.ts';
import { startMoto } from '../test/support/moto-server.ts';
import { type PollerArtifact, synthPollerArtifact } from '../test/support/poller-artifact.ts';
import { bundleLikeThePoller } from './support/bundle.ts';
import type { CpuShare } from './support/cpu-share.ts';
import { CustomBusTarget } from './support/custom-bus-target.ts';
import { processUsage } from './support/process-usage.ts';
import { PutEventsStandIn } from './support/put-events-standin.ts';

/** The bus published to: the classic one (the default) or the Custom Event Bus's stand-in. */
export interface CustomBusSettings {
  readonly kind: 'custom';
  /** EVENT_GROUP_BY of the handler. */
  readonly groupBy: 'program' | 'account' | 'none';
  /** Entries per PutEvents request of the naive loop on this bus. @default 1 */
  readonly naiveBatch?: number;
}

/** What the drain and no-loss checks read of a bus stand-in. */
type PublishTarget = Pick<
  PutEventsStandIn,
  | 'endpoint'
  | 'accepted'
  | 'requestTimes'
  | 'duplicates'
  | 'waitForAccepted'
  | 'maxRequestsInWindow'
  | 'close'
>;

export interface Settings {
  readonly events: number;
  readonly upstreamLatencyMs: number;
  readonly publishLatencyMs: number;
  readonly pageSize: number;
  readonly concurrency: number;
  /** PUBLISH_MAX_REQUESTS_PER_SECOND, if any. */
  readonly maxRequestsPerSecond?: number;
  /** Share of PutEvents requests the stand-in throttles. */
  readonly throttleRatio?: number;
  /** Runs the handler's (or the naive loop's) process at Lambda's CPU share of a memory size. */
  readonly cpuShare?: CpuShare;
  /** Publishes to the Custom Event Bus (EVENT_BUS_KIND=custom). @default the classic bus */
  readonly bus?: CustomBusSettings;
}

export interface RunFigures {
  /** The drain rate: events ÷ time from the first event accepted to the last. */
  readonly eventsPerSecond: number;
  /** From the invocation (or the loop) starting to the last event accepted, cold start included. */
  readonly seconds: number;
  /** From the start to the first event accepted: cold start, secret, token, first poll. */
  readonly firstEventMs: number;
  readonly peakRssMiB: number;
  /** CPU time of the process (all its threads), start to last event accepted, cold start included. */
  readonly cpuMsPer1000: number;
  /**
   * The same without the init phase (Node's start and the handler's import), which a catch-up pays
   * once per execution environment, not per event. The naive loop has no separate init: its total.
   */
  readonly drainCpuMsPer1000: number;
  /** CPU time of the init phase. @default NaN for the naive loop */
  readonly initCpuMs: number;
  readonly finalCheckpoint: number | null;
  readonly duplicates: number;
  readonly putEventsRequests: number;
  readonly maxRequestsInAnySecond: number;
  /** Median time between two `GET /events` arriving at the simulator: the poll cadence. */
  readonly medianPollIntervalMs: number;
  /** Failures of the no-loss check; empty when it passed. */
  readonly lossProblems: readonly string[];
}

export interface Bench {
  readonly artifact: PollerArtifact;
  /** Extra `node` options for the handler's process, e.g. `--cpu-prof` (BENCH_NODE_ARGS). */
  readonly handlerNodeArgs: readonly string[];
  readonly naiveBundle: string;
  /** The naive loop on the Custom Event Bus (bench/naive-custom-bus-poller.ts). */
  readonly naiveCustomBusBundle: string;
  /**
   * Where the handler's CPU profile is written at the end of each drain (the handler's process
   * must preload `support/profile-hook.mjs`, see `cpu-breakdown.ts`). @default no profile
   */
  readonly profileDir?: string;
  /**
   * Where the handler and the naive loop reach DynamoDB and Secrets Manager: moto behind a proxy
   * that keeps connections open, as the AWS endpoints do (moto's server closes each one, which
   * would charge every checkpoint write a TCP handshake no deployment pays).
   */
  readonly motoEndpoint: string;
  readonly dynamodb: DynamoDBClient;
  readonly secrets: SecretsManagerClient;
  readonly table: string;
  nextId(): number;
  close(): Promise<void>;
}

const AWS_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_DEFAULT_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
};

export async function startBench(): Promise<Bench> {
  const workdir = mkdtempSync(path.join(tmpdir(), 'poller-bench-'));
  // The handler the package ships, built from the sources at hand (the app deploys dist/assets/poller).
  await Promise.all([buildHandlerAsset(), buildConstructLibrary()]);
  const artifact = synthPollerArtifact(path.join(workdir, 'cdk.out'));
  const naiveBundle = path.join(workdir, 'naive', 'index.mjs');
  await bundleLikeThePoller(path.join(import.meta.dirname, 'naive-poller.ts'), naiveBundle);
  const naiveCustomBusBundle = path.join(workdir, 'naive-custom-bus', 'index.mjs');
  await bundleLikeThePoller(
    path.join(import.meta.dirname, 'naive-custom-bus-poller.ts'),
    naiveCustomBusBundle,
  );
  const moto = await startMoto();
  const config = {
    region: 'us-east-1',
    endpoint: moto.endpoint,
    credentials: { accessKeyId: 'b', secretAccessKey: 'b' },
  };
  const keepAlive = await AwsFaultProxy.start(moto.endpoint);
  const dynamodb = new DynamoDBClient(config);
  const secrets = new SecretsManagerClient(config);
  const table = 'bench-checkpoints';
  await dynamodb.send(
    new CreateTableCommand({
      TableName: table,
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  let id = 0;
  return {
    artifact,
    handlerNodeArgs: (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
    naiveBundle,
    naiveCustomBusBundle,
    motoEndpoint: keepAlive.endpoint,
    dynamodb,
    secrets,
    table,
    nextId: () => {
      id += 1;
      return id;
    },
    close: async () => {
      dynamodb.destroy();
      secrets.destroy();
      await keepAlive.close();
      await moto.stop();
      rmSync(workdir, { recursive: true, force: true });
    },
  };
}

/** A simulator with `events` waiting, its credentials in a fresh secret, a fresh checkpoint row. */
async function prepare(bench: Bench, settings: Settings, options: { maxPollHoldMs?: number } = {}) {
  const id = bench.nextId();
  const simulator = await startSimulator({
    seed: 1000 + id,
    maxPollHoldMs: options.maxPollHoldMs ?? 1_000,
    responseDelayMs: settings.upstreamLatencyMs,
    unknownTypeRatio: 0,
  });
  simulator.generate(settings.events);
  const program = simulator.programs[0]!;
  const secret = await bench.secrets.send(
    new CreateSecretCommand({
      Name: `bench-${id}`,
      SecretString: JSON.stringify({
        base_url: simulator.url,
        client_id: program.clientId,
        client_secret: program.clientSecret,
      }),
    }),
  );
  return { simulator, secretArn: secret.ARN!, program: `bench-${id}` };
}

async function storedCheckpoint(bench: Bench, program: string): Promise<number | null> {
  const output = await bench.dynamodb.send(
    new GetItemCommand({
      TableName: bench.table,
      Key: { pk: { S: `program#${program}` } },
      ConsistentRead: true,
    }),
  );
  const value = output.Item?.checkpoint?.N;
  return value === undefined ? null : Number(value);
}

/** Samples the stored checkpoint until stopped; reports any step backwards. */
function watchCheckpoint(bench: Bench, program: string) {
  const problems: string[] = [];
  let last: number | null = null;
  let running = true;
  const done = (async () => {
    while (running) {
      const current = await storedCheckpoint(bench, program);
      if (last !== null && (current === null || current < last)) {
        problems.push(`checkpoint moved back from ${last} to ${current}`);
      }
      last = current ?? last;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    problems,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

/** Median gap between successive `GET /events` arrivals while the backlog drained. */
function medianPollInterval(simulator: RunningSimulator, events: number, pageSize: number): number {
  const arrivals = simulator.requests
    .filter((r) => r.path === '/events')
    .map((r) => r.at)
    .slice(0, Math.ceil(events / pageSize));
  const gaps = arrivals
    .slice(1)
    .map((at, i) => at - arrivals[i]!)
    .sort((a, b) => a - b);
  return gaps[Math.floor(gaps.length / 2)] ?? Number.NaN;
}

/** Drain rate and start-up time from the stand-in's acceptance times. */
function drainFigures(standIn: PublishTarget, events: number, started: number) {
  const times = [...standIn.accepted.values()].map((accepted) => accepted.acceptedAt);
  const first = Math.min(...times);
  const last = Math.max(...times);
  return {
    eventsPerSecond: (events - 1) / ((last - first) / 1000),
    seconds: (last - started) / 1000,
    firstEventMs: first - started,
  };
}

function lossCheck(standIn: PublishTarget, checkpoint: number | null, watched: readonly string[]): string[] {
  const problems = [...watched];
  for (let sequence = 1; sequence <= (checkpoint ?? 0); sequence += 1) {
    if (!standIn.accepted.has(sequence)) {
      problems.push(
        `sequence ${sequence} is at or below the checkpoint ${checkpoint} but was never accepted`,
      );
      if (problems.length > 5) break;
    }
  }
  return problems;
}

/** Asks the handler's process for its CPU profile (SIGUSR2, see profile-hook.mjs) and waits for it. */
async function collectProfile(pid: number, dir: string): Promise<void> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  // The harness may have frozen it between invocations: the signal is handled once it runs.
  process.kill(pid, 'SIGCONT');
  await waitFor(
    async () => readdirSync(dir).some((name) => name.endsWith('.cpuprofile') && !before.has(name)),
    30_000,
  );
}

/** The stand-in of the bus `settings` name, answering after the publish latency. */
async function startTarget(bench: Bench, settings: Settings, throttleRatio?: number): Promise<PublishTarget> {
  if (settings.bus?.kind === 'custom') {
    if (throttleRatio !== undefined) throw new Error('the custom bus bench does not throttle');
    return CustomBusTarget.start({
      motoEndpoint: bench.motoEndpoint,
      region: AWS_ENV.AWS_REGION,
      credentials: { accessKeyId: AWS_ENV.AWS_ACCESS_KEY_ID, secretAccessKey: AWS_ENV.AWS_SECRET_ACCESS_KEY },
      latencyMs: settings.publishLatencyMs,
    });
  }
  return PutEventsStandIn.start({ latencyMs: settings.publishLatencyMs, throttleRatio });
}

/** The handler's (or the naive loop's) variables that point it at the bus stand-in. */
function busEnvironment(settings: Settings, standIn: PublishTarget): Record<string, string> {
  if (settings.bus?.kind !== 'custom') {
    return { EVENT_BUS_NAME: 'bench-bus', AWS_ENDPOINT_URL_EVENTBRIDGE: standIn.endpoint };
  }
  return {
    EVENT_BUS_KIND: 'custom',
    EVENT_GROUP_BY: settings.bus.groupBy,
    EVENT_BUS_NAME: (standIn as CustomBusTarget).busArn,
    AWS_ENDPOINT_URL_EVENTBRIDGEV2: standIn.endpoint,
  };
}

/** Drains a backlog with the shipped handler, invocation after invocation. */
export async function runOurs(bench: Bench, settings: Settings): Promise<RunFigures> {
  const { simulator, secretArn, program } = await prepare(bench, settings);
  const standIn = await startTarget(bench, settings, settings.throttleRatio);
  let initCpuMs = Number.NaN;
  const container = new LambdaContainer({
    codeDir: bench.artifact.codeDir,
    memoryMb: bench.artifact.memoryMb,
    timeoutMs: 60_000,
    nodeArgs: bench.handlerNodeArgs,
    ...(settings.cpuShare === undefined ? {} : { memoryMb: settings.cpuShare.memoryMb }),
    onProcessStart: (pid) => settings.cpuShare?.add(pid),
    onInitDone: (pid) => {
      initCpuMs = processUsage(pid).cpuMs;
    },
    environment: {
      ...bench.artifact.environment,
      ...AWS_ENV,
      SECRET_ID: secretArn,
      CHECKPOINT_TABLE: bench.table,
      DEFAULT_PROGRAM: program,
      POLL_LIMIT: String(settings.pageSize),
      PUBLISH_CONCURRENCY: String(settings.concurrency),
      ...(settings.maxRequestsPerSecond === undefined
        ? {}
        : { PUBLISH_MAX_REQUESTS_PER_SECOND: String(settings.maxRequestsPerSecond) }),
      POWERTOOLS_LOG_LEVEL: 'WARN',
      AWS_ENDPOINT_URL: bench.motoEndpoint,
      ...busEnvironment(settings, standIn),
    },
  });
  const watch = watchCheckpoint(bench, program);
  let drained = false;
  try {
    const started = performance.now();
    const invocations = (async () => {
      while (!drained) {
        const invocation = await container.invoke({});
        if (invocation.outcome.kind !== 'response' && !drained) {
          throw new Error(
            `invocation ended with ${JSON.stringify(invocation.outcome)}\n${invocation.stdout.slice(-2000)}`,
          );
        }
      }
    })();
    await Promise.race([standIn.waitForAccepted(settings.events), invocations]);
    const drain = drainFigures(standIn, settings.events, started);
    const usage = processUsage(container.pid!);
    drained = true;
    // The last checkpoint write follows within the committer's interval.
    await waitFor(async () => (await storedCheckpoint(bench, program)) === settings.events, 5_000);
    if (bench.profileDir !== undefined) await collectProfile(container.pid!, bench.profileDir);
    await container.kill();
    await invocations.catch(() => undefined);
    await watch.stop();
    const finalCheckpoint = await storedCheckpoint(bench, program);
    return {
      ...drain,
      peakRssMiB: usage.peakRssMiB,
      cpuMsPer1000: (usage.cpuMs / settings.events) * 1000,
      drainCpuMsPer1000: ((usage.cpuMs - initCpuMs) / settings.events) * 1000,
      initCpuMs,
      finalCheckpoint,
      duplicates: standIn.duplicates,
      putEventsRequests: standIn.requestTimes.length,
      maxRequestsInAnySecond: standIn.maxRequestsInWindow(1000),
      medianPollIntervalMs: medianPollInterval(simulator, settings.events, settings.pageSize),
      lossProblems: lossCheck(standIn, finalCheckpoint, watch.problems),
    };
  } finally {
    drained = true;
    await container.close();
    await watch.stop();
    await standIn.close();
    await simulator.close();
  }
}

/** Drains the same backlog with the hand-written loop, in its own process. */
export async function runNaive(bench: Bench, settings: Settings): Promise<RunFigures> {
  const { simulator, program } = await prepare(bench, settings);
  const standIn = await startTarget(bench, settings);
  const custom = settings.bus?.kind === 'custom';
  const credentials = simulator.programs[0]!;
  const watch = watchCheckpoint(bench, program);
  try {
    const started = performance.now();
    const child = spawn(process.execPath, [custom ? bench.naiveCustomBusBundle : bench.naiveBundle], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        PATH: process.env.PATH,
        ...AWS_ENV,
        AWS_ENDPOINT_URL: bench.motoEndpoint,
        ...busEnvironment(settings, standIn),
        ...(custom ? { NAIVE_BATCH: String(settings.bus?.naiveBatch ?? 1) } : {}),
        BANKING_BASE_URL: simulator.url,
        BANKING_CLIENT_ID: credentials.clientId,
        BANKING_CLIENT_SECRET: credentials.clientSecret,
        CHECKPOINT_TABLE: bench.table,
        PROGRAM: program,
        POLL_LIMIT: String(settings.pageSize),
        NAIVE_TARGET: String(settings.events),
      },
    });
    if (child.pid !== undefined) settings.cpuShare?.add(child.pid);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    await Promise.race([
      standIn.waitForAccepted(settings.events),
      exited.then((code) => {
        if (standIn.accepted.size < settings.events) throw new Error(`naive loop exited ${code}: ${stderr}`);
      }),
    ]);
    const drain = drainFigures(standIn, settings.events, started);
    const usage =
      child.exitCode === null ? processUsage(child.pid!) : { peakRssMiB: Number.NaN, cpuMs: Number.NaN };
    await exited;
    await watch.stop();
    const finalCheckpoint = await storedCheckpoint(bench, program);
    return {
      ...drain,
      peakRssMiB: usage.peakRssMiB,
      cpuMsPer1000: (usage.cpuMs / settings.events) * 1000,
      drainCpuMsPer1000: (usage.cpuMs / settings.events) * 1000,
      initCpuMs: Number.NaN,
      finalCheckpoint,
      duplicates: standIn.duplicates,
      putEventsRequests: standIn.requestTimes.length,
      maxRequestsInAnySecond: standIn.maxRequestsInWindow(1000),
      medianPollIntervalMs: medianPollInterval(simulator, settings.events, settings.pageSize),
      lossProblems: lossCheck(standIn, finalCheckpoint, watch.problems),
    };
  } finally {
    await watch.stop();
    await standIn.close();
    await simulator.close();
  }
}

/** The analytic bound of the setup: the slower of fetching and publishing. */
export function analyticBound(settings: Settings): number {
  const fetching = settings.pageSize / (settings.upstreamLatencyMs / 1000);
  const publishing = (settings.concurrency * 10) / (settings.publishLatencyMs / 1000);
  return Math.min(fetching, publishing);
}

/** How fast the simulator hands out pages when asked back to back, with the cursor each time. */
export async function simulatorCeiling(bench: Bench, settings: Settings): Promise<number> {
  const pages = Math.min(50, Math.floor(settings.events / settings.pageSize));
  const { simulator } = await prepare(bench, { ...settings, events: pages * settings.pageSize });
  try {
    const program = simulator.programs[0]!;
    const token = (await (
      await request(`${simulator.url}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: program.clientId,
          client_secret: program.clientSecret,
        }).toString(),
      })
    ).body.json()) as { access_token: string };
    let cursor = 0;
    const started = performance.now();
    for (let page = 0; page < pages; page += 1) {
      const response = await request(
        `${simulator.url}/events?last_sequence_number=${cursor}&limit=${settings.pageSize}`,
        {
          headers: { authorization: `Bearer ${token.access_token}` },
        },
      );
      const body = (await response.body.json()) as { last_sequence_number: number };
      cursor = body.last_sequence_number;
    }
    return (pages * settings.pageSize) / ((performance.now() - started) / 1000);
  } finally {
    await simulator.close();
  }
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Size of the shipped bundle, raw and gzipped. */
export function bundleSize(artifact: PollerArtifact): { bytes: number; gzipBytes: number } {
  const file = path.join(artifact.codeDir, 'index.mjs');
  return { bytes: statSync(file).size, gzipBytes: gzipSync(readFileSync(file)).length };
}

/** Median import time of a bundle in a fresh node process, alternating with another for fairness. */
export async function coldImports(files: readonly string[], rounds = 9): Promise<number[]> {
  const samples: number[][] = files.map(() => []);
  for (let round = 0; round < rounds; round += 1) {
    for (const [index, file] of files.entries()) samples[index]!.push(await importTime(file));
  }
  return samples.map((values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!);
}

function importTime(file: string): Promise<number> {
  const script = `const t = performance.now(); await import(${JSON.stringify(file)}); process.stdout.write(String(performance.now() - t));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--enable-source-maps', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { PATH: process.env.PATH, ...AWS_ENV },
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
    });
    child.once('close', (code) =>
      code === 0 ? resolve(Number(out)) : reject(new Error(`import of ${file} failed`)),
    );
  });
}
