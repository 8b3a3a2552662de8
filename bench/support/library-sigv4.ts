/**
 * The library side of the signer comparison: `@smithy/signature-v4` (the SDK's own signer, what
 * Powertools signs with) behind the same two names as `functions/adapters/aws/sigv4.ts`, so a
 * bench bundle can put it in place of ours (`signerSwap`, an esbuild plugin) and nothing else in
 * the handler changes. Hashes with the SDK's Node hash (`@smithy/core/checksum`), as an
 * `EventBridgeClient` does.
 */
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import type { Plugin } from 'esbuild';
import type { SignableRequest } from '../../functions/adapters/aws/sigv4.ts';

/** One signer per transport; the library keeps its own cache of signing keys. */
export class SigningKeyCache {
  signer: SignatureV4 | undefined;
  region = '';
  service = '';
  /** The credentials of the call being signed, which the signer's provider answers with. */
  credentials: SignableRequest['credentials'] | undefined;
}

/** The headers to send, signed by the library: same inputs and outputs as ours. */
export async function signPost(
  request: SignableRequest,
  keys: SigningKeyCache,
): Promise<Record<string, string>> {
  keys.credentials = request.credentials;
  if (keys.signer === undefined || keys.region !== request.region || keys.service !== request.service) {
    keys.signer = new SignatureV4({
      // The transport passes the credentials of each call; the signer asks for them per request.
      credentials: () => Promise.resolve(keys.credentials!),
      region: request.region,
      service: request.service,
      sha256: Sha256,
      uriEscapePath: true,
      applyChecksum: false,
    });
    keys.region = request.region;
    keys.service = request.service;
  }
  const signed = await keys.signer.sign(
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
  return signed.headers;
}

/** An esbuild plugin putting this module in place of the hand signer wherever the handler imports it. */
export function signerSwap(): Plugin {
  return {
    name: 'library-signer',
    setup(build) {
      build.onResolve({ filter: /\/sigv4\.ts$/ }, () => ({ path: import.meta.filename }));
    },
  };
}
