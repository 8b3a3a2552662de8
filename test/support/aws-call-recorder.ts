/**
 * A recording proxy in front of moto: forwards every request untouched and notes, for each, the
 * operation (`X-Amz-Target` for the JSON protocols, `Action` for the query ones) and the access
 * key that signed it. Point a client at it with `AWS_ENDPOINT_URL` to count what that client,
 * and only it, asked of AWS (e.g. that an operator command never read a secret).
 *
 * @example
 * const recorder = await AwsCallRecorder.start(motoEndpoint);
 * await runCli([...], { env: { ...motoCliEnvironment(recorder.endpoint) } });
 * expect(recorder.count('secretsmanager.GetSecretValue')).toBe(0);
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody, withoutHopHeaders } from './proxy-http.ts';

export interface RecordedCall {
  /** `secretsmanager.GetSecretValue`, `DynamoDB_20120810.GetItem`, `DescribeStacks`, … */
  readonly operation: string;
  /** The access key id of the request's signature, or `''` when unsigned. */
  readonly accessKeyId: string;
}

export class AwsCallRecorder {
  readonly endpoint: string;
  readonly calls: RecordedCall[] = [];
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
    this.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  static async start(target: string): Promise<AwsCallRecorder> {
    const upstream = new URL(target);
    let recorder: AwsCallRecorder | undefined;
    const server = createServer((req, res) => {
      void (async () => {
        const body = await readBody(req);
        recorder?.calls.push({
          operation: operationOf(req.headers['x-amz-target'], body),
          accessKeyId: /Credential=([^/]+)\//.exec(String(req.headers.authorization ?? ''))?.[1] ?? '',
        });
        const forwarded = request(
          {
            host: upstream.hostname,
            port: upstream.port,
            method: req.method,
            path: req.url,
            headers: { ...withoutHopHeaders(req.headers), 'content-length': body.length },
          },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        forwarded.on('error', (error) => {
          if (!res.headersSent) res.writeHead(502).end(String(error));
        });
        forwarded.end(body);
      })();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    recorder = new AwsCallRecorder(server);
    return recorder;
  }

  /** How many calls of `operation` were made (by `accessKeyId`, when given). */
  count(operation: string, accessKeyId?: string): number {
    return this.calls.filter(
      (call) =>
        call.operation === operation && (accessKeyId === undefined || call.accessKeyId === accessKeyId),
    ).length;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

function operationOf(target: string | string[] | undefined, body: Buffer): string {
  if (typeof target === 'string' && target !== '') return target;
  // Query protocols (CloudFormation, CloudWatch, SQS's older form) name it in the form body.
  return new URLSearchParams(body.toString('utf8')).get('Action') ?? '';
}
