/**
 * The drain as deployed: the handler's process, and the naive loop's, held to the CPU share Lambda
 * gives a function of the configured memory (memory ÷ 1 769 MB of a core, see support/cpu-share.ts),
 * while the simulator, moto and the PutEvents stand-in keep the machine's cores as the real
 * services would. Where no CPU cgroup can be made, says why and reports CPU per 1 000 events
 * unthrottled, with the drain that CPU alone would allow at the share.
 *
 * A further drain at the first size runs a readable (unminified) build under a sampling profiler
 * and splits its CPU by where it goes (AWS SDK, undici, our code, GC…): shares, not absolute times.
 *
 *   npm run bench:deployed -- [--events 20000] [--memory 256,1024] [--no-profile]
 *
 * On its own it prints the figures and writes them to bench/results/deployed-<date>.json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildProfilingBundle, CPU_CATEGORIES, cpuBreakdown } from './support/cpu-breakdown.ts';
import { CpuShare } from './support/cpu-share.ts';
import { type Bench, type RunFigures, runNaive, runOurs, type Settings, startBench } from './throughput.ts';

export interface DeployedFigures {
  readonly memory_mb: number;
  readonly cpu_share_of_a_core: number;
  /** Why the share could not be applied; the figures below are then unthrottled. */
  readonly share_unavailable?: string;
  readonly ours_events_per_s: number;
  readonly naive_events_per_s: number;
  readonly ours_over_naive: number;
  /** CPU of the whole process, init included, per 1 000 events drained. */
  readonly cpu_ms_per_1000_events: { readonly ours: number; readonly naive: number };
  /** Ours without its init phase (Node's start, the handler's import): paid once per environment. */
  readonly ours_cpu_ms_per_1000_events_after_init: number;
  readonly ours_init_cpu_ms: number;
  /** Without a share: the drain CPU alone would allow at it (1 000 ÷ CPU ms per event × share). */
  readonly cpu_bound_events_per_s?: { readonly ours: number; readonly naive: number };
  readonly peak_rss_mb: { readonly ours: number; readonly naive: number };
  readonly drain_seconds: { readonly ours: number; readonly naive: number };
}

export interface CpuBreakdownFigures {
  readonly memory_mb: number;
  readonly events: number;
  /** Each category's share of the sampled CPU (init included). */
  readonly percent: Record<string, number>;
  /**
   * The shares applied to the unprofiled drain's CPU per 1 000 events: the sampling profiler adds
   * overhead of its own, and under a CPU quota its samples' time deltas are wall time.
   */
  readonly ms_per_1000_events: Record<string, number>;
}

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

function figures(
  memoryMb: number,
  ours: RunFigures,
  naive: RunFigures,
  unavailable?: string,
): DeployedFigures {
  const cores = memoryMb / 1_769;
  const bound = (run: RunFigures) => round((1_000 / run.cpuMsPer1000) * 1_000 * cores, 0);
  return {
    memory_mb: memoryMb,
    cpu_share_of_a_core: round(cores, 3),
    ...(unavailable === undefined ? {} : { share_unavailable: unavailable }),
    ours_events_per_s: round(ours.eventsPerSecond, 0),
    naive_events_per_s: round(naive.eventsPerSecond, 0),
    ours_over_naive: round(ours.eventsPerSecond / naive.eventsPerSecond),
    cpu_ms_per_1000_events: { ours: round(ours.cpuMsPer1000), naive: round(naive.cpuMsPer1000) },
    ours_cpu_ms_per_1000_events_after_init: round(ours.drainCpuMsPer1000),
    ours_init_cpu_ms: round(ours.initCpuMs, 0),
    ...(unavailable === undefined
      ? {}
      : { cpu_bound_events_per_s: { ours: bound(ours), naive: bound(naive) } }),
    peak_rss_mb: { ours: round(ours.peakRssMiB, 1), naive: round(naive.peakRssMiB, 1) },
    drain_seconds: { ours: round(ours.seconds), naive: round(naive.seconds) },
  };
}

