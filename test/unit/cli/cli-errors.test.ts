import { describe, expect, it } from 'vitest';
import { describeFailure, RefusedError, UsageError } from '../../../functions/cli/cli-errors.ts';
import { EXIT_CODES } from '../../../functions/cli/exit-codes.ts';
import { AuthenticationError, ConfigurationError } from '../../../functions/core/errors.ts';

const named = (name: string, message: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(message), { name, ...extra });

describe('describeFailure', () => {
  it('renders the CLI errors as problem: fix, with their exit codes', () => {
    expect(describeFailure(new UsageError('--to 3 is below --from 9', 'give the range in order'))).toEqual({
      message: '--to 3 is below --from 9: give the range in order',
      exitCode: EXIT_CODES.usage,
    });
    expect(describeFailure(new RefusedError('Not confirmed', 'nothing was changed')).exitCode).toBe(
      EXIT_CODES.refused,
    );
    expect(new UsageError('a', 'b')).toMatchObject({
      name: 'UsageError',
      code: 'USAGE_INVALID',
      context: { fix: 'b' },
    });
  });

  it('adds the fix to the core errors by code, on one line', () => {
    const failure = describeFailure(new AuthenticationError('POST /oauth2/token: HTTP 401\ninvalid_client'));

    expect(failure.exitCode).toBe(EXIT_CODES.failed);
    expect(failure.message).toBe(
      'POST /oauth2/token: HTTP 401 invalid_client: check client_id, client_secret and base_url in the secret (`banking-events-poller secret set --verify`)',
    );
    expect(describeFailure(new ConfigurationError('secret s: base_url is not a valid URL')).message).toMatch(
      /^secret s: base_url is not a valid URL: fix/,
    );
  });

  it.each([
    [
      named('CredentialsProviderError', 'Could not load credentials from any providers'),
      /^No AWS credentials found: run `aws configure`/,
    ],
    [named('Error', 'Region is missing'), /^No AWS region: pass --region/],
    [
      named('Error', 'connect ECONNREFUSED 127.0.0.1:9', { code: 'ECONNREFUSED' }),
      /^Cannot reach the AWS endpoint \(ECONNREFUSED\)/,
    ],
    [
      named('AccessDeniedException', 'User x is not authorized to perform dynamodb:UpdateItem'),
      /^Permission denied by AWS \(AccessDeniedException\): User x .*--profile/,
    ],
    [
      named('ExpiredTokenException', 'The security token included in the request is expired'),
      /^AWS refused the credentials \(ExpiredTokenException\): refresh them/,
    ],
    [named('ThrottlingException', 'Rate exceeded'), /^ThrottlingException: Rate exceeded$/],
  ])('explains %s', (error, message) => {
    expect(describeFailure(error)).toEqual({
      message: expect.stringMatching(message),
      exitCode: EXIT_CODES.failed,
    });
  });
});
