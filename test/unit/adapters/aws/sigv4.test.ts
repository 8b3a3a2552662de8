/**
 * The hand-written SigV4 signer: AWS's own test-suite vector, and the AWS SDK's signer on
 * PutEvents-like requests (session tokens, bodies with every kind of character, days apart).
 */
import { describe, expect, it } from 'vitest';
import { SigningKeyCache, signPost } from '../../../../functions/adapters/aws/sigv4.ts';
import { createRandom } from '../../../../functions/simulator/seeded-random.ts';
import { referenceSignature } from '../../../support/sigv4-reference.ts';

/** The credentials of AWS's Signature Version 4 test suite. */
const SUITE_CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};

describe('signPost', () => {
  it('signs AWS test-suite request post-vanilla with its published signature', () => {
    const headers = signPost(
      {
        host: 'example.amazonaws.com',
        body: '',
        headers: {},
        service: 'service',
        region: 'us-east-1',
        credentials: SUITE_CREDENTIALS,
        now: Date.parse('2015-08-30T12:36:00Z'),
      },
      new SigningKeyCache(),
    );

    expect(headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, ' +
        'SignedHeaders=host;x-amz-date, Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b',
    );
    expect(headers['x-amz-date']).toBe('20150830T123600Z');
  });

  it('signs PutEvents requests exactly as the AWS SDK does, with one key cache across days', async () => {
    const random = createRandom(20).next;
    const keys = new SigningKeyCache();
    const alphabet = 'abcXYZ019 "\\\n\té😀日本{}[]:,';
    for (let round = 0; round < 40; round += 1) {
      const text = Array.from(
        { length: 1 + Math.floor(random() * 300) },
        () => alphabet[Math.floor(random() * alphabet.length)],
      ).join('');
      const request = {
        host: round % 2 === 0 ? 'events.eu-west-1.amazonaws.com' : '127.0.0.1:4566',
        body: JSON.stringify({ Entries: [{ Source: 'banking.events', Detail: text }] }),
        headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'AWSEvents.PutEvents' },
        service: 'events',
        region: round % 3 === 0 ? 'us-east-1' : 'eu-west-1',
        credentials: {
          accessKeyId: 'ASIAEXAMPLE',
          secretAccessKey: `secret-${round % 4}`,
          ...(round % 5 === 0 ? {} : { sessionToken: `token/${round}+=` }),
        },
        // Midnight crossings included: the day's key must change with the day.
        now: Date.parse('2026-11-24T23:59:58Z') + round * 997,
      };

      const ours = signPost(request, keys);
      const theirs = await referenceSignature(request);

      expect(ours.authorization, `round ${round}`).toBe(theirs.authorization);
      expect(ours['x-amz-date']).toBe(theirs['x-amz-date']);
      expect(ours['x-amz-security-token']).toBe(theirs['x-amz-security-token']);
    }
  });

  it('signs a binary body on its exact bytes and an operation path, as the SDK does', async () => {
    const random = createRandom(27).next;
    const keys = new SigningKeyCache();
    for (let round = 0; round < 10; round += 1) {
      // Bytes that are not UTF-8 (0xff, lone continuation bytes): hashed as text they would differ.
      const body = Uint8Array.from({ length: 1 + Math.floor(random() * 200) }, () =>
        Math.floor(random() * 256),
      );
      const request = {
        host: 'eventsv2.eu-west-1.amazonaws.com',
        path: '/service/AWSEventsV2/operation/PutEvents',
        body,
        headers: {
          'content-type': 'application/cbor',
          accept: 'application/cbor',
          'smithy-protocol': 'rpc-v2-cbor',
        },
        service: 'events',
        region: 'eu-west-1',
        credentials: {
          accessKeyId: 'ASIAEXAMPLE',
          secretAccessKey: 'secret',
          sessionToken: `token-${round}`,
        },
        now: Date.parse('2026-11-26T10:00:00Z') + round * 1000,
      };

      const ours = signPost(request, keys);
      const theirs = await referenceSignature(request);

      expect(ours.authorization, `round ${round}`).toBe(theirs.authorization);
    }
  });
});
