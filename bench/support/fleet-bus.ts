/**
 * The fleet bench's EventBridge bus, in a process of its own (`ChildRpc.fork`): a loopback server
 * speaking the `AWSEvents.PutEvents` JSON protocol (what the handler's hand-signed requests send to
 * `AWS_ENDPOINT_URL_EVENTBRIDGE`), answering after a set latency, that records when each event of
 * each program was first accepted. Events are known by the bank's `program_id` and their
 * `sequence_number`; the delivery lag of an event is its acceptance time less its `created_dt`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { serveRpc } from './child-rpc.ts';

export interface BusOptions {
  /** Time before each answer, as EventBridge's own. @default 15 */
  readonly latencyMs?: number;
}

interface Accepted {
  /** Epoch ms of the first acceptance. */
  readonly acceptedAt: number;
  readonly createdAt: number;
}

/** One program's events on the bus. */
interface ProgramLog {
  readonly accepted: Map<number, Accepted>;
  duplicates: number;
}

export interface ProgramLags {
  /** Lags (ms) of the events created in the window, in creation order. */
  readonly lags: number[];
}

const PROGRAM = /"program_id":"([^"]+)"/;
const SEQUENCE = /"sequence_number":(\d+)/;
const CREATED = /"created_dt":"([^"]+)"/;

const programs = new Map<string, ProgramLog>();
const delay = monitorEventLoopDelay({ resolution: 10 });
let requests = 0;
let entries = 0;
let server: ReturnType<typeof createServer> | undefined;

function logOf(programId: string): ProgramLog {
  let log = programs.get(programId);
  if (log === undefined) {
    log = { accepted: new Map(), duplicates: 0 };
    programs.set(programId, log);
  }
  return log;
}

function handle(req: IncomingMessage, res: ServerResponse, latencyMs: number): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    requests += 1;
    if (req.headers['x-amz-target'] !== 'AWSEvents.PutEvents') {
      answer(res, 400, { __type: 'UnknownOperationException', message: 'not simulated' });
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { Entries: Array<{ Detail: string }> };
    setTimeout(() => {
      const now = Date.now();
      const results = body.Entries.map((entry) => {
        entries += 1;
        const programId = PROGRAM.exec(entry.Detail)?.[1] ?? 'unknown';
        const sequence = Number(SEQUENCE.exec(entry.Detail)?.[1]);
        const log = logOf(programId);
        if (log.accepted.has(sequence)) log.duplicates += 1;
        else {
          log.accepted.set(sequence, {
            acceptedAt: now,
            createdAt: Date.parse(CREATED.exec(entry.Detail)?.[1] ?? ''),
          });
        }
        return { EventId: `e-${entries}` };
      });
      answer(res, 200, { FailedEntryCount: 0, Entries: results });
    }, latencyMs);
  });
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/x-amz-json-1.1',
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': 'fleet-bus',
  });
  res.end(text);
}

export const busMethods = {
  async start(options: BusOptions): Promise<{ endpoint: string }> {
    const latencyMs = options.latencyMs ?? 15;
    server = createServer({ keepAlive: true }, (req, res) => handle(req, res, latencyMs));
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    delay.enable();
    return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  },
  /** Per program, the lags of the events created in [from, to) (epoch ms) that were accepted. */
  lags(window: { readonly from: number; readonly to: number }): Record<string, number[]> {
    const result: Record<string, number[]> = {};
    for (const [programId, log] of programs) {
      const lags: number[] = [];
      for (const accepted of log.accepted.values()) {
        if (accepted.createdAt >= window.from && accepted.createdAt < window.to) {
          lags.push(accepted.acceptedAt - accepted.createdAt);
        }
      }
      if (lags.length > 0) result[programId] = lags;
    }
    return result;
  },
  /** Per program, `[createdAt, lag]` of the events created in [from, to) that were accepted: when the slow ones were. */
  timedLags(window: { readonly from: number; readonly to: number }): Record<string, Array<[number, number]>> {
    const result: Record<string, Array<[number, number]>> = {};
    for (const [programId, log] of programs) {
      const lags: Array<[number, number]> = [];
      for (const accepted of log.accepted.values()) {
        if (accepted.createdAt >= window.from && accepted.createdAt < window.to) {
          lags.push([accepted.createdAt, accepted.acceptedAt - accepted.createdAt]);
        }
      }
      if (lags.length > 0) result[programId] = lags;
    }
    return result;
  },
  /**
   * The events of `range` (per program) first accepted: how many, and the first and last
   * acceptance times (a backlog's drain).
   */
  drains(ranges: Readonly<Record<string, { from: number; to: number }>>) {
    const result: Record<string, { accepted: number; first: number; last: number }> = {};
    for (const [programId, range] of Object.entries(ranges)) {
      const log = programs.get(programId);
      let accepted = 0;
      let first = Number.POSITIVE_INFINITY;
      let last = Number.NEGATIVE_INFINITY;
      for (let sequence = range.from; sequence <= range.to; sequence += 1) {
        const at = log?.accepted.get(sequence)?.acceptedAt;
        if (at === undefined) continue;
        accepted += 1;
        first = Math.min(first, at);
        last = Math.max(last, at);
      }
      result[programId] = { accepted, first, last };
    }
    return result;
  },
  /** Per program: sequence numbers 1..last never accepted (the first few), and duplicates accepted. */
  delivery(lastSequences: Readonly<Record<string, number>>) {
    const result: Record<string, { missing: number; firstMissing: number[]; duplicates: number }> = {};
    for (const [programId, last] of Object.entries(lastSequences)) {
      const log = programs.get(programId);
      const firstMissing: number[] = [];
      let missing = 0;
      for (let sequence = 1; sequence <= last; sequence += 1) {
        if (log?.accepted.has(sequence)) continue;
        missing += 1;
        if (firstMissing.length < 5) firstMissing.push(sequence);
      }
      result[programId] = { missing, firstMissing, duplicates: log?.duplicates ?? 0 };
    }
    return result;
  },
  /** Events accepted so far, per program. */
  acceptedCounts(): Record<string, number> {
    return Object.fromEntries([...programs].map(([programId, log]) => [programId, log.accepted.size]));
  },
  usage() {
    const cpu = process.cpuUsage();
    const ms = (ns: number) => Math.round(ns / 1e5) / 10;
    const usage = {
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      rssMiB: Math.round(process.memoryUsage().rss / 1024 / 1024),
      requests,
      entries,
      eventLoopDelayMs: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) },
    };
    delay.reset();
    return usage;
  },
  async close(): Promise<void> {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  },
};

export type BusMethods = typeof busMethods;

if (process.send !== undefined && process.argv[1] === import.meta.filename) serveRpc(busMethods);
