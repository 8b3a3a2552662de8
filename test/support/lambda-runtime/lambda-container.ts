/**
 * Runs a Lambda artifact the way the Lambda service does, for tests and benchmarks: a Runtime API
 * server in this process, and the bundle in its own plain `node` process under `bootstrap.mjs`
 * (on the Node `spawned-node.ts` chooses: Node 24, as `nodejs24.x`, when it is installed),
 * a stand-in for the runtime interface client that keeps its rules (an event loop that empties
 * while the handler's promise is pending ends the invocation). Like a Lambda execution environment:
 *
 * - the process starts on the first invocation (a cold start) and serves the next ones warm;
 * - it is frozen (SIGSTOP) while it waits for an invocation and thawed (SIGCONT) for the next one,
 *   so timers and sockets behave as they do between real invocations;
 * - it is killed at the invocation's deadline (a timeout), and the next invocation starts cold;
 * - the heap is sized from the memory setting as the managed runtime's bootstrap does;
 * - an answer larger than a synchronous invocation's response limit (6,291,556 bytes of the JSON
 *   the runtime posts) fails the invocation with `Function.ResponseSizeTooLarge`, as Lambda does.
 *
 * @example
 * const container = new LambdaContainer({ codeDir, environment, timeoutMs: 8_000 });
 * const invocation = await container.invoke({ program: 'default' });
 * expect(invocation.outcome).toMatchObject({ kind: 'response' });
 * await container.close();
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { spawnedNode } from '../spawned-node.ts';

const BOOTSTRAP = fileURLToPath(new URL('./bootstrap.mjs', import.meta.url));
const END_MARK = '\u0000LAMBDA-INVOCATION-END\n';

/**
 * Lambda's limit on a synchronous invocation's answer, in bytes of the JSON the runtime posts:
 * larger, and the invoker gets `Function.ResponseSizeTooLarge`, "Response payload size exceeded
 * maximum allowed payload size (6291556 bytes)." (the Invoke API's error for it).
 */
export const RESPONSE_MAX_BYTES = 6_291_556;

/**
 * An event given as its JSON text, sent to the function as it is: for events `JSON.stringify`
 * cannot write (nested deeper than its stack), which Lambda still delivers.
 */
export class EventText {
  constructor(readonly text: string) {}
}

export interface LambdaFunctionSpec {
  /** Directory holding the handler module (`index.mjs`). */
  readonly codeDir: string;
  /** `<module>.<export>`. @default 'index.handler' */
  readonly handler?: string;
  /** The function's environment: its configuration as deployed plus what AWS would set (region, credentials). */
  readonly environment: Readonly<Record<string, string>>;
  /** The function's timeout: each invocation is killed this long after it starts. */
  readonly timeoutMs: number;
  /** @default 256 */
  readonly memoryMb?: number;
  /** @default 'banking-events-poller' */
  readonly functionName?: string;
  /** Extra `node` options for the function's process (profiling in benchmarks). @default none */
  readonly nodeArgs?: readonly string[];
  /**
   * Called with the function process's id as soon as it is spawned, before it has loaded the
   * handler (benchmarks put it in a CPU cgroup: Lambda's share of a core). @default none
   */
  readonly onProcessStart?: (pid: number) => void;
  /**
   * Called with the process id when its runtime first asks for an invocation: the init phase
   * (Node's start and the handler's import) is over. @default none
   */
  readonly onInitDone?: (pid: number) => void;
}

export type InvocationOutcome =
  /** The handler's promise resolved; `result` is its value after a JSON round trip. */
  | { readonly kind: 'response'; readonly result: unknown }
  /** The handler threw or rejected (or the process died of an uncaught error). */
  | { readonly kind: 'error'; readonly errorType: string; readonly errorMessage: string }
  /** The event loop emptied before the handler settled: under Lambda, an invocation cut short. */
  | { readonly kind: 'event-loop-empty' }
  /** No answer by the deadline: the process was killed, as Lambda does at the timeout. */
  | { readonly kind: 'timeout' }
  /** The process ended without answering (killed, or exited). */
  | { readonly kind: 'crash'; readonly exitCode: number | null; readonly signal: string | null };

