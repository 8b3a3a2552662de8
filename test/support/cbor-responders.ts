/**
 * Responders for the scripted loopback server that answer as an RPC v2 CBOR service does, and a
 * check that a recorded request was signed as the AWS SDK's own signer signs it.
 */
import { cbor } from '@smithy/core/cbor';
import type { RecordedRequest, Responder } from './scripted-http-server.ts';
import { referenceSignature } from './sigv4-reference.ts';

/** Answers `status` with `body` encoded as CBOR, as a Smithy RPC v2 CBOR service answers. */
export function cborAnswer(status: number, body: unknown, headers: Record<string, string> = {}): Responder {
  return (_request, response) => {
    response.writeHead(status, {
      'content-type': 'application/cbor',
      'smithy-protocol': 'rpc-v2-cbor',
      'x-amzn-requestid': 'req-cbor-1',
      ...headers,
    });
    response.end(Buffer.from(cbor.serialize(body)));
  };
}

/** The request's CBOR body, decoded. */
export function decodedBody(request: RecordedRequest): unknown {
  return cbor.deserialize(request.bodyBytes);
}

/**
 * The `authorization` header the SDK's signer computes for `request` (its path, its exact body
 * bytes, its signed headers as sent, at its `x-amz-date`): equal to the one sent when the hand
 * signature is right.
 */
export async function sdkAuthorization(
  request: RecordedRequest,
  options: {
    readonly service: string;
    readonly region: string;
    readonly credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  },
): Promise<string | undefined> {
  const authorization = String(request.headers.authorization ?? '');
  const signed = /SignedHeaders=([^,]+)/.exec(authorization)?.[1]?.split(';') ?? [];
  const headers: Record<string, string> = {};
  for (const name of signed) {
    if (name === 'host' || name === 'x-amz-date' || name === 'x-amz-security-token') continue;
    headers[name] = String(request.headers[name]);
  }
  const amzDate = String(request.headers['x-amz-date']);
  const reference = await referenceSignature({
    host: String(request.headers.host),
    path: request.url,
    body: request.bodyBytes,
    headers,
    service: options.service,
    region: options.region,
    credentials: options.credentials,
    now: Date.parse(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z')),
  });
  return reference.authorization;
}
