/**
 * A bank that ignores `limit`: every `GET /events` answers with 65,000 events (about 9 MB),
 * whatever page size was asked for, and the bus is slow (each PutEvents answered after 100 ms).
 * Peak RSS and run duration of the shipped handler under the Lambda runtime harness (its heap
 * capped from the memory setting as Lambda's Node runtime caps it) at 128, 256 and 512 MB, and of
 * the CLI's `run --duration` under `node --max-old-space-size=256`, before (a baseline ref, by
 * default `main`, built from `git archive`) and after (this tree), side by side in one run.
 *
 *   npm run bench:page-memory -- [--memory 128,256,512] [--baseline main] [--timeout 25]
 *                                [--page-events 65000] [--bus-latency 100] [--rounds 1]
 *                                [--no-cli] [--only-after] [--node-args=<flags>] [--show-output]
 *                                [--out <file>]
 *
 * Peak RSS is the kernel's high-water mark (VmHWM) of the function's (or the CLI's) process,
 * sampled every 50 ms until it ends; over the memory setting, Lambda would have killed it. The
 * processes keep the machine's cores (no CPU share is applied): the figures are memory and time
 * against the budget, not throughput.
 *
 * It writes its figures to bench/results/page-memory-<date>.json (or `--out`).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CreateTableCommand, DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { buildCli, buildConstructLibrary, buildHandlerAsset, REPO_ROOT } from '../scripts/build/artifacts.ts';
import { LambdaContainer } from '../test/support/lambda-runtime/lambda-container.ts';
import { LimitIgnoringBank } from '../test/support/limit-ignoring-bank.ts';
import { startMoto } from '../test/support/moto-server.ts';
import { synthPollerArtifact } from '../test/support/poller-artifact.ts';
import { SlowEventBus } from '../test/support/slow-event-bus.ts';
import { spawnedNode } from '../test/support/spawned-node.ts';

const { values } = parseArgs({
  options: {
    memory: { type: 'string' },
    baseline: { type: 'string' },
    timeout: { type: 'string' },
    'page-events': { type: 'string' },
    'bus-latency': { type: 'string' },
    rounds: { type: 'string' },
    'no-cli': { type: 'boolean' },
    'only-after': { type: 'boolean' },
    'node-args': { type: 'string' },
    'show-output': { type: 'boolean' },
    out: { type: 'string' },
  },
});
const memorySizes = (values.memory ?? '128,256,512').split(',').map(Number);
const baselineRef = values.baseline ?? 'main';
const timeoutSeconds = Number(values.timeout ?? 25);
const pageEvents = Number(values['page-events'] ?? 65_000);
const busLatencyMs = Number(values['bus-latency'] ?? 100);
const rounds = Number(values.rounds ?? 1);
/** More than any run reads: the bank never runs dry. */
const FEED_EVENTS = 5_000_000;
const CLI_HEAP_MB = 256;

const log = (line: string) => process.stderr.write(`${line}\n`);

/** A handler and a CLI built from one tree. */
interface Build {
  readonly name: 'before' | 'after';
  readonly ref: string;
  readonly handlerDir: string;
  readonly cliMain: string;
}

export interface PageMemoryFigures {
  readonly build: 'before' | 'after';
  readonly ref: string;
  /** `handler` (the Lambda harness) or `cli` (`run --duration`). */
  readonly runner: 'handler' | 'cli';
  readonly memory_mb: number;
  readonly round: number;
  /** The invocation's outcome (`response`, `timeout`, `crash`, `error`), or the CLI's exit code. */
  readonly outcome: string;
  readonly budget_seconds: number;
  readonly duration_seconds: number;
  readonly peak_rss_mib: number;
  /** Over the function's memory: Lambda would have killed it. */
  readonly over_memory: boolean;
  readonly events_published: number;
  readonly checkpoint: number | null;
  /** Sequence numbers at or below the checkpoint never accepted by the bus (at most 10). */
  readonly lost: readonly number[];
  readonly polls: number;
}

/** Samples a process's peak RSS (VmHWM) until it ends. */
function peakRssSampler(pid: number): { stop(): number } {
  let peakKiB = 0;
  const sample = () => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      peakKiB = Math.max(peakKiB, Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1] ?? 0));
    } catch {
      // Gone: the last sample stands.
    }
  };
  const timer = setInterval(sample, 50);
  sample();
  return {
    stop() {
      sample();
      clearInterval(timer);
      return Math.round((peakKiB / 1024) * 10) / 10;
    },
  };
}

