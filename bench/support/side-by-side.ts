/**
 * Two builds of the handler drained side by side at Lambda's CPU share for a memory size: the
 * shipped one, and a second with one module swapped by an esbuild plugin (our hand-written code
 * for the library's, or the other way round), everything else the same code. Drains alternate
 * shipped, swapped, swapped, shipped… (ABBA: a drift of the machine's speed falls on both alike),
 * on each bus asked for, and each pair of one round gives a ratio, so that drift between rounds
 * cancels out. What `bench:signer` and `bench:cbor` share.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Plugin } from 'esbuild';
import { buildHandlerAsset, LAYOUT } from '../../scripts/build/artifacts.ts';
import { nodeVersionOf, spawnedNode } from '../../test/support/spawned-node.ts';
import { type Bench, type RunFigures, runOurs, type Settings, startBench } from '../throughput.ts';
import { CpuShare } from './cpu-share.ts';

export type BusKind = 'classic' | 'custom';

export interface SideBySideOptions {
  /** The name of the shipped build's variant, e.g. `ours` or `library`. */
  readonly shipped: string;
  /** The swapped build: its name, the plugin that makes it, and a name its code alone holds. */
  readonly swapped: { readonly name: string; readonly plugin: Plugin; readonly marker: string };
  /** Which build holds `swapped.marker`: the swapped one (our code swapped in) or the shipped one. */
  readonly markerIn: 'shipped' | 'swapped';
  readonly buses: readonly BusKind[];
  readonly events: number;
  readonly rounds: number;
  readonly memoryMb: number;
  readonly log: (line: string) => void;
}

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
const median = (list: readonly number[]) => {
  const sorted = [...list].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

function holds(dir: string, marker: string): boolean {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.mjs'))
    .some((file) => readFileSync(path.join(dir, file), 'utf8').includes(marker));
}

/** The drains, and per bus the swapped build's CPU per event over the shipped one's. */
export async function drainSideBySide(options: SideBySideOptions) {
  const { shipped, swapped, events, rounds, memoryMb, log } = options;
  const settings: Settings = {
    events,
    upstreamLatencyMs: 25,
    publishLatencyMs: 15,
    pageSize: 100,
    concurrency: 8,
  };
  const bench = await startBench();
  const swappedRoot = mkdtempSync(path.join(tmpdir(), `poller-${swapped.name}-`));
  try {
    await buildHandlerAsset(swappedRoot, [swapped.plugin]);
    const swappedDir = path.join(swappedRoot, LAYOUT.handlerDir);
    // A swap that matched nothing would compare a build with itself.
    const inShipped = holds(bench.artifact.codeDir, swapped.marker);
    const inSwapped = holds(swappedDir, swapped.marker);
    if (inShipped === inSwapped || inSwapped !== (options.markerIn === 'swapped')) {
      throw new Error(
        `the swap of ${swapped.name} did not take (marker ${swapped.marker}); check its plugin`,
      );
    }
    const variants: ReadonlyArray<readonly [string, Bench]> = [
      [shipped, bench],
      [swapped.name, { ...bench, artifact: { ...bench.artifact, codeDir: swappedDir } }],
    ];
    const made = CpuShare.create(memoryMb, `banking-events-poller-${swapped.name}-${process.pid}`);
    if (!made.available) log(`no CPU share here (${made.reason}); drains run unthrottled`);
    const problems: string[] = [];
    const buses = [];
    try {
      for (const bus of options.buses) {
        const busSettings: Settings = {
          ...settings,
          ...(made.available ? { cpuShare: made.share } : {}),
          ...(bus === 'custom' ? { bus: { kind: 'custom', groupBy: 'program' } as const } : {}),
        };
        const runs = new Map(variants.map(([name]) => [name, [] as RunFigures[]]));
        for (let index = 0; index < rounds; index += 1) {
          const order = index % 2 === 0 ? variants : [...variants].reverse();
          for (const [name, variant] of order) {
            const figures = await runOurs(variant, busSettings);
            problems.push(...figures.lossProblems.map((problem) => `${bus} ${name}: ${problem}`));
            runs.get(name)!.push(figures);
            log(
              `${bus} round ${index + 1} ${name}: ${round(figures.cpuMsPer1000)} ms CPU per 1 000 events ` +
                `(${round(figures.drainCpuMsPer1000)} after init), ${round(figures.eventsPerSecond, 0)} events/s`,
            );
          }
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
        const pairs = runs
          .get(swapped.name)!
          .map((run, index) =>
            round(run.drainCpuMsPer1000 / runs.get(shipped)![index]!.drainCpuMsPer1000, 3),
          );
        buses.push({
          bus,
          rows,
          [`${swapped.name}_over_${shipped}_after_init`]: { median: round(median(pairs), 3), pairs },
        });
      }
    } finally {
      if (made.available) made.share.dispose();
    }
    return {
      at: new Date().toISOString(),
      /** The handler's processes run on this Node (the Lambda runtime's, when installed). */
      handler_node: nodeVersionOf(spawnedNode().path),
      memory_mb: memoryMb,
      cpu_share: made.available ? round(made.share.cores, 3) : null,
      ...(made.available ? {} : { share_unavailable: made.reason }),
      settings: { events, rounds, pageSize: settings.pageSize, concurrency: settings.concurrency },
      buses,
      problems,
    };
  } finally {
    rmSync(swappedRoot, { recursive: true, force: true });
    await bench.close();
  }
}
