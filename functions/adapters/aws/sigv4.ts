/**
 * AWS Signature Version 4 for the one kind of request the poller signs by hand: a POST with no
 * query string, an AWS JSON body to a service's root path (EventBridge) or an RPC v2 CBOR body to
 * its operation's path (EventBridgeV2) ("Create a signed AWS API request",
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html).
 * Pure, over node:crypto: the AWS SDK signs the same way behind a middleware stack that costs
 * several times the signature itself (see `put-events-transport.ts`).
 *
 * Ours rather than `@smithy/signature-v4` over the same transport: side by side at the 256 MB
 * share the library cost 5.1 % more CPU per event drained on the classic bus and 5.4 % on the
 * Custom Event Bus (88.5 against 93.5, and 74 against 78 ms per 1,000 events), over the 5 % we
 * allow a library (docs/decisions/hand-signed-put-events.md, `npm run bench:signer`). The tests
 * check it against the library's output.
 */
import { createHmac, hash } from 'node:crypto';

export interface SigningCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** Temporary credentials (a Lambda role's) carry one; it is signed as `x-amz-security-token`. */
  readonly sessionToken?: string;
}

export interface SignableRequest {
  /** `host[:port]` as sent in the Host header. */
  readonly host: string;
  /**
   * The path, already URI-encoded as sent (its segments are letters and digits here, which SigV4
   * encodes as they are). @default '/'
   */
  readonly path?: string;
  /** The body, exactly as sent: text (hashed as UTF-8) or bytes (hashed as they are). */
  readonly body: string | Uint8Array;
  /** Headers besides `host`, `x-amz-date` and `x-amz-security-token`; names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly service: string;
  readonly region: string;
  readonly credentials: SigningCredentials;
  /** Epoch ms of signing. */
  readonly now: number;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';

/**
 * The headers to send with the request: its own, plus `host`, `x-amz-date`, the session token if
 * any, and `authorization`.
 *
 * @example
 * const headers = signPost({ host: 'events.eu-west-1.amazonaws.com', body, headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'AWSEvents.PutEvents' }, service: 'events', region: 'eu-west-1', credentials, now: Date.now() }, keys);
 */
export function signPost(request: SignableRequest, keys: SigningKeyCache): Record<string, string> {
  const { credentials } = request;
  const amzDate = amzDateOf(request.now);
  const day = amzDate.slice(0, 8);
  const headers: Record<string, string> = { ...request.headers, host: request.host, 'x-amz-date': amzDate };
  if (credentials.sessionToken !== undefined) headers['x-amz-security-token'] = credentials.sessionToken;
  const names = Object.keys(headers).sort();
  const canonicalHeaders = names.map((name) => `${name}:${headers[name]!.trim()}\n`).join('');
  const signedHeaders = names.join(';');
  const canonicalRequest = `POST\n${request.path ?? '/'}\n\n${canonicalHeaders}\n${signedHeaders}\n${sha256Hex(request.body)}`;
  const scope = `${day}/${request.region}/${request.service}/aws4_request`;
  const stringToSign = `${ALGORITHM}\n${amzDate}\n${scope}\n${sha256Hex(canonicalRequest)}`;
  const key = keys.key(credentials.secretAccessKey, day, request.region, request.service);
  const signature = createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
  headers.authorization = `${ALGORITHM} Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
}

/**
 * The day's signing key (four HMACs) depends only on the secret, the day, the region and the
 * service: it is derived once and reused for every request of the day.
 */
export class SigningKeyCache {
  #secret = '';
  #day = '';
  #region = '';
  #service = '';
  #key: Buffer | undefined;

  key(secretAccessKey: string, day: string, region: string, service: string): Buffer {
    const current =
      this.#key !== undefined &&
      this.#day === day &&
      this.#secret === secretAccessKey &&
      this.#region === region &&
      this.#service === service;
    if (!current) {
      const date = hmac(`AWS4${secretAccessKey}`, day);
      this.#key = hmac(hmac(hmac(date, region), service), 'aws4_request');
      this.#secret = secretAccessKey;
      this.#day = day;
      this.#region = region;
      this.#service = service;
    }
    return this.#key!;
  }
}

/** `20261124T103000Z` from epoch ms (the ISO form without separators and milliseconds). */
function amzDateOf(epochMs: number): string {
  const iso = new Date(epochMs).toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

/** One-shot hashing: no Hash object per call (this runs twice per request). */
function sha256Hex(data: string | Uint8Array): string {
  return hash('sha256', data, 'hex');
}
