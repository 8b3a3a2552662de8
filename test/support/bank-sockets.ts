/**
 * The connections between this process and a loopback server, from both ends, as Node's and
 * undici's diagnostics channels report them: the client sockets undici opened to the server's
 * port, and the sockets the server accepted. For tests that a command run in this process closes
 * every connection it opened: right after it returns, each client socket is destroyed (undici's
 * `destroy()` resolves once its sockets are), and each accepted socket sees its `close`, awaited
 * rather than timed.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';

export interface BankSockets {
  /** Client sockets undici opened to the port, in order. */
  readonly opened: readonly Socket[];
  /** Sockets the server on the port accepted, in order. */
  readonly accepted: readonly Socket[];
  /** Client sockets not destroyed. */
  stillOpen(): Socket[];
  /** Resolves once every socket the server accepted so far has closed. */
  serverSideClosed(): Promise<void>;
  stop(): void;
}

/** Starts watching the connections to `port` on 127.0.0.1; `stop()` unsubscribes. */
export function watchBankSockets(port: number): BankSockets {
  const opened: Socket[] = [];
  const accepted: { socket: Socket; closed: Promise<void> }[] = [];
  const onConnected = (message: unknown): void => {
    const { socket } = message as { socket: Socket };
    if (socket.remotePort === port) opened.push(socket);
  };
  const onAccepted = (message: unknown): void => {
    const { socket } = message as { socket: Socket };
    if (socket.localPort !== port) return;
    // Listened for at once: the close may come before anyone asks.
    accepted.push({ socket, closed: new Promise((resolve) => socket.once('close', () => resolve())) });
  };
  subscribe('undici:client:connected', onConnected);
  subscribe('net.server.socket', onAccepted);
  return {
    opened,
    get accepted() {
      return accepted.map(({ socket }) => socket);
    },
    stillOpen: () => opened.filter((socket) => !socket.destroyed),
    serverSideClosed: async () => {
      await Promise.all(accepted.map(({ closed }) => closed));
    },
    stop: () => {
      unsubscribe('undici:client:connected', onConnected);
      unsubscribe('net.server.socket', onAccepted);
    },
  };
}