export interface Invocation {
  readonly requestId: string;
  readonly outcome: InvocationOutcome;
  /** What the function wrote during this invocation. */
  readonly stdout: string;
  readonly stderr: string;
  /** Whether a new process served it. */
  readonly coldStart: boolean;
  /** Bytes of the answer the runtime posted (a response's JSON, or an error's), when it posted one. */
  readonly answerBytes?: number;
}

/** A handler promise that settled after its invocation had already ended (frozen work waking up). */
export interface LateSettlement {
  readonly requestId: string;
  readonly outcome: 'response' | 'error';
}

interface ActiveInvocation {
  readonly requestId: string;
  readonly event: unknown;
  readonly deadline: number;
  readonly coldStart: boolean;
  readonly stdoutStart: number;
  readonly stderrStart: number;
  outcome: InvocationOutcome | undefined;
  answerBytes: number | undefined;
  delivered: boolean;
  marks: number;
  timer: NodeJS.Timeout | undefined;
  resolve(invocation: Invocation): void;
}

interface Sandbox {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  stdout: string;
  stderr: string;
  frozen: boolean;
  /** The runtime's `GET /next`, held until there is an invocation. */
  waiting: ServerResponse | undefined;
  initDone: boolean;
}

export class LambdaContainer {
  readonly #spec: LambdaFunctionSpec;
  readonly #lateSettlements: LateSettlement[] = [];
  #server: Server | undefined;
  #apiAddress: string | undefined;
  #sandbox: Sandbox | undefined;
  #active: ActiveInvocation | undefined;
  /** Everything every process wrote, for scans over a whole test (secrets in logs, say). */
  #output = '';
  #closed = false;

  constructor(spec: LambdaFunctionSpec) {
    this.#spec = spec;
  }

  /** stdout and stderr of every invocation so far, in order of arrival. */
  get output(): string {
    return this.#output;
  }

  get lateSettlements(): readonly LateSettlement[] {
    return this.#lateSettlements;
  }

  /** The function process's id while one runs (for measurements from /proc). */
  get pid(): number | undefined {
    return this.#sandbox?.child.pid;
  }

  /** Whether the function process has received an invocation it has not answered yet. */
  get invocationInFlight(): boolean {
    return this.#active?.delivered === true && this.#active.outcome === undefined;
  }

