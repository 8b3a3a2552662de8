import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  MB_PER_VCPU,
  processCpuMeter,
  TURNS_PART_OF_CPU,
  turnsShareOf,
} from '../../../functions/adapters/process-cpu-meter.ts';

describe('the process CPU meter', () => {
  it("keeps the turns to their part of Lambda's vCPU share at the function's memory", () => {
    expect(turnsShareOf(1_024)).toBeCloseTo((1_024 / MB_PER_VCPU) * TURNS_PART_OF_CPU, 6);
    expect(turnsShareOf(512)).toBeCloseTo(turnsShareOf(1_024) / 2, 6);
  });

  it('counts one core at most: the programs share one thread, however many vCPUs the memory brings', () => {
    expect(turnsShareOf(MB_PER_VCPU)).toBe(TURNS_PART_OF_CPU);
    expect(turnsShareOf(10_240)).toBe(TURNS_PART_OF_CPU);
    expect(turnsShareOf(undefined)).toBe(TURNS_PART_OF_CPU);
  });

  it('reads the CPU time of this process, which grows while it computes', () => {
    const meter = processCpuMeter(1_024);
    const before = meter.cpuMs();
    const data = Buffer.alloc(4 * 1024 * 1024, 7);
    for (let round = 0; round < 20; round += 1) createHash('sha256').update(data).digest();
    // 80 MiB hashed: tens of milliseconds of CPU on any machine, never none.
    expect(meter.cpuMs()).toBeGreaterThan(before + 1);
  });
});
