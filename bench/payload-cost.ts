/**
 * `npm run bench:payload`: what lossless payloads cost. Per 1 000 events, CPU time to turn poll
 * bodies into what is published, measured side by side in one run:
 *
 *   lossless  the product: JSON.parse for validation, then each event's own text located in the
 *             body and only sequence_number and type rewritten (functions/core/event-model.ts)
 *   reparse   the previous way, kept here as the baseline: JSON.parse, then JSON.stringify of
 *             the parsed event as the Detail (numbers rounded, `12.50` becomes `12.5`)
 *
 * Bodies are 100-event pages of realistic events (stress values included), generated once.
 * Rounds alternate the two so drift on a shared machine hits both alike.
 */
import { CLASSIC_BUS_ENTRY_RULES } from '../functions/adapters/aws/eventbridge-entry-rules.ts';
import { eventTextOf, normalizeEvent, parsePollResponse } from '../functions/core/event-model.ts';
import { EventGenerator } from '../functions/simulator/event-generator.ts';
import { createRandom } from '../functions/simulator/seeded-random.ts';

const PAGES = Number(process.argv[2] ?? 200);
const ROUNDS = 7;
const origin = { source: 'GET /events', status: 200 };

function pageBodies(): string[] {
  const generator = new EventGenerator({ random: createRandom(42), unknownTypeRatio: 0.03, now: () => 0 });
  let sequence = 0;
  return Array.from({ length: PAGES }, () => {
    const events = Array.from({ length: 100 }, () => {
      sequence += 1;
      const input = generator.next();
      return (
        JSON.stringify({
          ...input,
          program_id: 'p-1',
          sequence_number: sequence,
          created_dt: '2026-11-22T00:00:00.000+00:00',
        })
          // Two values per event that a JSON round trip would change.
          .replace(/}$/, ',"fee":12.50,"big":9007199254740993}')
      );
    });
    return `{"data":[${events.join(',')}],"last_sequence_number":${sequence},"limit":100}`;
  });
}

function lossless(body: string): number {
  let bytes = 0;
  for (const event of parsePollResponse(
    { text: body, value: JSON.parse(body) },
    origin,
    CLASSIC_BUS_ENTRY_RULES,
  ).events) {
    bytes += event.detail.length;
  }
  return bytes;
}

function reparse(body: string): number {
  let bytes = 0;
  const parsed = JSON.parse(body) as { data: unknown[] };
  for (const raw of parsed.data) {
    const event = normalizeEvent(eventTextOf(raw), origin, CLASSIC_BUS_ENTRY_RULES);
    const { detail: _ignored, ...fields } = event;
    bytes += JSON.stringify(fields).length;
  }
  return bytes;
}

function cpuMsPerThousand(work: (body: string) => number, bodies: readonly string[]): number {
  const before = process.cpuUsage();
  let sink = 0;
  for (const body of bodies) sink += work(body);
  const used = process.cpuUsage(before);
  if (sink === 0) throw new Error('nothing measured');
  return ((used.user + used.system) / 1000 / (bodies.length * 100)) * 1000;
}

const bodies = pageBodies();
// Warm both paths up before measuring.
cpuMsPerThousand(lossless, bodies.slice(0, 20));
cpuMsPerThousand(reparse, bodies.slice(0, 20));
const samples = { lossless: [] as number[], reparse: [] as number[] };
for (let round = 0; round < ROUNDS; round += 1) {
  samples.lossless.push(cpuMsPerThousand(lossless, bodies));
  samples.reparse.push(cpuMsPerThousand(reparse, bodies));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const result = {
  events: PAGES * 100,
  rounds: ROUNDS,
  cpuMsPer1000: { lossless: median(samples.lossless), reparse: median(samples.reparse) },
  losslessOverReparse: median(samples.lossless) / median(samples.reparse),
};
console.table([
  { path: 'lossless (product)', 'CPU ms / 1000 events': result.cpuMsPer1000.lossless.toFixed(2) },
  { path: 'reparse (previous)', 'CPU ms / 1000 events': result.cpuMsPer1000.reparse.toFixed(2) },
]);
console.log(JSON.stringify(result, null, 2));
