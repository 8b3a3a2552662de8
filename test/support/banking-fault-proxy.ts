/**
 * An HTTP proxy in front of the banking simulator for faults the simulator does not make itself:
 * a connection reset in the middle of a body, a body that stops halfway and hangs, events that
 * arrive broken (a field missing or of the wrong type, or not JSON at all), a page in reverse order
 * or one that goes back to events already seen, and a redirect to another host. Everything else
 * passes through, a stream (`text/event-stream`) as it comes.
 * The function's secret names the proxy as `base_url`; the simulator behind it keeps the truth
 * (`events()`), so a test knows exactly what the bank holds.
 *
 * Header values are never kept or logged: they carry the bearer token.
 *
 * @example
 * const proxy = await BankingFaultProxy.start(simulator.url);
 * proxy.resetMidBody(1);               // the next GET /events answer is cut off mid-body
 * proxy.corrupt(7, 'drop-id');         // event 7 arrives without its id, every time it is served
 */
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { readBody, withoutHopHeaders } from './proxy-http.ts';

/** How an event is broken on its way to the poller. */
export type Corruption =
  | 'drop-id'
  | 'drop-sequence-number'
  | 'drop-type'
  | 'sequence-number-as-text'
  | 'type-as-number'
  | 'data-as-string'
  | 'not-an-object'
  | 'not-json';

export const CORRUPTIONS: readonly Corruption[] = [
  'drop-id',
  'drop-sequence-number',
  'drop-type',
  'sequence-number-as-text',
  'type-as-number',
  'data-as-string',
  'not-an-object',
  'not-json',
];

type AnswerFault =
  | { readonly kind: 'reset' }
  | { readonly kind: 'hang' }
  | { readonly kind: 'reverse' }
  | { readonly kind: 'repeat-previous' }
  | { readonly kind: 'redirect'; readonly location: string };

interface CountedFault {
  remaining: number;
  readonly fault: AnswerFault;
  /** Exact path the fault applies to. */
  readonly path: string;
}

export class BankingFaultProxy {
  readonly url: string;
  readonly #server: Server;
  readonly #target: URL;
  readonly #faults: CountedFault[] = [];
  readonly #corruptions = new Map<number, Corruption>();
  readonly #sockets: Set<Socket>;
  readonly #listeners: Array<(path: string, request: IncomingMessage) => void | Promise<void>> = [];
  /** The last `GET /events` body passed on unchanged, for `repeatPrevious`. */
  #previousPoll: string | undefined;
  #pollRequests = 0;

  private constructor(server: Server, target: URL, sockets: Set<Socket>) {
    this.#server = server;
    this.#target = target;
    this.#sockets = sockets;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  static async start(target: string): Promise<BankingFaultProxy> {
    let proxy: BankingFaultProxy | undefined;
    const server = createServer((req, res) => {
      proxy?.handle(req, res).catch(() => res.destroy());
    });
    const sockets = new Set<Socket>();
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new BankingFaultProxy(server, new URL(target), sockets);
    return proxy;
  }

  /** `GET /events` requests received. */
  get pollRequests(): number {
    return this.#pollRequests;
  }

  /** The next `count` answers to `path` are cut off halfway through the body and the connection reset. */
  resetMidBody(count: number, path = '/events'): void {
    this.#faults.push({ remaining: count, fault: { kind: 'reset' }, path });
  }

  /** The next `count` answers to `path` send half their body, then nothing more, until the client leaves. */
  hangMidBody(count: number, path = '/events'): void {
    this.#faults.push({ remaining: count, fault: { kind: 'hang' }, path });
  }

  /** The next `count` poll answers list their events in descending sequence order. */
  reverseNext(count: number): void {
    this.#faults.push({ remaining: count, fault: { kind: 'reverse' }, path: '/events' });
  }

  /**
   * The next `count` poll answers are the previous answer again: sequence numbers going back to
   * events already delivered (the simulator still answers the request, and that answer is lost).
   */
  repeatPrevious(count: number): void {
    this.#faults.push({ remaining: count, fault: { kind: 'repeat-previous' }, path: '/events' });
  }

  /** The next `count` answers to `path` are a 302 to `location` (another host, say). */
  redirectNext(count: number, location: string, path = '/events'): void {
    this.#faults.push({ remaining: count, fault: { kind: 'redirect', location }, path });
  }

  /** Event `sequenceNumber` arrives broken in every poll answer that carries it. */
  corrupt(sequenceNumber: number, corruption: Corruption): void {
    this.#corruptions.set(sequenceNumber, corruption);
  }

  get corruptions(): ReadonlyMap<number, Corruption> {
    return this.#corruptions;
  }

