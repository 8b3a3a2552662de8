/**
 * The stand-in's wire protocol: a loopback HTTP server speaking Smithy RPC v2 CBOR
 * (`POST /service/AWSEventsV2/operation/<Op>`), every request's SigV4 signature checked first.
 * Decodes the body with `@smithy/core`'s codec, hands the input to an operation handler and encodes
 * what it returns; a thrown `ServiceError` becomes the protocol's error answer (`__type` + `Message`
 * in a CBOR body, the model's HTTP status), which botocore and the JS SDK both read. Every exchange
 * is recorded, bytes included, for the conformance test's model check and golden files.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cbor, tagSymbol } from '@smithy/core/cbor';
import { checkSignature, type StandInCredentials } from './sigv4-check.ts';

/** An error the service models (`InvalidInputException`, ...) or a common one (`SignatureDoesNotMatch`). */
export class ServiceError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = code;
  }
}

/** The HTTP status each modeled error carries (botocore's model, `error.httpStatusCode`). */
const MODELED_STATUS: Readonly<Record<string, number>> = {
  AccessDeniedException: 403,
  ConcurrentModificationException: 409,
  ConflictException: 409,
  IdempotentParameterMismatchException: 409,
  InternalException: 500,
  InvalidInputException: 400,
  InvalidStateException: 409,
  LimitExceededException: 400,
  ResourceAlreadyExistsException: 409,
  ResourceInUseException: 409,
  ResourceNotFoundException: 404,
  ThrottlingException: 429,
};

/** A modeled error by name, with the model's status. */
export function serviceError(code: keyof typeof MODELED_STATUS & string, message: string): ServiceError {
  return new ServiceError(code, MODELED_STATUS[code] ?? 400, message);
}

export type OperationHandler = (input: Record<string, unknown>) => Record<string, unknown>;

/** One request and its answer, as they crossed the wire. */
export interface RecordedExchange {
  readonly operation: string;
  readonly requestBody: Uint8Array;
  /** The decoded input; timestamps stay CBOR tag-1 objects (`{ tag: 1, value: seconds }`). */
  readonly input: Record<string, unknown> | undefined;
  readonly status: number;
  readonly responseBody: Uint8Array;
  readonly errorCode: string | undefined;
}

export interface RpcV2CborServerOptions {
  readonly service: string;
  readonly region: string;
  readonly credentials: readonly StandInCredentials[];
  readonly operations: Readonly<Record<string, OperationHandler>>;
  /** Runs before any operation (after the signature check): throw a `ServiceError` to refuse the request. */
  readonly beforeOperation?: (operation: string, input: Record<string, unknown>) => void;
  /**
   * Milliseconds the answer to an operation is held after the operation took effect (a slow
   * service): a client that gives up meanwhile never learns what it did. @default none
   */
  readonly answerDelayMs?: (operation: string) => number;
  /**
   * How long an idle connection is kept. undici drops a connection after each answer when the
   * server's `keep-alive: timeout` is within its 2 s threshold, so 1 s means a connection per request.
   * @default 1 000 ms
   */
  readonly keepAliveTimeoutMs?: number;
}

export interface RpcV2CborServer {
  readonly endpoint: string;
  readonly exchanges: readonly RecordedExchange[];
  close(): Promise<void>;
}

const PATH = /^\/service\/AWSEventsV2\/operation\/([A-Za-z]+)$/;

export async function startRpcV2CborServer(options: RpcV2CborServerOptions): Promise<RpcV2CborServer> {
  const exchanges: RecordedExchange[] = [];
  const server = createServer((request, response) => {
    void readBody(request).then((body) => {
      const exchange = answer(options, request, body);
      exchanges.push(exchange);
      const delayMs = options.answerDelayMs?.(exchange.operation) ?? 0;
      if (delayMs <= 0) send(response, exchange);
      else {
        const timer = setTimeout(() => send(response, exchange), delayMs);
        // A client that gave up has closed the connection: nothing to answer, and nothing to keep alive.
        response.once('close', () => clearTimeout(timer));
      }
    });
  });
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 1_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function answer(
  options: RpcV2CborServerOptions,
  request: IncomingMessage,
  body: Uint8Array,
): RecordedExchange {
  const operation = PATH.exec(request.url ?? '')?.[1] ?? '';
  let input: Record<string, unknown> | undefined;
  try {
    if (request.method !== 'POST' || operation === '') {
      throw new ServiceError(
        'UnknownOperationException',
        404,
        `No operation at ${request.method} ${request.url}`,
      );
    }
    const failure = checkSignature(
      { method: request.method, path: request.url ?? '/', headers: request.headers, body },
      { service: options.service, region: options.region },
      options.credentials,
    );
    if (failure !== undefined) throw new ServiceError(failure.code, failure.status, failure.message);
    if (request.headers['smithy-protocol'] !== 'rpc-v2-cbor') {
      throw serviceError('InvalidInputException', `Expected the header smithy-protocol: rpc-v2-cbor`);
    }
    const handler = options.operations[operation];
    if (handler === undefined) {
      throw new ServiceError(
        'UnknownOperationException',
        404,
        `The stand-in does not implement ${operation}`,
      );
    }
    input = decodeInput(body);
    options.beforeOperation?.(operation, input);
    const output = handler(input);
    return {
      operation,
      requestBody: body,
      input,
      status: 200,
      responseBody: cbor.serialize(withoutAbsent(output)),
      errorCode: undefined,
    };
  } catch (error) {
    const failure =
      error instanceof ServiceError
        ? error
        : new ServiceError('InternalException', 500, `Stand-in fault: ${String(error)}`);
    return {
      operation,
      requestBody: body,
      input,
      status: failure.status,
      responseBody: cbor.serialize({ __type: failure.code, Message: failure.message }),
      errorCode: failure.code,
    };
  }
}

/** Members left `undefined` are absent from the answer (the codec refuses to encode `undefined`). */
function withoutAbsent(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutAbsent);
  if (value === null || typeof value !== 'object' || tagSymbol in value || value instanceof Uint8Array)
    return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, member]) => member !== undefined)
      .map(([name, member]) => [name, withoutAbsent(member)]),
  );
}

function decodeInput(body: Uint8Array): Record<string, unknown> {
  if (body.byteLength === 0) return {};
  let decoded: unknown;
  try {
    decoded = cbor.deserialize(body);
  } catch (error) {
    throw serviceError('InvalidInputException', `The request body is not valid CBOR: ${String(error)}`);
  }
  if (decoded === null || typeof decoded !== 'object' || Array.isArray(decoded)) {
    throw serviceError('InvalidInputException', 'The request body must be a CBOR map');
  }
  return decoded as Record<string, unknown>;
}

function send(response: ServerResponse, exchange: RecordedExchange): void {
  response.writeHead(exchange.status, {
    'content-type': 'application/cbor',
    'smithy-protocol': 'rpc-v2-cbor',
    'x-amzn-requestid': randomUUID(),
    'content-length': exchange.responseBody.byteLength,
  });
  response.end(exchange.responseBody);
}

async function readBody(request: IncomingMessage): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}
