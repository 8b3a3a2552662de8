/**
 * A jsii kernel client, as Python's, Java's, .NET's and Go's runtimes are: it starts the
 * `@jsii/runtime` process and speaks its protocol (one JSON request per line on the runtime's
 * stdin, one answer per line on its stdout, after a `{"hello": …}` line): `load` an assembly,
 * `create` objects, `invoke`/`get`/`set` on them, `sinvoke`/`sget` on classes, `del` them, and
 * answer the runtime's callbacks into objects implemented here (`implement`).
 *
 * Arguments are given as a foreign language gives them (see foreign-values.ts): plain data for
 * structs, member names for enums, `JsiiObject`s for objects; they are checked against the
 * assemblies' types before they are sent, so a misspelt struct member fails here, by name, instead
 * of vanishing in the kernel.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { type Callable, type TypeReference, TypeSystem } from './assembly-types.ts';
import {
  decodeValue,
  encodeArguments,
  encodeValue,
  ForeignValueError,
  JsiiObject,
} from './foreign-values.ts';
import { ensureJsiiRuntime, type KernelPackage } from './kernel-files.ts';

/** An error the kernel answered with: `name` is the kernel's (`@jsii/kernel.Fault`, `@jsii/kernel.RuntimeError`…). */
export class JsiiKernelError extends Error {
  constructor(
    readonly api: string,
    readonly kernelName: string | undefined,
    message: string,
    readonly kernelStack: string | undefined,
  ) {
    super(`${api}: ${kernelName ?? 'error'}: ${message}`);
    this.name = 'JsiiKernelError';
  }
}

/** The runtime process ended or spoke out of protocol. */
export class JsiiKernelProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsiiKernelProtocolError';
  }
}

export interface StartOptions {
  /** The Node.js that runs the kernel; default: this process's. */
  readonly node?: string;
  /** Added to the runtime's environment (e.g. `CDK_CONTEXT_JSON`, as the CDK CLI gives a non-TypeScript app). */
  readonly env?: Readonly<Record<string, string>>;
  /** Where the runtime caches unpacked tarballs (`JSII_RUNTIME_PACKAGE_CACHE_ROOT`). */
  readonly packageCacheDir?: string;
}

type MethodHandler = (...args: unknown[]) => unknown;

interface Message {
  readonly [key: string]: unknown;
}

/** A method of an object implemented on this side, and the type its result is declared as. */
interface Implementation {
  readonly handler: MethodHandler;
  readonly returns: TypeReference | undefined;
}

export class JsiiKernel {
  readonly types = new TypeSystem();
  readonly #child: ChildProcessByStdio<Writable, Readable, Readable>;
  readonly #inbox: Message[] = [];
  #waiting: ((message: Message | Error) => void) | undefined;
  #ended: Error | undefined;
  #output = '';
  #lock: Promise<void> = Promise.resolve();
  readonly #implementations = new Map<string, ReadonlyMap<string, Implementation>>();
  readonly #loaded = new Set<string>();

