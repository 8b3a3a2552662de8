/**
 * The drain as deployed: the handler's process, and the naive loop's, held to the CPU share Lambda
 * gives a function of the configured memory (memory ÷ 1 769 MB of a core, see support/cpu-share.ts),
 * while the simulator, moto and the PutEvents stand-in keep the machine's cores as the real
 * services would. Where no CPU cgroup can be made, says why and reports CPU per 1 000 events
 * unthrottled, with the drain that CPU alone would allow at the share.
 *
 * Each bus in turn, round after round (the machine is shared and noisy: compare within a round):
 * the classic bus against the naive loop of bench/naive-poller.ts (batches of 10, one request at
 * a time), and the Custom Event Bus (EVENT_BUS_KIND=custom, its stand-in behind the same publish
 * latency) with EVENT_GROUP_BY=program and =none against bench/naive-custom-bus-poller.ts: one
 * event per PutEvents, awaited, over the same signed RPC v2 CBOR path (at most 1 000 events: it
 * is slow), and the same loop with 100 entries per request, the bus's maximum.
 *
 * A further drain at the first size runs a readable (unminified) build under a sampling profiler
 * and splits its CPU by where it goes (AWS SDK, undici, our code, GC…): shares, not absolute times.
 *
 *   npm run bench:deployed -- [--events 20000] [--memory 256,1024] [--bus classic,custom]
 *                             [--rounds 1] [--no-profile] [--profile-bus classic|custom] [--out <file>]
 *
 * On its own it prints the figures and writes them to bench/results/deployed-<date>.json.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildProfilingBundle, CPU_CATEGORIES, cpuBreakdown } from './support/cpu-breakdown.ts';
import { CpuShare } from './support/cpu-share.ts';
import {
  type Bench,
  type CustomBusSettings,
  type RunFigures,
  runNaive,
  runOurs,
  type Settings,
  startBench,
} from './throughput.ts';

export type BusKind = 'classic' | 'custom';
export const BUS_KINDS: readonly BusKind[] = ['classic', 'custom'];

/** The handler's drains on each bus kind, and the naive loop it is compared with. */
interface Variant {
  readonly name: string;
  readonly kind: BusKind;
  readonly bus?: CustomBusSettings;
}
const VARIANTS: readonly Variant[] = [
  { name: 'classic', kind: 'classic' },
  { name: 'custom, EVENT_GROUP_BY=program', kind: 'custom', bus: { kind: 'custom', groupBy: 'program' } },
  { name: 'custom, EVENT_GROUP_BY=none', kind: 'custom', bus: { kind: 'custom', groupBy: 'none' } },
];
/** The naive loop with one event per request is slow: its rate is measured on this many at most. */
const ONE_PER_REQUEST_EVENTS = 1_000;

export interface DeployedFigures {
  /** `classic`, or `custom, EVENT_GROUP_BY=…`. */
  readonly bus: string;
  /** The naive loop compared with: what it sends per PutEvents request. */
  readonly naive_loop: string;
  readonly round: number;
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
  /** On the custom bus, the naive loop at the bus's 100 entries per request too. */
  readonly naive_100_per_request?: {
    readonly events_per_s: number;
    readonly ours_over_naive: number;
    readonly cpu_ms_per_1000_events: number;
  };
}

export interface CpuBreakdownFigures {
  readonly memory_mb: number;
  readonly bus: string;
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
  label: { bus: string; naiveLoop: string; round: number },
  memoryMb: number,
  ours: RunFigures,
  naive: RunFigures,
  unavailable?: string,
  naive100?: RunFigures,
): DeployedFigures {
  const cores = memoryMb / 1_769;
  const bound = (run: RunFigures) => round((1_000 / run.cpuMsPer1000) * 1_000 * cores, 0);
  return {
    bus: label.bus,
    naive_loop: label.naiveLoop,
    round: label.round,
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
    ...(naive100 === undefined
      ? {}
      : {
          naive_100_per_request: {
            events_per_s: round(naive100.eventsPerSecond, 0),
            ours_over_naive: round(ours.eventsPerSecond / naive100.eventsPerSecond),
            cpu_ms_per_1000_events: round(naive100.cpuMsPer1000),
          },
        }),
  };
}

/**
 * Ours and the naive loop at each memory size's share, one after the other, for each bus kind in
 * `buses`, `rounds` times over (the naive loops of the custom bus once per round, shared by both
 * group settings).
 */