  /**
   * Calls `listener` with the path of every request as it arrives (and the request, to watch its
   * connection); the request waits for it: a listener that never settles holds the request forever.
   */
  onRequest(listener: (path: string, request: IncomingMessage) => void | Promise<void>): void {
    this.#listeners.push(listener);
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://proxy.invalid').pathname;
    if (req.method === 'GET' && path === '/events') this.#pollRequests += 1;
    for (const listener of this.#listeners) await listener(path, req);
    const body = await readBody(req);
    const fault = this.#takeFault(path);
    if (fault?.kind === 'redirect') {
      res.writeHead(302, { location: fault.location, 'content-length': '0' }).end();
      return;
    }
    const answer = await this.#forward(req, body, res);
    if (answer === undefined) return;
    let text = answer.body.toString('utf8');
    if (req.method === 'GET' && path === '/events' && answer.status === 200) {
      if (fault?.kind === 'repeat-previous' && this.#previousPoll !== undefined) text = this.#previousPoll;
      else this.#previousPoll = text;
      text = this.#rewritePoll(text, fault?.kind === 'reverse');
    }
    const bytes = Buffer.from(text, 'utf8');
    const headers = { ...answer.headers, 'content-length': String(bytes.length) };
    if (fault?.kind === 'reset' || fault?.kind === 'hang') {
      res.writeHead(answer.status, headers);
      res.write(bytes.subarray(0, Math.max(1, Math.floor(bytes.length / 2))));
      if (fault.kind === 'reset') setImmediate(() => res.socket?.resetAndDestroy());
      // 'hang': nothing more is written; the client's deadline ends it.
      return;
    }
    res.writeHead(answer.status, headers).end(bytes);
  }

  #takeFault(path: string): AnswerFault | undefined {
    const index = this.#faults.findIndex((candidate) => candidate.path === path);
    if (index === -1) return undefined;
    const counted = this.#faults[index]!;
    counted.remaining -= 1;
    if (counted.remaining <= 0) this.#faults.splice(index, 1);
    return counted.fault;
  }

  /** Applies the corruptions (and the reversal) to a poll answer's events. */
  #rewritePoll(text: string, reverse: boolean): string {
    if (this.#corruptions.size === 0 && !reverse) return text;
    const answer = JSON.parse(text) as { data?: Array<Record<string, unknown>> };
    if (!Array.isArray(answer.data)) return text;
    const events = answer.data.map((event) => {
      const corruption = this.#corruptions.get(event.sequence_number as number);
      return corruption === undefined ? JSON.stringify(event) : corrupted(event, corruption);
    });
    if (reverse) events.reverse();
    // Spliced as text so the rest of each event arrives as the simulator wrote it.
    const { data: _data, ...rest } = answer;
    const tail = JSON.stringify(rest).slice(1);
    return `{"data":[${events.join(',')}]${tail === '}' ? '}' : `,${tail}`}`;
  }

  /** Forwards to the simulator; `undefined` when the client went away first. */
  #forward(
    req: IncomingMessage,
    body: Buffer,
    res: ServerResponse,
  ): Promise<{ status: number; headers: Record<string, string | string[]>; body: Buffer } | undefined> {
    return new Promise((resolve) => {
      const upstream = request(
        {
          host: this.#target.hostname,
          port: this.#target.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: this.#target.host, 'content-length': String(body.length) },
        },
        (response) => {
          if (String(response.headers['content-type'] ?? '').startsWith('text/event-stream')) {
            // A stream passes through as it comes (no fault applies): buffered, no message would
            // arrive before it ends.
            res.writeHead(response.statusCode ?? 502, withoutHopHeaders(response.headers));
            res.flushHeaders();
            response.pipe(res);
            response.once('error', () => res.destroy());
            resolve(undefined);
            return;
          }
          readBody(response).then(
            (answer) =>
              resolve({
                status: response.statusCode ?? 502,
                headers: withoutHopHeaders(response.headers),
                body: answer,
              }),
            () => resolve(undefined),
          );
        },
      );
      // The poller gave up (deadline): free the simulator's held poll too.
      const onClose = () => {
        if (!res.writableEnded) upstream.destroy();
      };
      res.once('close', onClose);
      upstream.on('error', () => resolve(undefined));
      upstream.end(body);
    });
  }
}

/** The event's JSON text with `corruption` applied. */
export function corrupted(event: Record<string, unknown>, corruption: Corruption): string {
  const copy: Record<string, unknown> = { ...event };
  switch (corruption) {
    case 'drop-id':
      delete copy.id;
      break;
    case 'drop-sequence-number':
      delete copy.sequence_number;
      break;
    case 'drop-type':
      delete copy.type;
      break;
    case 'sequence-number-as-text':
      copy.sequence_number = `#${String(copy.sequence_number)}`;
      break;
    case 'type-as-number':
      copy.type = 42;
      break;
    case 'data-as-string':
      copy.data = 'not an object';
      break;
    case 'not-an-object':
      return JSON.stringify([copy.id, copy.sequence_number]);
    case 'not-json':
      // A trailing comma: JSON.parse refuses the event, and so the page it is in.
      return `${JSON.stringify(copy).slice(0, -1)},}`;
  }
  return JSON.stringify(copy);
}
