/**
 * Runs moto's server (`moto_launcher.py`) as a child process for the integration and infra tests.
 * The launcher binds a free loopback port itself (port 0) and reports it, so parallel runs never
 * race for one; it exits when our end of its stdin closes, so a crashed test run leaves nothing behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface MotoServer {
  /** e.g. `http://127.0.0.1:41234`; hand it to the SDK through `AWS_ENDPOINT_URL`. */
  readonly endpoint: string;
  /** The server's process id (benchmarks read its CPU time). */
  readonly pid: number | undefined;
  /** Stops the server; safe to call more than once. */
  stop(): Promise<void>;
}

export interface StartMotoOptions {
  /**
   * Python interpreter to run the launcher with.
   * @default process.env.MOTO_PYTHON ?? 'python3'
   */
  readonly python?: string;
  /**
   * How long to wait for the server to answer HTTP before giving up.
   * @default 30_000
   */
  readonly timeoutMs?: number;
  /**
   * Extra launcher arguments, e.g. `['--no-jsonpath-cache']` for benchmarking.
   * @default []
   */
  readonly launcherArgs?: readonly string[];
}

const LAUNCHER = fileURLToPath(new URL('./moto_launcher.py', import.meta.url));
const READY_LINE = /^MOTO_READY (http:\/\/\S+)$/m;
const installHint = (python: string): string =>
  `Install it with: ${python} -m pip install 'moto[server]' (moto 5.x; the server extra brings flask and jsonpath-ng), ` +
  'or point MOTO_PYTHON at an interpreter that has it.';
const STDERR_KEPT_CHARS = 8_000;

/**
 * Starts moto on 127.0.0.1 and resolves once it answers HTTP.
 *
 * @example
 * const moto = await startMoto();
 * process.env.AWS_ENDPOINT_URL = moto.endpoint;
 * // ... tests ...
 * await moto.stop();
 */
export async function startMoto(options: StartMotoOptions = {}): Promise<MotoServer> {
  const python = options.python ?? process.env.MOTO_PYTHON ?? 'python3';
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;

  const child = spawn(python, [LAUNCHER, ...(options.launcherArgs ?? [])], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  // Drained continuously: a full pipe would block the server.
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_KEPT_CHARS);
  });

  try {
    const endpoint = await waitForReadyLine(child, python, () => stderr, deadline);
    await waitForHttp(endpoint, child, deadline, () => stderr);
    return { endpoint, pid: child.pid, stop: () => stopChild(child) };
  } catch (error) {
    await stopChild(child);
    throw error;
  }
}

function waitForReadyLine(
  child: ChildProcess,
  python: string,
  stderr: () => string,
  deadline: number,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(
      () => finish(new Error(`moto did not report ready within its time limit.${describeStderr(stderr())}`)),
      Math.max(0, deadline - Date.now()),
    );
    const onData = (chunk: string): void => {
      stdout += chunk;
      const match = READY_LINE.exec(stdout);
      if (match?.[1] !== undefined) finish(undefined, match[1]);
    };
    const onError = (error: NodeJS.ErrnoException): void => {
      finish(
        error.code === 'ENOENT'
          ? new Error(
              `Cannot run '${python}' to start moto: it is not on PATH. Install Python 3, then moto. ${installHint('python3')}`,
            )
          : new Error(`Cannot start moto with '${python}': ${error.message}`, { cause: error }),
      );
    };
    // 'close', not 'exit': it comes once stderr has been read to its end, traceback included.
    const onClose = (code: number | null, signal: NodeJS.Signals | null): void => {
      finish(exitError(python, code, signal, stderr()));
    };
    function finish(error: Error | undefined, endpoint?: string): void {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('error', onError);
      child.off('close', onClose);
      // Keep draining stdout so the launcher never blocks on a full pipe.
      child.stdout?.resume();
      if (error) reject(error);
      else resolve(endpoint as string);
    }
    child.stdout?.setEncoding('utf8').on('data', onData);
    child.once('error', onError);
    child.once('close', onClose);
  });
}

function exitError(
  python: string,
  code: number | null,
  signal: NodeJS.Signals | null,
  stderr: string,
): Error {
  if (/No module named '?(moto|flask|flask_cors|werkzeug|jsonpath_ng)/.test(stderr)) {
    return new Error(
      `moto's server is not installed for '${python}'. ${installHint(python)}${describeStderr(stderr)}`,
    );
  }
  const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
  return new Error(`The moto launcher ${how} before it was ready.${describeStderr(stderr)}`);
}

function describeStderr(stderr: string): string {
  const tail = stderr.trim().split('\n').slice(-15).join('\n');
  return tail ? `\n--- launcher stderr (last lines) ---\n${tail}` : '';
}

async function waitForHttp(
  endpoint: string,
  child: ChildProcess,
  deadline: number,
  stderr: () => string,
): Promise<void> {
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      // Any HTTP answer means the server is up; the dashboard path is cheap and changes nothing.
      const response = await fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(2_000) });
      await response.body?.cancel();
      return;
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(
    `moto reported ${endpoint} but did not answer HTTP in time (${String(lastError)}).${describeStderr(stderr())}`,
  );
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdin?.end(); // the launcher's normal way out
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}
