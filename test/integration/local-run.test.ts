/**
 * `npm start` as a user runs it (`tsx functions/cli/main.ts run`): the CLI's `run` in a child
 * process, embedded simulator, a checkpoint file. Ctrl-C (SIGINT) stops it cleanly and a restart
 * resumes after the checkpoint. Ctrl-C is pressed on an event (events printed, polls served), never
 * after a guessed time.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { startSimulator } from '../../functions/simulator/banking-simulator.ts';
import { spawnedNode } from '../support/spawned-node.ts';

interface Run {
  readonly code: number | null;
  /** Sequence numbers of the events printed on stdout, in the order printed. */
  readonly sequences: readonly number[];
  readonly stderr: string;
}

interface LocalRun {
  /** Sequence numbers printed so far. */
  readonly sequences: readonly number[];
  /** Ctrl-C. */
  interrupt(): void;
  readonly finished: Promise<Run>;
}

/** Starts `npm start`'s command with `args`; stdout is read line by line as it comes. */
function startLocal(
  args: string[],
  options: { env?: Record<string, string>; onEvent?: (run: LocalRun) => void } = {},
): LocalRun {
  const child = spawn(spawnedNode().path, ['--import', 'tsx', 'functions/cli/main.ts', 'run', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, BANKING_BASE_URL: '', ...options.env },
  });
  const sequences: number[] = [];
  let partial = '';
  let stderr = '';
  let interrupted = false;
  const run: LocalRun = {
    sequences,
    interrupt: () => {
      if (interrupted) return;
      interrupted = true;
      child.kill('SIGINT');
    },
    finished: new Promise((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, sequences: [...sequences], stderr }));
    }),
  };
  child.stdout.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines.filter((candidate) => candidate.startsWith('{'))) {
      sequences.push((JSON.parse(line) as { detail: { sequence_number: number } }).detail.sequence_number);
      options.onEvent?.(run);
    }
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return run;
}

/** Runs to the end; with `interruptAfterEvents`, presses Ctrl-C once that many events were printed. */
function runLocal(
  args: string[],
  options: { interruptAfterEvents?: number; env?: Record<string, string> } = {},
): Promise<Run> {
  const { interruptAfterEvents, env } = options;
  return startLocal(args, {
    env,
    onEvent: (run) => {
      if (interruptAfterEvents !== undefined && run.sequences.length >= interruptAfterEvents) run.interrupt();
    },
  }).finished;
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/** The numbers in order: events may be printed out of order, as they may reach the bus. */
function sorted(sequences: readonly number[]): number[] {
  return [...sequences].sort((a, b) => a - b);
}

/** The checkpoint of the summary line (`[poller] stopped at checkpoint N`), or null for `none`. */
function summaryCheckpoint(stderr: string): number | null {
  const stopped = /stopped at checkpoint (\d+|none)\n/.exec(stderr)?.[1];
  expect(stopped, 'the summary line').toBeDefined();
  return stopped === 'none' ? null : Number(stopped);
}

describe('local run (npm start)', () => {
  it('streams events as NDJSON, stops on Ctrl-C after the last checkpoint, and resumes from it', async () => {
    const checkpointFile = join(await mkdtemp(join(tmpdir(), 'local-run-')), 'checkpoint.json');
    const common = ['--checkpoint-file', checkpointFile, '--rate', '20', '--report-every', '1'];

    // Past the 20 events of the simulator's initial backlog: some were generated while it ran.
    const first = await runLocal(common, { interruptAfterEvents: 30 });
    const saved = JSON.parse(await readFile(checkpointFile, 'utf8')) as {
      checkpoint: number;
      lease: unknown;
    };
    // A restart has at least the backlog of 20 after the checkpoint to publish.
    const second = await runLocal(common, { interruptAfterEvents: 5 });

    // Ctrl-C finishes the batch in hand, commits everything printed, releases the lease, exits 0.
    expect(first.code).toBe(0);
    expect(first.sequences.length).toBeGreaterThanOrEqual(30);
    expect(sorted(first.sequences)).toEqual(range(1, Math.max(...first.sequences)));
    expect(saved).toEqual(expect.objectContaining({ checkpoint: Math.max(...first.sequences), lease: null }));
    expect(first.stderr).toMatch(/events\/s · published \d+ · checkpoint \d+ · lag/);
    expect(summaryCheckpoint(first.stderr)).toBe(saved.checkpoint);

    // The restart resumes just after it: no gap, and (a clean stop) nothing published twice.
    expect(second.code).toBe(0);
    expect(second.stderr).toContain(`resuming after ${saved.checkpoint}`);
    expect(second.sequences.length).toBeGreaterThanOrEqual(5);
    expect(sorted(second.sequences)).toEqual(range(saved.checkpoint + 1, Math.max(...second.sequences)));
  });

  it('keeps polling a service that answers an empty poll at once, until Ctrl-C, then stops with its summary', async () => {
    const simulator = await startSimulator({ seed: 21, maxPollHoldMs: 0 });
    try {
      const events = simulator.generate(5);
      const program = simulator.programs[0]!;
      const checkpointFile = join(await mkdtemp(join(tmpdir(), 'local-run-')), 'checkpoint.json');

      const local = startLocal(['--checkpoint-file', checkpointFile], {
        env: {
          BANKING_BASE_URL: simulator.url,
          BANKING_CLIENT_ID: program.clientId,
          BANKING_CLIENT_SECRET: program.clientSecret,
        },
      });
      // The page of 5 events, then empty answers: it polls again rather than exiting on an empty
      // event loop. (The timeout is a backstop for a run that stopped polling, not a measure.)
      await Promise.race([
        vi.waitFor(() => expect(simulator.stats.pollRequests).toBeGreaterThanOrEqual(3), {
          timeout: 60_000,
          interval: 50,
        }),
        local.finished.then(({ code, stderr }) => {
          throw new Error(`the run exited (${code}) before Ctrl-C:\n${stderr}`);
        }),
      ]);
      local.interrupt();
      const run = await local.finished;

      expect(run.code).toBe(0);
      expect(run.sequences).toEqual(events.map((event) => event.sequence_number));
      expect(summaryCheckpoint(run.stderr)).toBe(events.at(-1)!.sequence_number);
      expect(run.stderr).not.toContain(program.clientSecret);
    } finally {
      await simulator.close();
    }
  });

  it('stops by itself after its --duration, committing what it printed', async () => {
    const checkpointFile = join(await mkdtemp(join(tmpdir(), 'local-run-')), 'checkpoint.json');

    const run = await runLocal(['--checkpoint-file', checkpointFile, '--duration', '1']);

    // However much it printed in that second, the checkpoint is the last of it, with no gap.
    expect(run.code).toBe(0);
    const checkpoint = summaryCheckpoint(run.stderr);
    expect(sorted(run.sequences)).toEqual(checkpoint === null ? [] : range(1, checkpoint));
  });

  it('refuses a plain-http upstream that is not loopback, before any request', async () => {
    const run = await runLocal([], {
      env: {
        BANKING_BASE_URL: 'http://bank.example.com',
        BANKING_CLIENT_ID: 'id',
        BANKING_CLIENT_SECRET: 'local-s3cret',
      },
    });

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/must use https:\/\//);
    expect(run.stderr).not.toContain('local-s3cret');
  });
});