  private constructor(child: ChildProcessByStdio<Writable, Readable, Readable>) {
    this.#child = child;
    createInterface({ input: child.stdout }).on('line', (line) => this.#receive(line));
    createInterface({ input: child.stderr }).on('line', (line) => this.#record(line));
    child.once('exit', (code, signal) => {
      this.#end(new JsiiKernelProtocolError(`the jsii runtime exited (${signal ?? code}):\n${this.output}`));
    });
    child.once('error', (error) => this.#end(error));
  }

  /** Starts the runtime and waits for its hello. */
  static async start(options: StartOptions = {}): Promise<JsiiKernel> {
    const runtime = await ensureJsiiRuntime();
    const child = spawn(options.node ?? process.execPath, [runtime], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        ...process.env,
        ...(options.packageCacheDir === undefined
          ? {}
          : { JSII_RUNTIME_PACKAGE_CACHE_ROOT: options.packageCacheDir }),
        ...options.env,
      },
    });
    const kernel = new JsiiKernel(child);
    const hello = await kernel.#next();
    if (typeof hello.hello !== 'string' || !hello.hello.startsWith('@jsii/runtime@')) {
      child.kill();
      throw new JsiiKernelProtocolError(`expected the runtime's hello, got ${JSON.stringify(hello)}`);
    }
    return kernel;
  }

  /** What the runtime's process printed (its stdout and stderr, decoded), for diagnostics. */
  get output(): string {
    return this.#output;
  }

  /** Loads a package into the kernel, and its types into this client. */
  async load(pkg: KernelPackage): Promise<{ assembly: string; types: number }> {
    const answer = (await this.#request({
      api: 'load',
      name: pkg.name,
      version: pkg.version,
      tarball: pkg.tarball,
    })) as { assembly: string; types: number };
    this.types.add(pkg.types);
    this.#loaded.add(pkg.name);
    return answer;
  }

  /** `new fqn(...args)` in the kernel. */
  async create(fqn: string, args: readonly unknown[] = []): Promise<JsiiObject> {
    const encoded = encodeArguments(this.types, this.types.initializer(fqn), args, `new ${fqn}`);
    return decodeValue(await this.#request({ api: 'create', fqn, args: encoded })) as JsiiObject;
  }

  /**
   * An object implemented here, for the kernel to call back into: `interfaces` it declares (e.g.
   * `aws-cdk-lib.IAspect`) and a handler per method. Handlers may call the kernel meanwhile; their
   * arguments arrive decoded (`JsiiObject`s), their results are encoded against the method's return type.
   */
  async implement(
    interfaces: readonly string[],
    methods: Readonly<Record<string, MethodHandler>>,
  ): Promise<JsiiObject> {
    const implementations = new Map<string, Implementation>();
    for (const [name, handler] of Object.entries(methods)) {
      const declared = interfaces
        .map((fqn) => this.types.method(fqn, name, false))
        .find((method) => method !== undefined);
      if (declared === undefined) {
        throw new ForeignValueError(
          `implement(${interfaces.join(', ')})`,
          `no interface declares a method ${name}`,
        );
      }
      implementations.set(name, { handler, returns: declared.returns?.type });
    }
    const object = decodeValue(
      await this.#request({
        api: 'create',
        fqn: 'Object',
        interfaces,
        overrides: Object.keys(methods).map((method) => ({ method, cookie: method })),
      }),
    ) as JsiiObject;
    this.#implementations.set(object.ref, implementations);
    return new JsiiObject(object.ref, interfaces);
  }

  async invoke(object: JsiiObject, method: string, args: readonly unknown[] = []): Promise<unknown> {
    const callable = this.#method(object.fqn, object.interfaces, method, false);
    const encoded = encodeArguments(this.types, callable, args, `${object.fqn}.${method}`);
    const answer = (await this.#request({
      api: 'invoke',
      objref: object.toWire(),
      method,
      args: encoded,
    })) as {
      result?: unknown;
    };
    return decodeValue(answer.result);
  }

  /** A static method: `fqn.method(...args)`. */
  async sinvoke(fqn: string, method: string, args: readonly unknown[] = []): Promise<unknown> {
    const callable = this.#method(fqn, [], method, true);
    const encoded = encodeArguments(this.types, callable, args, `${fqn}.${method}`);
    const answer = (await this.#request({ api: 'sinvoke', fqn, method, args: encoded })) as {
      result?: unknown;
    };
    return decodeValue(answer.result);
  }

  async get(object: JsiiObject, property: string): Promise<unknown> {
    this.#property(object.fqn, object.interfaces, property, false);
    const answer = (await this.#request({ api: 'get', objref: object.toWire(), property })) as {
      value?: unknown;
    };
    return decodeValue(answer.value);
  }

  /** A static property (or constant): `fqn.property`. */
  async sget(fqn: string, property: string): Promise<unknown> {
    this.#property(fqn, [], property, true);
    const answer = (await this.#request({ api: 'sget', fqn, property })) as { value?: unknown };
    return decodeValue(answer.value);
  }

  async set(object: JsiiObject, property: string, value: unknown): Promise<void> {
    const declared = this.#property(object.fqn, object.interfaces, property, false);
    if (declared.immutable === true) {
      throw new ForeignValueError(`${object.fqn}.${property}`, 'is read-only');
    }
    const encoded =
      value === undefined && declared.optional === true
        ? undefined
        : encodeValue(this.types, declared.type, value, `${object.fqn}.${property}`);
    await this.#request({ api: 'set', objref: object.toWire(), property, value: encoded });
  }

  /** Releases the kernel's reference to `object`, as a foreign runtime does when its proxy is collected. */
  async del(object: JsiiObject): Promise<void> {
    await this.#request({ api: 'del', objref: object.toWire() });
    this.#implementations.delete(object.ref);
  }

  /** How many objects the kernel holds references to. */
  async objectCount(): Promise<number> {
    return ((await this.#request({ api: 'stats' })) as { objectCount: number }).objectCount;
  }

  /**
   * Sends a request as it is, unchecked: for showing what the kernel does with a value a client
   * did not check. Everything else goes through the typed calls above.
   */
  async raw(request: Readonly<Record<string, unknown>>): Promise<unknown> {
    return decodeValue(await this.#request(request));
  }

  /** Ends the runtime (its stdin closed, as a foreign runtime does at exit) and waits for it. */
  async close(): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.#child.once('exit', () => resolve()));
    this.#child.stdin.end(`${JSON.stringify({ exit: 0 })}\n`);
    await exited;
  }

  #method(fqn: string, interfaces: readonly string[], name: string, isStatic: boolean): Callable {
    for (const owner of [fqn, ...interfaces]) {
      const found = this.types.method(owner, name, isStatic);
      if (found !== undefined) return found;
    }
    throw new ForeignValueError(`${fqn}.${name}`, `no ${isStatic ? 'static ' : ''}method ${name} on ${fqn}`);
  }

  #property(fqn: string, interfaces: readonly string[], name: string, isStatic: boolean) {
    for (const owner of [fqn, ...interfaces]) {
      const found = this.types.property(owner, name, isStatic);
      if (found !== undefined) return found;
    }
    throw new ForeignValueError(
      `${fqn}.${name}`,
      `no ${isStatic ? 'static ' : ''}property ${name} on ${fqn}`,
    );
  }

  /**
   * One request and its answer. While the kernel waits on a callback it takes other requests (a
   * handler's own calls), so the line is given up while a handler runs and taken again to answer.
   */
  async #request(request: Readonly<Record<string, unknown>>): Promise<unknown> {
    let release = await this.#acquire();
    try {
      this.#write(request);
      for (;;) {
        const message = await this.#next();
        if ('ok' in message) return message.ok;
        if ('error' in message) {
          throw new JsiiKernelError(
            String(request.api),
            typeof message.name === 'string' ? message.name : undefined,
            String(message.error),
            typeof message.stack === 'string' ? message.stack : undefined,
          );
        }
        if ('callback' in message) {
          release();
          const completion = await this.#answerCallback(message.callback as Message);
          release = await this.#acquire();
          this.#write({ complete: completion });
          continue;
        }
        throw new JsiiKernelProtocolError(`unexpected message from the runtime: ${JSON.stringify(message)}`);
      }
    } finally {
      release();
    }
  }

  async #answerCallback(callback: Message): Promise<Record<string, unknown>> {
    const cbid = callback.cbid;
    try {
      const invoke = callback.invoke as { objref: Message; method: string; args?: unknown[] } | undefined;
      if (invoke === undefined) {
        throw new JsiiKernelProtocolError(
          `only method callbacks are implemented, got ${JSON.stringify(callback)}`,
        );
      }
      const ref = String(invoke.objref['$jsii.byref']);
      const implementation = this.#implementations.get(ref)?.get(invoke.method);
      if (implementation === undefined) {
        throw new JsiiKernelProtocolError(`no implementation of ${invoke.method} for ${ref}`);
      }
      const result = await implementation.handler(...((invoke.args ?? []).map(decodeValue) as unknown[]));
      const encoded =
        implementation.returns === undefined || result === undefined
          ? undefined
          : encodeValue(this.types, implementation.returns, result, `${ref}.${invoke.method} result`);
      return { cbid, result: encoded };
    } catch (error) {
      return { cbid, err: error instanceof Error ? error.message : String(error) };
    }
  }

  #acquire(): Promise<() => void> {
    let unlock!: () => void;
    const held = new Promise<void>((resolve) => {
      unlock = resolve;
    });
    const previous = this.#lock;
    this.#lock = previous.then(() => held);
    let released = false;
    return previous.then(() => () => {
      if (!released) {
        released = true;
        unlock();
      }
    });
  }

  #write(request: Readonly<Record<string, unknown>>): void {
    if (this.#ended !== undefined) throw this.#ended;
    this.#child.stdin.write(`${JSON.stringify(request)}\n`);
  }

  #next(): Promise<Message> {
    const queued = this.#inbox.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.#ended !== undefined) return Promise.reject(this.#ended);
    return new Promise((resolve, reject) => {
      this.#waiting = (message) => {
        this.#waiting = undefined;
        if (message instanceof Error) reject(message);
        else resolve(message);
      };
    });
  }

  #receive(line: string): void {
    let message: Message;
    try {
      message = JSON.parse(line) as Message;
    } catch {
      this.#end(
        new JsiiKernelProtocolError(`the runtime wrote a line that is not JSON: ${line.slice(0, 200)}`),
      );
      return;
    }
    if (this.#waiting !== undefined) this.#waiting(message);
    else this.#inbox.push(message);
  }

  /** The runtime forwards its child's stdout and stderr on its stderr, base64 in JSON. */
  #record(line: string): void {
    let text = line;
    try {
      const wrapped = JSON.parse(line) as { stdout?: string; stderr?: string };
      const encoded = wrapped.stderr ?? wrapped.stdout;
      if (typeof encoded === 'string') text = Buffer.from(encoded, 'base64').toString('utf8');
    } catch {
      // Not wrapped: the runtime's own output (e.g. a Node.js version notice).
    }
    this.#output = `${this.#output}${text.endsWith('\n') ? text : `${text}\n`}`.slice(-64_000);
  }

  #end(error: Error): void {
    this.#ended ??= error;
    this.#waiting?.(this.#ended);
  }
}