  /**
   * Invokes the function once and resolves when the invocation is over, however it ended.
   * `requestId` replays a request id, as Lambda does when it delivers an asynchronous invocation
   * a second time. @default a new UUID
   */
  async invoke(event: unknown, options: { readonly requestId?: string } = {}): Promise<Invocation> {
    if (this.#closed) throw new Error('LambdaContainer is closed');
    if (this.#active !== undefined)
      throw new Error('One invocation at a time: a Lambda environment is single-concurrency');
    await this.#ensureServer();
    const coldStart = this.#sandbox === undefined;
    const sandbox = this.#sandbox ?? this.#startSandbox();
    return new Promise<Invocation>((resolve) => {
      const active: ActiveInvocation = {
        requestId: options.requestId ?? randomUUID(),
        event,
        deadline: Date.now() + this.#spec.timeoutMs,
        coldStart,
        stdoutStart: sandbox.stdout.length,
        stderrStart: sandbox.stderr.length,
        outcome: undefined,
        answerBytes: undefined,
        delivered: false,
        marks: 0,
        timer: undefined,
        resolve,
      };
      this.#active = active;
      // The timeout counts from the invoke, cold start included, as Lambda's does for the first
      // invocation of an environment (init has its own limit there; here it is part of the budget).
      active.timer = setTimeout(() => this.#timeOut(active), this.#spec.timeoutMs);
      this.#deliver();
    });
  }

  /** Kills the process now (a crash); an invocation in flight ends as `crash`. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const sandbox = this.#sandbox;
    if (sandbox === undefined) return;
    sandbox.child.kill(signal);
    // A stopped process only acts on a signal other than SIGKILL once it runs again.
    if (sandbox.frozen && signal !== 'SIGKILL') sandbox.child.kill('SIGCONT');
    await sandbox.exited;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.kill();
    const server = this.#server;
    if (server !== undefined) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  async #ensureServer(): Promise<void> {
    if (this.#server !== undefined) return;
    const server = createServer((request, response) => this.#route(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    this.#server = server;
    this.#apiAddress = `127.0.0.1:${port}`;
  }

  #startSandbox(): Sandbox {
    const memoryMb = this.#spec.memoryMb ?? 256;
    // The managed runtime's bootstrap: a tenth of the memory for the young generation, the rest old.
    const newSpace = Math.floor(memoryMb / 10);
    const child = spawn(
      spawnedNode().path,
      [
        `--max-semi-space-size=${Math.floor(newSpace / 2)}`,
        `--max-old-space-size=${memoryMb - newSpace}`,
        ...(this.#spec.nodeArgs ?? []),
        BOOTSTRAP,
      ],
      {
        cwd: this.#spec.codeDir,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          PATH: process.env.PATH,
          TZ: 'UTC',
          LANG: 'en_US.UTF-8',
          ...this.#spec.environment,
          AWS_LAMBDA_RUNTIME_API: this.#apiAddress,
          LAMBDA_TASK_ROOT: this.#spec.codeDir,
          _HANDLER: this.#spec.handler ?? 'index.handler',
          AWS_LAMBDA_FUNCTION_NAME: this.#spec.functionName ?? 'banking-events-poller',
          AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb),
          AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
          AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
        },
      },
    );
    if (child.pid !== undefined) this.#spec.onProcessStart?.(child.pid);
    // 'close', not 'exit': by then both pipes are drained, so nothing the process wrote is missed.
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    // A signal to a process that has just gone is reported as an 'error' event; nothing to do then.
    child.on('error', () => {});
    const sandbox: Sandbox = {
      child,
      exited,
      stdout: '',
      stderr: '',
      frozen: false,
      waiting: undefined,
      initDone: false,
    };
    const capture = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
      let text = chunk.toString('utf8');
      const marks = text.split(END_MARK).length - 1;
      text = text.replaceAll(END_MARK, '');
      sandbox[stream] += text;
      this.#output += text;
      if (marks > 0) this.#markSeen(sandbox, marks);
    };
    child.stdout?.on('data', capture('stdout'));
    child.stderr?.on('data', capture('stderr'));
    child.once('close', (exitCode, signal) => this.#sandboxExited(sandbox, exitCode, signal));
    this.#sandbox = sandbox;
    return sandbox;
  }

  #route(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const url = request.url ?? '';
      if (request.method === 'GET' && url === '/2018-06-01/runtime/invocation/next') {
        this.#nextRequested(response);
        return;
      }
      const match = /^\/2018-06-01\/runtime\/invocation\/([^/]+)\/(response|error|late)$/.exec(url);
      if (request.method === 'POST' && match !== null) {
        const refused = this.#answered(match[1]!, match[2] as 'response' | 'error' | 'late', body);
        if (refused) {
          response
            .writeHead(413, { 'content-type': 'application/json' })
            .end('{"errorType":"RequestEntityTooLarge"}');
          return;
        }
      } else if (request.method === 'POST' && url === '/2018-06-01/runtime/init/error') {
        const active = this.#active;
        if (active !== undefined && active.outcome === undefined) active.outcome = errorOutcome(body);
      } else {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(202, { 'content-type': 'application/json' }).end('{"status":"OK"}');
    });
  }

  /** The runtime asks for work: hand over the active invocation, or freeze it until there is one. */
  #nextRequested(response: ServerResponse): void {
    const sandbox = this.#sandbox;
    if (sandbox === undefined) {
      response.writeHead(410).end();
      return;
    }
    sandbox.waiting = response;
    if (!sandbox.initDone) {
      sandbox.initDone = true;
      if (sandbox.child.pid !== undefined) this.#spec.onInitDone?.(sandbox.child.pid);
    }
    if (!this.#deliver()) {
      sandbox.frozen = true;
      sandbox.child.kill('SIGSTOP');
    }
  }

  /** Sends the active invocation to a waiting runtime, thawing it first; false when there is nothing to send. */
  #deliver(): boolean {
    const sandbox = this.#sandbox;
    const active = this.#active;
    if (sandbox?.waiting === undefined || active === undefined || active.delivered) return false;
    if (sandbox.frozen) {
      sandbox.frozen = false;
      sandbox.child.kill('SIGCONT');
    }
    const response = sandbox.waiting;
    sandbox.waiting = undefined;
    active.delivered = true;
    response
      .writeHead(200, {
        'content-type': 'application/json',
        'lambda-runtime-aws-request-id': active.requestId,
        'lambda-runtime-deadline-ms': String(active.deadline),
        'lambda-runtime-invoked-function-arn': `arn:aws:lambda:us-east-1:123456789012:function:${this.#spec.functionName ?? 'banking-events-poller'}`,
        'lambda-runtime-trace-id': `Root=1-${Date.now().toString(16)}-${randomUUID().replaceAll('-', '').slice(0, 24)}`,
      })
      .end(active.event instanceof EventText ? active.event.text : JSON.stringify(active.event ?? null));
    return true;
  }

  /** Records an answer; true when it was refused for its size (the Runtime API answers 413). */
  #answered(requestId: string, kind: 'response' | 'error' | 'late', body: string): boolean {
    if (kind === 'late') {
      const { outcome } = JSON.parse(body) as { outcome: 'response' | 'error' };
      this.#lateSettlements.push({ requestId, outcome });
      return false;
    }
    const active = this.#active;
    if (active === undefined || active.requestId !== requestId || active.outcome !== undefined) return false;
    const bytes = Buffer.byteLength(body, 'utf8');
    active.answerBytes = bytes;
    const tooLarge = kind === 'response' && bytes > RESPONSE_MAX_BYTES;
    active.outcome = tooLarge
      ? {
          kind: 'error',
          errorType: 'Function.ResponseSizeTooLarge',
          errorMessage: `Response payload size exceeded maximum allowed payload size (${RESPONSE_MAX_BYTES} bytes).`,
        }
      : kind === 'response'
        ? { kind: 'response', result: JSON.parse(body) }
        : errorOutcome(body);
    this.#settleIfDrained(active);
    return tooLarge;
  }

