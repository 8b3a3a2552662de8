import { describe, expect, it } from 'vitest';
import { checkSignature } from '../../../support/custom-bus/sigv4-check.ts';
import { referenceSignature } from '../../../support/sigv4-reference.ts';

const credentials = [{ accessKeyId: 'testing', secretAccessKey: 'testing' }];
const expected = { service: 'events', region: 'us-east-1' };
const host = '127.0.0.1:4010';
// ASCII, so the reference signer (which takes text) hashes the same bytes.
const text = 'cbor-ish body';
const body = new Uint8Array(Buffer.from(text));

/** Headers as the SDK's own signer produces them for a POST of `body` to the root path. */
async function signed(secretAccessKey = 'testing', region = 'us-east-1'): Promise<Record<string, string>> {
  return referenceSignature({
    host,
    body: text,
    headers: { 'content-type': 'application/cbor', 'smithy-protocol': 'rpc-v2-cbor' },
    service: 'events',
    region,
    credentials: { accessKeyId: 'testing', secretAccessKey },
    now: Date.UTC(2026, 10, 26, 12, 0, 0),
  });
}

describe("the stand-in's SigV4 check", () => {
  it("accepts a request the SDK's signer signed", async () => {
    const headers = await signed();

    expect(
      checkSignature({ method: 'POST', path: '/', headers, body }, expected, credentials),
    ).toBeUndefined();
  });

  it('refuses a body changed after signing', async () => {
    const headers = await signed();

    const failure = checkSignature(
      { method: 'POST', path: '/', headers, body: new Uint8Array([0xa0]) },
      expected,
      credentials,
    );

    expect(failure).toMatchObject({ code: 'SignatureDoesNotMatch', status: 403 });
  });

  it('refuses a signed header changed after signing', async () => {
    const headers = { ...(await signed()), 'content-type': 'application/json' };

    expect(checkSignature({ method: 'POST', path: '/', headers, body }, expected, credentials)).toMatchObject(
      {
        code: 'SignatureDoesNotMatch',
      },
    );
  });

  it('refuses a signature made with another secret', async () => {
    const headers = await signed('another-secret');

    expect(checkSignature({ method: 'POST', path: '/', headers, body }, expected, credentials)).toMatchObject(
      {
        code: 'SignatureDoesNotMatch',
      },
    );
  });

  it('refuses a signature scoped to another region', async () => {
    const headers = await signed('testing', 'eu-west-1');

    expect(checkSignature({ method: 'POST', path: '/', headers, body }, expected, credentials)).toMatchObject(
      {
        code: 'SignatureDoesNotMatch',
      },
    );
  });

  it('refuses an unknown access key and an unsigned request', async () => {
    const headers = await signed();

    expect(checkSignature({ method: 'POST', path: '/', headers, body }, expected, [])).toMatchObject({
      code: 'InvalidClientTokenId',
      status: 403,
    });
    expect(
      checkSignature(
        { method: 'POST', path: '/', headers: { 'x-amz-date': '20261126T120000Z' }, body },
        expected,
        credentials,
      ),
    ).toMatchObject({ code: 'MissingAuthenticationToken', status: 403 });
  });
});