/** The baseline's handler and CLI, built from `git archive <ref>` with this tree's node_modules. */
async function buildBaseline(ref: string, workdir: string): Promise<Build> {
  const root = path.join(workdir, 'baseline');
  mkdirSync(root, { recursive: true });
  const commit = execFileSync('git', ['-C', REPO_ROOT, 'rev-parse', '--short', ref], {
    encoding: 'utf8',
  }).trim();
  const archive = execFileSync('git', ['-C', REPO_ROOT, 'archive', '--format=tar', ref], {
    maxBuffer: 1 << 30,
  });
  execFileSync('tar', ['-x', '-C', root], { input: archive });
  symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  const artifacts = (await import(pathToFileURL(path.join(root, 'scripts/build/artifacts.ts')).href)) as {
    buildHandlerAsset(): Promise<void>;
    buildCli(): Promise<void>;
  };
  await Promise.all([artifacts.buildHandlerAsset(), artifacts.buildCli()]);
  return {
    name: 'before',
    ref: `${ref} (${commit})`,
    handlerDir: path.join(root, 'dist/assets/poller'),
    cliMain: path.join(root, 'dist/cli/main.mjs'),
  };
}

interface Services {
  readonly motoEndpoint: string;
  readonly dynamodb: DynamoDBClient;
  readonly secrets: SecretsManagerClient;
  readonly table: string;
  readonly environment: Readonly<Record<string, string>>;
}

const AWS_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_DEFAULT_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
};

let runId = 0;

async function runHandler(
  services: Services,
  build: Build,
  memoryMb: number,
  round: number,
): Promise<PageMemoryFigures> {
  runId += 1;
  const bank = await LimitIgnoringBank.start({ total: FEED_EVENTS, pageEvents });
  const bus = await SlowEventBus.start({ latencyMs: busLatencyMs });
  const program = `page-memory-${runId}`;
  const secret = await services.secrets.send(
    new CreateSecretCommand({ Name: `page-memory-${runId}`, SecretString: bank.secretString() }),
  );
  let sampler: { stop(): number } | undefined;
  const container = new LambdaContainer({
    codeDir: build.handlerDir,
    memoryMb,
    timeoutMs: timeoutSeconds * 1000,
    nodeArgs: (values['node-args'] ?? '').split(' ').filter(Boolean),
    onProcessStart: (pid) => {
      sampler = peakRssSampler(pid);
    },
    environment: {
      ...services.environment,
      ...AWS_ENV,
      SECRET_ID: secret.ARN!,
      CHECKPOINT_TABLE: services.table,
      DEFAULT_PROGRAM: program,
      EVENT_BUS_NAME: 'page-memory-bus',
      AWS_ENDPOINT_URL: services.motoEndpoint,
      AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
      POWERTOOLS_LOG_LEVEL: 'WARN',
    },
  });
  try {
    const started = performance.now();
    const invocation = await container.invoke({});
    const duration = (performance.now() - started) / 1000;
    const peak = sampler?.stop() ?? Number.NaN;
    if (values['show-output']) log(invocation.stdout.slice(-6000) + invocation.stderr.slice(-6000));
    if (invocation.outcome.kind !== 'response') {
      log(
        `  handler ${build.name}: ${JSON.stringify(invocation.outcome)}\n${invocation.stdout.slice(-1500)}`,
      );
    }
    const output = await services.dynamodb.send(
      new GetItemCommand({
        TableName: services.table,
        Key: { pk: { S: `program#${program}` } },
        ConsistentRead: true,
      }),
    );
    const stored = output.Item?.checkpoint?.N;
    const checkpoint = stored === undefined ? null : Number(stored);
    return {
      build: build.name,
      ref: build.ref,
      runner: 'handler',
      memory_mb: memoryMb,
      round,
      outcome: invocation.outcome.kind,
      budget_seconds: timeoutSeconds,
      duration_seconds: Math.round(duration * 10) / 10,
      peak_rss_mib: peak,
      over_memory: peak > memoryMb,
      events_published: bus.accepted.size,
      checkpoint,
      lost: bus.missingThrough(checkpoint),
      polls: bank.polls.length,
    };
  } finally {
    await container.close();
    await bus.close();
    await bank.close();
  }
}