export async function drainsAsDeployed(
  bench: Bench,
  settings: Settings,
  memorySizes: readonly number[],
  log: (line: string) => void,
  options: { readonly buses?: readonly BusKind[]; readonly rounds?: number } = {},
): Promise<{ readonly figures: DeployedFigures[]; readonly problems: string[] }> {
  const buses = options.buses ?? ['classic'];
  const variants = VARIANTS.filter((variant) => buses.includes(variant.kind));
  const results: DeployedFigures[] = [];
  const problems: string[] = [];
  for (let roundNumber = 1; roundNumber <= (options.rounds ?? 1); roundNumber += 1) {
    for (const memoryMb of memorySizes) {
      const made = CpuShare.create(memoryMb, `banking-events-poller-bench-${memoryMb}-${process.pid}`);
      if (!made.available) {
        log(`${memoryMb} MB: no CPU share here (${made.reason}); reporting CPU per 1 000 events unthrottled`);
      }
      const shared = made.available ? { ...settings, cpuShare: made.share } : settings;
      const at = `${memoryMb} MB${made.available ? ' share' : ''}, round ${roundNumber}`;
      try {
        const run = async (name: string, drain: () => Promise<RunFigures>) => {
          const figures = await drain();
          log(
            `${at}: ${name} ${round(figures.eventsPerSecond, 0)} events/s, ${round(figures.cpuMsPer1000)} ms CPU per 1 000 events`,
          );
          problems.push(...figures.lossProblems);
          return figures;
        };
        let customNaive: { one: RunFigures; hundred: RunFigures } | undefined;
        for (const variant of variants) {
          const ours = await run(`ours, ${variant.name}`, () =>
            runOurs(bench, { ...shared, bus: variant.bus }),
          );
          const unavailable = made.available ? undefined : made.reason;
          const label = { bus: variant.name, round: roundNumber };
          if (variant.kind === 'classic') {
            const naive = await run('naive, classic', () => runNaive(bench, shared));
            results.push(
              figures(
                { ...label, naiveLoop: '10 events per PutEvents, awaited' },
                memoryMb,
                ours,
                naive,
                unavailable,
              ),
            );
            continue;
          }
          customNaive ??= {
            one: await run('naive, custom, 1 per request', () =>
              runNaive(bench, {
                ...shared,
                events: Math.min(shared.events, ONE_PER_REQUEST_EVENTS),
                bus: { kind: 'custom', groupBy: 'program', naiveBatch: 1 },
              }),
            ),
            hundred: await run('naive, custom, 100 per request', () =>
              runNaive(bench, { ...shared, bus: { kind: 'custom', groupBy: 'program', naiveBatch: 100 } }),
            ),
          };
          results.push(
            figures(
              { ...label, naiveLoop: '1 event per PutEvents, awaited' },
              memoryMb,
              ours,
              customNaive.one,
              unavailable,
              customNaive.hundred,
            ),
          );
        }
      } finally {
        if (made.available) made.share.dispose();
      }
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
  bus?: CustomBusSettings,
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
    await runOurs(profiled, { ...settings, bus, ...(made.available ? { cpuShare: made.share } : {}) });
    const totals = cpuBreakdown(profiles, bundle);
    const sum = Object.values(totals).reduce((total, value) => total + value, 0);
    return {
      memory_mb: memoryMb,
      bus: bus === undefined ? 'classic' : `custom, EVENT_GROUP_BY=${bus.groupBy}`,
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
    // BENCH_KEEP_PROFILE=<dir>: keeps the readable bundle and its profiles, for a closer look (DevTools).
    const keep = process.env.BENCH_KEEP_PROFILE;
    if (keep !== undefined && keep !== '') cpSync(dir, keep, { recursive: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      events: { type: 'string', default: '20000' },
      memory: { type: 'string', default: '256,1024' },
      /** Bus kinds drained: classic, custom (EVENT_GROUP_BY=program and =none), or both. */
      bus: { type: 'string', default: 'classic,custom' },
      /** Times the whole sequence is repeated. */
      rounds: { type: 'string', default: '1' },
      /** Skips the profiled drain (the CPU breakdown). */
      'no-profile': { type: 'boolean', default: false },
      /** The bus of the profiled drain (custom: EVENT_GROUP_BY=program). */
      'profile-bus': { type: 'string', default: 'classic' },
      /** Where the results go, under bench/results/. @default deployed-<date>.json */
      out: { type: 'string' },
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
    const buses = (values.bus ?? 'classic').split(',').map((kind) => {
      if (!(BUS_KINDS as readonly string[]).includes(kind))
        throw new Error(`--bus: ${kind} is not one of ${BUS_KINDS.join(', ')}`);
      return kind as BusKind;
    });
    const { figures: drains, problems } = await drainsAsDeployed(bench, settings, memorySizes, log, {
      buses,
      rounds: Number(values.rounds),
    });
    const profileBus = values['profile-bus'] === 'custom' ? 'custom, EVENT_GROUP_BY=program' : 'classic';
    const first = drains.find((drain) => drain.bus === profileBus);
    const breakdown =
      !values['no-profile'] && first !== undefined
        ? await cpuBreakdownAsDeployed(
            bench,
            settings,
            first.memory_mb,
            first.cpu_ms_per_1000_events.ours,
            profileBus === 'classic' ? undefined : { kind: 'custom', groupBy: 'program' },
          )
        : undefined;
    const json = `${JSON.stringify({ at: new Date().toISOString(), settings, drains, breakdown, problems }, null, 2)}\n`;
    process.stdout.write(json);
    const day = new Date().toISOString().slice(0, 10);
    writeFileSync(path.join(import.meta.dirname, 'results', values.out ?? `deployed-${day}.json`), json);
    if (problems.length > 0) process.exitCode = 1;
  } finally {
    await bench.close();
  }
}
