// Preloaded into a worker's process by `bench:fleet -- --loop-probe <dir>` (`--import`): once a
// second, how busy its event loop was (utilization) and how late a timer fired in that second
// (event-loop delay, max and p99), appended as a JSON line to <dir>/loop-<pid>.jsonl. What a
// program waits for the loop is what this shows; the timer is unref'd, so it never holds a run.
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

const file = path.join(process.env.BENCH_LOOP_DIR ?? '.', `loop-${process.pid}.jsonl`);
const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();
let utilization = performance.eventLoopUtilization();
const timer = setInterval(() => {
  const now = performance.eventLoopUtilization();
  const used = performance.eventLoopUtilization(now, utilization);
  utilization = now;
  if (used.active > 1) {
    appendFileSync(
      file,
      `${JSON.stringify({
        t: Date.now(),
        elu: Math.round(used.utilization * 1000) / 1000,
        maxMs: Math.round(delay.max / 1e5) / 10,
        p99Ms: Math.round(delay.percentile(99) / 1e5) / 10,
      })}\n`,
    );
  }
  delay.reset();
}, 1_000);
timer.unref();
