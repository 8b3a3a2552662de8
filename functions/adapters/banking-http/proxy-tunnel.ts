/**
 * How connections to the bank are opened, and how often: the tunnel through the egress proxy
 * (`CONNECT host:port`) with its failures named, and one gate that paces every connection attempt
 * after failures.
 *
 * Why not undici alone: in undici 7, a proxy that closes the connection while the tunnel is being
 * set up fails the CONNECT with `UND_ERR_SOCKET`, which the client takes for a recoverable socket
 * error: the request stays queued and the tunnel is tried again at once, forever (tens of
 * thousands of CONNECTs a minute; nodejs/undici#3897, fixed in undici 8 by #5441, which needs
 * Node 22.19, above this package's floor). A proxy's refusal (407) surfaces as
 * `UND_ERR_ABORTED` naming neither the proxy nor its answer. Here every failure of the tunnel is a
 * `ProxyTunnelError`, which undici fails the request with, and the gate makes a storm impossible
 * whatever undici does: after a failure, attempts go one at a time, each after an exponential
 * backoff (`connectBackoffMs`).
 */
import type { Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import type { TLSSocket } from 'node:tls';
import { type buildConnector, type Dispatcher, Pool } from 'undici';

/** The wait before the first attempt after a failure; it doubles with each further failure. */
export const CONNECT_BACKOFF_BASE_MS = 250;
/** The longest wait between two attempts while connections keep failing. */
export const CONNECT_BACKOFF_CAP_MS = 10_000;

/** The wait after `failures` consecutive failed attempts (0 when the last attempt succeeded). */
export function connectBackoffMs(failures: number): number {
  if (failures <= 0) return 0;
  return Math.min(CONNECT_BACKOFF_CAP_MS, CONNECT_BACKOFF_BASE_MS * 2 ** Math.min(failures - 1, 30));
}

/** The proxy as it may be shown: its address and the variable that named it, never its credentials. */
export interface ProxyName {
  /** `host:port`. */
  readonly address: string;
  /** e.g. `HTTPS_PROXY`. */
  readonly variable: string;
}

/** The proxy's address from its URL, without the `user:password@` it may carry. */
export function proxyNameOf(url: URL, variable: string): ProxyName {
  const port = url.port === '' ? (url.protocol === 'https:' ? '443' : '80') : url.port;
  return { address: `${url.hostname}:${port}`, variable };
}

/** Codes with which a connection to the proxy itself could not be made. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * The tunnel through the proxy could not be opened. Its `code` is not undici's `UND_ERR_SOCKET`,
 * so undici fails the request instead of trying again. It names the proxy (address and variable)
 * and what it answered; it keeps no cause, whose message could quote the proxy's URL.
 */
export class ProxyTunnelError extends Error {
  readonly code = 'PROXY_TUNNEL_FAILED';
  readonly proxy: ProxyName;
  /** The `host:port` the tunnel was for. */
  readonly target: string;
  /** The proxy's answer to CONNECT, when it answered. */
  readonly status: number | undefined;
  /** How it failed without answering: `unreachable` (no connection) or `dropped` (closed without an answer). */
  readonly failure: 'unreachable' | 'dropped' | undefined;
  /** The code of the underlying failure (e.g. `ECONNREFUSED`, `UND_ERR_SOCKET`). */
  readonly failureCode: string | undefined;

  constructor(
    proxy: ProxyName,
    target: string,
    answer:
      | { readonly status: number }
      | { readonly failure: 'unreachable' | 'dropped'; readonly failureCode: string },
  ) {
    const what =
      'status' in answer
        ? `answered CONNECT ${target} with HTTP ${answer.status}`
        : answer.failure === 'unreachable'
          ? `could not be reached (${answer.failureCode})`
          : `closed the connection without answering CONNECT ${target} (${answer.failureCode})`;
    super(`the egress proxy ${proxy.address} (${proxy.variable}) ${what}`);
    this.name = 'ProxyTunnelError';
    this.proxy = proxy;
    this.target = target;
    this.status = 'status' in answer ? answer.status : undefined;
    this.failure = 'failure' in answer ? answer.failure : undefined;
    this.failureCode = 'failureCode' in answer ? answer.failureCode : undefined;
  }
}

/**
 * Paces connection attempts: free while they succeed; after a failure, one at a time, each
 * `connectBackoffMs(failures)` after the last failure. `close()` ends every wait (the connections
 * are being destroyed), so a paced attempt never keeps the process alive.
 */
export class ConnectGate {
  readonly #now: () => number;
  readonly #closed = new AbortController();
  #failures = 0;
  #lastFailureAt = 0;
  #turn: Promise<void> = Promise.resolve();

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Consecutive failed attempts. */
  get failures(): number {
    return this.#failures;
  }

  async attempt<T>(run: () => Promise<T>): Promise<T> {
    if (this.#failures === 0) return this.#record(run);
    const previous = this.#turn;
    let done = (): void => {};
    this.#turn = new Promise<void>((resolve) => {
      done = resolve;
    });
    try {
      await previous;
      const waitMs = this.#lastFailureAt + connectBackoffMs(this.#failures) - this.#now();
      if (waitMs > 0) await delay(waitMs, undefined, { signal: this.#closed.signal });
      return await this.#record(run);
    } finally {
      done();
    }
  }

  close(): void {
    this.#closed.abort(new Error('the connections were closed'));
  }

  async #record<T>(run: () => Promise<T>): Promise<T> {
    this.#closed.signal.throwIfAborted();
    try {
      const result = await run();
      this.#failures = 0;
      return result;
    } catch (error) {
      this.#failures += 1;
      this.#lastFailureAt = this.#now();
      throw error;
    }
  }
}

type Connector = buildConnector.connector;

/** A connector (direct connections) whose attempts pass through `gate`. */
export function gatedConnector(connector: Connector, gate: ConnectGate): Connector {
  return (options, callback) => {
    gate
      .attempt(
        () =>
          new Promise<Socket | TLSSocket>((resolve, reject) => {
            connector(options, (error, socket) => (error ? reject(error) : resolve(socket as Socket)));
          }),
      )
      .then(
        (socket) => callback(null, socket),
        (error: Error) => callback(error, null),
      );
  };
}

/**
 * The `clientFactory` of undici's proxy agent: the client that talks to the proxy itself, whose
 * `connect()` opens the tunnel. Every tunnel passes through `gate`, and every failure is a
 * `ProxyTunnelError` (a 200 is the only answer that opens a tunnel).
 */
export function tunnelClientFactory(
  variable: string,
  gate: ConnectGate,
): (origin: URL, options: object) => Dispatcher {
  return (origin, options) => new TunnelClient(origin, options, proxyNameOf(origin, variable), gate);
}

class TunnelClient extends Pool {
  readonly #proxy: ProxyName;
  readonly #gate: ConnectGate;

  constructor(origin: URL, options: object, proxy: ProxyName, gate: ConnectGate) {
    super(origin, options);
    this.#proxy = proxy;
    this.#gate = gate;
  }

  // undici's proxy agent calls the promise form; the callback form is left as it is.
  override connect(options: Dispatcher.ConnectOptions): Promise<Dispatcher.ConnectData>;
  override connect(
    options: Dispatcher.ConnectOptions,
    callback: (err: Error | null, data: Dispatcher.ConnectData) => void,
  ): void;
  override connect(
    options: Dispatcher.ConnectOptions,
    callback?: (err: Error | null, data: Dispatcher.ConnectData) => void,
  ): Promise<Dispatcher.ConnectData> | undefined {
    if (callback !== undefined) {
      super.connect(options, callback);
      return undefined;
    }
    return this.#gate.attempt(() => this.#tunnel(options));
  }

  async #tunnel(options: Dispatcher.ConnectOptions): Promise<Dispatcher.ConnectData> {
    const target = String(options.path ?? '');
    let data: Dispatcher.ConnectData;
    try {
      data = await super.connect(options);
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      const failureCode = typeof code === 'string' ? code : error instanceof Error ? error.name : 'unknown';
      throw new ProxyTunnelError(this.#proxy, target, {
        failure: UNREACHABLE.has(failureCode) ? 'unreachable' : 'dropped',
        failureCode,
      });
    }
    if (data.statusCode !== 200) {
      data.socket.on('error', () => undefined).destroy();
      throw new ProxyTunnelError(this.#proxy, target, { status: data.statusCode });
    }
    return data;
  }
}
