/**
 * A keep-alive proxy in front of moto that counts the AWS calls going through it: by operation
 * (`DynamoDB_20120810.UpdateItem`, `secretsmanager.GetSecretValue`, …), by table, and by the
 * program whose checkpoint item a DynamoDB call names (`pk` = `program#<name>`). The fleet bench
 * turns the counts into requests per program-month for the cost table. Keeping connections open
 * is also what the AWS endpoints do (moto's server closes each one). DynamoDB calls may go to a
 * moto of their own (`dynamodb`): one moto serves one request at a time, in Python.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { forwardRequest, readBody } from '../../test/support/proxy-http.ts';

export interface CallCounts {
  /** Calls by operation (the `x-amz-target`). */
  readonly byOperation: Readonly<Record<string, number>>;
  /** DynamoDB calls by table and operation: `<table> <operation>`. */
  readonly byTable: Readonly<Record<string, number>>;
  /** DynamoDB calls naming a program's checkpoint item, by program. */
  readonly byProgram: Readonly<Record<string, number>>;
  /** Time from a call arriving to its answer leaving, by operation: p50 and p99 (ms). */
  readonly latencyMs: Readonly<Record<string, { readonly p50: number; readonly p99: number }>>;
}

const PROGRAM_KEY = /^program#(.+)$/;

export class AwsCallCounter {
  readonly endpoint: string;
  readonly #server: Server;
  readonly #target: URL;
  readonly #dynamodb: URL;
  #byOperation = new Map<string, number>();
  #byTable = new Map<string, number>();
  #byProgram = new Map<string, number>();
  #latencies = new Map<string, number[]>();

  private constructor(server: Server, target: URL, dynamodb: URL) {
    this.#server = server;
    this.#target = target;
    this.#dynamodb = dynamodb;
    this.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** `target`: moto; `dynamodb`: the moto DynamoDB calls go to. @default target */
  static async start(target: string, dynamodb = target): Promise<AwsCallCounter> {
    let counter: AwsCallCounter | undefined;
    const server = createServer({ keepAlive: true }, (req, res) => {
      counter!.#handle(req, res).catch((error: unknown) => {
        if (!res.headersSent && !res.destroyed) res.writeHead(502).end(String(error));
      });
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    counter = new AwsCallCounter(server, new URL(target), new URL(dynamodb));
    return counter;
  }

  /** The counts since the last `take()` (or the start), which start again from zero. */
  take(): CallCounts {
    const percentile = (sorted: number[], q: number) =>
      sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN;
    const counts: CallCounts = {
      byOperation: Object.fromEntries(this.#byOperation),
      byTable: Object.fromEntries(this.#byTable),
      byProgram: Object.fromEntries(this.#byProgram),
      latencyMs: Object.fromEntries(
        [...this.#latencies].map(([operation, values]) => {
          const sorted = values.sort((a, b) => a - b);
          return [operation, { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) }];
        }),
      ),
    };
    this.#byOperation = new Map();
    this.#byTable = new Map();
    this.#byProgram = new Map();
    this.#latencies = new Map();
    return counts;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const body = await readBody(req);
    const target = String(req.headers['x-amz-target'] ?? `${req.method} ${req.url?.split('?')[0]}`);
    const operation = target.slice(target.indexOf('.') + 1) || target;
    increment(this.#byOperation, target);
    const dynamodb = target.startsWith('DynamoDB_');
    if (dynamodb) this.#countDynamoDb(operation, body);
    const to = dynamodb ? this.#dynamodb : this.#target;
    const headers = { ...req.headers, host: to.host, 'content-length': String(body.length) };
    const answer = await forwardRequest(req, body, to, headers);
    res.writeHead(answer.status, answer.headers).end(answer.body);
    let latencies = this.#latencies.get(target);
    if (latencies === undefined) {
      latencies = [];
      this.#latencies.set(target, latencies);
    }
    latencies.push(Math.round((performance.now() - started) * 10) / 10);
  }

  #countDynamoDb(operation: string, body: Buffer): void {
    try {
      const input = JSON.parse(body.toString('utf8')) as {
        TableName?: string;
        Key?: { pk?: { S?: string } };
      };
      increment(this.#byTable, `${input.TableName ?? '?'} ${operation}`);
      const program = PROGRAM_KEY.exec(input.Key?.pk?.S ?? '')?.[1];
      if (program !== undefined) increment(this.#byProgram, program);
    } catch {
      increment(this.#byTable, `? ${operation}`);
    }
  }
}

function increment(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}
