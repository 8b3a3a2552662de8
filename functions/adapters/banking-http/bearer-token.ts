/**
 * What a token response must hold before its token is sent anywhere: an `access_token` that is a
 * bearer token (RFC 6750 §2.1, `b64token`) of bounded length, and a `token_type` of Bearer.
 * Anything else is refused here, once, by name, instead of going out in every request: undici
 * refuses a header with CR, LF or NUL (which read as a retryable network error, retried every
 * cycle), and a token with spaces, commas or semicolons would be sent as it is.
 */
import { AuthenticationError, PayloadValidationError } from '../../core/errors.ts';
import { isJsonObject } from '../../core/json-object.ts';

/**
 * The longest `access_token` accepted, in characters. Generous: a JWT with many claims, or one
 * signed with RSA-4096, is a few KB; most servers refuse request headers past 8 to 16 KB anyway,
 * so a longer token could not be used, and would be sent with every request.
 */
export const MAX_ACCESS_TOKEN_CHARS = 16_384;

/** RFC 6750 §2.1: `b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

export interface TokenResponseOrigin {
  /** e.g. `POST /oauth2/token`. */
  readonly source: string;
  readonly status: number;
}

/**
 * The bearer value of a token response, checked; the value is never quoted in an error.
 *
 * `token_type` may be absent (the bank's interface documents only `access_token`, and its token is
 * a bearer token); when present it must be Bearer, in any case (RFC 6749 §7.1: a client must not
 * use a token whose type it does not understand, such as `mac` or `DPoP`).
 *
 * @throws PayloadValidationError when `access_token` is missing, not a string or empty.
 * @throws AuthenticationError (not retryable) when `access_token` is not a bearer token or too
 *   long, or `token_type` is not Bearer; `context.field` names the field.
 */
export function bearerTokenOf(payload: unknown, origin: TokenResponseOrigin): string {
  const { source, status } = origin;
  const fields = isJsonObject(payload) ? payload : {};
  const accessToken = fields.access_token;
  if (typeof accessToken !== 'string' || accessToken === '') {
    // The value is not shown: whatever is there may still be a credential.
    throw new PayloadValidationError(`${source} (HTTP ${status}): access_token must be a non-empty string`, {
      source,
      status,
      field: 'access_token',
    });
  }
  const refuse = (field: string, reason: string, problem: string): never => {
    throw new AuthenticationError(
      `${source} (HTTP ${status}): ${problem}; the value is not shown and nothing was sent with it. ` +
        'Retrying will not change it: ask the bank why its token endpoint issues this',
      { source, status, field, reason },
    );
  };
  if (accessToken.length > MAX_ACCESS_TOKEN_CHARS) {
    refuse(
      'access_token',
      'too-long',
      `access_token is ${accessToken.length} characters long, over the ${MAX_ACCESS_TOKEN_CHARS} accepted`,
    );
  }
  if (!B64TOKEN.test(accessToken)) {
    refuse(
      'access_token',
      'not-b64token',
      'access_token is not a bearer token: it holds characters outside RFC 6750 b64token ' +
        '(letters, digits, "-", ".", "_", "~", "+", "/", then "=" padding)',
    );
  }
  const tokenType = fields.token_type;
  if (tokenType !== undefined && (typeof tokenType !== 'string' || tokenType.toLowerCase() !== 'bearer')) {
    refuse(
      'token_type',
      'not-bearer',
      'token_type is not Bearer: a client must not use a token of a type it does not understand (RFC 6749 §7.1)',
    );
  }
  return accessToken;
}
