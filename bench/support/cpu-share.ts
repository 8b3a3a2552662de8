/**
 * Lambda's CPU share for a process: Lambda gives a function CPU in proportion to its memory, one
 * vCPU at 1 769 MB ("Lambda allocates CPU power in proportion to the amount of memory
 * configured"), so a function of 256 MB gets about 0.145 of a core. On Linux a CPU cgroup with a
 * CFS quota gives a process the same: cgroup v1 `cpu.cfs_quota_us` over `cpu.cfs_period_us`, or
 * cgroup v2 `cpu.max`. Only the handler's (or the naive loop's) own process is put in it; the
 * simulator, moto and the PutEvents stand-in keep the machine's cores, as the real services do.
 *
 * Creating a cgroup needs root (or a delegated hierarchy): where that is not allowed, `create`
 * says why and the benchmark reports CPU per 1 000 events only.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Memory at which Lambda gives a function one full vCPU. */
export const MB_PER_VCPU = 1_769;
const PERIOD_US = 100_000;

const V1_CPU = '/sys/fs/cgroup/cpu';
const V2_CANDIDATES = ['/sys/fs/cgroup', '/sys/fs/cgroup/unified'];

export type CpuShareResult =
  | { readonly available: true; readonly share: CpuShare }
  | { readonly available: false; readonly reason: string };

export class CpuShare {
  readonly memoryMb: number;
  /** Fraction of one core, e.g. 0.145 at 256 MB. */
  readonly cores: number;
  readonly #dir: string;
  readonly #procs: string;
  readonly #rootProcs: string;

  private constructor(memoryMb: number, dir: string, procs: string, rootProcs: string) {
    this.memoryMb = memoryMb;
    this.cores = memoryMb / MB_PER_VCPU;
    this.#dir = dir;
    this.#procs = procs;
    this.#rootProcs = rootProcs;
  }

  /** A cgroup limited to `memoryMb ÷ 1 769` of a core, or why none can be made here. */
  static create(memoryMb: number, name: string): CpuShareResult {
    const quota = Math.round((memoryMb / MB_PER_VCPU) * PERIOD_US);
    const problems: string[] = [];
    if (existsSync(path.join(V1_CPU, 'cpu.cfs_quota_us'))) {
      const dir = path.join(V1_CPU, name);
      try {
        mkdirSync(dir, { recursive: true });
        writeFileSync(path.join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
        writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), String(quota));
        const share = new CpuShare(
          memoryMb,
          dir,
          path.join(dir, 'cgroup.procs'),
          path.join(V1_CPU, 'cgroup.procs'),
        );
        return { available: true, share };
      } catch (error) {
        problems.push(`cgroup v1 ${dir}: ${(error as Error).message}`);
      }
    }
    for (const root of V2_CANDIDATES) {
      const controllers = path.join(root, 'cgroup.controllers');
      if (!existsSync(controllers) || !readFileSync(controllers, 'utf8').split(/\s+/).includes('cpu'))
        continue;
      const dir = path.join(root, name);
      try {
        mkdirSync(dir, { recursive: true });
        writeFileSync(path.join(dir, 'cpu.max'), `${quota} ${PERIOD_US}`);
        const share = new CpuShare(
          memoryMb,
          dir,
          path.join(dir, 'cgroup.procs'),
          path.join(root, 'cgroup.procs'),
        );
        return { available: true, share };
      } catch (error) {
        problems.push(`cgroup v2 ${dir}: ${(error as Error).message}`);
      }
    }
    return {
      available: false,
      reason: problems.length > 0 ? problems.join('; ') : 'no cgroup with a CPU controller is mounted',
    };
  }

  /** Puts a running process (and the threads and children it starts from now on) in the share. */
  add(pid: number): void {
    writeFileSync(this.#procs, String(pid));
  }

  /** Moves what is left back to the root and removes the cgroup. */
  dispose(): void {
    try {
      for (const pid of readFileSync(this.#procs, 'utf8').split('\n').filter(Boolean)) {
        writeFileSync(this.#rootProcs, pid);
      }
      rmdirSync(this.#dir);
    } catch {
      // A process that exits meanwhile, or a cgroup already gone: nothing left to undo.
    }
  }
}
