import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { summarizeErrorBody } from '../../../functions/adapters/banking-http/response-body.ts';
import { REDACTED, redact, WITHHELD } from '../../../functions/adapters/secret-redaction.ts';
import { ENCODINGS, leaks, wellFormed } from '../../support/secret-encodings.ts';

describe('redact and summarizeErrorBody: the escaped echoes of the issue', () => {
  const SECRET = 's3cr3t/with+plus=and/slash';

  it.each([
    ['\\/ for /', '{"detail":"bad client_secret s3cr3t\\/with+plus=and\\/slash"}'],
    ['lower-case percent-encoding', '{"detail":"bad client_secret=s3cr3t%2fwith%2bplus%3dand%2fslash"}'],
    ['upper-case percent-encoding', '{"detail":"bad client_secret=s3cr3t%2Fwith%2Bplus%3Dand%2Fslash"}'],
    [
      '\\u0073-style escapes',
      '{"detail":"bad client_secret \\u0073\\u0033cr3t\\u002fwith\\u002bplus=and/slash"}',
    ],
    [
      'double JSON escaping',
      '{"detail":"bad client_secret {\\"s\\":\\"s3cr3t\\\\/with+plus=and\\\\/slash\\"}"}',
    ],
    ['an echo cut short', '{"detail":"bad client_secret s3cr3t/wit"}'],
    ['an echo cut short, percent-encoded', '{"detail":"bad client_secret s3cr3t%2Fwit"}'],
  ])('a 401 body echoing the secret with %s shows it redacted', (_label, body) => {
    const summary = summarizeErrorBody(body, [SECRET]) ?? '';

    expect(summary).toContain('bad client_secret');
    expect(summary).toContain(REDACTED);
    expect(leaks(summary, [SECRET])).toEqual([]);
    expect(summary).not.toContain('s3cr3t');
  });

  it('redacts a secret holding a quote and a backslash, echoed with \\" and \\\\', () => {
    const secret = 'pa"ss\\wo/rd-0123';
    const body = `{"error":"invalid_client","error_description":"got ${JSON.stringify(secret).slice(1, -1)}"}`;

    expect(summarizeErrorBody(body, [secret])).toBe(`invalid_client (got ${REDACTED})`);
  });

  it('does not throw on a secret holding a lone surrogate, and redacts it', () => {
    const secret = 'ab\uD800cdefghij/k';
    const body = JSON.stringify({ error: 'invalid_client', error_description: `got ${secret}` });

    expect(() => redact(`got ${secret} ${encodeURIComponent(wellFormed(secret))}`, [secret])).not.toThrow();
    expect(summarizeErrorBody(body, [secret])).toBe(`invalid_client (got ${REDACTED})`);
  });

  it('leaves text without a secret as it is, and redacts nothing for no secret', () => {
    expect(redact('User is not authorized to perform events:PutEvents', ['s3cr3t-value-x'])).toBe(
      'User is not authorized to perform events:PutEvents',
    );
    expect(redact('a%2Fb \\/', [undefined, ''])).toBe('a%2Fb \\/');
  });

  it('withholds text it cannot finish decoding', () => {
    const nested = `%${'25'.repeat(12)}41`;

    expect(redact(`x ${nested}`, ['s3cr3t-value-x'])).toBe(WITHHELD);
  });
});

/** Characters a secret may hold: the troublesome ones often, any UTF-16 code unit (lone surrogates too), astral ones. */
const secretUnit = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('/', '+', '=', '%', '"', '\\', ' ', '&', '\n', '\t') },
  { weight: 4, arbitrary: fc.constantFrom(...'abcdefghijkmnopqrstuvwxyzABCDEF0123456789'.split('')) },
  { weight: 2, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
);
const secretArb = fc.array(secretUnit, { minLength: 12, maxLength: 40 }).map((units) => units.join(''));
const filler = fc.string({ unit: 'grapheme-ascii', maxLength: 30 });
const encodingName = fc.constantFrom(...Object.keys(ENCODINGS));

/** The secret as echoed: in one encoding, whole or cut short at 8 or more characters. */
const echo = fc
  .record({ secret: secretArb, encoding: encodingName, cut: fc.option(fc.nat(), { nil: undefined }) })
  .map(({ secret, encoding, cut }) => {
    const end = cut === undefined ? secret.length : 8 + (cut % (secret.length - 7));
    return { secret, echoed: ENCODINGS[encoding]!(secret.slice(0, end)) };
  });

/** A JSON string literal of `value`, written in one of the JSON escapings. */
const jsonString = fc
  .constantFrom('standard', 'slashes', 'unicode')
  .map((style) => (value: string): string => {
    if (style === 'standard') return JSON.stringify(value);
    if (style === 'slashes') return JSON.stringify(value).replaceAll('/', '\\/');
    return `"${ENCODINGS['\\uXXXX for every character']!(value)}"`;
  });

describe('redaction property (seeded)', () => {
  it('no encoding of a secret or of a prefix of 8+ survives in a JSON error body summary', () => {
    fc.assert(
      fc.property(
        echo,
        secretArb,
        filler,
        filler,
        fc.constantFrom('error', 'error_description', 'message', 'detail', 'nested', 'unknown'),
        jsonString,
        ({ secret, echoed }, token, before, after, field, quote) => {
          const value = quote(`${before}${echoed}${after}`);
          const body =
            field === 'nested'
              ? `{"error":{"code":"E1","message":${value}}}`
              : field === 'error'
                ? `{"error":${value}}`
                : `{"error":"invalid_client","${field}":${value}}`;

          const summary = summarizeErrorBody(body, [token, secret]) ?? '';

          expect(leaks(summary, [secret, token])).toEqual([]);
        },
      ),
      { seed: 25_001, numRuns: 600 },
    );
  });

  it('no encoding of a secret or of a prefix of 8+ survives redact() of a plain-text body', () => {
    fc.assert(
      fc.property(echo, filler, filler, ({ secret, echoed }, before, after) => {
        const text = `${before}${echoed}${after}`;

        const shown = redact(text, [secret]);
        const summary = summarizeErrorBody(text, [secret]) ?? '';

        expect(leaks(shown, [secret])).toEqual([]);
        expect(leaks(summary, [secret])).toEqual([]);
      }),
      { seed: 25_002, numRuns: 600 },
    );
  });
});
