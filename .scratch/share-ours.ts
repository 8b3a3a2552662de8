import { CpuShare } from '../bench/support/cpu-share.ts';
import { runNaive, runOurs, startBench } from '../bench/throughput.ts';

const events = Number(process.argv[2] ?? 20000);
const withNaive = process.argv[3] === 'naive';
const bench = await startBench();
try {
  const made = CpuShare.create(256, 'bep-probe-256');
  if (!made.available) throw new Error(made.reason);
  const s = {
    events,
    upstreamLatencyMs: 25,
    publishLatencyMs: 15,
    pageSize: 100,
    concurrency: 8,
    cpuShare: made.share,
  };
  for (let i = 0; i < 2; i++) {
    const ours = await runOurs(bench, s);
    console.log(
      JSON.stringify({
        ours: {
          eps: Math.round(ours.eventsPerSecond),
          cpu: Math.round(ours.cpuMsPer1000),
          rss: Math.round(ours.peakRssMiB),
        },
      }),
    );
  }
  if (withNaive) {
    const naive = await runNaive(bench, s);
    console.log(
      JSON.stringify({
        naive: { eps: Math.round(naive.eventsPerSecond), cpu: Math.round(naive.cpuMsPer1000) },
      }),
    );
  }
  made.share.dispose();
} finally {
  await bench.close();
}
