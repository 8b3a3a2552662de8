/**
 * An EventBridge stand-in for the benchmarks: a loopback HTTP server that speaks the real
 * `AWSEvents.PutEvents` JSON protocol, so the real SDK client (and so the real handler) talks to
 * it through `AWS_ENDPOINT_URL_EVENTBRIDGE`. It answers after a set latency, can reject a share of
 * entries or whole requests (`ThrottlingException`), and records when each sequence number was
 * first accepted, for throughput, delivery latency and the no-loss check.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PutEventsStandInOptions {
  /** Time before each answer. @default 15 */
  readonly latencyMs?: number;
  /** Share of entries answered with `InternalFailure`. @default 0 */
  readonly rejectRatio?: number;
  /** Share of requests answered with `ThrottlingException`. @default 0 */
  readonly throttleRatio?: number;
  /** Seed of the rejection draws. @default 1 */
  readonly seed?: number;
}

export interface AcceptedEvent {
  /** performance.now() of the bench process when the entry was first accepted. */
  readonly acceptedAt: number;
  /** Date.now() at that moment, to compare with `created_dt`. */
  readonly acceptedEpochMs: number;
  readonly createdEpochMs: number;
}

const SEQUENCE = /"sequence_number":(\d+)/;
const CREATED = /"created_dt":"([^"]+)"/;

export class PutEventsStandIn {
  readonly endpoint: string;
  /** First acceptance per sequence number. */
  readonly accepted = new Map<number, AcceptedEvent>();
  /** performance.now() of every request's arrival, for rate checks. */
  readonly requestTimes: number[] = [];
  entriesReceived = 0;
  duplicates = 0;
  readonly #server: Server;
  readonly #options: Required<PutEventsStandInOptions>;
  #random: () => number;
  #waiters: Array<{ count: number; resolve: () => void }> = [];

  private constructor(server: Server, options: Required<PutEventsStandInOptions>) {
    this.#server = server;
    this.#options = options;
    this.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    let state = options.seed >>> 0;
    this.#random = () => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return state / 4294967296;
    };
  }

  static async start(options: PutEventsStandInOptions = {}): Promise<PutEventsStandIn> {
    let standIn: PutEventsStandIn | undefined;
    const server = createServer({ keepAlive: true }, (req, res) => standIn?.handle(req, res));
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    standIn = new PutEventsStandIn(server, {
      latencyMs: options.latencyMs ?? 15,
      rejectRatio: options.rejectRatio ?? 0,
      throttleRatio: options.throttleRatio ?? 0,
      seed: options.seed ?? 1,
    });
    return standIn;
  }

  /** Resolves once `count` distinct sequence numbers have been accepted. */
  waitForAccepted(count: number): Promise<void> {
    if (this.accepted.size >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }

  /** The most requests that arrived within any window of `windowMs`. */
  maxRequestsInWindow(windowMs = 1000): number {
    let most = 0;
    let start = 0;
    for (let end = 0; end < this.requestTimes.length; end += 1) {
      while (this.requestTimes[end]! - this.requestTimes[start]! >= windowMs) start += 1;
      most = Math.max(most, end - start + 1);
    }
    return most;
  }

  reset(): void {
    this.accepted.clear();
    this.requestTimes.length = 0;
    this.entriesReceived = 0;
    this.duplicates = 0;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      this.requestTimes.push(performance.now());
      const target = req.headers['x-amz-target'];
      if (target !== 'AWSEvents.PutEvents') {
        this.#answer(res, 400, { __type: 'UnknownOperationException', message: `not simulated: ${target}` });
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        Entries: Array<{ Detail: string }>;
      };
      setTimeout(() => this.#putEvents(body.Entries, res), this.#options.latencyMs);
    });
  }

  #putEvents(entries: Array<{ Detail: string }>, res: ServerResponse): void {
    if (this.#options.throttleRatio > 0 && this.#random() < this.#options.throttleRatio) {
      this.#answer(res, 400, { __type: 'ThrottlingException', message: 'Rate exceeded' });
      return;
    }
    const now = performance.now();
    const epoch = Date.now();
    let failed = 0;
    const results = entries.map((entry) => {
      this.entriesReceived += 1;
      if (this.#options.rejectRatio > 0 && this.#random() < this.#options.rejectRatio) {
        failed += 1;
        return { ErrorCode: 'InternalFailure', ErrorMessage: 'stand-in rejection' };
      }
      const sequence = Number(SEQUENCE.exec(entry.Detail)?.[1]);
      if (this.accepted.has(sequence)) this.duplicates += 1;
      else {
        const created = Date.parse(CREATED.exec(entry.Detail)?.[1] ?? '');
        this.accepted.set(sequence, { acceptedAt: now, acceptedEpochMs: epoch, createdEpochMs: created });
      }
      return { EventId: `e-${sequence}-${this.entriesReceived}` };
    });
    this.#answer(res, 200, { FailedEntryCount: failed, Entries: results });
    this.#waiters = this.#waiters.filter((waiter) => {
      if (this.accepted.size < waiter.count) return true;
      waiter.resolve();
      return false;
    });
  }

  #answer(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/x-amz-json-1.1',
      'content-length': Buffer.byteLength(text),
      'x-amzn-requestid': 'standin',
    });
    res.end(text);
  }
}
