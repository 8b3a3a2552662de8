/**
 * Delivery latency when caught up, poll mode against stream mode, side by side in one run: from
 * the simulator creating an event to the PutEvents stand-in accepting it, with the shipped
 * handler under the runtime-faithful invoker. Between the handler and the simulator is a network
 * with a fixed one-way delay (bench/support/latency-proxy.ts), so a stream message travels as
 * long as a poll answer and every extra request costs a round trip.
 *
 *   npm run bench:latency -- [--one-way-ms 12] [--events 120] [--spacing-ms 100] [--burst 1]
 *
 * Events are created one burst every `spacing` ms, with the simulator's mix of types (account
 * status changes, transactions, a few unknown types), so stream mode's recovery of transactions
 * shows in the per-type figures.
 */
import { CreateSecretCommand } from '@aws-sdk/client-secrets-manager';
import {
  type RunningSimulator,
  type StreamShape,
  startSimulator,
} from '../functions/simulator/banking-simulator.ts';
import { LambdaContainer } from '../test/support/lambda-runtime/lambda-container.ts';
import { LatencyProxy } from './support/latency-proxy.ts';
import { PutEventsStandIn } from './support/put-events-standin.ts';
import type { Bench } from './throughput.ts';

export interface LatencyMode {
  readonly name: string;
  /** Variables on top of the deployed environment (`FEED_MODE`, `STREAM_RECOVERY`, `STREAM_LINGER_MS`). */
  readonly environment: Readonly<Record<string, string>>;
  readonly streamShape?: StreamShape;
}

export interface LatencySettings {
  /** Network delay each way between the handler and the banking service. */
  readonly oneWayMs: number;
  readonly publishLatencyMs: number;
  readonly events: number;
  /** Time between two bursts of creations. */
  readonly spacingMs: number;
  /** Events created together at each tick. @default 1 */
  readonly burst?: number;
}

export interface Percentiles {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

export interface LatencyFigures {
  readonly all: Percentiles;
  /** By event type: stream mode recovers transactions, not account status changes. */
  readonly byType: Readonly<Record<string, Percentiles>>;
  /** Requests to the banking service per event delivered, by kind. */
  readonly requestsPerEvent: { readonly polls: number; readonly lookups: number; readonly streams: number };
  readonly putEventsRequests: number;
}

export const LATENCY_MODES: readonly LatencyMode[] = [
  { name: 'poll', environment: { FEED_MODE: 'poll' } },
  { name: 'stream, page', environment: { FEED_MODE: 'stream', STREAM_RECOVERY: 'page' } },
  { name: 'stream, lookup', environment: { FEED_MODE: 'stream', STREAM_RECOVERY: 'lookup' } },
  {
    name: 'stream, lookup, linger 0',
    environment: { FEED_MODE: 'stream', STREAM_RECOVERY: 'lookup', STREAM_LINGER_MS: '0' },
  },
  {
    name: 'stream, type-preserving service',
    environment: { FEED_MODE: 'stream' },
    streamShape: 'type-preserved',
  },
];

const AWS_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_DEFAULT_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
};

function percentiles(values: readonly number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? Number.NaN };
}

/** Delivery latency of one mode: one long invocation, events created while it runs. */
export async function deliveryLatency(
  bench: Bench,
  mode: LatencyMode,
  settings: LatencySettings,
): Promise<LatencyFigures> {
  const id = bench.nextId();
  const simulator = await startSimulator({
    seed: 5000 + id,
    maxPollHoldMs: 20_000,
    unknownTypeRatio: 0.03,
    streamShape: mode.streamShape,
  });
  const proxy = await LatencyProxy.start(Number(new URL(simulator.url).port), settings.oneWayMs);
  const program = simulator.programs[0]!;
  const secret = await bench.secrets.send(
    new CreateSecretCommand({
      Name: `bench-latency-${id}`,
      SecretString: JSON.stringify({
        base_url: proxy.url,
        client_id: program.clientId,
        client_secret: program.clientSecret,
      }),
    }),
  );
  const standIn = await PutEventsStandIn.start({ latencyMs: settings.publishLatencyMs });
  const container = new LambdaContainer({
    codeDir: bench.artifact.codeDir,
    memoryMb: bench.artifact.memoryMb,
    timeoutMs: 120_000,
    environment: {
      ...bench.artifact.environment,
      ...AWS_ENV,
      SECRET_ID: secret.ARN!,
      CHECKPOINT_TABLE: bench.table,
      EVENT_BUS_NAME: 'bench-bus',
      DEFAULT_PROGRAM: `bench-latency-${id}`,
      POWERTOOLS_LOG_LEVEL: 'WARN',
      AWS_ENDPOINT_URL: bench.motoEndpoint,
      AWS_ENDPOINT_URL_EVENTBRIDGE: standIn.endpoint,
      ...mode.environment,
    },
  });
  try {
    const invocation = container.invoke({});
    await waitFor(() => simulator.stats.heldPolls + simulator.stats.openStreams > 0, 20_000);
    // Settle: the first connection's own set-up is not what is measured.
    await sleep(500);
    const burst = settings.burst ?? 1;
    for (let created = 0; created < settings.events; created += burst) {
      simulator.generate(Math.min(burst, settings.events - created));
      await sleep(settings.spacingMs);
    }
    await standIn.waitForAccepted(settings.events);
    await container.kill();
    await invocation;
    return figures(simulator, standIn, settings.events);
  } finally {
    await container.close();
    await standIn.close();
    await proxy.close();
    await simulator.close();
  }
}

