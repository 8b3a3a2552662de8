/**
 * The AWS SDK's own SigV4 signer (@smithy/signature-v4), as a reference to check the hand-written
 * one against: same request, same time, same credentials, the same headers must come out.
 */
import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';

/** The hash the signer asks for: SHA-256, or HMAC-SHA256 with a secret, over node:crypto. */
class NodeSha256 {
  readonly #hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#hash =
      secret === undefined
        ? createHash('sha256')
        : createHmac('sha256', typeof secret === 'string' ? secret : Buffer.from(secret as ArrayBuffer));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#hash.update(typeof data === 'string' ? data : Buffer.from(data as Uint8Array));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }
  reset(): void {}
}

export interface ReferenceRequest {
  readonly host: string;
  /** @default '/' */
  readonly path?: string;
  readonly body: string | Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
  readonly service: string;
  readonly region: string;
  readonly credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  readonly now: number;
}

/** The headers the SDK's signer produces for a POST of `body` to `host`'s `path` (its root by default). */
export async function referenceSignature(request: ReferenceRequest): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    credentials: request.credentials,
    region: request.region,
    service: request.service,
    sha256: NodeSha256,
    uriEscapePath: true,
    applyChecksum: false,
  });
  const signed = await signer.sign(
    {
      method: 'POST',
      protocol: 'https:',
      hostname: request.host,
      path: request.path ?? '/',
      headers: { ...request.headers, host: request.host },
      body: request.body,
      query: {},
    },
    { signingDate: new Date(request.now) },
  );
  return Object.fromEntries(
    Object.entries(signed.headers).map(([name, value]) => [name.toLowerCase(), value]),
  );
}
