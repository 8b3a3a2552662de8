/**
 * A TCP proxy that delays every chunk by a fixed one-way time in each direction: a network
 * between the poller and the simulator. Unlike a delay added to each answer, it delays what a
 * stream sends after its headers as much as a poll's answer, and a request as much as a response.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export class LatencyProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly port: number;
  /** Connections accepted so far. */
  connections = 0;

  private constructor(server: Server, port: number) {
    this.#server = server;
    this.port = port;
  }

  /** Listens on a free loopback port and forwards to `targetPort`, each way `oneWayMs` late. */
  static async start(targetPort: number, oneWayMs: number): Promise<LatencyProxy> {
    const sockets = new Set<Socket>();
    const server = createServer((client) => {
      const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      relay(client, upstream, oneWayMs);
      relay(upstream, client, oneWayMs);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no port');
    const proxy = new LatencyProxy(server, address.port);
    for (const socket of sockets) proxy.#sockets.add(socket);
    server.on('connection', (socket) => {
      proxy.#sockets.add(socket);
      proxy.connections += 1;
    });
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** Forwards `from` to `to`, each chunk `delayMs` late (equal delays keep the order); an end is delayed too. */
function relay(from: Socket, to: Socket, delayMs: number): void {
  from.on('data', (chunk) => {
    setTimeout(() => {
      if (!to.destroyed) to.write(chunk);
    }, delayMs);
  });
  from.on('end', () => {
    setTimeout(() => to.end(), delayMs);
  });
  from.on('close', () => {
    setTimeout(() => to.destroy(), delayMs);
  });
}
