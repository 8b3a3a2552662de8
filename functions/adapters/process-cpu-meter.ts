/**
 * The worker's CPU as the fleet's turns see it (`core/fleet/cpu-turns.ts#CpuMeter`): the CPU time
 * the process used, and the share of the CPU the function's memory buys that the turns keep to.
 */
import { performance } from 'node:perf_hooks';
import type { CpuMeter } from '../core/fleet/cpu-turns.ts';

/** Lambda gives a function one vCPU at 1,769 MB of memory, and a proportional share below it. */
export const MB_PER_VCPU = 1_769;

/**
 * Of the function's CPU, what the programs' turns may use in the long run: the rest is room for
 * the I/O every program's events arrive and leave by, so that the process is not paused.
 */
export const TURNS_PART_OF_CPU = 0.75;

/** The share of a core the programs' turns keep to, for a function of `memoryMb` (undefined outside Lambda: a whole core). */
export function turnsShareOf(memoryMb: number | undefined): number {
  const cpu = memoryMb === undefined ? 1 : Math.min(1, memoryMb / MB_PER_VCPU);
  return cpu * TURNS_PART_OF_CPU;
}

/** The process's CPU meter, for a function of `memoryMb`. */
export function processCpuMeter(memoryMb: number | undefined): CpuMeter {
  return {
    // CPU time, not the loop's busy time: the quota counts CPU, and a paused process's loop looks busy.
    cpuMs: () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1_000;
    },
    now: () => performance.now(),
    // Ref'd: a turn is due, and under Lambda an empty event loop would end the run with it pending.
    after: (ms, serve) => {
      setTimeout(serve, ms);
    },
    share: turnsShareOf(memoryMb),
  };
}
