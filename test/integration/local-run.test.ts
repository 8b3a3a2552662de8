/**
 * `npm start` as a user runs it (`tsx functions/cli/main.ts run`): the CLI's `run` in a child
 * process, embedded simulator, a checkpoint file. Ctrl-C (SIGINT) stops it cleanly and a restart
 * resumes after the checkpoint.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../functions/simulator/banking-simulator.ts';

interface Run {
  readonly code: number | null;
  readonly sequences: number[];
  readonly stderr: string;
}

function runLocal(
  args: string[],
  options: { interruptAfterMs?: number; env?: Record<string, string> } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'functions/cli/main.ts', 'run', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, BANKING_BASE_URL: '', ...options.env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    if (options.interruptAfterMs !== undefined) {
      setTimeout(() => child.kill('SIGINT'), options.interruptAfterMs);
    }
    child.on('error', reject);
    child.on('close', (code) => {
      const sequences = stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => (JSON.parse(line) as { detail: { sequence_number: number } }).detail.sequence_number);
      resolve({ code, sequences, stderr });
    });
  });
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

describe('local run (npm start)', () => {
  it('streams events as NDJSON, stops on Ctrl-C after the last checkpoint, and resumes from it', async () => {
    const checkpointFile = join(await mkdtemp(join(tmpdir(), 'local-run-')), 'checkpoint.json');
    const common = ['--checkpoint-file', checkpointFile, '--rate', '20', '--report-every', '1'];

    const first = await runLocal(common, { interruptAfterMs: 4_000 });
    const saved = JSON.parse(await readFile(checkpointFile, 'utf8')) as {
      checkpoint: number;
      lease: unknown;
    };
    const second = await runLocal([...common, '--duration', '3']);

    expect(first.code).toBe(0);
    expect(first.sequences.length).toBeGreaterThan(20);
    expect(first.sequences).toEqual(range(1, first.sequences.at(-1)!));
    expect(saved).toMatchObject({ checkpoint: first.sequences.at(-1), lease: null });
    expect(first.stderr).toMatch(/events\/s · published \d+ · checkpoint \d+ · lag/);
    expect(first.stderr).toContain(`stopped at checkpoint ${saved.checkpoint}`);

    expect(second.code).toBe(0);
    expect(second.stderr).toContain(`resuming after ${saved.checkpoint}`);
    expect(second.sequences[0]).toBe(saved.checkpoint + 1);
    expect(second.sequences).toEqual(range(saved.checkpoint + 1, second.sequences.at(-1)!));
  });

  it('runs for its --duration against a service that answers an empty poll at once, then stops with its summary', async () => {
    const simulator = await startSimulator({ seed: 21, maxPollHoldMs: 0 });
    try {
      const events = simulator.generate(5);
      const program = simulator.programs[0]!;
      const checkpointFile = join(await mkdtemp(join(tmpdir(), 'local-run-')), 'checkpoint.json');

      const run = await runLocal(['--checkpoint-file', checkpointFile, '--duration', '3'], {
        env: {
          BANKING_BASE_URL: simulator.url,
          BANKING_CLIENT_ID: program.clientId,
          BANKING_CLIENT_SECRET: program.clientSecret,
        },
      });

      expect(run.code).toBe(0);
      expect(run.sequences).toEqual(events.map((event) => event.sequence_number));
      expect(run.stderr).toContain(`stopped at checkpoint ${events.at(-1)!.sequence_number}`);
      // It kept polling after the first empty answer instead of exiting on an empty event loop.
      expect(simulator.stats.pollRequests).toBeGreaterThanOrEqual(3);
      expect(run.stderr).not.toContain(program.clientSecret);
    } finally {
      await simulator.close();
    }
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