function figures(simulator: RunningSimulator, standIn: PutEventsStandIn, events: number): LatencyFigures {
  const types = new Map(simulator.events().map((event) => [event.sequence_number, event.type.toLowerCase()]));
  const all: number[] = [];
  const byType = new Map<string, number[]>();
  for (const [sequence, accepted] of standIn.accepted) {
    const latency = accepted.acceptedEpochMs - accepted.createdEpochMs;
    all.push(latency);
    const type = types.get(sequence) ?? 'unknown';
    const group = type === 'account_status' || type === 'transaction' ? type : 'other types';
    byType.set(group, [...(byType.get(group) ?? []), latency]);
  }
  const count = (predicate: (path: string) => boolean) =>
    simulator.requests.filter((request) => predicate(request.path)).length / events;
  return {
    all: percentiles(all),
    byType: Object.fromEntries([...byType].map(([type, values]) => [type, percentiles(values)])),
    requestsPerEvent: {
      polls: count((path) => path === '/events'),
      lookups: count((path) => path.startsWith('/event/')),
      streams: count((path) => path === '/events/stream'),
    },
    putEventsRequests: standIn.requestTimes.length,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error('the handler never connected to the simulator');
    await sleep(20);
  }
}

/** Every mode over the same traffic, one after the other in this process. */
export async function compareModes(
  bench: Bench,
  settings: LatencySettings,
  modes: readonly LatencyMode[] = LATENCY_MODES,
  log: (line: string) => void = () => {},
): Promise<Array<{ readonly mode: string } & LatencyFigures>> {
  const results: Array<{ readonly mode: string } & LatencyFigures> = [];
  for (const mode of modes) {
    log(`delivery latency: ${mode.name}`);
    results.push({ mode: mode.name, ...(await deliveryLatency(bench, mode, settings)) });
  }
  return results;
}

/** One row per mode for `console.table`. */
export function latencyTable(results: ReadonlyArray<{ readonly mode: string } & LatencyFigures>) {
  return results.map((result) => ({
    mode: result.mode,
    'p50 ms': result.all.p50,
    'p99 ms': result.all.p99,
    'account_status p50/p99': `${result.byType.account_status?.p50}/${result.byType.account_status?.p99}`,
    'transaction p50/p99': `${result.byType.transaction?.p50}/${result.byType.transaction?.p99}`,
    'feed requests/event': Number(
      (
        result.requestsPerEvent.polls +
        result.requestsPerEvent.lookups +
        result.requestsPerEvent.streams
      ).toFixed(2),
    ),
    'PutEvents requests': result.putEventsRequests,
  }));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs } = await import('node:util');
  const { startBench } = await import('./throughput.ts');
  const { values } = parseArgs({
    options: {
      'one-way-ms': { type: 'string', default: '12' },
      events: { type: 'string', default: '120' },
      'spacing-ms': { type: 'string', default: '100' },
      burst: { type: 'string', default: '1' },
      'publish-ms': { type: 'string', default: '15' },
    },
  });
  const settings: LatencySettings = {
    oneWayMs: Number(values['one-way-ms']),
    events: Number(values.events),
    spacingMs: Number(values['spacing-ms']),
    burst: Number(values.burst),
    publishLatencyMs: Number(values['publish-ms']),
  };
  const bench = await startBench();
  try {
    const results = await compareModes(bench, settings, LATENCY_MODES, (line) =>
      process.stderr.write(`[bench] ${line}\n`),
    );
    console.log(JSON.stringify({ settings, results }, null, 2));
    console.table(latencyTable(results));
  } finally {
    await bench.close();
  }
}
