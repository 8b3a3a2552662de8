/**
 * `npm run bench:schema-validator`: the subscriber kit's JSON-Schema subset validator
 * (`functions/subscriber/schema-validator.ts`) beside Ajv on the same definitions, side by side:
 * the minified bundle each adds to a subscriber's Lambda, the cold start of a fresh Node process
 * that imports the bundle and validates one event, and the CPU per event validated. Ajv twice:
 * compiling the schema at init (as most code uses it), and as standalone code generated ahead of
 * time (no compiler in the bundle). Both Ajv variants are told the kit's rule for `date-time`
 * (what `Date.parse` reads) and ignore the draft-04 `$schema` (our subset means the same in draft 7).
 *
 * Ajv is not a dependency of this repository: the first run installs it into
 * `node_modules/.cache/schema-validator-bench` with npm (`AJV_VERSION`). Rounds alternate the three
 * variants in fresh processes (Node 24 as the tests choose it: `LAMBDA_NODE`, else the project's
 * own); medians are reported. Writes `bench/results/schema-validator-<date>.json`.
 *
 *   npm run bench:schema-validator -- [--rounds 9] [--events 50000]
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { nodeVersionOf, spawnedNode } from '../test/support/spawned-node.ts';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const AJV_VERSION = '8.17.1';
const AJV_DIR = path.join(REPO_ROOT, 'node_modules/.cache/schema-validator-bench');

const { values: args } = parseArgs({
  options: { rounds: { type: 'string', default: '9' }, events: { type: 'string', default: '50000' } },
});
const ROUNDS = Number(args.rounds);
const EVENTS = Number(args.events);

function ensureAjv(): string {
  const entry = path.join(AJV_DIR, 'node_modules/ajv/package.json');
  if (!existsSync(entry)) {
    mkdirSync(AJV_DIR, { recursive: true });
    writeFileSync(path.join(AJV_DIR, 'package.json'), JSON.stringify({ private: true }));
    execFileSync('npm', ['install', '--no-audit', '--no-fund', `ajv@${AJV_VERSION}`], {
      cwd: AJV_DIR,
      stdio: 'inherit',
    });
  }
  return (JSON.parse(readFileSync(entry, 'utf8')) as { version: string }).version;
}

/** Events as a subscriber's queue delivers them: the envelope and a transaction's or a status's detail. */
const SAMPLE_EVENTS = [
  {
    version: '0',
    id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
    'detail-type': 'transaction',
    source: 'banking.events',
    account: '123456789012',
    time: '2026-11-24T10:00:00Z',
    region: 'us-east-1',
    resources: [],
    detail: {
      id: '0f3c1b9e-2d4a-4c8e-9b1f-6a2d3e4f5a6b',
      program_id: '792a815a-8e8d-4e17-b712-23c27145e12e',
      sequence_number: 42,
      created_dt: '2026-11-24T10:00:00.000+00:00',
      type: 'transaction',
      data: { transaction_id: 'tx-42', amount: 1250, type: 'card', status: 'COMPLETE' },
    },
  },
  {
    version: '0',
    id: '7b7e8feb-b491-4cf7-a9f1-bf3703467719',
    'detail-type': 'account_status',
    source: 'banking.events',
    account: '123456789012',
    time: '2026-11-24T10:00:01Z',
    region: 'us-east-1',
    resources: [],
    detail: {
      id: '1f3c1b9e-2d4a-4c8e-9b1f-6a2d3e4f5a6c',
      program_id: '792a815a-8e8d-4e17-b712-23c27145e12e',
      sequence_number: 43,
      created_dt: '2026-11-24T10:00:01.000+00:00',
      type: 'account_status',
      data: { account_id: 'a4c1d2e3-0000-4000-8000-000000000001', status: 'FROZEN' },
    },
  },
];

const DETAIL = { transaction: 'TransactionDetail', account_status: 'AccountStatusDetail' } as const;

