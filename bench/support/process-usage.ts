/**
 * What a child process used, read from Linux's /proc: peak resident memory (VmHWM, the high-water
 * mark the kernel keeps) and CPU time. Read while the process is alive.
 */
import { readFileSync } from 'node:fs';

export interface ProcessUsage {
  readonly peakRssMiB: number;
  readonly cpuMs: number;
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

export function processUsage(pid: number): ProcessUsage {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const peakKiB = Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1] ?? Number.NaN);
  // Fields after the command name (which may hold spaces, hence from the last ')'): utime is the
  // 14th field of the line, stime the 15th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { peakRssMiB: peakKiB / 1024, cpuMs: (ticks * 1000) / TICKS_PER_SECOND };
}
