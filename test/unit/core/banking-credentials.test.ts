import { describe, expect, it } from 'vitest';
import { isLoopbackHost, parseBankingCredentials } from '../../../functions/core/banking-credentials.ts';
import { ConfigurationError } from '../../../functions/core/errors.ts';

const where = 'secret arn:aws:secretsmanager:us-east-1:1:secret:bank';
const secret = (fields: Record<string, unknown>) =>
  JSON.stringify({ client_id: 'id-1', client_secret: 's3cr3t-value', ...fields });

describe('parseBankingCredentials', () => {
  it('accepts https and strips a trailing slash', () => {
    expect(parseBankingCredentials(secret({ base_url: 'https://bank.example.com/api/' }), where)).toEqual({
      baseUrl: 'https://bank.example.com/api',
      clientId: 'id-1',
      clientSecret: 's3cr3t-value',
    });
  });

  it.each(['http://127.0.0.1:8080', 'http://127.9.9.9', 'http://localhost:3000', 'http://[::1]:9000'])(
    'accepts plain http on loopback (%s)',
    (baseUrl) => {
      expect(parseBankingCredentials(secret({ base_url: baseUrl }), where).baseUrl).toBe(baseUrl);
    },
  );

  it.each([
    'http://bank.example.com',
    'http://10.0.0.5',
    'ftp://bank.example.com',
    'http://127.0.0.1.evil.com',
  ])('refuses %s at start', (baseUrl) => {
    expect(() => parseBankingCredentials(secret({ base_url: baseUrl }), where)).toThrow(
      /must use https:\/\//,
    );
  });

  it('refuses URLs with embedded credentials or a query string', () => {
    expect(() =>
      parseBankingCredentials(secret({ base_url: 'https://u:p@bank.example.com' }), where),
    ).toThrow(/must not embed credentials/);
    expect(() =>
      parseBankingCredentials(secret({ base_url: 'https://bank.example.com/?token=x' }), where),
    ).toThrow(/query string/);
  });

  it('names the secret and the field, never the secret value', () => {
    const attempts = [
      () => parseBankingCredentials('{"client_secret": "s3cr3t-value", not json', where),
      () => parseBankingCredentials(secret({ base_url: 'https://b.example.com', client_id: '' }), where),
      () =>
        parseBankingCredentials(
          secret({ base_url: 'https://b.example.com', client_secret: '<set me>' }),
          where,
        ),
      () => parseBankingCredentials(secret({}), where),
    ];
    for (const attempt of attempts) {
      let caught: unknown;
      try {
        attempt();
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ConfigurationError);
      const error = caught as ConfigurationError;
      expect(error.message).toContain(where);
      expect(`${error.message} ${JSON.stringify(error.context)} ${String(error.cause)}`).not.toContain(
        's3cr3t-value',
      );
    }
  });

  it('rejects an empty secret with a hint of the expected shape', () => {
    expect(() => parseBankingCredentials(undefined, where)).toThrow(/base_url", "client_id", "client_secret/);
  });
});

describe('isLoopbackHost', () => {
  it('knows loopback from lookalikes', () => {
    expect(isLoopbackHost('127.0.0.1')).toBe(true);
    expect(isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('128.0.0.1')).toBe(false);
    expect(isLoopbackHost('localhost.example.com')).toBe(false);
  });
});
