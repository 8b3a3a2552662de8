/**
 * A TLS-terminating front for a plain HTTP server on loopback (the simulator, a scripted server):
 * the bank as a client reaches it over HTTPS, optionally requiring a client certificate signed by
 * a given CA. Bytes pass through unchanged. It records, per accepted connection, the subject of the
 * client certificate presented and the client's port (to tell a proxied connection from a direct one).
 *
 * @example
 * const front = await TlsFront.start({ target: simulator.url, server, clientCa: ca.certificate });
 * // base_url: front.url (https://localhost:PORT)
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import type { IssuedCertificate } from './test-pki.ts';

export interface TlsFrontOptions {
  /** The plain HTTP origin behind, e.g. `http://127.0.0.1:8080`. */
  readonly target: string;
  /** The front's own certificate (for `localhost`). */
  readonly server: IssuedCertificate;
  /** When given, a client certificate signed by this CA is required. */
  readonly clientCa?: string;
}

/** One connection the front accepted after a complete handshake. */
export interface AcceptedConnection {
  /** CN of the client certificate, when one was presented. */
  readonly clientCommonName: string | undefined;
  /** The client's port: a proxied connection comes from the proxy's socket. */
  readonly remotePort: number;
}

export class TlsFront {
  readonly accepted: AcceptedConnection[] = [];
  /** Handshakes that failed (a certificate missing, expired, of another CA), by error code. */
  readonly refused: string[] = [];
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(options: TlsFrontOptions): Promise<TlsFront> {
    const target = new URL(options.target);
    const server = createServer({
      cert: options.server.certificate,
      key: options.server.key,
      ...(options.clientCa === undefined
        ? {}
        : { ca: options.clientCa, requestCert: true, rejectUnauthorized: true }),
    });
    const front = new TlsFront(server);
    server.on('secureConnection', (socket: TLSSocket) => {
      const peer = socket.getPeerCertificate();
      front.accepted.push({
        clientCommonName: peer && 'subject' in peer ? (peer.subject?.CN as string | undefined) : undefined,
        remotePort: socket.remotePort ?? 0,
      });
      const upstream = connectTcp(Number(target.port), target.hostname);
      front.#track(socket);
      front.#track(upstream);
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
      socket.on('close', () => upstream.destroy());
      upstream.on('close', () => socket.destroy());
    });
    server.on('tlsClientError', (error: Error & { code?: string }) => {
      front.refused.push(error.code ?? error.message);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return front;
  }

  get port(): number {
    const address = this.#server.address();
    if (address === null || typeof address === 'string') throw new Error('not listening');
    return address.port;
  }

  /** `https://localhost:PORT`: the name the server certificate holds. */
  get url(): string {
    return `https://localhost:${this.port}`;
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
