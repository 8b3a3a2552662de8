/**
 * An HTTP proxy in front of moto that injects EventBridge `PutEvents` faults, so the real SDK
 * client sees what AWS sends in bad moments: entries rejected within a successful answer
 * (`FailedEntryCount` > 0) and whole requests refused (`ThrottlingException`, 5xx). Everything
 * else passes through untouched. Point a function at it with `AWS_ENDPOINT_URL_EVENTBRIDGE`.
 *
 * Rejected entries are not forwarded, so moto (and the queues behind its rules) receives exactly
 * the entries the client was told were accepted.
 *
 * @example
 * const proxy = await AwsFaultProxy.start(motoEndpoint);
 * proxy.rejectEntries(2, { every: 2 }); // the next two PutEvents: every second entry fails
 * env.AWS_ENDPOINT_URL_EVENTBRIDGE = proxy.endpoint;
 */
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface EntryFault {
  remaining: number;
  readonly every: number;
  readonly errorCode: string;
}

interface RequestFault {
  remaining: number;
  readonly status: number;
  readonly errorType: string;
}

/** One PutEvents entry as the client sent it, byte for byte. */
export interface SentEntry {
  readonly Source?: string;
  readonly DetailType?: string;
  readonly Detail?: string;
}

export interface PutEventsStats {
  /** PutEvents requests received. */
  readonly requests: number;
  /** Entries answered as failed by the proxy. */
  readonly rejectedEntries: number;
  /** Requests refused as a whole by the proxy. */
  readonly refusedRequests: number;
}

export class AwsFaultProxy {
  readonly endpoint: string;
  readonly #server: Server;
  readonly #target: URL;
  readonly #entryFaults: EntryFault[] = [];
  readonly #requestFaults: RequestFault[] = [];
  #stats = { requests: 0, rejectedEntries: 0, refusedRequests: 0 };
  readonly #sent: SentEntry[] = [];

  private constructor(server: Server, target: URL) {
    this.#server = server;
    this.#target = target;
    this.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  static async start(target: string): Promise<AwsFaultProxy> {
    let proxy: AwsFaultProxy | undefined;
    const server = createServer((req, res) => {
      proxy?.handle(req, res).catch((error: unknown) => {
        res.writeHead(502).end(String(error));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new AwsFaultProxy(server, new URL(target));
    return proxy;
  }

  get putEvents(): PutEventsStats {
    return { ...this.#stats };
  }

  /** Every PutEvents entry received, in order, faults included: what EventBridge would have seen. */
  get sentEntries(): readonly SentEntry[] {
    return this.#sent;
  }

  /**
   * The next `requests` PutEvents calls have every `every`-th entry (the 1st, then `every` later,
   * …) answered with `errorCode` instead of being forwarded.
   */
  rejectEntries(requests: number, options: { every?: number; errorCode?: string } = {}): void {
    this.#entryFaults.push({
      remaining: requests,
      every: options.every ?? 2,
      errorCode: options.errorCode ?? 'InternalFailure',
    });
  }

  /** The next `requests` PutEvents calls are refused as a whole with `status` and `errorType`. */
  refuseRequests(requests: number, options: { status?: number; errorType?: string } = {}): void {
    this.#requestFaults.push({
      remaining: requests,
      status: options.status ?? 400,
      errorType: options.errorType ?? 'ThrottlingException',
    });
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    if (req.headers['x-amz-target'] !== 'AWSEvents.PutEvents') {
      await this.#forward(req, body, res);
      return;
    }
    this.#stats.requests += 1;
    this.#sent.push(...(JSON.parse(body.toString('utf8')) as { Entries: SentEntry[] }).Entries);
    const refusal = takeFault(this.#requestFaults);
    if (refusal !== undefined) {
      this.#stats.refusedRequests += 1;
      res
        .writeHead(refusal.status, {
          'content-type': 'application/x-amz-json-1.1',
          'x-amzn-requestid': 'fault-proxy',
        })
        .end(JSON.stringify({ __type: refusal.errorType, message: 'Injected by the fault proxy' }));
      return;
    }
    const fault = takeFault(this.#entryFaults);
    if (fault === undefined) {
      await this.#forward(req, body, res);
      return;
    }
    const input = JSON.parse(body.toString('utf8')) as { Entries: unknown[] };
    const rejected = input.Entries.map((_, index) => index % fault.every === 0);
    const forwarded = input.Entries.filter((_, index) => !rejected[index]);
    const results =
      forwarded.length === 0
        ? []
        : ((
            JSON.parse(
              (
                await this.#send(req, Buffer.from(JSON.stringify({ ...input, Entries: forwarded })))
              ).body.toString('utf8'),
            ) as { Entries: unknown[] }
          ).Entries ?? []);
    let next = 0;
    const entries = rejected.map((isRejected) =>
      isRejected
        ? { ErrorCode: fault.errorCode, ErrorMessage: 'Injected by the fault proxy' }
        : (results[next++] ?? {}),
    );
    const failed = rejected.filter(Boolean).length;
    this.#stats.rejectedEntries += failed;
    res
      .writeHead(200, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': 'fault-proxy' })
      .end(JSON.stringify({ FailedEntryCount: failed, Entries: entries }));
  }

  async #forward(req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<void> {
    const answer = await this.#send(req, body);
    res.writeHead(answer.status, answer.headers).end(answer.body);
  }

  #send(
    req: IncomingMessage,
    body: Buffer,
  ): Promise<{ status: number; headers: Record<string, string | string[]>; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const headers = { ...req.headers, host: this.#target.host, 'content-length': String(body.length) };
      const upstream = request(
        {
          host: this.#target.hostname,
          port: this.#target.port,
          method: req.method,
          path: req.url,
          headers,
        },
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
}

function takeFault<T extends { remaining: number }>(queue: T[]): T | undefined {
  const fault = queue[0];
  if (fault === undefined) return undefined;
  fault.remaining -= 1;
  if (fault.remaining <= 0) queue.shift();
  return fault;
}

function readBody(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

function withoutHopHeaders(headers: IncomingMessage['headers']): Record<string, string | string[]> {
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
