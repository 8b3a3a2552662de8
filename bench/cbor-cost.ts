/**
 * `npm run bench:cbor`: the Custom Event Bus's PutEvents body encoded by `@smithy/core`'s CBOR
 * codec (what the handler ships, `put-events-request.ts`) and by the hand writer it replaced
 * (`support/hand-cbor-put-events.ts`), side by side in one run:
 *
 * 1. the same bytes: both encodings of the golden cases are compared with boto3's captures;
 * 2. the encoding alone, in this process: CPU per 1,000 entries of 100-entry requests of
 *    simulator-sized events, rounds alternating the two;
 * 3. the handler drained on the Custom Event Bus's stand-in at Lambda's CPU share for 256 MB, once
 *    as shipped and once with the hand writer swapped in (`support/side-by-side.ts`).
 *
 *   npm run bench:cbor -- [--events 10000] [--rounds 6] [--memory 256]
 *
 * Prints the figures and writes bench/results/cbor-<date>.json.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  type CustomBusEntry,
  encodePutEventsRequest,
} from '../functions/adapters/aws/eventbridgev2/put-events-request.ts';
import { EventGenerator } from '../functions/simulator/event-generator.ts';
import { createRandom } from '../functions/simulator/seeded-random.ts';
import { goldenCases } from '../test/support/eventbridgev2-golden.ts';
import { encodePutEventsRequest as encodeByHand, handCborSwap } from './support/hand-cbor-put-events.ts';
import { drainSideBySide } from './support/side-by-side.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '6' },
    memory: { type: 'string', default: '256' },
  },
});
const log = (line: string) => process.stderr.write(`[bench:cbor] ${line}\n`);
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
const median = (list: readonly number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;

// 1. The same bytes, or there is nothing to compare.
for (const golden of goldenCases()) {
  const library = Buffer.from(encodePutEventsRequest(golden.eventBusArn, golden.entries));
  const byHand = encodeByHand(golden.eventBusArn, golden.entries);
  if (!library.equals(golden.request) || !byHand.equals(golden.request)) {
    throw new Error(`the encodings of ${golden.name} differ from boto3's`);
  }
}

// 2. The encoding alone: 100-entry requests, as the publisher builds them.
const generator = new EventGenerator({ random: createRandom(7), unknownTypeRatio: 0, now: () => Date.now() });
const ARN = 'arn:aws:events:eu-west-1:123456789012:event-busv2/bank-events/abcdefghijklmnopqrstuvwxy';
const requests: CustomBusEntry[][] = Array.from({ length: 20 }, (_, request) =>
  Array.from({ length: 100 }, (_, index) => {
    const event = generator.next();
    const sequence = request * 100 + index + 1;
    return {
      source: 'banking.events',
      detailType: event.type,
      detail: JSON.stringify({ ...event, sequence_number: sequence }),
      time: Date.parse(event.created_dt),
      eventGroupId: 'retail',
      deduplicationId: `${event.id}@${sequence}`,
    };
  }),
);
const encoders = [
  ['library', (entries: CustomBusEntry[]) => encodePutEventsRequest(ARN, entries)],
  ['hand', (entries: CustomBusEntry[]) => encodeByHand(ARN, entries)],
] as const;
const perThousand = new Map<string, number[]>(encoders.map(([name]) => [name, []]));
const REPEATS = 200;
for (let index = 0; index < 12; index += 1) {
  for (const [name, encode] of index % 2 === 0 ? encoders : [...encoders].reverse()) {
    const start = process.cpuUsage();
    for (let repeat = 0; repeat < REPEATS; repeat += 1) for (const entries of requests) encode(entries);
    const used = process.cpuUsage(start);
    const entries = REPEATS * requests.length * 100;
    perThousand.get(name)!.push(((used.user + used.system) / 1000 / entries) * 1000);
  }
}
const encoding = Object.fromEntries(
  [...perThousand].map(([name, list]) => [name, { cpu_ms_per_1000_entries: round(median(list), 3) }]),
);
log(`encoding alone, CPU per 1 000 entries: ${JSON.stringify(encoding)}`);

// 3. The handler as shipped (the library) and with the hand writer swapped in.
const drains = await drainSideBySide({
  shipped: 'library',
  swapped: { name: 'hand', plugin: handCborSwap(), marker: 'entryMembers' },
  markerIn: 'swapped',
  buses: ['custom'],
  events: Number(values.events),
  rounds: Number(values.rounds),
  memoryMb: Number(values.memory),
  log,
});
const result = { ...drains, encoding_alone: encoding };
const json = `${JSON.stringify(result, null, 2)}\n`;
process.stdout.write(json);
const day = new Date().toISOString().slice(0, 10);
writeFileSync(path.join(import.meta.dirname, 'results', `cbor-${day}.json`), json);
if (drains.problems.length > 0) process.exitCode = 1;
