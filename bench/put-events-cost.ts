/**
 * `npm run bench:put-events`: CPU per PutEvents call of 10 entries, side by side, the ways the
 * handler could send it. The call is what a catch-up spends most of its CPU on at Lambda's share
 * of a core (bench/run.ts, "as deployed"), so this decides how PutEvents is sent:
 *
 *   sdk-default   EventBridgeClient with the SDK's defaults
 *   sdk-bounded   the same with the poller's bounded timeouts and retries (boundedClientConfig)
 *   sdk-cached    sdk-bounded with `cacheMiddleware: true` alone (the setting the handler's other
 *                 SDK clients, DynamoDB and Secrets Manager, could take: they keep their retries)
 *   sdk-tuned     the same with every documented tweak: cacheMiddleware, one attempt per call
 *   signed        the request body signed by hand (SigV4 over node:crypto) and sent with undici,
 *                 credentials, region and endpoint from the SDK client's configuration
 *   library       the same transport with `@smithy/signature-v4` in place of our signer
 *                 (support/library-sigv4.ts, swapped in by bundling the transport)
 *   floor         undici alone with the same body, no signature: what no client can go below
 *
 * The answering server runs in a child process, so this process's CPU is the client's alone.
 * Calls go 8 at a time (the handler's PUBLISH_CONCURRENCY), rounds alternate the variants, and
 * the median of the rounds is reported. Writes bench/results/put-events-<date>.json.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { build } from 'esbuild';
import { request } from 'undici';
import { boundedClientConfig } from '../functions/adapters/aws/bounded-client-config.ts';
import {
  type PutEventsEntry,
  type PutEventsTransport,
  SignedPutEvents,
} from '../functions/adapters/aws/put-events-transport.ts';
import { EventGenerator } from '../functions/simulator/event-generator.ts';
import { createRandom } from '../functions/simulator/seeded-random.ts';
import { pollerEsbuildOptions } from '../scripts/build/artifacts.ts';
import { signerSwap } from './support/library-sigv4.ts';
import { SdkPutEvents } from './support/sdk-put-events.ts';

const CALLS = Number(process.argv[2] ?? 2_000);
const ROUNDS = Number(process.argv[3] ?? 5);
const CONCURRENCY = 8;

/** A PutEvents server in a child process: every entry accepted at once. */
const SERVER = `
const http = require('node:http');
const server = http.createServer({ keepAlive: true }, (req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const count = body.split('"DetailType":').length - 1;
    const text = JSON.stringify({ FailedEntryCount: 0, Entries: Array.from({ length: count }, (_, i) => ({ EventId: 'e' + i })) });
    res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

async function startServer(): Promise<{ endpoint: string; stop: () => void }> {
  const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) =>
    child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())),
  );
  return { endpoint: `http://127.0.0.1:${port}`, stop: () => child.kill() };
}

/** Ten realistic entries, as the publisher prepares them. */
function batch(): PutEventsEntry[] {
  const generator = new EventGenerator({
    random: createRandom(7),
    unknownTypeRatio: 0,
    now: () => Date.now(),
  });
  return Array.from({ length: 10 }, (_, index) => {
    const event = { ...generator.next(), id: `id-${index}`, program_id: 'p-1', sequence_number: index + 1 };
    return {
      source: 'banking.events',
      detailType: event.type.toLowerCase(),
      detail: JSON.stringify({ ...event, type: event.type.toLowerCase() }),
      time: Date.now(),
      eventBusName: 'bench-bus',
    };
  });
}

/** The floor: the body alone, sent with undici. */
class UnsignedUndici implements PutEventsTransport {
  constructor(private readonly endpoint: string) {}
  async putEvents(entries: readonly PutEventsEntry[]): Promise<readonly { EventId?: string }[]> {
    const body = JSON.stringify({
      Entries: entries.map((entry) => ({
        Source: entry.source,
        DetailType: entry.detailType,
        Detail: entry.detail,
        Time: entry.time / 1000,
        EventBusName: entry.eventBusName,
      })),
    });
    const response = await request(this.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'AWSEvents.PutEvents' },
      body,
    });
    return ((await response.body.json()) as { Entries: { EventId?: string }[] }).Entries;
  }
}

