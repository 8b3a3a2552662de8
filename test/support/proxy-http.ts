/**
 * What the test proxies (`aws-fault-proxy.ts`, `banking-fault-proxy.ts`, `aws-call-recorder.ts`)
 * share: reading a body, forwarding headers, forwarding a whole request.
 */
import { type IncomingMessage, request } from 'node:http';

export function readBody(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** The request's headers less the hop-by-hop ones and the length, which the forwarded request sets itself. */
export function withoutHopHeaders(headers: IncomingMessage['headers']): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (
      value === undefined ||
      ['connection', 'keep-alive', 'transfer-encoding', 'content-length'].includes(name)
    )
      continue;
    kept[name] = value;
  }
  return kept;
}

/** An answer read whole, its hop-by-hop headers dropped. */
export interface ForwardedAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[]>;
  readonly body: Buffer;
}

/** Sends `req` (with `body` and `headers` in place of its own) to `target`, and reads the answer whole. */
export function forwardRequest(
  req: IncomingMessage,
  body: Buffer,
  target: URL,
  headers: IncomingMessage['headers'],
): Promise<ForwardedAnswer> {
  return new Promise((resolve, reject) => {
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
      (response) => {
        readBody(response).then(
          (answer) =>
            resolve({
              status: response.statusCode ?? 502,
              headers: withoutHopHeaders(response.headers),
              body: answer,
            }),
          reject,
        );
      },
    );
    upstream.on('error', reject);
    upstream.end(body);
  });
}
