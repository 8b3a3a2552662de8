/**
 * A first run that forgives: `npm start` in a terminal window that is then closed, and a run killed
 * outright. Closing the terminal is a real hang-up (a pseudo-terminal whose master side closes, see
 * closing_terminal.py), not a signal sent by the test.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { REPO_ROOT, startCli } from '../../support/cli-process.ts';

const CLOSING_TERMINAL = fileURLToPath(new URL('../../support/closing_terminal.py', import.meta.url));
/** The local run as the CLI bundle runs it: simulator in-process, checkpoint in a file. */
const LOCAL_ENV = {
  BANKING_BASE_URL: undefined,
  BANKING_CLIENT_ID: undefined,
  BANKING_CLIENT_SECRET: undefined,
};

interface ClosedTerminal {
  /** Event sequence numbers read off the terminal before it closed. */
  readonly sequences: number[];
  /** npm's exit status: it dies of the hang-up itself (-1); the poller under it does not. */
  readonly status: number;
  /** Every process of the terminal's session (npm, tsx, the poller) had ended. */
  readonly session_ended: boolean;
}

interface SavedCheckpoint {
  readonly checkpoint: number | null;
  readonly lease: { readonly owner: string } | null;
}

async function checkpointFile(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), 'terminal-closed-')), 'checkpoint.json');
}

async function saved(path: string): Promise<SavedCheckpoint> {
  return JSON.parse(await readFile(path, 'utf8')) as SavedCheckpoint;
}

/** Runs `npm start -- args` on a terminal of its own and closes the terminal after `events` events. */
function closeTerminalAfter(events: number, args: readonly string[]): Promise<ClosedTerminal> {
  const env: Record<string, string | undefined> = { ...process.env, ...LOCAL_ENV };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  const child = spawn('python3', [CLOSING_TERMINAL, String(events), 'npm', 'start', '--', ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`closing_terminal.py exited ${code}: ${stderr}`));
      else resolve(JSON.parse(stdout) as ClosedTerminal);
    });
  });
}

/** Runs the CLI's `run` until it has printed `events` events after `from`, then presses Ctrl-C. */
async function resume(path: string, events: number) {
  const run = startCli(['run', '--checkpoint-file', path, '--rate', '20'], { env: LOCAL_ENV });
  await run.waitFor('stdout', printed(events));
  run.child.kill('SIGINT');
  return run.result;
}

/** Matches stdout once it holds `count` event lines. */
function printed(count: number): RegExp {
  return new RegExp(`(?:\\{"source"[^\\n]*\\n){${count}}`);
}

function sequencesOf(stdout: string): number[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => (JSON.parse(line) as { detail: { sequence_number: number } }).detail.sequence_number);
}

describe('a local run whose terminal is closed, or that is killed', () => {
  it('closing the terminal finishes, commits what it printed whole and releases the lease; the next run goes on at once', async () => {
    const path = await checkpointFile();

    const closed = await closeTerminalAfter(10, ['--checkpoint-file', path, '--rate', '20']);
    const afterClose = await saved(path);
    const next = await resume(path, 3);

    expect(closed.session_ended).toBe(true);
    expect(closed.sequences.length).toBeGreaterThanOrEqual(10);
    expect(afterClose.lease).toBeNull();
    expect(next.code).toBe(0);
    expect(next.stderr).not.toContain('Another poller holds this checkpoint');
    // A batch whose write to the closing terminal failed is not committed (the terminal may have
    // shown part of it): the next run prints it again, from just after the checkpoint.
    expect(next.stderr).toContain(
      afterClose.checkpoint === null
        ? 'resuming after the start position'
        : `resuming after ${afterClose.checkpoint}`,
    );
    expect(sequencesOf(next.stdout)[0]).toBe((afterClose.checkpoint ?? 0) + 1);
  });

  it('takes over at once a lease left by a run on this host whose process is gone, saying so', async () => {
    const path = await checkpointFile();
    const killed = startCli(['run', '--checkpoint-file', path, '--rate', '20'], { env: LOCAL_ENV });
    await killed.waitFor('stdout', printed(5));
    // Once a checkpoint is on disk with the lease held, kill: no clean-up can run. (The timeout is
    // a backstop for a run that never commits, not a measure.)
    await vi.waitFor(
      async () => {
        const held = await saved(path);
        expect(held.lease).not.toBeNull();
        expect(held.checkpoint).not.toBeNull();
      },
      { timeout: 60_000, interval: 50 },
    );
    killed.child.kill('SIGKILL');
    await killed.result;
    const left = await saved(path);

    const next = await resume(path, 3);

    expect(left.lease?.owner).toMatch(new RegExp(`-${killed.child.pid}#[0-9a-f]{8}$`));
    expect(next.code).toBe(0);
    expect(next.stderr).toContain(
      `took over the lease left by process ${killed.child.pid}, which no longer runs`,
    );
    expect(next.stderr).not.toContain('Another poller holds this checkpoint');
    // It reads on from the checkpoint the killed run left: nothing after it is skipped.
    expect(sequencesOf(next.stdout)[0]).toBe((left.checkpoint ?? 0) + 1);
  });
});
