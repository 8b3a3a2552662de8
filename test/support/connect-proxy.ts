/**
 * An egress proxy on loopback, as a bank-side deployment would have one: it tunnels `CONNECT
 * host:port` and forwards absolute-URI requests (`GET http://host/…`), and writes one log line per
 * request naming only the method and the target host:port (never a path, a query or a header: a
 * proxy sees the secret of any plain HTTP request it forwards). For each tunnel it records the
 * local port of its own upstream socket, so the server at the far end can tell a connection came
 * through the proxy.
 *
 * A misbehaving proxy answers every CONNECT its own way (`answer`): it drops the connection, holds
 * it without a word, or answers a status (407); it still logs each CONNECT, so a test counts them.
 *
 * @example
 * const proxy = await ConnectProxy.start();
 * // HTTPS_PROXY=proxy.url
 * expect(proxy.targets()).toEqual(['localhost:8443']);
 */
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import { connect as connectTcp, type Socket } from 'node:net';
import { connectBackoffMs } from '../../functions/adapters/banking-http/proxy-tunnel.ts';
import { readBody, withoutHopHeaders } from './proxy-http.ts';

/**
 * The most CONNECTs the poller's connection gate lets through in `elapsedMs` when every one fails:
 * the first at once, then attempt `n` no sooner than `connectBackoffMs(n - 1)` after the failure
 * before it. A bound from the rule, whatever the machine's speed (a slower one makes fewer).
 */
export function maxConnectsWithin(elapsedMs: number): number {
  let attempts = 1;
  let waited = 0;
  while (waited + connectBackoffMs(attempts) <= elapsedMs) {
    waited += connectBackoffMs(attempts);
    attempts += 1;
  }
  return attempts;
}

/** How the proxy answers `CONNECT`: a tunnel, a dropped connection, silence, or a status. */
export type ConnectAnswer = 'tunnel' | 'drop' | 'hold' | { readonly status: number };

export interface ConnectProxyOptions {
  /** @default 'tunnel' */
  readonly answer?: ConnectAnswer;
}

export class ConnectProxy {
  /** The log the proxy writes: `CONNECT localhost:8443`, `GET 127.0.0.1:5000`. */
  readonly log: string[] = [];
  /** Local ports of the sockets it opened towards a tunnel's target. */
  readonly tunnelPorts = new Set<number>();
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  /** Client sockets whose CONNECT is held without an answer, until the client closes them. */
  readonly #held = new Set<Socket>();
  readonly #heldListeners = new Set<() => void>();
  /** How the next CONNECTs are answered; a test may change it between invocations. */
  answer: ConnectAnswer;

  private constructor(server: Server, answer: ConnectAnswer) {
    this.#server = server;
    this.answer = answer;
  }

  static async start(options: ConnectProxyOptions = {}): Promise<ConnectProxy> {
    const server = createServer();
    const proxy = new ConnectProxy(server, options.answer ?? 'tunnel');
    server.on('connection', (socket: Socket) => proxy.#track(socket));
    server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) =>
      proxy.#tunnel(req, client, head),
    );
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      proxy.#forward(req, res).catch(() => res.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** `http://127.0.0.1:PORT`, for `HTTPS_PROXY`. */
  get url(): string {
    const address = this.#server.address();
    if (address === null || typeof address === 'string') throw new Error('not listening');
    return `http://127.0.0.1:${address.port}`;
  }

  /** `CONNECT` requests received so far. */
  get connects(): number {
    return this.log.filter((line) => line.startsWith('CONNECT ')).length;
  }

  /** CONNECTs held without an answer whose client has not closed the connection. */
  get heldOpen(): number {
    return this.#held.size;
  }

  /** Resolves once every held CONNECT's client has closed its connection (never, if none does). */
  heldClosed(): Promise<void> {
    return new Promise<void>((resolve) => {
      const check = (): void => {
        if (this.#held.size > 0) return;
        this.#heldListeners.delete(check);
        resolve();
      };
      this.#heldListeners.add(check);
      check();
    });
  }

  /** The distinct targets of the log, in order of first use. */
  targets(): string[] {
    return [...new Set(this.log.map((line) => line.split(' ')[1] ?? ''))];
  }

  #tunnel(req: IncomingMessage, client: Socket, head: Buffer): void {
    const target = req.url ?? '';
    this.log.push(`CONNECT ${target}`);
    const answer = this.answer;
    if (answer === 'drop') {
      client.destroy();
      return;
    }
    if (answer === 'hold') {
      this.#held.add(client);
      client.on('error', () => undefined);
      // Read (and drop) what comes, so the client closing the connection is seen (the server's
      // sockets are half-open: its end must be closed here).
      client.once('end', () => client.destroy());
      client.resume();
      client.once('close', () => {
        this.#held.delete(client);
        for (const listener of [...this.#heldListeners]) listener();
      });
      return;
    }
    if (answer !== 'tunnel') {
      client.end(`HTTP/1.1 ${answer.status} Refused\r\nProxy-Authenticate: Basic realm="egress"\r\n\r\n`);
      return;
    }
    const separator = target.lastIndexOf(':');
    const upstream = connectTcp(Number(target.slice(separator + 1)), target.slice(0, separator));
    this.#track(upstream);
    upstream.on('connect', () => {
      if (upstream.localPort !== undefined) this.tunnelPorts.add(upstream.localPort);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
    upstream.on('error', () => {
      if (client.writable) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      client.destroy();
    });
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
  }

  async #forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = new URL(req.url ?? '/');
    this.log.push(`${req.method} ${target.host}`);
    const body = await readBody(req);
    const forwarded = request(
      target,
      { method: req.method, headers: withoutHopHeaders(req.headers) },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, withoutHopHeaders(answer.headers));
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    forwarded.end(body);
  }

  #track(socket: Socket): void {
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