/** `SignedPutEvents` built with the library's signer in place of ours, as `bench:signer` builds the handler. */
async function librarySignedPutEvents(): Promise<typeof SignedPutEvents> {
  const outfile = path.join(mkdtempSync(path.join(tmpdir(), 'library-signer-')), 'transport.mjs');
  const entry = fileURLToPath(new URL('../functions/adapters/aws/put-events-transport.ts', import.meta.url));
  await build({ ...pollerEsbuildOptions(entry, outfile), plugins: [signerSwap()], logLevel: 'silent' });
  return ((await import(outfile)) as { SignedPutEvents: typeof SignedPutEvents }).SignedPutEvents;
}

/** CPU microseconds per call over `calls` calls, `CONCURRENCY` at a time. */
async function cpuPerCall(
  transport: PutEventsTransport,
  entries: readonly PutEventsEntry[],
  calls: number,
): Promise<number> {
  const signal = new AbortController().signal;
  let next = 0;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < calls) {
        next += 1;
        const results = await transport.putEvents(entries, signal);
        if (results.length !== entries.length)
          throw new Error(`${results.length} results for ${entries.length} entries`);
      }
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
  const server = await startServer();
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    AWS_SESSION_TOKEN: 'a-session-token-as-lambda-gives-one',
    AWS_ENDPOINT_URL_EVENTBRIDGE: server.endpoint,
  });
  const LibrarySigned = await librarySignedPutEvents();
  const tuned = new EventBridgeClient({ ...boundedClientConfig, maxAttempts: 1, cacheMiddleware: true });
  const variants: ReadonlyArray<readonly [string, PutEventsTransport]> = [
    ['sdk-default', new SdkPutEvents(new EventBridgeClient({}))],
    ['sdk-bounded', new SdkPutEvents(new EventBridgeClient(boundedClientConfig))],
    [
      'sdk-cached',
      new SdkPutEvents(new EventBridgeClient({ ...boundedClientConfig, cacheMiddleware: true })),
    ],
    ['sdk-tuned', new SdkPutEvents(tuned)],
    ['signed', new SignedPutEvents({ client: new EventBridgeClient(boundedClientConfig) })],
    ['library', new LibrarySigned({ client: new EventBridgeClient(boundedClientConfig) })],
    ['floor', new UnsignedUndici(server.endpoint)],
  ];
  const entries = batch();
  try {
    for (const [, transport] of variants) await cpuPerCall(transport, entries, 300); // warm-up
    const samples = new Map(variants.map(([name]) => [name, [] as number[]]));
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? variants : [...variants].reverse();
      for (const [name, transport] of order)
        samples.get(name)!.push(await cpuPerCall(transport, entries, CALLS));
    }
    const rows = variants.map(([name]) => ({
      variant: name,
      cpuMicrosPerCall: Math.round(median(samples.get(name)!)),
    }));
    const sdk = rows.find((row) => row.variant === 'sdk-bounded')!.cpuMicrosPerCall;
    console.log(
      `CPU per PutEvents call of 10 entries (${CALLS} calls × ${ROUNDS} rounds, ${CONCURRENCY} at a time, median)`,
    );
    for (const row of rows) {
      console.log(
        `${row.variant.padEnd(12)} ${String(row.cpuMicrosPerCall).padStart(6)} µs   ${(row.cpuMicrosPerCall / sdk).toFixed(2)} × sdk-bounded`,
      );
    }
    const directory = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');
    mkdirSync(directory, { recursive: true });
    const date = new Date().toISOString().slice(0, 10);
    writeFileSync(
      path.join(directory, `put-events-${date}.json`),
      `${JSON.stringify({ date, calls: CALLS, rounds: ROUNDS, concurrency: CONCURRENCY, node: process.version, rows }, null, 2)}\n`,
    );
  } finally {
    server.stop();
  }
}

await main();
