/**
 * The bank's connections against the simulator behind a TLS front on loopback that requires a
 * client certificate signed by the bank's CA (certificates made by openssl in a temporary
 * directory), and through a CONNECT proxy when the environment names one.
 */

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLASSIC_BUS_ENTRY_RULES } from '../../../../functions/adapters/aws/eventbridge-entry-rules.ts';
import { BankConnections } from '../../../../functions/adapters/banking-http/bank-connections.ts';
import { BankingEventFeed } from '../../../../functions/adapters/banking-http/banking-event-feed.ts';
import { ClientCredentialsTokenProvider } from '../../../../functions/adapters/banking-http/token-cache.ts';
import { StaticCredentialsProvider } from '../../../../functions/adapters/local/static-credentials.ts';
import {
  ClientCertificateError,
  ConfigurationError,
  UpstreamHttpError,
} from '../../../../functions/core/errors.ts';
import type {
  BankingCredentials,
  BankingTls,
  CredentialsProvider,
} from '../../../../functions/core/ports.ts';
import { type RunningSimulator, startSimulator } from '../../../../functions/simulator/banking-simulator.ts';
import { ConnectProxy } from '../../../support/connect-proxy.ts';
import { expectNoSecretShown } from '../../../support/secret-assertions.ts';
import { type CertificateAuthority, type IssuedCertificate, TestPki } from '../../../support/test-pki.ts';
import { TlsFront } from '../../../support/tls-front.ts';

const PASSPHRASE = 'key passphrase';
const DAY_MS = 86_400_000;

let pki: TestPki;
let bankCa: CertificateAuthority;
let client: IssuedCertificate;
let simulator: RunningSimulator;
let front: TlsFront;

beforeAll(async () => {
  pki = TestPki.create();
  bankCa = pki.authority('Test Bank CA');
  client = bankCa.issue({ commonName: 'poller', usage: 'client', passphrase: PASSPHRASE });
  simulator = await startSimulator({ seed: 2_600, maxPollHoldMs: 200, unknownTypeRatio: 0 });
  simulator.generate(3);
  front = await TlsFront.start({
    target: simulator.url,
    server: bankCa.issue({ commonName: 'localhost', usage: 'server' }),
    clientCa: bankCa.certificate,
  });
});
afterAll(async () => {
  await front.close();
  await simulator.close();
  pki.close();
});

/** The simulator's program behind the front, with this TLS material. */
function credentialsWith(tls: BankingTls | undefined): BankingCredentials {
  const program = simulator.programs[0]!;
  return {
    baseUrl: front.url,
    clientId: program.clientId,
    clientSecret: program.clientSecret,
    ...(tls === undefined ? {} : { tls }),
  };
}

const withClient = (issued: IssuedCertificate, passphrase?: string): BankingTls => ({
  clientCertificate: issued.certificate,
  clientKey: issued.key,
  ...(passphrase === undefined ? {} : { clientKeyPassphrase: passphrase }),
  caCertificate: bankCa.certificate,
});

/** A secret whose value a test changes (rotation). */
class RotatingCredentials implements CredentialsProvider {
  constructor(public value: BankingCredentials) {}
  async get(): Promise<BankingCredentials> {
    return this.value;
  }
  async refresh(): Promise<BankingCredentials> {
    return this.value;
  }
}

const open: BankConnections[] = [];
function clientOf(
  credentials: CredentialsProvider,
  options: ConstructorParameters<typeof BankConnections>[0] = {},
) {
  const connections = new BankConnections({ environment: {}, ...options });
  open.push(connections);
  const tokens = new ClientCredentialsTokenProvider({ credentials, connections });
  const feed = new BankingEventFeed({
    entryRules: CLASSIC_BUS_ENTRY_RULES,
    credentials,
    tokens,
    cursorParam: 'after',
    limitParam: 'limit',
    limit: 10,
  });
  return { connections, tokens, feed };
}
const poll = (feed: BankingEventFeed) => feed.poll({ after: null, signal: AbortSignal.timeout(10_000) });

