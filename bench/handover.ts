/**
 * `npm run bench:handover`: delivery latency across scheduled runs, before and after the
 * hand-over, side by side in one run. Ticks fire at the schedule interval and each invokes the
 * shipped bundle under the runtime-faithful invoker, in an execution environment of its own
 * when the previous run is still going (two alternate, as Lambda would run them); the simulator
 * holds long polls like the real service while events trickle in; PutEvents goes to the stand-in.
 *
 *   before  the earlier design: runs stop polling `gap` before the next tick, no lease wait
 *   after   the construct's design: runs poll `overlap` past the next tick, the next one waits
 *
 * Scaled by default (a 12 s interval with every duration scaled by 12/60, so the share of the
 * interval each part takes is as deployed); `--real` runs the deployed 60 s interval.
 *
 *   npm run bench:handover -- [--real] [--ticks 6]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CreateSecretCommand } from '@aws-sdk/client-secrets-manager';
import { Duration } from 'aws-cdk-lib';
import { type RunningSimulator, startSimulator } from '../functions/simulator/banking-simulator.ts';
import { leaseWait, overlappingTimeout } from '../infra/constructs/handover-timing.ts';
import { LambdaContainer } from '../test/support/lambda-runtime/lambda-container.ts';
import { PutEventsStandIn } from './support/put-events-standin.ts';
import { type Bench, startBench } from './throughput.ts';

const { values } = parseArgs({
  options: {
    real: { type: 'boolean', default: false },
    ticks: { type: 'string' },
  },
});
const real = values.real ?? false;
/** Deployed durations, and the factor every one of them is scaled by. */
const scale = real ? 1 : 12 / 60;
const ms = (deployedSeconds: number) => Math.round(deployedSeconds * 1000 * scale);
const intervalMs = ms(60);
const ticks = Number(values.ticks ?? (real ? 4 : 6));
const eventsPerSecond = 2;

interface Design {
  readonly name: 'before' | 'after';
  readonly timeoutMs: number;
  readonly leaseWaitMs: number;
}

const interval = Duration.millis(intervalMs);
const afterTimeout = overlappingTimeout(interval, Duration.millis(ms(5)), Duration.millis(ms(10)));
const designs: Design[] = [
  // Timeout 65 s: stops polling 55 s in, 5 s before the next tick; the next tick finds the lease free.
  { name: 'before', timeoutMs: ms(65), leaseWaitMs: 0 },
  // The construct's arithmetic (infra/constructs/handover-timing.ts) on the same durations.
  {
    name: 'after',
    timeoutMs: afterTimeout.toMilliseconds(),
    leaseWaitMs: leaseWait(interval, afterTimeout).toMilliseconds(),
  },
];

interface DesignResult {
  readonly design: string;
  readonly events: number;
  readonly delivered: number;
  readonly lost: number;
  readonly duplicates: number;
  readonly latencyMs: { p50: number; p90: number; p99: number; max: number };
  readonly overTwoSecondsShare: number;
  /** Stretches with no `GET /events` open at the simulator, longer than 20 ms (hand-overs among them). */
  readonly unpolledGapsMs: { count: number; p50: number; p99: number; max: number };
  readonly ticksGivenUp: number;
}

