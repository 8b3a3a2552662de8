// Preloaded into the handler's process by the benchmark's profiling run (`--import`): profiles from
// the start, and on SIGUSR2 writes the profile to $BENCH_PROFILE_DIR. The harness kills the process
// at the end of a drain, before Node's own --cpu-prof would write anything.
import { renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';

const session = new Session();
session.connect();
session.post('Profiler.enable');
session.post('Profiler.setSamplingInterval', { interval: 500 });
session.post('Profiler.start');
process.on('SIGUSR2', () => {
  session.post('Profiler.stop', (error, result) => {
    if (error) return;
    const file = path.join(process.env.BENCH_PROFILE_DIR ?? '.', `handler-${process.pid}.cpuprofile`);
    writeFileSync(`${file}.tmp`, JSON.stringify(result.profile));
    renameSync(`${file}.tmp`, file);
  });
});
