/**
 * Who holds a lease taken by the CLI on this machine. A CLI run names its lease
 * `cli-<host>-<pid>#<8 hex>`; when that process is gone (the terminal was closed under it, it was
 * killed), nobody will release the lease, and waiting for it to expire only delays the next run by
 * up to a minute. A lease held by a live process, by another host or by a Lambda is left alone.
 */
import { hostname } from 'node:os';

/** The invocation id a CLI run on this host puts in its lease owner. */
export function localInvocationId(pid: number = process.pid): string {
  return `cli-${hostname()}-${pid}`;
}

/**
 * The process id behind `owner` if it is a CLI run on this host whose process no longer exists;
 * `undefined` otherwise (another host, a Lambda request id, a process still running, or one we
 * may not signal, which exists).
 */
export function deadLocalOwnerPid(
  owner: string,
  isAlive: (pid: number) => boolean = processExists,
): number | undefined {
  const prefix = `cli-${hostname()}-`;
  if (!owner.startsWith(prefix)) return undefined;
  const match = /^(\d+)#[0-9a-f]{8}$/.exec(owner.slice(prefix.length));
  if (match === null) return undefined;
  const pid = Number(match[1]);
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
  return isAlive(pid) ? undefined : pid;
}

function processExists(pid: number): boolean {
  try {
    // Signal 0 checks existence without signalling; EPERM means it exists under another user.
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
