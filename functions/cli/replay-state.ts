/**
 * Where a `replay` got to, in a small JSON file, so an interrupted replay resumes instead of
 * starting over. Written atomically (temp file + rename).
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { UsageError } from './cli-errors.ts';

export interface ReplayState {
  readonly program: string;
  readonly from: number;
  readonly to: number;
  /** Every event up to this number was accepted by the bus (or does not exist in the feed). */
  readonly publishedThrough: number;
  readonly updatedAt: string;
}

export function defaultStateFile(program: string, from: number, to: number): string {
  return join('.local', 'replays', `${program}-${from}-${to}.json`);
}

/** Validates `--from`/`--to` before anything is read or sent. */
export function checkRange(from: number, to: number): void {
  if (to < from) {
    throw new UsageError(
      `--to ${to} is below --from ${from}`,
      'give the range in ascending order: --from LOW --to HIGH',
    );
  }
}

export async function readReplayState(path: string): Promise<ReplayState | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    const state = JSON.parse(text) as ReplayState;
    if (!Number.isSafeInteger(state.publishedThrough)) throw new TypeError('publishedThrough');
    return state;
  } catch {
    throw new UsageError(
      `Replay state file ${path} is not valid`,
      'delete it, or pass --restart to start the range over',
    );
  }
}

export async function writeReplayState(path: string, state: ReplayState): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(state, null, 2)}\n`, 'utf8');
  await rename(temporary, path);
}

export async function removeReplayState(path: string): Promise<void> {
  await rm(path, { force: true });
}
