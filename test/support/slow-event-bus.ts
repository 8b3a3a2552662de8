/**
 * A slow EventBridge on loopback: speaks the classic `AWSEvents.PutEvents` JSON protocol (point a
 * function at it with `AWS_ENDPOINT_URL_EVENTBRIDGE`), accepts every entry after `latencyMs`, and
 * records the sequence numbers it accepted, for the no-loss check. Nothing else of EventBridge.
 *
 * @example
 * const bus = await SlowEventBus.start({ latencyMs: 100 });
 * environment.AWS_ENDPOINT_URL_EVENTBRIDGE = bus.endpoint;
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const SEQUENCE = /"sequence_number":(\d+)/;

export class SlowEventBus {
  readonly endpoint: string;
  /** Sequence numbers accepted at least once. */
  readonly accepted = new Set<number>();
  requests = 0;
  entries = 0;
  readonly #server: Server;
  readonly #latencyMs: number;

  private constructor(server: Server, latencyMs: number) {
    this.#server = server;
    this.#latencyMs = latencyMs;
    this.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  static async start(options: { readonly latencyMs: number }): Promise<SlowEventBus> {
    let bus: SlowEventBus | undefined;
    const server = createServer({ keepAlive: true }, (request, response) => bus?.handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    bus = new SlowEventBus(server, options.latencyMs);
    return bus;
  }

  /** Sequence numbers from 1 to `through` the bus never accepted (at most 10 of them). */
  missingThrough(through: number | null): number[] {
    const missing: number[] = [];
    for (let n = 1; n <= (through ?? 0) && missing.length < 10; n += 1)
      if (!this.accepted.has(n)) missing.push(n);
    return missing;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.headers['x-amz-target'] !== 'AWSEvents.PutEvents') {
        this.#answer(response, 400, { __type: 'UnknownOperationException', message: 'not simulated' });
        return;
      }
      const { Entries } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        Entries: Array<{ Detail: string }>;
      };
      this.requests += 1;
      setTimeout(() => {
        for (const entry of Entries) {
          this.entries += 1;
          this.accepted.add(Number(SEQUENCE.exec(entry.Detail)?.[1]));
        }
        this.#answer(response, 200, {
          FailedEntryCount: 0,
          Entries: Entries.map((_, index) => ({ EventId: `slow-${this.requests}-${index}` })),
        });
      }, this.#latencyMs);
    });
  }

  #answer(response: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    response.writeHead(status, {
      'content-type': 'application/x-amz-json-1.1',
      'content-length': Buffer.byteLength(text),
      'x-amzn-requestid': 'slow-bus',
    });
    response.end(text);
  }
}
