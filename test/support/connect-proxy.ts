/**
 * An egress proxy on loopback, as a bank-side deployment would have one: it tunnels `CONNECT
 * host:port` and forwards absolute-URI requests (`GET http://host/…`), and writes one log line per
 * request naming only the method and the target host:port (never a path, a query or a header: a
 * proxy sees the secret of any plain HTTP request it forwards). For each tunnel it records the
 * local port of its own upstream socket, so the server at the far end can tell a connection came
 * through the proxy.
 *
 * @example
 * const proxy = await ConnectProxy.start();
 * // HTTPS_PROXY=proxy.url
 * expect(proxy.targets()).toEqual(['localhost:8443']);
 */
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import { connect as connectTcp, type Socket } from 'node:net';
import { readBody, withoutHopHeaders } from './proxy-http.ts';

export class ConnectProxy {
  /** The log the proxy writes: `CONNECT localhost:8443`, `GET 127.0.0.1:5000`. */
  readonly log: string[] = [];
  /** Local ports of the sockets it opened towards a tunnel's target. */
  readonly tunnelPorts = new Set<number>();
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<ConnectProxy> {
    const server = createServer();
    const proxy = new ConnectProxy(server);
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

  /** The distinct targets of the log, in order of first use. */
  targets(): string[] {
    return [...new Set(this.log.map((line) => line.split(' ')[1] ?? ''))];
  }

  #tunnel(req: IncomingMessage, client: Socket, head: Buffer): void {
    const target = req.url ?? '';
    this.log.push(`CONNECT ${target}`);
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