  /** Both pipes carried the runtime's end-of-invocation mark: everything the invocation wrote has arrived. */
  #markSeen(sandbox: Sandbox, marks: number): void {
    const active = this.#active;
    if (active === undefined || sandbox !== this.#sandbox) return;
    active.marks += marks;
    this.#settleIfDrained(active);
  }

  #settleIfDrained(active: ActiveInvocation): void {
    if (active.outcome !== undefined && active.marks >= 2) this.#settle(active, active.outcome);
  }

  #timeOut(active: ActiveInvocation): void {
    if (this.#active !== active || active.outcome !== undefined) return;
    active.outcome = { kind: 'timeout' };
    void this.kill();
  }

  #sandboxExited(sandbox: Sandbox, exitCode: number | null, signal: NodeJS.Signals | null): void {
    sandbox.waiting?.destroy();
    const active = this.#active;
    if (active !== undefined) this.#settle(active, active.outcome ?? { kind: 'crash', exitCode, signal });
    if (this.#sandbox === sandbox) this.#sandbox = undefined;
  }

  #settle(active: ActiveInvocation, outcome: InvocationOutcome): void {
    if (this.#active !== active) return;
    this.#active = undefined;
    clearTimeout(active.timer);
    const sandbox = this.#sandbox;
    active.resolve({
      requestId: active.requestId,
      outcome,
      stdout: sandbox?.stdout.slice(active.stdoutStart) ?? '',
      stderr: sandbox?.stderr.slice(active.stderrStart) ?? '',
      coldStart: active.coldStart,
      ...(active.answerBytes === undefined ? {} : { answerBytes: active.answerBytes }),
    });
  }
}

function errorOutcome(body: string): InvocationOutcome {
  const { errorType, errorMessage } = JSON.parse(body) as { errorType?: string; errorMessage?: string };
  if (errorType === 'Runtime.NodeJsExit') return { kind: 'event-loop-empty' };
  return { kind: 'error', errorType: errorType ?? 'Unknown', errorMessage: errorMessage ?? '' };
}
