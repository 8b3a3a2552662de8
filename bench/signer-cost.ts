/**
 * `npm run bench:signer`: the handler's CPU per 1 000 events drained with PutEvents signed by our
 * signer (`functions/adapters/aws/sigv4.ts`) and by the library's (`@smithy/signature-v4`, put in
 * its place in a second build of the same handler: support/library-sigv4.ts), side by side in one
 * run at Lambda's CPU share for 256 MB, drains alternating ours, library, library, ours…
 * Everything else (undici, the body, the endpoint from the SDK's configuration) is the same code.
 *
 *   npm run bench:signer -- [--events 3000] [--rounds 4] [--memory 256]
 *
 * Prints the figures and writes bench/results/signer-<date>.json. Where no CPU cgroup can be made
 * the drains run unthrottled and CPU per 1 000 events is still what is compared.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildHandlerAsset, LAYOUT } from '../scripts/build/artifacts.ts';
import { nodeVersionOf, spawnedNode } from '../test/support/spawned-node.ts';
import { CpuShare } from './support/cpu-share.ts';
import { signerSwap } from './support/library-sigv4.ts';
import { type Bench, type RunFigures, runOurs, type Settings, startBench } from './throughput.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '4' },
    memory: { type: 'string', default: '256' },
  },
});
const events = Number(values.events);
const rounds = Number(values.rounds);
const memoryMb = Number(values.memory);
const settings: Settings = {
  events,
  upstreamLatencyMs: 25,
  publishLatencyMs: 15,
  pageSize: 100,
  concurrency: 8,
};

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
const median = (list: readonly number[]) => {
  const sorted = [...list].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const log = (line: string) => process.stderr.write(`[bench:signer] ${line}\n`);

const bench = await startBench();
const libraryRoot = mkdtempSync(path.join(tmpdir(), 'poller-library-signer-'));
try {
  await buildHandlerAsset(libraryRoot, [signerSwap()]);
  // A swap that matched nothing would compare ours with ours: only the first build may hold our
  // signer (its `amzDateOf`, a name the minifier keeps). The library's code is in both builds'
  // chunks anyway, for the SDK's own clients.
  const holdsOurs = (dir: string) =>
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.mjs'))
      .some((file) => readFileSync(path.join(dir, file), 'utf8').includes('amzDateOf'));
  if (!holdsOurs(bench.artifact.codeDir) || holdsOurs(path.join(libraryRoot, LAYOUT.handlerDir))) {
    throw new Error(
      'the library build still holds our signer, or the shipped one lacks it; check signerSwap',
    );
  }
  const variants: ReadonlyArray<readonly [string, Bench]> = [
    ['ours', bench],
    [
      'library',
      { ...bench, artifact: { ...bench.artifact, codeDir: path.join(libraryRoot, LAYOUT.handlerDir) } },
    ],
  ];
  const made = CpuShare.create(memoryMb, `banking-events-poller-signer-${process.pid}`);
  if (!made.available) log(`no CPU share here (${made.reason}); drains run unthrottled`);
  const shared = made.available ? { ...settings, cpuShare: made.share } : settings;
  const runs = new Map(variants.map(([name]) => [name, [] as RunFigures[]]));
  const problems: string[] = [];
  try {
    for (let index = 0; index < rounds; index += 1) {
      // ABBA: a drift of the machine's speed during the run falls on both alike.
      const order = index % 2 === 0 ? variants : [...variants].reverse();
      for (const [name, variant] of order) {
        const figures = await runOurs(variant, shared);
        problems.push(...figures.lossProblems.map((problem) => `${name}: ${problem}`));
        runs.get(name)!.push(figures);
        log(
          `round ${index + 1} ${name}: ${round(figures.cpuMsPer1000)} ms CPU per 1 000 events ` +
            `(${round(figures.drainCpuMsPer1000)} after init), ${round(figures.eventsPerSecond, 0)} events/s`,
        );
      }
    }
  } finally {
    if (made.available) made.share.dispose();
  }
  const rows = variants.map(([name]) => {
    const figures = runs.get(name)!;
    return {
      variant: name,
      cpu_ms_per_1000_events: round(median(figures.map((run) => run.cpuMsPer1000))),
      cpu_ms_per_1000_events_after_init: round(median(figures.map((run) => run.drainCpuMsPer1000))),
      init_cpu_ms: round(median(figures.map((run) => run.initCpuMs)), 0),
      events_per_s: round(median(figures.map((run) => run.eventsPerSecond)), 0),
      each_after_init: figures.map((run) => round(run.drainCpuMsPer1000)),
    };
  });
  const [ours, library] = rows as [(typeof rows)[number], (typeof rows)[number]];
  // Pair by pair (ours and library of one round), so drift between rounds cancels out.
  const pairRatios = runs
    .get('library')!
    .map((run, index) => round(run.drainCpuMsPer1000 / runs.get('ours')![index]!.drainCpuMsPer1000, 3));
  const result = {
    at: new Date().toISOString(),
    /** The handler's processes run on this Node (the Lambda runtime's, when installed). */
    handler_node: nodeVersionOf(spawnedNode().path),
    memory_mb: memoryMb,
    cpu_share: made.available ? round(made.share.cores, 3) : null,
    ...(made.available ? {} : { share_unavailable: made.reason }),
    settings: { events, rounds, pageSize: settings.pageSize, concurrency: settings.concurrency },
    rows,
    library_over_ours_after_init: { median: round(median(pairRatios), 3), pairs: pairRatios },
    library_over_ours_whole: round(library.cpu_ms_per_1000_events / ours.cpu_ms_per_1000_events, 3),
    problems,
  };
  const json = `${JSON.stringify(result, null, 2)}\n`;
  process.stdout.write(json);
  const day = new Date().toISOString().slice(0, 10);
  writeFileSync(path.join(import.meta.dirname, 'results', `signer-${day}.json`), json);
  if (problems.length > 0) process.exitCode = 1;
} finally {
  rmSync(libraryRoot, { recursive: true, force: true });
  await bench.close();
}
