import { describe, expect, it } from 'vitest';
import {
  bearerTokenOf,
  MAX_ACCESS_TOKEN_CHARS,
} from '../../../../functions/adapters/banking-http/bearer-token.ts';
import { AuthenticationError, PayloadValidationError } from '../../../../functions/core/errors.ts';
import { expectNoSecretShown } from '../../../support/secret-assertions.ts';

const ORIGIN = { source: 'POST /oauth2/token', status: 200 };
/** A JWT as banks issue them: three base64url parts. */
const JWT =
  'eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjbGllbnQtMSIsImV4cCI6MTcwMDAwMDAwMH0.c2lnbmF0dXJlLWJ5dGVz';

function refusal(payload: unknown): unknown {
  try {
    bearerTokenOf(payload, ORIGIN);
  } catch (error) {
    return error;
  }
  throw new Error('expected a refusal');
}

describe('bearerTokenOf: what a token response must hold', () => {
  it.each([
    ['a JWT', JWT],
    ['base64 with padding', 'dG9rZW4tdmFsdWU+Lw=='],
    ['every b64token character', 'AZaz09-._~+/=='],
    ['the longest accepted', 'a'.repeat(MAX_ACCESS_TOKEN_CHARS)],
  ])('accepts %s', (_label, token) => {
    expect(bearerTokenOf({ access_token: token, token_type: 'Bearer' }, ORIGIN)).toBe(token);
  });

  it.each([['Bearer'], ['bearer'], ['BEARER']])('accepts token_type %s, in any case', (tokenType) => {
    expect(bearerTokenOf({ access_token: JWT, token_type: tokenType }, ORIGIN)).toBe(JWT);
  });

  it('accepts a response without token_type (the interface documents only access_token)', () => {
    expect(bearerTokenOf({ access_token: JWT, expires_in: 3600 }, ORIGIN)).toBe(JWT);
  });

  it.each([
    ['CR LF', 'tok\r\nX-Injected: 1'],
    ['NUL', 'tok\u0000en'],
    ['non-Latin characters', 'tökén-ключ'],
    ['a space', 'tok en'],
    ['commas and semicolons', 'tok,en;x=1'],
    ['padding in the middle', 'tok=en'],
    ['a quote', 'tok"en'],
  ])('refuses an access_token with %s, by field, without the value', (_label, token) => {
    const error = refusal({ access_token: token, token_type: 'Bearer' });

    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({
      code: 'AUTHENTICATION_FAILED',
      context: { field: 'access_token', reason: 'not-b64token', status: 200 },
    });
    expect((error as Error).message).toContain('access_token is not a bearer token');
    expectNoSecretShown(error, [token]);
  });

  it('refuses an access_token longer than the bound, saying how long', () => {
    const token = 'a'.repeat(9 * 1024 * 1024);

    const error = refusal({ access_token: token });

    expect(error).toMatchObject({ context: { field: 'access_token', reason: 'too-long' } });
    expect((error as Error).message).toContain(
      `${token.length} characters long, over the ${MAX_ACCESS_TOKEN_CHARS}`,
    );
    expect((error as Error).message.length).toBeLessThan(400);
  });

  it.each([['mac'], ['DPoP'], ['N_A'], [''], [42], [null]])(
    'refuses token_type %j, by field',
    (tokenType) => {
      const error = refusal({ access_token: JWT, token_type: tokenType });

      expect(error).toBeInstanceOf(AuthenticationError);
      expect(error).toMatchObject({ context: { field: 'token_type', reason: 'not-bearer' } });
      expect((error as Error).message).toContain('token_type is not Bearer');
      expectNoSecretShown(error, [JWT]);
    },
  );

  it.each([
    ['absent', {}],
    ['empty', { access_token: '' }],
    ['a number', { access_token: 12345678 }],
  ])('keeps a missing access_token (%s) a payload error', (_label, payload) => {
    expect(refusal(payload)).toBeInstanceOf(PayloadValidationError);
  });
});
