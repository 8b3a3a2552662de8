/** What the test proxies (`aws-fault-proxy.ts`, `banking-fault-proxy.ts`) share: reading a body, forwarding headers. */
import type { IncomingMessage } from 'node:http';

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
