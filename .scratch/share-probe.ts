import { CpuShare } from '../bench/support/cpu-share.ts';
import { runNaive, runOurs, startBench } from '../bench/throughput.ts';

const events = Number(process.argv[2] ?? 20000);
const bench = await startBench();
try {
  for (const mb of [256]) {
    const made = CpuShare.create(mb, `bep-probe-${mb}`);
    if (!made.available) throw new Error(made.reason);
    const s = {
      events,
      upstreamLatencyMs: 25,
      publishLatencyMs: 15,
      pageSize: 100,
      concurrency: 8,
      cpuShare: made.share,
    };
    const ours = await runOurs(bench, s);
    const naive = await runNaive(bench, s);
    console.log(
      JSON.stringify({
        mb,
        ours: {
          eps: Math.round(ours.eventsPerSecond),
          cpu: Math.round(ours.cpuMsPer1000),
          rss: Math.round(ours.peakRssMiB),
        },
        naive: { eps: Math.round(naive.eventsPerSecond), cpu: Math.round(naive.cpuMsPer1000) },
      }),
    );
    made.share.dispose();
  }
} finally {
  await bench.close();
}
