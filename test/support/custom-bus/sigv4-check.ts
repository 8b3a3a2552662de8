/**
 * The stand-in's signature check: recompute the SigV4 signature of a request from the headers it says
 * it signed, as moto's auth does for the classic bus (`moto/iam/access_control.py`: take the
 * `SignedHeaders` list from `Authorization`, rebuild the canonical request with the secret we know for
 * the access key, compare). Pure: no I/O, no clock (moto does not check the request time either).
 */
import { createHash, createHmac } from 'node:crypto';

export interface StandInCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

export interface SignedRequest {
  readonly method: string;
  /** The path as sent, e.g. `/service/AWSEventsV2/operation/PutEvents`. */
  readonly path: string;
  /** Lower-case names; a repeated header joined by `,` as Node does. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Uint8Array;
}

/** An authentication failure as AWS's common errors name it. */
export interface AuthFailure {
  readonly code:
    | 'MissingAuthenticationToken'
    | 'IncompleteSignature'
    | 'InvalidClientTokenId'
    | 'SignatureDoesNotMatch';
  readonly status: 400 | 403;
  readonly message: string;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';

/**
 * `undefined` when the request is signed by a known key for `service` in `region` and its signature
 * matches; otherwise the failure to answer with.
 */
export function checkSignature(
  request: SignedRequest,
  expected: { readonly service: string; readonly region: string },
  credentials: readonly StandInCredentials[],
): AuthFailure | undefined {
  const authorization = header(request.headers, 'authorization');
  if (authorization === undefined) {
    return { code: 'MissingAuthenticationToken', status: 403, message: 'Missing Authentication Token' };
  }
  const parsed = parseAuthorization(authorization);
  const amzDate = header(request.headers, 'x-amz-date');
  if (parsed === undefined || amzDate === undefined) {
    return {
      code: 'IncompleteSignature',
      status: 400,
      message: `Authorization header requires 'Credential', 'SignedHeaders', 'Signature' and an X-Amz-Date header.`,
    };
  }
  const [accessKeyId, date, region, service, terminator] = parsed.credential.split('/');
  if (terminator !== 'aws4_request' || date === undefined || !amzDate.startsWith(date)) {
    return { code: 'IncompleteSignature', status: 400, message: 'Credential should be scoped correctly.' };
  }
  const known = credentials.find((candidate) => candidate.accessKeyId === accessKeyId);
  if (known === undefined) {
    return {
      code: 'InvalidClientTokenId',
      status: 403,
      message: 'The security token included in the request is invalid.',
    };
  }
  if (service !== expected.service || region !== expected.region) {
    return {
      code: 'SignatureDoesNotMatch',
      status: 403,
      message: `Credential should be scoped to a valid region and service '${expected.service}'.`,
    };
  }
  const scope = `${date}/${region}/${service}/aws4_request`;
  const canonical = canonicalRequest(request, parsed.signedHeaders);
  const stringToSign = [ALGORITHM, amzDate, scope, sha256Hex(canonical)].join('\n');
  const signature = hmac(signingKey(known.secretAccessKey, date, region, service), stringToSign).toString(
    'hex',
  );
  if (signature !== parsed.signature) {
    return {
      code: 'SignatureDoesNotMatch',
      status: 403,
      message:
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
    };
  }
  return undefined;
}

function parseAuthorization(
  value: string,
): { credential: string; signedHeaders: string[]; signature: string } | undefined {
  if (!value.startsWith(`${ALGORITHM} `)) return undefined;
  const fields = new Map<string, string>();
  for (const part of value.slice(ALGORITHM.length + 1).split(',')) {
    const [name, ...rest] = part.trim().split('=');
    if (name !== undefined && rest.length > 0) fields.set(name, rest.join('='));
  }
  const credential = fields.get('Credential');
  const signedHeaders = fields.get('SignedHeaders');
  const signature = fields.get('Signature');
  if (!credential || !signedHeaders || !signature) return undefined;
  return { credential, signedHeaders: signedHeaders.split(';'), signature };
}

function canonicalRequest(request: SignedRequest, signedHeaders: readonly string[]): string {
  const [path = '/', query = ''] = request.path.split('?');
  const canonicalHeaders = signedHeaders
    .map((name) => `${name}:${(header(request.headers, name) ?? '').trim().replace(/\s+/g, ' ')}\n`)
    .join('');
  return [
    request.method,
    canonicalPath(path),
    canonicalQuery(query),
    canonicalHeaders,
    signedHeaders.join(';'),
    sha256Hex(request.body),
  ].join('\n');
}

/** Non-S3 services encode each path segment twice: once as sent, once more for the canonical form. */
function canonicalPath(path: string): string {
  return path
    .split('/')
    .map((segment) => encodeRfc3986(segment))
    .join('/');
}

function canonicalQuery(query: string): string {
  if (query === '') return '';
  return query
    .split('&')
    .map((pair) => {
      const [name = '', value = ''] = pair.split('=');
      return [encodeRfc3986(decodeURIComponent(name)), encodeRfc3986(decodeURIComponent(value))] as const;
    })
    .sort(([a, av], [b, bv]) => (a === b ? av.localeCompare(bv) : a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

function encodeRfc3986(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

function header(headers: SignedRequest['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

function signingKey(secret: string, date: string, region: string, service: string): Buffer {
  const dateKey = hmac(`AWS4${secret}`, date);
  return hmac(hmac(hmac(dateKey, region), service), 'aws4_request');
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}
