/**
 * An HTTP proxy in front of moto that records every AWS call passing through it: the service (the
 * SigV4 signing name of the request's credential scope), the operation (`X-Amz-Target` for the
 * JSON protocols, `Action=` for the query protocol, the path for the REST APIs the CLI uses),
 * the request's parameters and moto's answer. Point a process at it with `AWS_ENDPOINT_URL`.
 *
 * @example
 * const recorder = await AwsCallRecorder.start(motoEndpoint);
 * await runCli(['status'], { env: motoCliEnvironment(recorder.endpoint) });
 * recorder.calls.map((call) => `${call.service}:${call.operation}`); // ['cloudformation:DescribeStacks', …]
 */
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody, withoutHopHeaders } from './proxy-http.ts';

export interface RecordedAwsCall {
  /** The signing name: `dynamodb`, `events`, `monitoring` (CloudWatch), `sqs`, … */
  readonly service: string;
  /** The API operation: `GetItem`, `DeleteMessageBatch`, `Invoke`, … */
  readonly operation: string;
  /** The access key id that signed it: tells one client's calls from another's. */
  readonly accessKeyId: string;
  /** JSON body, query parameters, or the REST path's parameters. */
  readonly request: Readonly<Record<string, unknown>>;
  readonly status: number;
  /** moto's answer: parsed JSON, or the text (the query protocol answers in XML). */
  readonly response: unknown;
}

/** REST operations the CLI sends: method and path → operation and its path parameters. */
const REST_ROUTES: ReadonlyArray<{
  readonly service: string;
  readonly method: string;
  readonly path: RegExp;
  readonly operation: string;
  readonly parameters: readonly string[];
}> = [
  {
    service: 'scheduler',
    method: 'GET',
    path: /^\/schedules\/([^/?]+)/,
    operation: 'GetSchedule',
    parameters: ['Name'],
  },
  {
    service: 'lambda',
    method: 'POST',
    path: /^\/2015-03-31\/functions\/([^/?]+)\/invocations/,
    operation: 'Invoke',
    parameters: ['FunctionName'],
  },
];

export class AwsCallRecorder {
  readonly endpoint: string;
  readonly #server: Server;
  readonly #target: URL;
  readonly #calls: RecordedAwsCall[] = [];
  #inFlight = 0;
  #idleWaiters: Array<() => void> = [];

  private constructor(server: Server, target: URL) {
    this.#server = server;
    this.#target = target;
    this.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  static async start(target: string): Promise<AwsCallRecorder> {
    let recorder: AwsCallRecorder | undefined;
    const server = createServer((req, res) => {
      recorder!.#track(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    recorder = new AwsCallRecorder(server, new URL(target));
    return recorder;
  }

  /** Every call answered so far, in the order they were answered. */
  get calls(): readonly RecordedAwsCall[] {
    return this.#calls;
  }

  /**
   * Resolves once every request received has been answered and recorded: a client that gave up
   * on one (an aborted long poll) has still made the call.
   */
  idle(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** How many calls of `service:operation` were made (signed with `accessKeyId`, when given). */
  count(call: `${string}:${string}`, accessKeyId?: string): number {
    return this.#calls.filter(
      (recorded) =>
        `${recorded.service}:${recorded.operation}` === call &&
        (accessKeyId === undefined || recorded.accessKeyId === accessKeyId),
    ).length;
  }

  /** Forgets the calls recorded so far. */
  clear(): void {
    this.#calls.length = 0;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #track(req: IncomingMessage, res: ServerResponse): void {
    this.#inFlight += 1;
    this.#handle(req, res)
      .catch((error: unknown) => {
        if (!res.headersSent && !res.destroyed) res.writeHead(502).end(String(error));
      })
      .finally(() => {
        this.#inFlight -= 1;
        if (this.#inFlight === 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
      });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const { service, operation, parameters, accessKeyId } = describeRequest(req, body);
    const answer = await this.#forward(req, body);
    const text = answer.body.toString('utf8');
    let response: unknown = text;
    try {
      response = text === '' ? undefined : JSON.parse(text);
    } catch {
      // XML (the query protocol): kept as text.
    }
    this.#calls.push({
      service,
      operation,
      accessKeyId,
      request: parameters,
      status: answer.status,
      response,
    });
    // A client that gave up (tail's long poll, aborted on stop) is gone: the call is recorded all the same.
    if (!res.destroyed) res.writeHead(answer.status, answer.headers).end(answer.body);
  }

  #forward(
    req: IncomingMessage,
    body: Buffer,
  ): Promise<{ status: number; headers: Record<string, string | string[]>; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const upstream = request(
        {
          host: this.#target.hostname,
          port: this.#target.port,
          method: req.method,
          path: req.url,
          // The client's Host kept: moto writes it into the URLs it answers with (SQS queue URLs,
          // which the SDK then sends to), so every later call comes back through the recorder.
          headers: { ...req.headers, 'content-length': String(body.length) },
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

/** Service, operation and parameters of a signed request, whatever its protocol. */
function describeRequest(
  req: IncomingMessage,
  body: Buffer,
): { service: string; operation: string; accessKeyId: string; parameters: Record<string, unknown> } {
  const scope = /Credential=([^/]+)\/\d{8}\/[^/]+\/([^/]+)\/aws4_request/.exec(
    String(req.headers.authorization ?? ''),
  );
  if (scope === null) throw new Error(`An unsigned request reached the recorder: ${req.method} ${req.url}`);
  const accessKeyId = scope[1]!;
  const service = scope[2]!;
  const target = req.headers['x-amz-target'];
  if (typeof target === 'string') {
    return {
      service,
      accessKeyId,
      operation: target.slice(target.lastIndexOf('.') + 1),
      parameters: body.length === 0 ? {} : (JSON.parse(body.toString('utf8')) as Record<string, unknown>),
    };
  }
  const form = new URLSearchParams(body.toString('utf8'));
  const action = form.get('Action');
  if (action !== null)
    return { service, accessKeyId, operation: action, parameters: Object.fromEntries(form) };
  const path = req.url ?? '/';
  for (const route of REST_ROUTES) {
    const match = route.service === service && route.method === req.method ? route.path.exec(path) : null;
    if (match === null) continue;
    return {
      service,
      accessKeyId,
      operation: route.operation,
      parameters: Object.fromEntries(
        route.parameters.map((name, index) => [name, decodeURIComponent(match[index + 1]!)]),
      ),
    };
  }
  throw new Error(`The recorder does not know this call: ${service} ${req.method} ${path}`);
}
