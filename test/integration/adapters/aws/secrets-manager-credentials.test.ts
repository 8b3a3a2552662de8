import { PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  type CredentialsCache,
  SecretsManagerCredentialsProvider,
} from '../../../../functions/adapters/aws/secrets-manager-credentials.ts';
import { ConfigurationError } from '../../../../functions/core/errors.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../../support/aws-test-env.ts';

const TTL_MS = 60_000;

function secretJson(clientSecret: string, baseUrl = 'https://bank.example.com/'): string {
  return JSON.stringify({ base_url: baseUrl, client_id: 'poller', client_secret: clientSecret });
}

describe('SecretsManagerCredentialsProvider against moto', () => {
  let aws: MotoEnvironment;
  let client: SecretsManagerClient;
  let reads = 0;
  let now = 0;

  beforeAll(() => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
    // Built from the default configuration, like the handler's; counts the reads that reach moto.
    client = new SecretsManagerClient({});
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'GetSecretValueCommand') reads++;
        return next(args);
      },
      { step: 'initialize', name: 'countGetSecretValue' },
    );
  });

  afterAll(() => {
    client.destroy();
    aws.restore();
  });

  /** A provider with its own cache, a fake clock and the counting client. */
  function providerFor(
    secretId: string,
    cache: CredentialsCache = new Map(),
  ): SecretsManagerCredentialsProvider {
    return new SecretsManagerCredentialsProvider({
      client,
      secretId,
      ttlMs: TTL_MS,
      clock: () => now,
      cache,
    });
  }

  async function rotate(secretId: string, clientSecret: string): Promise<void> {
    await aws.secretsManager.send(
      new PutSecretValueCommand({ SecretId: secretId, SecretString: secretJson(clientSecret) }),
    );
  }

  it('parses the secret into credentials without a trailing slash on the base URL', async () => {
    const secretId = await aws.createSecret(secretJson('first'));

    const credentials = await providerFor(secretId).get();

    expect(credentials).toEqual({
      baseUrl: 'https://bank.example.com',
      clientId: 'poller',
      clientSecret: 'first',
    });
  });

  it.each([
    [
      'serves the cached value within the TTL, even after the secret changed',
      { at: TTL_MS - 1, reads: 0, served: 'first' },
    ],
    ['reads the secret again once the TTL has passed', { at: TTL_MS, reads: 1, served: 'second' }],
  ] as const)('%s', async (_title, expected) => {
    const secretId = await aws.createSecret(secretJson('first'));
    const provider = providerFor(secretId);
    now = 1_000;
    await provider.get();
    const readsBefore = reads;
    await rotate(secretId, 'second');

    now = 1_000 + expected.at;
    const credentials = await provider.get();

    expect(credentials.clientSecret).toBe(expected.served);
    expect(reads - readsBefore).toBe(expected.reads);
  });

  it('refresh() reads a rotated secret at once and get() serves it afterwards', async () => {
    const secretId = await aws.createSecret(secretJson('first'));
    const provider = providerFor(secretId);
    now = 1_000;
    await provider.get();
    await rotate(secretId, 'second');

    const refreshed = await provider.refresh();
    const readsAfterRefresh = reads;
    const cached = await provider.get();

    expect(refreshed.clientSecret).toBe('second');
    expect(cached.clientSecret).toBe('second');
    expect(reads).toBe(readsAfterRefresh);
  });

  it('shares the module-level cache between provider instances for the same secret', async () => {
    const secretId = await aws.createSecret(secretJson('first'));
    // No `cache` option: the default shared by all providers, as in a warm Lambda container.
    const options = { client, secretId, ttlMs: TTL_MS, clock: () => now };
    now = 1_000;
    await new SecretsManagerCredentialsProvider(options).get();
    const readsBefore = reads;
    await rotate(secretId, 'second');

    const credentials = await new SecretsManagerCredentialsProvider(options).get();

    expect(credentials.clientSecret).toBe('first');
    expect(reads).toBe(readsBefore);
  });

  it('lets concurrent get() calls share one GetSecretValue', async () => {
    const secretId = await aws.createSecret(secretJson('first'));
    const provider = providerFor(secretId);
    const readsBefore = reads;

    const results = await Promise.all([provider.get(), provider.get(), provider.refresh(), provider.get()]);

    expect(reads - readsBefore).toBe(1);
    expect(new Set(results).size).toBe(1);
  });

  it.each([
    ['invalid JSON', '{"client_id": "poller", "client_secret": "s3cr3t-value-xyz"', /not valid JSON/],
    [
      'a placeholder client_secret',
      JSON.stringify({
        base_url: 'https://bank.example.com',
        client_id: 's3cr3t-value-xyz',
        client_secret: '<set me>',
      }),
      /client_secret must be a non-empty string/,
    ],
    [
      'plain http to a non-loopback host',
      secretJson('s3cr3t-value-xyz', 'http://bank.example.com'),
      /must use https/,
    ],
  ])(
    'rejects %s with a ConfigurationError that quotes nothing from the secret',
    async (_, secretString, message) => {
      const secretId = await aws.createSecret(secretString);

      const error = await providerFor(secretId)
        .get()
        .catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as ConfigurationError).message).toMatch(message);
      expect((error as ConfigurationError).message).toContain(secretId);
      const everything = `${(error as Error).message} ${JSON.stringify((error as ConfigurationError).context)} ${String((error as Error).cause)}`;
      expect(everything).not.toContain('s3cr3t-value-xyz');
    },
  );

  it('does not cache a failed read: fixing the secret is enough', async () => {
    const secretId = await aws.createSecret('not json');
    const provider = providerFor(secretId);
    await expect(provider.get()).rejects.toBeInstanceOf(ConfigurationError);
    await rotate(secretId, 'fixed');

    const credentials = await provider.get();

    expect(credentials.clientSecret).toBe('fixed');
  });

  it('names a missing secret in a ConfigurationError', async () => {
    const secretId = aws.uniqueName('missing-secret');

    const error = await providerFor(secretId)
      .get()
      .catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).message).toContain(`secret ${secretId} does not exist`);
    expect((error as ConfigurationError).context).toMatchObject({
      secretId,
      awsError: 'ResourceNotFoundException',
    });
  });
});
