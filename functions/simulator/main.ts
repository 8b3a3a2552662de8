/**
 * Runs the banking simulator standalone, e.g. to point a poller or curl at it:
 *
 *   npx tsx functions/simulator/main.ts --port 8080 --trickle 200
 *
 * The credentials it prints are fake local ones, safe to show.
 */
import { parseArgs } from 'node:util';
import { startSimulator } from './banking-simulator.ts';

const USAGE = `Usage: tsx functions/simulator/main.ts [options]
  --host <host>            listen address (default 127.0.0.1)
  --port <n>               port (default 0: ephemeral)
  --trickle <ms>           generate events every <ms> (default: off)
  --per-tick <n>           events per trickle tick (default 1)
  --backlog <n>            events generated before listening (default 0)
  --seed <n>               PRNG seed for reproducible data
  --max-hold-ms <ms>       longest /events hold (default 60000)
  --token-lifetime <s>     token lifetime in seconds (default 3600)
  --unknown-ratio <r>      share of undocumented event types, 0..1 (default 0.03)
  --clock-offset-ms <ms>   the bank's clock off ours, stamped into created_dt (negative: behind; default 0)
  --help`;

function fail(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

/** Reads a numeric flag; the error names the flag and the form it expects. */
function numberFlag(name: string, raw: string | undefined, integer: boolean): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < 0 || (integer && !Number.isInteger(value))) {
    fail(`--${name} must be a non-negative ${integer ? 'integer' : 'number'}, got '${raw}'`);
  }
  return value;
}

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        trickle: { type: 'string' },
        'per-tick': { type: 'string' },
        backlog: { type: 'string' },
        seed: { type: 'string' },
        'max-hold-ms': { type: 'string' },
        'token-lifetime': { type: 'string' },
        'unknown-ratio': { type: 'string' },
        'clock-offset-ms': { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
    });
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
})();

if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

/** Reads the clock offset: an integer of either sign. */
function offsetFlag(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isSafeInteger(value)) {
    fail(`--clock-offset-ms must be an integer (negative: the bank's clock is behind), got '${raw}'`);
  }
  return value;
}

const trickleMs = numberFlag('trickle', values.trickle, false);
const simulator = await startSimulator({
  host: values.host,
  port: numberFlag('port', values.port, true),
  seed: numberFlag('seed', values.seed, true),
  maxPollHoldMs: numberFlag('max-hold-ms', values['max-hold-ms'], true),
  tokenLifetimeSeconds: numberFlag('token-lifetime', values['token-lifetime'], false),
  unknownTypeRatio: numberFlag('unknown-ratio', values['unknown-ratio'], false),
  clockOffsetMs: offsetFlag(values['clock-offset-ms']),
  trickle:
    trickleMs === undefined || trickleMs === 0
      ? false
      : { intervalMs: trickleMs, eventsPerTick: numberFlag('per-tick', values['per-tick'], true) ?? 1 },
}).catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)));

const backlog = numberFlag('backlog', values.backlog, true) ?? 0;
for (const program of simulator.programs) simulator.generate(backlog, { programId: program.programId });

const [program] = simulator.programs;
console.log(`Banking simulator listening on ${simulator.url} (seed ${simulator.seed})`);
console.log(`  token URL      ${simulator.url}/oauth2/token`);
console.log(`  program_id     ${program!.programId}`);
console.log(`  client_id      ${program!.clientId}`);
console.log(`  client_secret  ${program!.clientSecret}`);
console.log(
  trickleMs
    ? `  generating events every ${trickleMs} ms`
    : '  no trickle: events only via --backlog (or the API)',
);
console.log('Press Ctrl+C to stop.');

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    simulator.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
