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
 *
 * A share may also carry a weight (`shares`: cgroup v1 `cpu.shares`, 1 024 being one ordinary
 * process's; v2 `cpu.weight`, 100 for the same): on a machine busy with other work, a function's
 * process then gets its share when it needs it, as Lambda guarantees it, rather than a turn among
 * every runnable process. `weighted` makes a group with a weight and no quota (the services a
 * benchmark stands in for, which run elsewhere in reality), and a name with a `/` nests a group in
 * another (a cap over all of a benchmark's processes).
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

  /**
   * A cgroup limited to `memoryMb ÷ 1 769` of a core, or why none can be made here. `shares`: its
   * weight (1 024 an ordinary process's). @default the system's default weight
   */
  static create(memoryMb: number, name: string, options: { readonly shares?: number } = {}): CpuShareResult {
    return CpuShare.#make(memoryMb, name, Math.round((memoryMb / MB_PER_VCPU) * PERIOD_US), options.shares);
  }

  /** A cgroup with a weight (`shares`, 1 024 an ordinary process's) and no quota. */
  static weighted(name: string, shares: number): CpuShareResult {
    return CpuShare.#make(Number.POSITIVE_INFINITY, name, undefined, shares);
  }

  /** A cgroup with at most `cores` of the machine (and a weight, if given), for nesting others in. */
  static capped(cores: number, name: string, options: { readonly shares?: number } = {}): CpuShareResult {
    return CpuShare.#make(cores * MB_PER_VCPU, name, Math.round(cores * PERIOD_US), options.shares);
  }

  static #make(
    memoryMb: number,
    name: string,
    quota: number | undefined,
    shares: number | undefined,
  ): CpuShareResult {
    const problems: string[] = [];
    if (existsSync(path.join(V1_CPU, 'cpu.cfs_quota_us'))) {
      const dir = path.join(V1_CPU, name);
      try {
        mkdirSync(dir, { recursive: true });
        writeFileSync(path.join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
        writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), String(quota ?? -1));
        if (shares !== undefined) writeFileSync(path.join(dir, 'cpu.shares'), String(shares));
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
        // A nested group's controllers come from its parent's subtree_control.
        if (path.dirname(dir) !== root)
          writeFileSync(path.join(path.dirname(dir), 'cgroup.subtree_control'), '+cpu');
        writeFileSync(path.join(dir, 'cpu.max'), `${quota ?? 'max'} ${PERIOD_US}`);
        if (shares !== undefined) {
          writeFileSync(
            path.join(dir, 'cpu.weight'),
            String(Math.max(1, Math.min(10_000, Math.round(shares / 10.24)))),
          );
        }
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

  /** Moves what is left back to the root and removes the cgroup (nested ones first). */
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
