/**
 * `npm run bench:signer`: the handler's CPU per 1 000 events drained with its requests signed by
 * our signer (`functions/adapters/aws/sigv4.ts`) and by the library's (`@smithy/signature-v4`,
 * put in its place in a second build of the same handler: support/library-sigv4.ts), side by side
 * in one run at Lambda's CPU share for 256 MB (`support/side-by-side.ts`), on both of today's
 * request shapes: a JSON POST to the root path (the classic bus's PutEvents) and a CBOR POST to
 * an operation's path (the Custom Event Bus's). Everything else is the same code.
 *
 *   npm run bench:signer -- [--events 10000] [--rounds 6] [--memory 256] [--bus classic,custom]
 *
 * Prints the figures and writes bench/results/signer-<date>.json. Where no CPU cgroup can be made
 * the drains run unthrottled and CPU per 1 000 events is still what is compared.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { signerSwap } from './support/library-sigv4.ts';
import { type BusKind, drainSideBySide } from './support/side-by-side.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '6' },
    memory: { type: 'string', default: '256' },
    bus: { type: 'string', default: 'classic,custom' },
  },
});
const log = (line: string) => process.stderr.write(`[bench:signer] ${line}\n`);

const result = await drainSideBySide({
  shipped: 'ours',
  // Only our build holds `amzDateOf`, a name the minifier keeps; the library's code is in both
  // builds' chunks anyway, for the SDK's own clients.
  swapped: { name: 'library', plugin: signerSwap(), marker: 'amzDateOf' },
  markerIn: 'shipped',
  buses: values.bus.split(',').map((bus) => bus.trim() as BusKind),
  events: Number(values.events),
  rounds: Number(values.rounds),
  memoryMb: Number(values.memory),
  log,
});
const json = `${JSON.stringify(result, null, 2)}\n`;
process.stdout.write(json);
const day = new Date().toISOString().slice(0, 10);
writeFileSync(path.join(import.meta.dirname, 'results', `signer-${day}.json`), json);
if (result.problems.length > 0) process.exitCode = 1;