/** What `action` rejected with. */
async function rejection(action: Promise<unknown>): Promise<unknown> {
  return action.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

afterEach(async () => {
  for (const connections of open.splice(0)) await connections.close();
});

describe('mutual TLS to a bank that requires a client certificate', () => {
  it('presents the certificate (encrypted key, its passphrase) on the token request and the polls', async () => {
    const accepted = front.accepted.length;
    const requests = simulator.requests.length;
    const { feed, connections } = clientOf(
      new RotatingCredentials(credentialsWith(withClient(client, PASSPHRASE))),
    );

    const page = await poll(feed);

    expect(page.events).toHaveLength(3);
    const paths = simulator.requests.slice(requests).map((request) => `${request.method} ${request.path}`);
    expect(paths).toEqual(['POST /oauth2/token', 'GET /events']);
    const connectionsMade = front.accepted.slice(accepted);
    expect(connectionsMade.length).toBeGreaterThan(0);
    expect(connectionsMade.map((connection) => connection.clientCommonName)).toEqual(
      connectionsMade.map(() => 'poller'),
    );
    expect(connections.certificate).toMatchObject({ subject: 'CN=poller', issuer: 'CN=Test Bank CA' });
  });

  it('refuses an expired certificate before connecting, naming client_certificate', async () => {
    const expired = bankCa.issue({
      commonName: 'poller-expired',
      usage: 'client',
      period: { from: new Date('2020-01-01T00:00:00Z'), to: new Date('2020-02-01T00:00:00Z') },
    });
    const accepted = front.accepted.length;
    const refused = front.refused.length;
    const { feed, connections } = clientOf(new RotatingCredentials(credentialsWith(withClient(expired))));

    const error = await rejection(poll(feed));

    expect(error).toBeInstanceOf(ClientCertificateError);
    expect(error).toMatchObject({
      code: 'CLIENT_CERTIFICATE_INVALID',
      context: { field: 'client_certificate', validTo: '2020-02-01T00:00:00.000Z' },
    });
    expectNoSecretShown(
      error,
      expired.key.split('\n').filter((line) => line.length > 40),
    );
    expect(front.accepted.length - accepted).toBe(0);
    expect(front.refused.length - refused).toBe(0);
    // Still known, so the days-left metric shows it.
    expect(connections.certificate?.subject).toBe('CN=poller-expired');
  });

  it('refuses a key that does not match the certificate before connecting, naming client_key', async () => {
    const other = bankCa.issue({ commonName: 'other', usage: 'client' });
    const accepted = front.accepted.length;
    const { feed } = clientOf(
      new RotatingCredentials(
        credentialsWith({
          ...withClient(client, PASSPHRASE),
          clientKey: other.key,
          clientKeyPassphrase: undefined,
        }),
      ),
    );

    const error = await rejection(poll(feed));

    expect(error).toBeInstanceOf(ClientCertificateError);
    expect(error).toMatchObject({ context: { field: 'client_key' } });
    expect(front.accepted.length - accepted).toBe(0);
  });

  it('reports a certificate of another CA, which the server refuses at the handshake, naming client_certificate', async () => {
    const stranger = pki.authority('Some Other CA').issue({ commonName: 'stranger', usage: 'client' });
    const refused = front.refused.length;
    const accepted = front.accepted.length;
    const { tokens } = clientOf(new RotatingCredentials(credentialsWith(withClient(stranger))));

    const error = await rejection(tokens.getAccessToken(AbortSignal.timeout(10_000)));

    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect((error as Error).message).toContain('client_certificate');
    expect(front.accepted.length - accepted).toBe(0);
    expect(front.refused.length - refused).toBeGreaterThan(0);
  });

  it('refuses a bank certificate of a private CA the secret does not name, pointing at ca_certificate', async () => {
    const { tokens } = clientOf(
      new RotatingCredentials(
        credentialsWith({ ...withClient(client, PASSPHRASE), caCertificate: undefined }),
      ),
    );

    const error = await rejection(tokens.getAccessToken(AbortSignal.timeout(10_000)));

    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect(error).toMatchObject({ retryable: false });
    expect((error as Error).message).toContain('ca_certificate');
  });

  it('builds new connections when the secret is rotated to another certificate, and closes the old ones', async () => {
    const renewed = bankCa.issue({ commonName: 'poller-renewed', usage: 'client' });
    const secret = new RotatingCredentials(credentialsWith(withClient(client, PASSPHRASE)));
    const { feed, connections } = clientOf(secret);
    const first = connections.dispatcherFor(secret.value);
    await poll(feed);
    const accepted = front.accepted.length;

    secret.value = credentialsWith(withClient(renewed));
    const page = await poll(feed);

    expect(page.events).toHaveLength(3);
    expect(connections.dispatcherFor(secret.value)).not.toBe(first);
    // The old connections take no new request.
    await expect(first.request({ origin: front.url, path: '/', method: 'GET' })).rejects.toMatchObject({
      code: expect.stringMatching(/^UND_ERR_(CLOSED|DESTROYED)$/),
    });
    const made = front.accepted.slice(accepted);
    expect(made.length).toBeGreaterThan(0);
    expect(new Set(made.map((connection) => connection.clientCommonName))).toEqual(
      new Set(['poller-renewed']),
    );
    expect(connections.certificate?.subject).toBe('CN=poller-renewed');
  });

  it('keeps one dispatcher while the material stays the same', () => {
    const { connections } = clientOf(new RotatingCredentials(credentialsWith(undefined)));
    const value = credentialsWith(withClient(client, PASSPHRASE));

    expect(connections.dispatcherFor({ ...value })).toBe(
      connections.dispatcherFor({ ...value, clientSecret: 'rotated' }),
    );
  });

  it('refuses a certificate that expired while the container stayed warm, a token cached or not', async () => {
    const validTo = new Date(
      new (await import('node:crypto')).X509Certificate(client.certificate).validTo,
    ).getTime();
    let now = Date.now();
    const { feed } = clientOf(new RotatingCredentials(credentialsWith(withClient(client, PASSPHRASE))), {
      clock: () => now,
    });
    await poll(feed);

    now = validTo + DAY_MS;
    const error = await rejection(poll(feed));

    expect(error).toBeInstanceOf(ClientCertificateError);
    expect(error).toMatchObject({ context: { field: 'client_certificate' } });
  });
});

describe('the egress proxy', () => {
  let proxy: ConnectProxy;
  beforeAll(async () => {
    proxy = await ConnectProxy.start();
  });
  afterAll(() => proxy.close());

  it('carries the token request and the polls when HTTPS_PROXY names it, the client certificate inside the tunnel', async () => {
    const logged = proxy.log.length;
    const accepted = front.accepted.length;
    const { feed } = clientOf(new RotatingCredentials(credentialsWith(withClient(client, PASSPHRASE))), {
      environment: { HTTPS_PROXY: proxy.url },
    });

    await poll(feed);

    const tunnels = proxy.log.slice(logged);
    expect(tunnels.length).toBeGreaterThan(0);
    expect(new Set(tunnels)).toEqual(new Set([`CONNECT localhost:${front.port}`]));
    // Every connection the bank accepted came out of the proxy, with the client certificate.
    const made = front.accepted.slice(accepted);
    expect(made).toHaveLength(tunnels.length);
    for (const connection of made) {
      expect(connection.clientCommonName).toBe('poller');
      expect(proxy.tunnelPorts.has(connection.remotePort)).toBe(true);
    }
  });

  it('honours the lower-case https_proxy, and NO_PROXY for the bank host', async () => {
    const logged = proxy.log.length;
    const viaLowerCase = clientOf(new RotatingCredentials(credentialsWith(withClient(client, PASSPHRASE))), {
      environment: { https_proxy: proxy.url },
    });
    await poll(viaLowerCase.feed);
    const afterLowerCase = proxy.log.length;
    const bypassing = clientOf(new RotatingCredentials(credentialsWith(withClient(client, PASSPHRASE))), {
      environment: { HTTPS_PROXY: proxy.url, NO_PROXY: 'example.com,localhost' },
    });

    await poll(bypassing.feed);

    expect(afterLowerCase - logged).toBeGreaterThan(0);
    expect(proxy.log.length).toBe(afterLowerCase);
  });

  it('leaves plain http (loopback only) out of the proxy, whatever HTTP_PROXY says', async () => {
    const logged = proxy.log.length;
    const requests = simulator.requests.length;
    const program = simulator.programs[0]!;
    const direct = new RotatingCredentials({
      baseUrl: simulator.url,
      clientId: program.clientId,
      clientSecret: program.clientSecret,
    });
    const { feed } = clientOf(direct, {
      environment: { HTTP_PROXY: proxy.url, http_proxy: proxy.url, HTTPS_PROXY: proxy.url },
    });

    await poll(feed);

    expect(simulator.requests.length - requests).toBe(2);
    expect(proxy.log.slice(logged)).toEqual([]);
  });

  it('refuses a proxy variable that is not a URL without quoting it (it may carry a password)', () => {
    const connections = new BankConnections({ environment: { HTTPS_PROXY: 'http://user:pr0xy-pass@[bad' } });

    let error: unknown;
    try {
      connections.dispatcherFor(credentialsWith(undefined));
    } catch (thrown) {
      error = thrown;
    }

    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain('HTTPS_PROXY');
    expectNoSecretShown(error, ['pr0xy-pass']);
  });
});

describe('the default connections', () => {
  it('are built per token provider when none are given (the CLI), and honour the process environment', async () => {
    const credentials = new StaticCredentialsProvider(credentialsWith(withClient(client, PASSPHRASE)));
    const tokens = new ClientCredentialsTokenProvider({ credentials });

    const token = await tokens.getAccessToken(AbortSignal.timeout(10_000));

    expect(token.dispatcher).toBeDefined();
    await token.dispatcher?.close();
  });
});
