/**
 * Calls into a benchmark part that runs in a Node process of its own (the fleet bench's bank and
 * bus), so that its CPU and event loop are not the orchestrator's: the parent forks the module
 * under tsx and calls its methods over the IPC channel; the child serves them with `serveRpc`.
 */
import { type ChildProcess, fork } from 'node:child_process';

type Methods = Record<string, (argument: never) => unknown>;

interface Call {
  readonly id: number;
  readonly method: string;
  readonly argument: unknown;
}

interface Reply {
  readonly id: number;
  readonly result?: unknown;
  readonly error?: string;
}

/** In the child: answers the parent's calls with `methods`; the process ends when the parent goes. */
export function serveRpc(methods: Methods): void {
  if (process.send === undefined) throw new Error('serveRpc: this module must be started with child-rpc.ts');
  process.on('message', (message: Call) => {
    const method = methods[message.method];
    Promise.resolve()
      .then(() => {
        if (method === undefined) throw new Error(`no method ${message.method}`);
        return method(message.argument as never);
      })
      .then(
        (result) => process.send!({ id: message.id, result } satisfies Reply),
        (error: unknown) =>
          process.send!({
            id: message.id,
            error: error instanceof Error ? (error.stack ?? error.message) : String(error),
          } satisfies Reply),
      );
  });
  process.on('disconnect', () => process.exit(0));
}

/** In the parent: the child's methods, each returning a promise of its result. */
export class ChildRpc<M extends Methods> {
  readonly #child: ChildProcess;
  readonly #pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  #next = 0;
  #exited = false;

  private constructor(child: ChildProcess) {
    this.#child = child;
    child.on('message', (reply: Reply) => {
      const pending = this.#pending.get(reply.id);
      if (pending === undefined) return;
      this.#pending.delete(reply.id);
      if (reply.error === undefined) pending.resolve(reply.result);
      else pending.reject(new Error(reply.error));
    });
    child.once('exit', (code, signal) => {
      this.#exited = true;
      for (const pending of this.#pending.values()) {
        pending.reject(new Error(`child exited (${signal ?? code}) before answering`));
      }
      this.#pending.clear();
    });
  }

  /** Forks `module` (a TypeScript file) with tsx; `nodeArgs` go before it (`--max-old-space-size`). */
  static fork<M extends Methods>(module: string, nodeArgs: readonly string[] = []): ChildRpc<M> {
    const child = fork(module, [], {
      execArgv: ['--import', 'tsx', ...nodeArgs],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    return new ChildRpc<M>(child);
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  call<K extends keyof M & string>(
    method: K,
    ...argument: Parameters<M[K]> extends [] ? [] : Parameters<M[K]>
  ): Promise<Awaited<ReturnType<M[K]>>> {
    if (this.#exited) return Promise.reject(new Error(`child has exited; cannot call ${method}`));
    this.#next += 1;
    const id = this.#next;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.#child.send({ id, method, argument: argument[0] } satisfies Call);
    });
  }

  async close(): Promise<void> {
    if (this.#exited) return;
    const exited = new Promise<void>((resolve) => this.#child.once('exit', () => resolve()));
    this.#child.disconnect();
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}
