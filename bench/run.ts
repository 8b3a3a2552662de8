/**
 * `npm run bench`: the figures behind docs/performance.md, measured side by side in
 * one run (the machine is shared and noisy: compare ratios within a run, not numbers across runs).
 *
 *   npm run bench -- [--events 50000] [--upstream-ms 25] [--publish-ms 15] [--page 100] [--quick]
 *
 * Leads with the drain as deployed: the handler's process (and the naive loop's) at the CPU share
 * Lambda gives 256 MB and 1 024 MB (bench/as-deployed.ts), on the classic bus and on the Custom
 * Event Bus (EVENT_GROUP_BY=program and =none), and where that CPU goes on each; then the same
 * drain on the machine's cores, the sweep, caps, latency and the bundle.
 *
 * Writes a table to stdout, bench/results/<date>.json and latest.json, and
 * bench/results/throughput-vs-latency.svg. `--quick` shrinks every run (for trying the harness).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { cpuBreakdownAsDeployed, drainsAsDeployed } from './as-deployed.ts';
import { compareModes, LATENCY_MODES, type LatencySettings, latencyTable } from './latency.ts';
import { bundleLikeThePoller } from './support/bundle.ts';
import { lineChart } from './support/svg-chart.ts';
import {
  analyticBound,
  bundleSize,
  coldImports,
  type RunFigures,
  runNaive,
  runOurs,
  type Settings,
  simulatorCeiling,
  startBench,
} from './throughput.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '50000' },
    'upstream-ms': { type: 'string', default: '25' },
    'publish-ms': { type: 'string', default: '15' },
    page: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '8' },
    /** Memory sizes whose CPU share the as-deployed drains run at. */
    memory: { type: 'string', default: '256,1024' },
    quick: { type: 'boolean', default: false },
  },
});
const quick = values.quick ?? false;
const base: Settings = {
  events: quick ? 5_000 : Number(values.events),
  upstreamLatencyMs: Number(values['upstream-ms']),
  publishLatencyMs: Number(values['publish-ms']),
  pageSize: Number(values.page),
  concurrency: Number(values.concurrency),
};
const sweepEvents = quick ? 1_000 : 5_000;
const deployedEvents = quick ? 2_000 : 20_000;
const memorySizes = (values.memory ?? '256,1024').split(',').map(Number);
const resultsDir = path.join(import.meta.dirname, 'results');
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
const bench = await startBench();
try {
  log(`as deployed: ${deployedEvents} events at the CPU share of ${memorySizes.join(' MB, ')} MB`);
  const deployedSettings = { ...base, events: deployedEvents };
  const deployed = await drainsAsDeployed(bench, deployedSettings, memorySizes, log, {
    buses: ['classic', 'custom'],
  });
  log(`where the CPU goes at ${memorySizes[0]} MB (profiled drains)`);
  const profiledAt = deployed.figures.find((drain) => drain.bus === 'classic')!;
  const breakdown = await cpuBreakdownAsDeployed(
    bench,
    deployedSettings,
    profiledAt.memory_mb,
    profiledAt.cpu_ms_per_1000_events.ours,
  );
  const customProfiledAt = deployed.figures.find(
    (drain) => drain.bus === 'custom, EVENT_GROUP_BY=program' && drain.memory_mb === profiledAt.memory_mb,
  )!;
  const customBreakdown = await cpuBreakdownAsDeployed(
    bench,
    deployedSettings,
    customProfiledAt.memory_mb,
    customProfiledAt.cpu_ms_per_1000_events.ours,
    { kind: 'custom', groupBy: 'program' },
  );

  log(
    `unthrottled: ${base.events} events, upstream ${base.upstreamLatencyMs} ms, PutEvents ${base.publishLatencyMs} ms`,
  );
  const ours = await runOurs(bench, base);
  log(`ours ${round(ours.eventsPerSecond, 0)} events/s`);
  const naive = await runNaive(bench, base);
  log(`naive ${round(naive.eventsPerSecond, 0)} events/s`);
  const bound = analyticBound(base);
  const ceiling = await simulatorCeiling(bench, base);

  const sweep: Array<{
    setting: string;
    upstreamLatencyMs: number;
    pageSize: number;
    ours: RunFigures;
    naive: RunFigures;
    bound: number;
  }> = [];
  for (const [upstreamLatencyMs, pageSize] of [
    [5, 100],
    [25, 100],
    [100, 100],
    [25, 50],
    [25, 250],
  ] as const) {
    const settings = { ...base, events: sweepEvents, upstreamLatencyMs, pageSize };
    log(`sweep: upstream ${upstreamLatencyMs} ms, page ${pageSize}`);
    sweep.push({
      setting: `upstream ${upstreamLatencyMs} ms, page ${pageSize}`,
      upstreamLatencyMs,
      pageSize,
      ours: await runOurs(bench, settings),
      naive: await runNaive(bench, settings),
      bound: analyticBound(settings),
    });
  }

  log('PutEvents cap of 50 requests/s');
  const capped = await runOurs(bench, { ...base, events: quick ? 1_000 : 2_000, maxRequestsPerSecond: 50 });
  log('20 % of PutEvents requests throttled');
  const throttled = await runOurs(bench, { ...base, events: sweepEvents, throttleRatio: 0.2 });
  // Delivery latency, poll against stream, over three kinds of traffic (bench/latency.ts).
  const latencyModes = LATENCY_MODES.filter((mode) => mode.name !== 'stream, lookup, linger 0');
  const traffic: Record<string, LatencySettings> = {
    'steady, 12 ms each way': {
      oneWayMs: 12,
      publishLatencyMs: base.publishLatencyMs,
      events: quick ? 30 : 100,
      spacingMs: 100,
    },
    'bursts of 10, 12 ms each way': {
      oneWayMs: 12,
      publishLatencyMs: base.publishLatencyMs,
      events: quick ? 50 : 200,
      spacingMs: 250,
      burst: 10,
    },
    '100 events/s, 50 ms each way': {
      oneWayMs: 50,
      publishLatencyMs: base.publishLatencyMs,
      events: quick ? 100 : 300,
      spacingMs: 10,
    },
  };
  const latency: Record<string, Awaited<ReturnType<typeof compareModes>>> = {};
  for (const [name, settings] of Object.entries(traffic)) {
    latency[name] = await compareModes(bench, settings, latencyModes, (line) => log(`${line} (${name})`));
  }

  log('bundle size and cold import');
  const sdkOnly = path.join(os.tmpdir(), `sdk-only-${process.pid}`, 'index.mjs');
  await bundleLikeThePoller(path.join(import.meta.dirname, 'support', 'sdk-only-entry.ts'), sdkOnly);
  const [oursImportMs = Number.NaN, sdkImportMs = Number.NaN] = await coldImports([
    path.join(bench.artifact.codeDir, 'index.mjs'),
    sdkOnly,
  ]);
  const size = bundleSize(bench.artifact);

  const problems = [
    ...deployed.problems,
    ...[ours, naive, capped, throttled, ...sweep.flatMap((run) => [run.ours, run.naive])].flatMap(
      (run) => run.lossProblems,
    ),
  ];
  const at = new Date();
  const result = {
    as_deployed: {
      events: deployedEvents,
      drains: deployed.figures,
      cpu_breakdown: breakdown,
      cpu_breakdown_custom_bus: customBreakdown,
    },
    ours_over_bound: round(ours.eventsPerSecond / bound),
    ours_over_naive: round(ours.eventsPerSecond / naive.eventsPerSecond),
    ours_events_per_s: round(ours.eventsPerSecond, 0),
    naive_events_per_s: round(naive.eventsPerSecond, 0),
    bound_events_per_s: round(bound, 0),
    peak_rss_mb: round(ours.peakRssMiB, 1),
    at: at.toISOString(),
    machine: { cores: os.availableParallelism(), node: process.version, cpu: os.cpus()[0]?.model },
    settings: base,
    simulator_ceiling_events_per_s: round(ceiling, 0),
    ours_over_ceiling: round(ours.eventsPerSecond / ceiling),
    cpu_ms_per_1000_events: { ours: round(ours.cpuMsPer1000), naive: round(naive.cpuMsPer1000) },
    first_event_ms: { ours: round(ours.firstEventMs, 0), naive: round(naive.firstEventMs, 0) },
    drain_seconds: { ours: round(ours.seconds), naive: round(naive.seconds) },
    median_poll_interval_ms: { ours: ours.medianPollIntervalMs, naive: naive.medianPollIntervalMs },
    naive_peak_rss_mb: round(naive.peakRssMiB, 1),
    duplicates: { ours: ours.duplicates, naive: naive.duplicates },
    delivery_latency_ms: Object.fromEntries(
      Object.entries(latency).map(([name, results]) => [
        name,
        Object.fromEntries(
          results.map((result) => [
            result.mode,
            {
              p50: result.all.p50,
              p99: result.all.p99,
              by_type: result.byType,
              feed_requests_per_event: round(
                result.requestsPerEvent.polls +
                  result.requestsPerEvent.lookups +
                  result.requestsPerEvent.streams,
              ),
              put_events_requests: result.putEventsRequests,
            },
          ]),
        ),
      ]),
    ),
    bundle: {
      bytes: size.bytes,
      gzip_bytes: size.gzipBytes,
      cold_import_ms: round(oursImportMs, 1),
      sdk_only_cold_import_ms: round(sdkImportMs, 1),
      cold_import_over_sdk_only: round(oursImportMs / sdkImportMs),
    },
    cap: {
      max_requests_per_second: 50,
      observed_max_requests_in_any_second: capped.maxRequestsInAnySecond,
      events_per_s: round(capped.eventsPerSecond, 0),
    },
    throttled_20_percent: {
      events_per_s: round(throttled.eventsPerSecond, 0),
      duplicates: throttled.duplicates,
    },
    sweep: sweep.map((run) => ({
      setting: run.setting,
      ours_events_per_s: round(run.ours.eventsPerSecond, 0),
      naive_events_per_s: round(run.naive.eventsPerSecond, 0),
      bound_events_per_s: round(run.bound, 0),
      ours_over_bound: round(run.ours.eventsPerSecond / run.bound),
      ours_cpu_ms_per_1000_events: round(run.ours.cpuMsPer1000),
      ours_first_event_ms: round(run.ours.firstEventMs, 0),
      ours_peak_rss_mb: round(run.ours.peakRssMiB, 1),
    })),
    no_loss_check: problems.length === 0 ? 'passed' : problems,
  };

  mkdirSync(resultsDir, { recursive: true });
  const json = `${JSON.stringify(result, null, 2)}\n`;
  writeFileSync(path.join(resultsDir, `${at.toISOString().slice(0, 10)}.json`), json);
  writeFileSync(path.join(resultsDir, 'latest.json'), json);
  const latencySweep = sweep.filter((run) => run.pageSize === 100);
  writeFileSync(
    path.join(resultsDir, 'throughput-vs-latency.svg'),
    lineChart({
      title: `Backlog drain, page 100, PutEvents ${base.publishLatencyMs} ms (${at.toISOString().slice(0, 10)})`,
      xLabel: 'upstream latency per request (ms, log scale)',
      yLabel: 'events/s',
      series: [
        {
          name: 'bound',
          color: '#999',
          dashed: true,
          points: latencySweep.map((r) => ({ x: r.upstreamLatencyMs, y: r.bound })),
        },
        {
          name: 'ours',
          color: '#1f77b4',
          points: latencySweep.map((r) => ({ x: r.upstreamLatencyMs, y: r.ours.eventsPerSecond })),
        },
        {
          name: 'naive',
          color: '#d62728',
          points: latencySweep.map((r) => ({ x: r.upstreamLatencyMs, y: r.naive.eventsPerSecond })),
        },
      ],
    }),
  );

  console.log(`as deployed: ${deployedEvents} events, the process held to Lambda's CPU share of its memory`);
  console.table(
    deployed.figures.flatMap((drain) => [
      {
        run: `ours, ${drain.bus}, at ${drain.memory_mb} MB (${drain.cpu_share_of_a_core} core)`,
        'events/s': drain.ours_events_per_s,
        'peak RSS MiB': drain.peak_rss_mb.ours,
        'CPU ms/1000': drain.cpu_ms_per_1000_events.ours,
        'after init': drain.ours_cpu_ms_per_1000_events_after_init,
      },
      {
        run: `naive, ${drain.bus === 'classic' ? 'classic' : 'custom'} (${drain.naive_loop}), at ${drain.memory_mb} MB`,
        'events/s': drain.naive_events_per_s,
        'peak RSS MiB': drain.peak_rss_mb.naive,
        'CPU ms/1000': drain.cpu_ms_per_1000_events.naive,
      },
      ...(drain.naive_100_per_request === undefined
        ? []
        : [
            {
              run: `naive, custom (100 events per PutEvents, awaited), at ${drain.memory_mb} MB`,
              'events/s': drain.naive_100_per_request.events_per_s,
              'CPU ms/1000': drain.naive_100_per_request.cpu_ms_per_1000_events,
            },
          ]),
    ]),
  );
  for (const drain of deployed.figures) {
    if (drain.share_unavailable !== undefined) {
      console.log(
        `${drain.memory_mb} MB: no CPU share on this machine (${drain.share_unavailable}); figures unthrottled, CPU allows ${drain.cpu_bound_events_per_s?.ours} events/s at the share (naive ${drain.cpu_bound_events_per_s?.naive})`,
      );
    }
  }
  for (const profiled of [breakdown, customBreakdown]) {
    console.log(
      `where the CPU goes at ${profiled.memory_mb} MB, ${profiled.bus} (profiled drain: %, and ms per 1 000 events)`,
    );
    console.table([profiled.percent, profiled.ms_per_1000_events]);
  }
  console.log("unthrottled (the machine's cores)");
  console.table([
    {
      run: 'ours (shipped bundle)',
      'events/s': result.ours_events_per_s,
      'peak RSS MiB': result.peak_rss_mb,
      'CPU ms/1000': result.cpu_ms_per_1000_events.ours,
    },
    {
      run: 'naive loop',
      'events/s': result.naive_events_per_s,
      'peak RSS MiB': result.naive_peak_rss_mb,
      'CPU ms/1000': result.cpu_ms_per_1000_events.naive,
    },
    { run: 'bound (analytic)', 'events/s': result.bound_events_per_s },
    { run: 'simulator ceiling', 'events/s': result.simulator_ceiling_events_per_s },
  ]);
  console.table(result.sweep);
  for (const [name, results] of Object.entries(latency)) {
    console.log(`delivery latency, ${name}`);
    console.table(latencyTable(results));
  }
  console.log(
    [
      ...deployed.figures.map((drain) => {
        const targets = drain.bus === 'classic' ? '≥ 3, ≤ 100 ms, ≤ 150 MiB' : '≥ 5, ≤ 60 ms';
        const hundred =
          drain.naive_100_per_request === undefined
            ? ''
            : ` (÷ the naive loop at 100 per request ${drain.naive_100_per_request.ours_over_naive})`;
        return `${drain.bus} at ${drain.memory_mb} MB: ours ÷ naive ${drain.ours_over_naive}${hundred}, CPU ${drain.cpu_ms_per_1000_events.ours} ms per 1 000 events (${drain.ours_cpu_ms_per_1000_events_after_init} after init), peak RSS ${drain.peak_rss_mb.ours} MiB${drain.memory_mb === 256 ? ` (targets ${targets})` : ''}`;
      }),
      `ours ÷ bound ${result.ours_over_bound} (target ≥ 0.9) · ours ÷ naive ${result.ours_over_naive} (target ≥ 5) · ours ÷ simulator ceiling ${result.ours_over_ceiling}`,
      `peak RSS ${result.peak_rss_mb} MiB (target ≤ 150)`,
      `bundle ${size.bytes} B (${size.gzipBytes} B gzip) · cold import ${result.bundle.cold_import_ms} ms vs SDK-only ${result.bundle.sdk_only_cold_import_ms} ms (${result.bundle.cold_import_over_sdk_only}×, target ≤ 1.3)`,
      `PutEvents cap 50/s: at most ${capped.maxRequestsInAnySecond} requests in any second · 20 % throttled: ${result.throttled_20_percent.events_per_s} events/s`,
      `no-loss check: ${problems.length === 0 ? 'passed' : problems.join('; ')}`,
    ].join('\n'),
  );
  if (problems.length > 0) process.exitCode = 1;
} finally {
  await bench.close();
}