/** Each variant's entry: `validate(event)` throws on an invalid event, as the kit's parser does. */
function entries(work: string, ajvRequire: NodeJS.Require): Record<string, string> {
  const definitions = path.join(REPO_ROOT, 'functions/event-schema/event-json-schema.ts');
  const ours = path.join(work, 'ours.ts');
  writeFileSync(
    ours,
    `import { validateDefinition } from ${JSON.stringify(path.join(REPO_ROOT, 'functions/subscriber/schema-validator.ts'))};
const DETAIL = ${JSON.stringify(DETAIL)};
export function validate(event) {
  validateDefinition(event, 'EventEnvelope', '');
  validateDefinition(event.detail, DETAIL[event['detail-type']], 'detail');
}
`,
  );
  const ajvSetup = `
const ajv = new Ajv({ strict: false, code: { source: true, esm: true } });
ajv.addFormat('date-time', { validate: (text) => !Number.isNaN(Date.parse(text)) });
ajv.addSchema({ $id: 'events', definitions: EVENT_SCHEMA_DEFINITIONS });`;
  const ajvCompiling = path.join(work, 'ajv-compiling.ts');
  writeFileSync(
    ajvCompiling,
    `import Ajv from ${JSON.stringify(ajvRequire.resolve('ajv'))};
import { EVENT_SCHEMA_DEFINITIONS } from ${JSON.stringify(definitions)};
${ajvSetup}
const envelope = ajv.getSchema('events#/definitions/EventEnvelope');
const details = { transaction: ajv.getSchema('events#/definitions/TransactionDetail'), account_status: ajv.getSchema('events#/definitions/AccountStatusDetail') };
export function validate(event) {
  if (!envelope(event)) throw new Error(JSON.stringify(envelope.errors[0]));
  const detail = details[event['detail-type']];
  if (!detail(event.detail)) throw new Error(JSON.stringify(detail.errors[0]));
}
`,
  );
  // Standalone: the validators generated now, as a build step would, and bundled without Ajv's
  // compiler; the generated code requires the format from a module of its own.
  const formats = path.join(work, 'formats.cjs');
  writeFileSync(formats, "module.exports = { 'date-time': (text) => !Number.isNaN(Date.parse(text)) };\n");
  const generate = path.join(work, 'generate.mjs');
  writeFileSync(
    generate,
    `import Ajv, { _ } from ${JSON.stringify(ajvRequire.resolve('ajv'))};
import standaloneCode from ${JSON.stringify(ajvRequire.resolve('ajv/dist/standalone'))};
import { writeFileSync } from 'node:fs';
const { EVENT_SCHEMA_DEFINITIONS } = await import(${JSON.stringify(definitions)});
const ajv = new Ajv({ strict: false, code: { source: true, esm: true, formats: _\`require(${JSON.stringify(formats)})\` } });
ajv.addFormat('date-time', (text) => !Number.isNaN(Date.parse(text)));
ajv.addSchema({ $id: 'events', definitions: EVENT_SCHEMA_DEFINITIONS });
writeFileSync(${JSON.stringify(path.join(work, 'ajv-generated.mjs'))}, standaloneCode.default(ajv, {
  envelope: 'events#/definitions/EventEnvelope',
  transaction: 'events#/definitions/TransactionDetail',
  account_status: 'events#/definitions/AccountStatusDetail',
}));
`,
  );
  execFileSync(process.execPath, ['--import', 'tsx', generate], { cwd: REPO_ROOT, stdio: 'inherit' });
  const ajvStandalone = path.join(work, 'ajv-standalone.ts');
  writeFileSync(
    ajvStandalone,
    `import { envelope, transaction, account_status } from './ajv-generated.mjs';
// The generated code calls the format it was given by name: the same rule, supplied here.
const details = { transaction, account_status };
export function validate(event) {
  if (!envelope(event)) throw new Error(JSON.stringify(envelope.errors[0]));
  const detail = details[event['detail-type']];
  if (!detail(event.detail)) throw new Error(JSON.stringify(detail.errors[0]));
}
`,
  );
  return { ours, 'ajv (compiled at init)': ajvCompiling, 'ajv (standalone code)': ajvStandalone };
}

