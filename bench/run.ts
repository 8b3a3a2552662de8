/**
 * `npm run bench`: throughput and memory of the poll cycle, measured side by side in one run
 * (the machine is shared and noisy, so compare the ratios, not absolute numbers across runs).
 *
 *   core      the cycle over in-memory ports and a virtual clock: the pure CPU cost per event
 *   http      the real undici feed against the simulator on loopback, publishing to memory
 *   moto      http + the real EventBridge adapter sending PutEvents to moto's server (no rules)
 *
 * Results go to stdout and to bench/results/latest.json.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { CreateEventBusCommand, EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { EventBridgePublisher } from '../functions/adapters/aws/eventbridge-publisher.ts';
import { BankingEventFeed } from '../functions/adapters/banking-http/banking-event-feed.ts';
import { ClientCredentialsTokenProvider } from '../functions/adapters/banking-http/token-cache.ts';
import { MemoryCheckpointStore } from '../functions/adapters/local/memory-checkpoint-store.ts';
import { StaticCredentialsProvider } from '../functions/adapters/local/static-credentials.ts';
import type { BankingEvent } from '../functions/core/event-model.ts';
import { runPollCycle } from '../functions/core/poll-cycle.ts';
import type { CycleLogger, EntryOutcome, EventPublisher, MetricsSink } from '../functions/core/ports.ts';
import { systemClock } from '../functions/core/system-clock.ts';
import { startSimulator } from '../functions/simulator/banking-simulator.ts';
import { FakeClock } from '../test/support/fake-clock.ts';
import { InMemoryFeed, makeEvent } from '../test/support/in-memory-ports.ts';
import { startMoto } from '../test/support/moto-server.ts';

const silent: CycleLogger = { debug() {}, info() {}, warn() {}, error() {} };
const noMetrics: MetricsSink = { add() {} };

/** Accepts everything; counts entries so the run can check nothing was lost. */
class CountingPublisher implements EventPublisher {
  readonly limits = { maxEntriesPerBatch: 10, maxBatchBytes: 256 * 1024 };
  count = 0;
  entrySize(event: BankingEvent): number {
    return JSON.stringify(event).length;
  }
  async send(batch: readonly BankingEvent[]): Promise<readonly EntryOutcome[]> {
    this.count += batch.length;
    return batch.map(() => ({ ok: true }) as const);
  }
}

interface Result {
  readonly scenario: string;
  readonly events: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
  readonly peakRssMiB: number;
  readonly heapDeltaMiB: number;
}

/** Runs `work`, sampling RSS every 20 ms, and reports events/s and memory. */
async function measure(scenario: string, events: number, work: () => Promise<number>): Promise<Result> {
  globalThis.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 20);
  const started = process.hrtime.bigint();
  const delivered = await work();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  if (delivered !== events) throw new Error(`${scenario}: published ${delivered} of ${events} events`);
  return {
    scenario,
    events,
    seconds: round(seconds),
    eventsPerSecond: round(events / seconds),
    peakRssMiB: round(peakRss / 2 ** 20),
    heapDeltaMiB: round((process.memoryUsage().heapUsed - heapBefore) / 2 ** 20),
  };
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

async function coreScenario(events: number): Promise<number> {
  const clock = new FakeClock();
  const feed = new InMemoryFeed(
    clock,
    Array.from({ length: events }, (_, i) => makeEvent(i + 1)),
    { limit: 100 },
  );
  const publisher = new CountingPublisher();
  await runPollCycle(
    { feed, publisher, checkpoints: new MemoryCheckpointStore(), clock, metrics: noMetrics, logger: silent },
    { program: 'bench', owner: 'bench', remainingMs: 24 * 3_600_000 },
  );
  return publisher.count;
}

async function httpScenario(events: number, publisher: EventPublisher & { count?: number }): Promise<number> {
  const simulator = await startSimulator({ seed: 1, maxPollHoldMs: 50 });
  try {
    simulator.generate(events);
    const program = simulator.programs[0]!;
    const credentials = new StaticCredentialsProvider({
      baseUrl: simulator.url,
      clientId: program.clientId,
      clientSecret: program.clientSecret,
    });
    const feed = new BankingEventFeed({
      credentials,
      tokens: new ClientCredentialsTokenProvider({ credentials }),
      limit: 100,
    });
    const checkpoints = new MemoryCheckpointStore();
    const stop = new AbortController();
    let published = 0;
    // Stop once everything is through; the budget is only a safety net.
    const counting: MetricsSink = {
      add(name, _unit, value) {
        if (name === 'EventsPublished') published += value;
        if (published >= events) stop.abort();
      },
    };
    await runPollCycle(
      { feed, publisher, checkpoints, clock: systemClock, metrics: counting, logger: silent },
      { program: 'bench', owner: 'bench', remainingMs: 600_000, stopSignal: stop.signal },
    );
    return published;
  } finally {
    await simulator.close();
  }
}

async function main(): Promise<void> {
  const results: Result[] = [];
  results.push(await measure('core (in-memory ports)', 50_000, () => coreScenario(50_000)));
  results.push(
    await measure('http (simulator → memory)', 10_000, () => httpScenario(10_000, new CountingPublisher())),
  );

  const moto = await startMoto();
  try {
    Object.assign(process.env, {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'bench',
      AWS_SECRET_ACCESS_KEY: 'bench',
      AWS_ENDPOINT_URL: moto.endpoint,
    });
    const client = new EventBridgeClient({});
    await client.send(new CreateEventBusCommand({ Name: 'bench-bus' }));
    const publisher = new EventBridgePublisher({
      client,
      eventBusName: 'bench-bus',
      source: 'banking.events',
    });
    results.push(await measure('moto (simulator → PutEvents)', 2_000, () => httpScenario(2_000, publisher)));
    client.destroy();
  } finally {
    await moto.stop();
  }

  const [core, http, motoResult] = results;
  const ratios = {
    httpVsCore: round(http!.eventsPerSecond / core!.eventsPerSecond),
    motoVsHttp: round(motoResult!.eventsPerSecond / http!.eventsPerSecond),
  };
  console.table(results);
  console.log('ratios (same run):', ratios);
  await mkdir('bench/results', { recursive: true });
  await writeFile(
    'bench/results/latest.json',
    `${JSON.stringify({ at: new Date().toISOString(), node: process.version, results, ratios }, null, 2)}\n`,
  );
}

await main();
