/**
 * `npx tsx scripts/reliability-report.ts [results.json] [reliability.md]`: renders the results
 * section of docs/reliability.md from the fault matrix's report (docs/reliability-results.json,
 * which `npm run test:faults` writes), between the lines `<!-- results:start -->` and
 * `<!-- results:end -->`. Everything outside the markers is prose kept by hand; only the figures
 * are generated, so the table can never disagree with the run it claims to show.
 *
 * `npm run test:faults` runs it after a passing matrix, on the same machine: the machine line
 * (cores, CPU model, Node version) describes where this script runs, which is where the matrix ran.
 *
 * A fault also run on the Custom Event Bus (`custom.<id>`) has its row right after the classic
 * one, with the re-sends that bus answered `DEDUPLICATED` beside the duplicates that reached the
 * subscriber.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';

const START = '<!-- results:start -->';
const END = '<!-- results:end -->';
/** The base seed `test/faults/fault-matrix.test.ts` uses when FAULT_MATRIX_SEED is not set. */
const DEFAULT_BASE_SEED = 20_000;

/** One row of the report, as `test/faults/fault-matrix.test.ts` writes it. */
interface ResultRow {
  readonly id: string;
  readonly group: string;
  readonly fault: string;
  /** The bus the runs published to; reports written before the custom bus have none (classic). */
  readonly bus?: 'classic' | 'custom';
  /** Runs that passed (a failed run records nothing). */
  readonly runs: number;
  /** Runs the matrix planned; more than `runs` when some failed. */
  readonly planned?: number;
  /** Events at or below the final checkpoint, summed over the runs. */
  readonly events: number;
  readonly lost: number;
  readonly maxDuplicates: number;
  /** Custom bus: the most re-sent entries one run's bus answered `DEDUPLICATED`. */
  readonly maxDeduplicated?: number;
  readonly seeds: readonly number[];
}

interface ResultsReport {
  readonly baseSeed: number;
  readonly at: string;
  readonly rows: readonly ResultRow[];
}

const [resultsPath = 'docs/reliability-results.json', docPath = 'docs/reliability.md'] =
  process.argv.slice(2);

function fail(message: string): never {
  console.error(`reliability-report: ${message}`);
  process.exit(1);
}

function readReport(path: string): ResultsReport {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    fail(`cannot read ${path} (${(error as Error).message}): run npm run test:faults first`);
  }
  const report = parsed as Partial<ResultsReport>;
  if (typeof report.baseSeed !== 'number' || typeof report.at !== 'string' || !Array.isArray(report.rows)) {
    fail(`${path} is not a fault-matrix report ({baseSeed, at, rows})`);
  }
  return report as ResultsReport;
}

/** `50000` → `50 000`, as the docs write figures. */
function figure(value: number): string {
  return value.toLocaleString('en-US').replaceAll(',', ' ');
}

/** Text safe in a Markdown table cell. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

/** `20100, 20101, 20102` → `20100–20102`; seeds with holes (failed runs) are listed. */
function seedRange(seeds: readonly number[]): string {
  if (seeds.length === 0) return '–';
  const first = seeds[0]!;
  const last = seeds.at(-1)!;
  if (last - first + 1 !== seeds.length) return seeds.join(', ');
  return first === last ? String(first) : `${first}–${last}`;
}

function reproduce(id: string, baseSeed: number): string {
  const env = baseSeed === DEFAULT_BASE_SEED ? '' : `FAULT_MATRIX_SEED=${baseSeed} `;
  // `: <id>` as the matrix names its blocks (`<group>: <id>`): `crash.sigkill` alone would also pick `custom.crash.sigkill`.
  return `\`${env}npx vitest run --project faults -t ': ${id}'\``;
}

/** Each custom-bus row right after the classic row of its fault; the others in the report's order. */
function besideClassic(rows: readonly ResultRow[]): ResultRow[] {
  const custom = new Map(rows.filter((row) => row.bus === 'custom').map((row) => [row.id, row]));
  const placed = new Set<ResultRow>();
  const ordered: ResultRow[] = [];
  for (const row of rows) {
    if (row.bus === 'custom') continue;
    ordered.push(row);
    const variant = custom.get(`custom.${row.id}`);
    if (variant !== undefined) {
      ordered.push(variant);
      placed.add(variant);
    }
  }
  return [...ordered, ...rows.filter((row) => row.bus === 'custom' && !placed.has(row))];
}

/** The duplicates cell: on the custom bus, with the re-sends the bus dropped. */
function duplicatesCell(row: ResultRow): string {
  if (row.bus !== 'custom') return figure(row.maxDuplicates);
  return `${figure(row.maxDuplicates)} (bus de-duplicated up to ${figure(row.maxDeduplicated ?? 0)})`;
}

function render(report: ResultsReport): string {
  const at = new Date(report.at);
  const when = Number.isNaN(at.getTime())
    ? report.at
    : `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const model = cpus()[0]?.model.trim() || 'unknown CPU';
  const totals = report.rows.reduce(
    (sum, row) => ({
      runs: sum.runs + row.runs,
      events: sum.events + row.events,
      lost: sum.lost + row.lost,
      maxDuplicates: Math.max(sum.maxDuplicates, row.maxDuplicates),
    }),
    { runs: 0, events: 0, lost: 0, maxDuplicates: 0 },
  );
  const lines = [
    `Run of ${when}, base seed ${report.baseSeed}${report.baseSeed === DEFAULT_BASE_SEED ? ' (the default)' : ''}, ` +
      `${availableParallelism()} cores (${model}), Node ${process.version}. ` +
      `Generated by \`scripts/reliability-report.ts\` from \`${resultsPath}\`; do not edit by hand.`,
    '',
    '| group | fault | bus | runs (seeds) | events | lost | max duplicates | reproduce |',
    '|---|---|---|---|---|---|---|---|',
    ...besideClassic(report.rows).map((row) =>
      [
        '',
        cell(row.group),
        `\`${row.id}\`: ${cell(row.fault)}`,
        row.bus ?? 'classic',
        `${row.planned !== undefined && row.planned > row.runs ? `${row.runs} of ${row.planned} (**${row.planned - row.runs} failed**)` : row.runs} (${seedRange(row.seeds)})`,
        figure(row.events),
        figure(row.lost),
        duplicatesCell(row),
        reproduce(row.id, report.baseSeed),
        '',
      ]
        .join(' | ')
        .trim(),
    ),
    `| **all** | ${report.rows.length} faults | | ${totals.runs} | ${figure(totals.events)} | ${figure(totals.lost)} | ${figure(totals.maxDuplicates)} | \`npm run test:faults\` |`,
  ];
  return lines.join('\n');
}

const report = readReport(resultsPath);
const doc = readFileSync(docPath, 'utf8');
const start = doc.indexOf(START);
const end = doc.indexOf(END);
if (start === -1 || end === -1 || end < start) fail(`${docPath} has no ${START} … ${END} section`);
const next = `${doc.slice(0, start + START.length)}\n${render(report)}\n${doc.slice(end)}`;
writeFileSync(docPath, next);
console.log(`reliability-report: ${docPath} updated from ${resultsPath} (${report.rows.length} faults)`);
