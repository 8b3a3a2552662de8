/**
 * An HTTP proxy in front of moto that records every AWS call passing through it: the service (the
 * SigV4 signing name of the request's credential scope), the operation (`X-Amz-Target` for the
 * JSON protocols, `Action=` for the query protocol, the path for the REST APIs the CLI uses),
 * the request's parameters and the answer. Point a process at it with `AWS_ENDPOINT_URL`. A
 * service moto cannot serve goes to an endpoint of its own (`routes`: the Lambda Invoke stand-in),
 * still through the recorder. A call `refuse` names is answered as IAM answers a call it denies,
 * and recorded with that answer, without reaching anything behind the recorder.
 *
 * @example
 * const recorder = await AwsCallRecorder.start(motoEndpoint, { routes: { lambda: invoke.endpoint } });
 * await runCli(['status'], { env: motoCliEnvironment(recorder.endpoint) });
 * recorder.calls.map((call) => `${call.service}:${call.operation}`); // ['cloudformation:DescribeStacks', …]
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ForwardedAnswer, forwardRequest, readBody } from './proxy-http.ts';

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
  /** The answer: parsed JSON, or the text (the query protocol answers in XML). */
  readonly response: unknown;
}

/** A call as it arrives, before it is answered. */
export type PendingAwsCall = Pick<RecordedAwsCall, 'service' | 'operation' | 'accessKeyId' | 'request'>;

export interface AwsCallRecorderOptions {
  /** Signing name → the endpoint that serves it instead of the target (`lambda` → the Invoke stand-in). */
  readonly routes?: Readonly<Record<string, string>>;
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
  // Path-style, as the SDK addresses a bucket behind an IP endpoint (moto, this recorder).
  {
    service: 's3',
    method: 'GET',
    path: /^\/([^/?]+)\/([^?]+)/,
    operation: 'GetObject',
    parameters: ['Bucket', 'Key'],
  },
];

export class AwsCallRecorder {
  readonly endpoint: string;
  readonly #server: Server;
  readonly #target: URL;
  readonly #routes: ReadonlyMap<string, URL>;
  readonly #calls: RecordedAwsCall[] = [];
  #inFlight = 0;
  #idleWaiters: Array<() => void> = [];
  #refuse: (call: PendingAwsCall) => string | undefined = () => undefined;

  private constructor(server: Server, target: URL, routes: ReadonlyMap<string, URL>) {
    this.#server = server;
    this.#target = target;
    this.#routes = routes;
    this.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  static async start(target: string, options: AwsCallRecorderOptions = {}): Promise<AwsCallRecorder> {
    let recorder: AwsCallRecorder | undefined;
    const server = createServer((req, res) => {
      recorder!.#track(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const routes = new Map(
      Object.entries(options.routes ?? {}).map(([service, endpoint]) => [service, new URL(endpoint)]),
    );
    recorder = new AwsCallRecorder(server, new URL(target), routes);
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

  /**
   * From now on, answers each call for which `refuse` gives a reason as IAM answers a denied call
   * (`AccessDeniedException`, or `AccessDenied` in the query protocol), without forwarding it.
   * `() => undefined` forwards every call again.
   */
  refuseWhen(refuse: (call: PendingAwsCall) => string | undefined): void {
    this.#refuse = refuse;
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
    const reason = this.#refuse({ service, operation, accessKeyId, request: parameters });
    const answer =
      reason === undefined
        ? await this.#forward(req, body, this.#routes.get(service) ?? this.#target)
        : accessDenied(req, reason);
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

  #forward(req: IncomingMessage, body: Buffer, target: URL): Promise<ForwardedAnswer> {
    // The client's Host kept: moto writes it into the URLs it answers with (SQS queue URLs, which
    // the SDK then sends to), so every later call comes back through the recorder.
    return forwardRequest(req, body, target, { ...req.headers, 'content-length': String(body.length) });
  }
}

/** IAM's refusal in the request's protocol: the SDK raises it as the error it raises for a real one. */
function accessDenied(
  req: IncomingMessage,
  reason: string,
): { status: number; headers: Record<string, string>; body: Buffer } {
  const message = `User is not authorized to perform this action: ${reason}`;
  if (typeof req.headers['x-amz-target'] === 'string') {
    return json(400, { __type: 'AccessDeniedException', message });
  }
  if (String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
    const xml = `<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>${message}</Message></Error></ErrorResponse>`;
    return { status: 403, headers: { 'content-type': 'text/xml' }, body: Buffer.from(xml) };
  }
  return {
    ...json(403, { Type: 'User', Message: message }),
    headers: {
      'content-type': 'application/json',
      'x-amzn-errortype': 'AccessDeniedException',
    },
  };
}

function json(
  status: number,
  value: unknown,
): { status: number; headers: Record<string, string>; body: Buffer } {
  return {
    status,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify(value)),
  };
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