async function runCli(build: Build, workdir: string, round: number): Promise<PageMemoryFigures> {
  runId += 1;
  const bank = await LimitIgnoringBank.start({ total: FEED_EVENTS, pageEvents });
  const bus = await SlowEventBus.start({ latencyMs: busLatencyMs });
  const checkpointFile = path.join(workdir, `cli-checkpoint-${runId}.json`);
  const started = performance.now();
  const child = spawn(
    spawnedNode().path,
    [
      `--max-old-space-size=${CLI_HEAP_MB}`,
      build.cliMain,
      'run',
      '--duration',
      String(timeoutSeconds),
      '--event-bus',
      'page-memory-bus',
      '--checkpoint-file',
      checkpointFile,
      '--report-every',
      '3600',
    ],
    {
      cwd: workdir,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        PATH: process.env.PATH,
        ...AWS_ENV,
        AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
        BANKING_BASE_URL: bank.url,
        BANKING_CLIENT_ID: bank.clientId,
        BANKING_CLIENT_SECRET: bank.clientSecret,
        NO_COLOR: '1',
      },
    },
  );
  const sampler = peakRssSampler(child.pid!);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exit = await new Promise<string>((resolve) =>
    child.once('close', (code, signal) => resolve(code === null ? `signal ${signal}` : `exit ${code}`)),
  );
  const duration = (performance.now() - started) / 1000;
  const peak = sampler.stop();
  let checkpoint: number | null = null;
  try {
    checkpoint = (JSON.parse(readFileSync(checkpointFile, 'utf8')) as { checkpoint: number | null })
      .checkpoint;
  } catch {
    // No file: nothing was committed.
  }
  await bus.close();
  await bank.close();
  if (exit !== 'exit 0') log(`  cli ${build.name}: ${exit}\n${stderr.slice(-1500)}`);
  return {
    build: build.name,
    ref: build.ref,
    runner: 'cli',
    memory_mb: CLI_HEAP_MB,
    round,
    outcome: exit,
    budget_seconds: timeoutSeconds,
    duration_seconds: Math.round(duration * 10) / 10,
    peak_rss_mib: peak,
    over_memory: false,
    events_published: bus.accepted.size,
    checkpoint,
    lost: bus.missingThrough(checkpoint),
    polls: bank.polls.length,
  };
}

function describe(figures: PageMemoryFigures): string {
  const where = figures.runner === 'handler' ? `${figures.memory_mb} MB` : `heap ${figures.memory_mb} MiB`;
  return (
    `${figures.runner} ${figures.build.padEnd(6)} ${where.padEnd(13)} ${figures.outcome.padEnd(9)} ` +
    `${String(figures.duration_seconds).padStart(5)} s  peak RSS ${String(figures.peak_rss_mib).padStart(6)} MiB` +
    `${figures.over_memory ? ' (over)' : '       '}  published ${figures.events_published}, checkpoint ${figures.checkpoint}, ` +
    `lost ${figures.lost.length}, polls ${figures.polls}`
  );
}

async function main(): Promise<void> {
  const workdir = mkdtempSync(path.join(tmpdir(), 'page-memory-'));
  const moto = await startMoto();
  const config = {
    region: 'us-east-1',
    endpoint: moto.endpoint,
    credentials: { accessKeyId: 'b', secretAccessKey: 'b' },
  };
  const dynamodb = new DynamoDBClient(config);
  const secrets = new SecretsManagerClient(config);
  try {
    log(`building this tree and ${baselineRef}`);
    await Promise.all([buildHandlerAsset(), buildConstructLibrary(), buildCli()]);
    const artifact = synthPollerArtifact(path.join(workdir, 'cdk.out'));
    const head = execFileSync('git', ['-C', REPO_ROOT, 'rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
    }).trim();
    const after: Build = {
      name: 'after',
      ref: `this tree (HEAD ${head})`,
      handlerDir: artifact.codeDir,
      cliMain: path.join(REPO_ROOT, 'dist/cli/main.mjs'),
    };
    const before = await buildBaseline(baselineRef, workdir);
    const table = 'page-memory-checkpoints';
    await dynamodb.send(
      new CreateTableCommand({
        TableName: table,
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    const services: Services = {
      motoEndpoint: moto.endpoint,
      dynamodb,
      secrets,
      table,
      environment: artifact.environment,
    };
    log(
      `a bank answering ${pageEvents} events per poll whatever the limit, PutEvents answered after ${busLatencyMs} ms, ` +
        `${timeoutSeconds} s budget`,
    );
    const results: PageMemoryFigures[] = [];
    for (let round = 1; round <= rounds; round += 1) {
      for (const memoryMb of memorySizes) {
        for (const build of values['only-after'] ? [after] : [before, after]) {
          const figures = await runHandler(services, build, memoryMb, round);
          log(describe(figures));
          results.push(figures);
        }
      }
      if (!values['no-cli']) {
        for (const build of [before, after]) {
          const figures = await runCli(build, workdir, round);
          log(describe(figures));
          results.push(figures);
        }
      }
    }
    const date = new Date().toISOString().slice(0, 10);
    const out = values.out ?? path.join(REPO_ROOT, 'bench/results', `page-memory-${date}.json`);
    writeFileSync(
      out,
      `${JSON.stringify(
        {
          date,
          node: process.version,
          settings: {
            page_events: pageEvents,
            bus_latency_ms: busLatencyMs,
            budget_seconds: timeoutSeconds,
            baseline: baselineRef,
            cli_heap_mb: CLI_HEAP_MB,
          },
          results,
        },
        null,
        2,
      )}\n`,
    );
    log(`written to ${path.relative(REPO_ROOT, out)}`);
  } finally {
    dynamodb.destroy();
    secrets.destroy();
    await moto.stop();
    rmSync(workdir, { recursive: true, force: true });
  }
}

await main();
