import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildProfilingBundle, cpuBreakdown, topFunctions } from '../bench/support/cpu-breakdown.ts';
import { CpuShare } from '../bench/support/cpu-share.ts';
import { runOurs, startBench } from '../bench/throughput.ts';

const events = Number(process.argv[2] ?? 20000);
const bench = await startBench();
const dir = mkdtempSync(path.join(tmpdir(), 'prof-'));
const code = path.join(dir, 'code');
const profiles = path.join(dir, 'profiles');
try {
  const bundle = await buildProfilingBundle(
    path.join(import.meta.dirname, '../functions/poller/handler.ts'),
    code,
  );
  const made = CpuShare.create(256, 'bep-profile-256');
  if (!made.available) throw new Error(made.reason);
  mkdirSync(profiles);
  const b = {
    ...bench,
    profileDir: profiles,
    artifact: {
      ...bench.artifact,
      codeDir: code,
      environment: { ...bench.artifact.environment, BENCH_PROFILE_DIR: profiles },
    },
    handlerNodeArgs: ['--import', path.join(import.meta.dirname, '../bench/support/profile-hook.mjs')],
  };
  const run = await runOurs(b, {
    events,
    upstreamLatencyMs: 25,
    publishLatencyMs: 15,
    pageSize: 100,
    concurrency: 8,
    cpuShare: made.share,
  });
  made.share.dispose();
  const totals = cpuBreakdown(profiles, bundle);
  console.log(topFunctions(profiles, bundle, 45).join('\n'));
  const sum = Object.values(totals).reduce((a, b) => a + b, 0);
  console.log(
    JSON.stringify(
      {
        eps: Math.round(run.eventsPerSecond),
        cpuPer1000: Math.round(run.cpuMsPer1000),
        profiled: Object.fromEntries(
          Object.entries(totals).map(([k, v]) => [
            k,
            `${Math.round((v / events) * 1000)} ms/1000 (${Math.round((v / sum) * 100)}%)`,
          ]),
        ),
      },
      null,
      1,
    ),
  );
} finally {
  await bench.close();
  rmSync(dir, { recursive: true, force: true });
}