const percentile = (sorted: readonly number[], p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

/** Stretches of time, within the measured window, in which no poll was open at the simulator. */
function unpolledGaps(simulator: RunningSimulator, from: number, to: number): number[] {
  const spans = simulator.requests
    .filter((r) => r.path === '/events')
    .map((r) => [r.at, r.endedAt ?? to] as const)
    .sort((a, b) => a[0] - b[0]);
  const gaps: number[] = [];
  let coveredUntil = from;
  for (const [start, end] of spans) {
    if (end <= from) continue;
    if (start > coveredUntil) gaps.push(Math.min(start, to) - coveredUntil);
    coveredUntil = Math.max(coveredUntil, end);
    if (coveredUntil >= to) break;
  }
  if (coveredUntil < to) gaps.push(to - coveredUntil);
  return gaps.filter((gap) => gap > 20).sort((a, b) => a - b);
}

async function runDesign(bench: Bench, design: Design): Promise<DesignResult> {
  const id = bench.nextId();
  const simulator = await startSimulator({
    seed: 5000 + id,
    // Holds like the real service (random, at most a minute), scaled.
    maxPollHoldMs: ms(30),
    unknownTypeRatio: 0,
  });
  const program = simulator.programs[0]!;
  const secret = await bench.secrets.send(
    new CreateSecretCommand({
      Name: `handover-${id}`,
      SecretString: JSON.stringify({
        base_url: simulator.url,
        client_id: program.clientId,
        client_secret: program.clientSecret,
      }),
    }),
  );
  const standIn = await PutEventsStandIn.start({ latencyMs: 15 });
  const environment = {
    ...bench.artifact.environment,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    AWS_ENDPOINT_URL: bench.motoEndpoint,
    AWS_ENDPOINT_URL_EVENTBRIDGE: standIn.endpoint,
    SECRET_ID: secret.ARN!,
    CHECKPOINT_TABLE: bench.table,
    EVENT_BUS_NAME: 'bench-bus',
    DEFAULT_PROGRAM: `handover-${id}`,
    POWERTOOLS_LOG_LEVEL: 'WARN',
    SAFETY_MARGIN_MS: String(ms(10)),
    MIN_POLL_WINDOW_MS: String(ms(2)),
    LEASE_WAIT_MS: String(design.leaseWaitMs),
  };
  // Two execution environments, each serving every other tick, as Lambda would with overlapping runs.
  const containers = [0, 1].map(
    () =>
      new LambdaContainer({
        codeDir: bench.artifact.codeDir,
        memoryMb: bench.artifact.memoryMb,
        timeoutMs: design.timeoutMs,
        environment,
      }),
  );
  let generated = 0;
  const trickle = setInterval(() => {
    simulator.generate(1);
    generated += 1;
  }, 1000 / eventsPerSecond);
  const invocations: Array<Promise<{ status?: string }>> = [];
  // Scheduler jitter: seeded, up to 300 ms late.
  let jitterState = id;
  const jitter = () => {
    jitterState = (Math.imul(jitterState, 1664525) + 1013904223) >>> 0;
    return (jitterState / 4294967296) * 300;
  };
  const started = Date.now();
  try {
    // One tick more than measured: it picks up the events of the last measured interval.
    let measuredUntil = Number.NaN;
    for (let tick = 0; tick <= ticks; tick += 1) {
      const due = started + tick * intervalMs + jitter();
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
      if (tick === ticks) {
        clearInterval(trickle);
        measuredUntil = Date.now();
      }
      invocations.push(
        containers[tick % 2]!.invoke({}).then((invocation) =>
          invocation.outcome.kind === 'response' ? (invocation.outcome.result as { status?: string }) : {},
        ),
      );
    }
    const results = await Promise.all(invocations);
    const events = simulator.events();
    await waitUntil(() => standIn.accepted.size >= events.length, 10_000);
    const latencies = [...standIn.accepted.values()]
      .map((accepted) => accepted.acceptedEpochMs - accepted.createdEpochMs)
      .sort((a, b) => a - b);
    const gaps = unpolledGaps(simulator, started + 2_000, measuredUntil);
    if (process.env.BENCH_DEBUG) {
      process.stderr.write(`gaps (ms): ${gaps.join(', ')}\n`);
    }
    return {
      design: design.name,
      events: generated,
      delivered: standIn.accepted.size,
      lost: events.filter((event) => !standIn.accepted.has(event.sequence_number)).length,
      duplicates: standIn.duplicates,
      latencyMs: {
        p50: percentile(latencies, 0.5),
        p90: percentile(latencies, 0.9),
        p99: percentile(latencies, 0.99),
        max: latencies.at(-1) ?? Number.NaN,
      },
      overTwoSecondsShare: latencies.filter((latency) => latency > 2_000).length / latencies.length,
      unpolledGapsMs: {
        count: gaps.length,
        p50: percentile(gaps, 0.5),
        p99: percentile(gaps, 0.99),
        max: gaps.at(-1) ?? 0,
      },
      ticksGivenUp: results.filter((result) => result.status === 'lease-busy').length,
    };
  } finally {
    clearInterval(trickle);
    await Promise.all(containers.map((container) => container.close()));
    await standIn.close();
    await simulator.close();
  }
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
}

const bench = await startBench();
try {
  const results: DesignResult[] = [];
  for (const design of designs) {
    process.stderr.write(
      `[bench] ${design.name}: ${ticks} ticks every ${intervalMs} ms, timeout ${design.timeoutMs} ms, lease wait ${design.leaseWaitMs} ms\n`,
    );
    results.push(await runDesign(bench, design));
  }
  const at = new Date();
  const report = {
    at: at.toISOString(),
    machine: { cores: os.availableParallelism(), node: process.version },
    interval_ms: intervalMs,
    scale,
    ticks,
    events_per_second: eventsPerSecond,
    results,
  };
  const dir = path.join(import.meta.dirname, 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, `handover-${real ? 'real' : 'scaled'}-latest.json`),
    `${JSON.stringify(report, null, 2)}\n`,
  );
  console.table(
    results.map((result) => ({
      design: result.design,
      events: result.events,
      lost: result.lost,
      duplicates: result.duplicates,
      'p50 ms': result.latencyMs.p50,
      'p90 ms': result.latencyMs.p90,
      'p99 ms': result.latencyMs.p99,
      'max ms': result.latencyMs.max,
      '> 2 s': `${(result.overTwoSecondsShare * 100).toFixed(1)} %`,
      'unpolled gaps': result.unpolledGapsMs.count,
      'gap p99 ms': result.unpolledGapsMs.p99,
      'gap max ms': result.unpolledGapsMs.max,
      'ticks given up': result.ticksGivenUp,
    })),
  );
  if (results.some((result) => result.lost > 0)) process.exitCode = 1;
} finally {
  await bench.close();
}
