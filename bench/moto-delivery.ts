/**
 * Measures moto's EventBridge → SQS delivery with and without the launcher's JSONPath cache:
 * 100 events in batches of 10 through a bus with 3 rules on `detail-type`, each to its own queue.
 *
 *   npm run bench:moto-delivery -- [rounds]
 */
import { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { useMotoEnvironment } from '../test/support/aws-test-env.ts';
import { startMoto } from '../test/support/moto-server.ts';

const EVENTS = 100;
const DETAIL_TYPES = ['transaction', 'account_status', 'card_status'] as const;

async function measure(launcherArgs: readonly string[]): Promise<number> {
  const moto = await startMoto({ launcherArgs });
  const aws = useMotoEnvironment(moto.endpoint);
  try {
    const { busName, queueUrls } = await aws.createRoutedBus(DETAIL_TYPES);
    const started = performance.now();
    for (let first = 0; first < EVENTS; first += 10) {
      const output = await aws.eventBridge.send(
        new PutEventsCommand({
          Entries: Array.from({ length: 10 }, (_, offset) => {
            const sequence = first + offset;
            return {
              Source: 'bench.banking',
              DetailType: DETAIL_TYPES[sequence % DETAIL_TYPES.length],
              Detail: JSON.stringify({ sequence_number: sequence, data: { amount: sequence } }),
              Time: new Date(),
              EventBusName: busName,
            };
          }),
        }),
      );
      if (output.FailedEntryCount) throw new Error(`${output.FailedEntryCount} entries failed`);
    }
    const elapsed = performance.now() - started;
    let delivered = 0;
    for (const url of queueUrls.values()) delivered += (await aws.drainQueue(url)).length;
    if (delivered !== EVENTS) throw new Error(`expected ${EVENTS} deliveries, got ${delivered}`);
    return elapsed;
  } finally {
    aws.restore();
    await moto.stop();
  }
}

const rounds = Number(process.argv[2] ?? 3);
const results: Record<string, number[]> = { cached: [], uncached: [] };
for (let round = 0; round < rounds; round++) {
  // Alternate so that warm-up and machine noise affect both sides alike.
  results.uncached?.push(await measure(['--no-jsonpath-cache']));
  results.cached?.push(await measure([]));
}
for (const [name, times] of Object.entries(results)) {
  const sorted = [...times].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
  console.log(
    `${name.padEnd(9)} median ${median.toFixed(0)} ms for ${EVENTS} events (runs: ${times.map((t) => t.toFixed(0)).join(', ')} ms)`,
  );
}