async function bundle(entry: string, outfile: string): Promise<number> {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'silent',
    nodePaths: [path.join(AJV_DIR, 'node_modules')],
  });
  return readFileSync(outfile).length;
}

/** One fresh process: import and validate one event (cold), then `EVENTS` more (CPU per event). */
function run(node: string, file: string): { coldMs: number; cpuUsPerEvent: number } {
  const script = `
const events = ${JSON.stringify(SAMPLE_EVENTS)};
const started = performance.now();
const { validate } = await import(${JSON.stringify(file)});
validate(events[0]);
const coldMs = performance.now() - started;
for (let i = 0; i < 2000; i += 1) validate(events[i % 2]);
const cpu = process.cpuUsage();
for (let i = 0; i < ${EVENTS}; i += 1) validate(events[i % 2]);
const used = process.cpuUsage(cpu);
console.log(JSON.stringify({ coldMs, cpuUsPerEvent: (used.user + used.system) / ${EVENTS} }));
`;
  const out = execFileSync(node, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  return JSON.parse(out.trim()) as { coldMs: number; cpuUsPerEvent: number };
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

async function main(): Promise<void> {
  const ajvVersion = ensureAjv();
  const ajvRequire = createRequire(path.join(AJV_DIR, 'package.json'));
  const work = mkdtempSync(path.join(tmpdir(), 'schema-validator-bench-'));
  try {
    const node = spawnedNode().path;
    const variants = Object.entries(entries(work, ajvRequire));
    const bundles: Record<string, { file: string; bytes: number }> = {};
    for (const [name, entry] of variants) {
      const file = path.join(work, `${path.basename(entry, '.ts')}.bundle.mjs`);
      bundles[name] = { file, bytes: await bundle(entry, file) };
    }
    // Every variant must accept the sample events and refuse the same broken one.
    const broken = JSON.parse(JSON.stringify(SAMPLE_EVENTS[0])) as { detail: { data: { amount: unknown } } };
    broken.detail.data.amount = 'twelve';
    for (const [name, { file }] of Object.entries(bundles)) {
      const { validate } = (await import(file)) as { validate(event: unknown): void };
      for (const event of SAMPLE_EVENTS) validate(event);
      let refused = false;
      try {
        validate(broken);
      } catch {
        refused = true;
      }
      if (!refused) throw new Error(`${name} accepted an amount that is not a number`);
    }
    const samples: Record<string, { coldMs: number[]; cpuUsPerEvent: number[] }> = {};
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [name, { file }] of Object.entries(bundles)) {
        const result = run(node, file);
        samples[name] ??= { coldMs: [], cpuUsPerEvent: [] };
        samples[name].coldMs.push(result.coldMs);
        samples[name].cpuUsPerEvent.push(result.cpuUsPerEvent);
      }
    }
    const results = Object.fromEntries(
      Object.entries(bundles).map(([name, { bytes }]) => [
        name,
        {
          bundle_bytes_minified: bytes,
          cold_import_and_first_validation_ms: {
            median: Number(median(samples[name]!.coldMs).toFixed(2)),
            min: Number(Math.min(...samples[name]!.coldMs).toFixed(2)),
            max: Number(Math.max(...samples[name]!.coldMs).toFixed(2)),
          },
          cpu_us_per_event: {
            median: Number(median(samples[name]!.cpuUsPerEvent).toFixed(3)),
            min: Number(Math.min(...samples[name]!.cpuUsPerEvent).toFixed(3)),
            max: Number(Math.max(...samples[name]!.cpuUsPerEvent).toFixed(3)),
          },
        },
      ]),
    );
    const report = {
      at: new Date().toISOString(),
      node: nodeVersionOf(node),
      ajv: ajvVersion,
      rounds: ROUNDS,
      events_per_round: EVENTS,
      results,
    };
    const out = path.join(REPO_ROOT, `bench/results/schema-validator-${report.at.slice(0, 10)}.json`);
    writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
    console.log(JSON.stringify(report, null, 2));
    console.log(`Wrote ${path.relative(REPO_ROOT, out)}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
