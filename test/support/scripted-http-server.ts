/**
 * A scripted loopback HTTP server for adapter tests: it records every request (method, url, headers,
 * body) so a test can check exactly what was sent, and answers from a script of responders so a test
 * can choose exactly what comes back.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The whole request body as UTF-8 (empty for a GET). */
  readonly body: string;
  /** The whole request body as received, for binary protocols (CBOR). */
  readonly bodyBytes: Buffer;
}

/** Answers one request; it may write nothing (a hung server) or destroy the socket (a reset). */
export type Responder = (request: RecordedRequest, response: ServerResponse) => void | Promise<void>;

export interface ScriptedHttpServerOptions {
  /**
   * Requests whose URL is exactly a key here are answered by its responder, outside the script: they
   * are recorded but do not move the script on (e.g. a token endpoint beside the API under test).
   */
  readonly routes?: Readonly<Record<string, Responder>>;
}

export interface ScriptedHttpServer {
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  /** Every request in order of arrival, routed ones included. */
  readonly requests: readonly RecordedRequest[];
  /** From now on every scripted request is answered by `next`. */
  respondWith(next: Responder): void;
  /** Drops every open connection, keep-alive ones included, then stops listening. */
  close(): Promise<void>;
}

const open = new Set<ScriptedHttpServer>();

/**
 * Starts a server on a free loopback port. The n-th scripted request is answered by `script[n-1]`,
 * and the last responder repeats once the script runs out; a single responder answers them all.
 */
export async function startScriptedServer(
  script: Responder | readonly Responder[],
  options: ScriptedHttpServerOptions = {},
): Promise<ScriptedHttpServer> {
  const requests: RecordedRequest[] = [];
  const routes = new Map(Object.entries(options.routes ?? {}));
  let responders: readonly Responder[] = typeof script === 'function' ? [script] : script;
  let scripted = 0;
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => {
      const bodyBytes = Buffer.concat(parts);
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: bodyBytes.toString('utf8'),
        bodyBytes,
      };
      requests.push(recorded);
      let responder = routes.get(recorded.url);
      if (!responder) {
        scripted += 1;
        responder = responders[Math.min(scripted, responders.length) - 1];
      }
      void responder?.(recorded, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const handle: ScriptedHttpServer = {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    respondWith(next) {
      responders = [next];
    },
    close: () =>
      new Promise<void>((resolve) => {
        open.delete(handle);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  open.add(handle);
  return handle;
}

/** Closes every server started here and not yet closed; for `afterEach`. */
export async function closeAll(): Promise<void> {
  await Promise.all([...open].map((server) => server.close()));
}

/** Answers `status` with a JSON body; a string body is sent as it is (for bodies that are not JSON). */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Responder {
  return (_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
}

/** Answers `status` with `headers` and no body. */
export function bare(status: number, headers: Record<string, string> = {}): Responder {
  return (_request, response) => {
    response.writeHead(status, headers);
    response.end();
  };
}

/** A responder that keeps each request waiting until the test lets it through (`release`). */
export interface HeldResponder extends Responder {
  /** Answers every request waiting now, and every later one at once, with `answer`. */
  release(): void;
}

/**
 * Holds each request until `release()`, then answers it with `answer`: a test can act while a
 * request is in flight (wait for it in `server.requests`, abort, add a caller) and only then let
 * the answer go, instead of delaying the answer by a guessed time.
 */
export function heldUntilReleased(answer: Responder): HeldResponder {
  const waiting: [RecordedRequest, ServerResponse][] = [];
  let released = false;
  const held: Responder = (request, response) => {
    if (released) return answer(request, response);
    waiting.push([request, response]);
  };
  return Object.assign(held, {
    release() {
      released = true;
      for (const [request, response] of waiting.splice(0)) void answer(request, response);
    },
  });
}
