/**
 * A stand-in for the Lambda Invoke API on loopback (moto cannot run a function): answers
 * `POST /2015-03-31/functions/{name}/invocations` as Lambda does for a RequestResponse
 * invocation, by running the named function's artifact under the runtime-faithful harness
 * (`LambdaContainer`): 200 with the handler's result as the payload; for an error or a timeout,
 * 200 with `X-Amz-Function-Error: Unhandled` and `{ errorType, errorMessage }`; 404
 * `ResourceNotFoundException` for a name it does not serve. A container runs one invocation at a
 * time, as an execution environment does; requests queue for it. Point `@aws-sdk/client-lambda`
 * at it with `AWS_ENDPOINT_URL_LAMBDA`.
 *
 * @example
 * const lambda = await LambdaInvokeEndpoint.start({ 'poller-fn': container });
 * env.AWS_ENDPOINT_URL_LAMBDA = lambda.endpoint;
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Invocation, LambdaContainer } from './lambda-runtime/lambda-container.ts';
import { readBody } from './proxy-http.ts';

const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;

export interface ServedInvocation {
  readonly functionName: string;
  readonly event: unknown;
  readonly invocation: Invocation;
  /** Bytes of the payload this endpoint answered with (what the invoker received). */
  readonly payloadBytes: number;
}

export class LambdaInvokeEndpoint {
  readonly endpoint: string;
  /** Every invocation served, in order. */
  readonly invocations: ServedInvocation[] = [];
  readonly #server: Server;
  readonly #functions: ReadonlyMap<string, LambdaContainer>;
  readonly #queues = new Map<string, Promise<unknown>>();

  private constructor(server: Server, functions: ReadonlyMap<string, LambdaContainer>) {
    this.#server = server;
    this.#functions = functions;
    this.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** Serves each container under its function name (a name, or an ARN ending in `function:<name>`). */
  static async start(functions: Readonly<Record<string, LambdaContainer>>): Promise<LambdaInvokeEndpoint> {
    let endpoint: LambdaInvokeEndpoint | undefined;
    const server = createServer((req, res) => {
      endpoint!.#handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500).end(String(error));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = new LambdaInvokeEndpoint(server, new Map(Object.entries(functions)));
    return endpoint;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const match = INVOKE_PATH.exec(new URL(req.url ?? '/', 'http://localhost').pathname);
    const functionName = decodeURIComponent(match?.[1] ?? '').replace(
      /^arn:aws:lambda:[^:]+:\d+:function:/,
      '',
    );
    const container = this.#functions.get(functionName);
    if (req.method !== 'POST' || match === null || container === undefined) {
      sendJson(
        res,
        404,
        { Type: 'User', message: `Function not found: ${functionName}` },
        {
          'x-amzn-errortype': 'ResourceNotFoundException',
        },
      );
      return;
    }
    const invocationType = String(req.headers['x-amz-invocation-type'] ?? 'RequestResponse');
    if (invocationType !== 'RequestResponse') {
      sendJson(
        res,
        400,
        { message: `Only RequestResponse is served, not ${invocationType}` },
        {
          'x-amzn-errortype': 'InvalidParameterValueException',
        },
      );
      return;
    }
    const event: unknown = body.length === 0 ? {} : JSON.parse(body.toString('utf8'));
    // One invocation at a time per execution environment: later requests wait their turn.
    const previous = this.#queues.get(functionName) ?? Promise.resolve();
    const turn = previous.then(() => container.invoke(event));
    this.#queues.set(
      functionName,
      turn.catch(() => {}),
    );
    const invocation = await turn;
    const headers = { 'x-amz-executed-version': '$LATEST', 'x-amzn-requestid': invocation.requestId };
    const { outcome } = invocation;
    const failed = { ...headers, 'x-amz-function-error': 'Unhandled' };
    const payloadBytes =
      outcome.kind === 'response'
        ? sendJson(res, 200, outcome.result, headers)
        : outcome.kind === 'error'
          ? sendJson(
              res,
              200,
              { errorType: outcome.errorType, errorMessage: outcome.errorMessage, trace: [] },
              failed,
            )
          : sendJson(
              res,
              200,
              {
                errorType: 'Sandbox.Timedout',
                errorMessage: `The invocation ended without an answer (${outcome.kind})`,
              },
              failed,
            );
    this.invocations.push({ functionName, event, invocation, payloadBytes });
  }
}

/** Answers with `value` as JSON; returns the body's size in bytes. */
function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string>,
): number {
  const text = JSON.stringify(value ?? null);
  const bytes = Buffer.byteLength(text);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': bytes,
    ...headers,
  });
  res.end(text);
  return bytes;
}
