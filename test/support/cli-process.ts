/**
 * The operator CLI as a user runs it: `bin/banking-events-poller.mjs` (the built bundle) in a
 * child process on the Node `spawned-node.ts` chooses, with the environment a test gives (AWS
 * variables pointing at moto).
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { spawnedNode } from './spawned-node.ts';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/banking-events-poller.mjs', import.meta.url));

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliOptions {
  /** Variables on top of the test process's environment; `undefined` removes one. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Written to stdin, which is then closed; stdin is closed at once when absent. */
  readonly input?: string;
  readonly cwd?: string;
  /** The command to run. @default - this repository's bin/banking-events-poller.mjs */
  readonly bin?: string;
  /** Options for `node` before the script, e.g. `--max-old-space-size=256`. @default none */
  readonly nodeArgs?: readonly string[];
}

/** A CLI process still running: its output so far, a way to wait for a line, and its end. */
export interface RunningCli {
  readonly child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves once `pattern` appears on the stream (rejects if the process ends first). */
  waitFor(stream: 'stdout' | 'stderr', pattern: RegExp): Promise<void>;
  readonly result: Promise<CliResult>;
}

export function startCli(args: readonly string[], options: CliOptions = {}): RunningCli {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...options.env };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  const child = spawn(spawnedNode().path, [...(options.nodeArgs ?? []), options.bin ?? BIN, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env,
    stdio: 'pipe',
  });
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  const notify = (): void => {
    for (const listener of [...listeners]) listener();
  };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    notify();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    notify();
  });
  if (options.input !== undefined) child.stdin.end(options.input);
  else child.stdin.end();
  const result = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      notify();
      resolve({ code, stdout, stderr });
    });
  });
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    waitFor: (stream, pattern) =>
      new Promise<void>((resolve, reject) => {
        const check = (): void => {
          const text = stream === 'stdout' ? stdout : stderr;
          if (pattern.test(text)) {
            listeners.delete(check);
            resolve();
          } else if (child.exitCode !== null || child.signalCode !== null) {
            listeners.delete(check);
            reject(
              new Error(
                `The CLI ended before ${pattern} appeared on ${stream}.\nstdout: ${stdout}\nstderr: ${stderr}`,
              ),
            );
          }
        };
        listeners.add(check);
        check();
      }),
    result,
  };
}

/** Runs the CLI to its end. */
export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return startCli(args, options).result;
}

/** What `simulate --json` prints. */
export interface SimulateDetails {
  readonly baseUrl: string;
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
}

/** Asks the token endpoint `simulate` printed for a token, with the test credentials it printed. */
export function requestSimulatorToken(details: SimulateDetails): Promise<Response> {
  return fetch(details.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: details.clientId,
      client_secret: details.clientSecret,
    }),
  });
}

/** The AWS variables that send the CLI to moto with fake credentials (and keep a developer's own out). */
export function motoCliEnvironment(endpoint: string): Record<string, string | undefined> {
  return {
    AWS_ENDPOINT_URL: endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'testing',
    AWS_SECRET_ACCESS_KEY: 'testing',
    AWS_SESSION_TOKEN: undefined,
    AWS_PROFILE: undefined,
    AWS_DEFAULT_PROFILE: undefined,
  };
}