/** Ours and the naive loop at each memory size's share, one after the other. */
export async function drainsAsDeployed(
  bench: Bench,
  settings: Settings,
  memorySizes: readonly number[],
  log: (line: string) => void,
): Promise<{ readonly figures: DeployedFigures[]; readonly problems: string[] }> {
  const results: DeployedFigures[] = [];
  const problems: string[] = [];
  for (const memoryMb of memorySizes) {
    const made = CpuShare.create(memoryMb, `banking-events-poller-bench-${memoryMb}-${process.pid}`);
    if (!made.available) {
      log(`${memoryMb} MB: no CPU share here (${made.reason}); reporting CPU per 1 000 events unthrottled`);
      const ours = await runOurs(bench, settings);
      const naive = await runNaive(bench, settings);
      problems.push(...ours.lossProblems, ...naive.lossProblems);
      results.push(figures(memoryMb, ours, naive, made.reason));
      continue;
    }
    try {
      const shared = { ...settings, cpuShare: made.share };
      const ours = await runOurs(bench, shared);
      log(`${memoryMb} MB share: ours ${round(ours.eventsPerSecond, 0)} events/s`);
      const naive = await runNaive(bench, shared);
      log(`${memoryMb} MB share: naive ${round(naive.eventsPerSecond, 0)} events/s`);
      problems.push(...ours.lossProblems, ...naive.lossProblems);
      results.push(figures(memoryMb, ours, naive));
    } finally {
      made.share.dispose();
    }
  }
  return { figures: results, problems };
}

/** One more drain at `memoryMb`'s share (if any) of a readable build under a sampling profiler. */
export async function cpuBreakdownAsDeployed(
  bench: Bench,
  settings: Settings,
  memoryMb: number,
  unprofiledCpuMsPer1000: number,
): Promise<CpuBreakdownFigures> {
  const dir = mkdtempSync(path.join(tmpdir(), 'poller-profile-'));
  const code = path.join(dir, 'code');
  const profiles = path.join(dir, 'profiles');
  mkdirSync(profiles);
  const made = CpuShare.create(memoryMb, `banking-events-poller-profile-${process.pid}`);
  try {
    const bundle = await buildProfilingBundle(
      path.join(import.meta.dirname, '../functions/poller/handler.ts'),
      code,
    );
    const profiled: Bench = {
      ...bench,
      profileDir: profiles,
      artifact: {
        ...bench.artifact,
        codeDir: code,
        environment: { ...bench.artifact.environment, BENCH_PROFILE_DIR: profiles },
      },
      handlerNodeArgs: ['--import', path.join(import.meta.dirname, 'support/profile-hook.mjs')],
    };
    await runOurs(profiled, { ...settings, ...(made.available ? { cpuShare: made.share } : {}) });
    const totals = cpuBreakdown(profiles, bundle);
    const sum = Object.values(totals).reduce((total, value) => total + value, 0);
    return {
      memory_mb: memoryMb,
      events: settings.events,
      percent: Object.fromEntries(
        CPU_CATEGORIES.map((category) => [category, round((totals[category] / sum) * 100, 1)]),
      ),
      ms_per_1000_events: Object.fromEntries(
        CPU_CATEGORIES.map((category) => [
          category,
          round((totals[category] / sum) * unprofiledCpuMsPer1000, 1),
        ]),
      ),
    };
  } finally {
    if (made.available) made.share.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      events: { type: 'string', default: '20000' },
      memory: { type: 'string', default: '256,1024' },
      /** Skips the profiled drain (the CPU breakdown). */
      'no-profile': { type: 'boolean', default: false },
    },
  });
  const settings: Settings = {
    events: Number(values.events),
    upstreamLatencyMs: 25,
    publishLatencyMs: 15,
    pageSize: 100,
    concurrency: 8,
  };
  const memorySizes = (values.memory ?? '256').split(',').map(Number);
  const bench = await startBench();
  try {
    const log = (line: string) => process.stderr.write(`[bench:deployed] ${line}\n`);
    const { figures: drains, problems } = await drainsAsDeployed(bench, settings, memorySizes, log);
    const first = drains[0];
    const breakdown =
      !values['no-profile'] && first !== undefined
        ? await cpuBreakdownAsDeployed(bench, settings, first.memory_mb, first.cpu_ms_per_1000_events.ours)
        : undefined;
    const json = `${JSON.stringify({ at: new Date().toISOString(), settings, drains, breakdown, problems }, null, 2)}\n`;
    process.stdout.write(json);
    const day = new Date().toISOString().slice(0, 10);
    writeFileSync(path.join(import.meta.dirname, 'results', `deployed-${day}.json`), json);
    if (problems.length > 0) process.exitCode = 1;
  } finally {
    await bench.close();
  }
}
