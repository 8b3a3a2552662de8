/**
 * Mutual TLS and the egress proxy, as deployed: the shipped bundle under the Lambda runtime
 * harness, the simulator behind a TLS front that requires a client certificate signed by the
 * bank's CA (certificates made by openssl for this file, in a temporary directory), and a CONNECT
 * proxy on loopback named by `HTTPS_PROXY`.
 */
import { PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ConnectProxy } from '../../support/connect-proxy.ts';
import {
  emfDocuments,
  type PollerScenario,
  summaryOf,
  usePollerScenarios,
} from '../../support/poller-lambda.ts';
import { type CertificateAuthority, type IssuedCertificate, TestPki } from '../../support/test-pki.ts';
import { TlsFront } from '../../support/tls-front.ts';

const scenarios = usePollerScenarios(2_700);
const PASSPHRASE = 'client key passphrase';

let pki: TestPki;
let bankCa: CertificateAuthority;
let serverCertificate: IssuedCertificate;
let client: IssuedCertificate;
let proxy: ConnectProxy;
const fronts: TlsFront[] = [];

beforeAll(async () => {
  pki = TestPki.create();
  bankCa = pki.authority('Test Bank CA');
  serverCertificate = bankCa.issue({ commonName: 'localhost', usage: 'server' });
  client = bankCa.issue({ commonName: 'poller', usage: 'client', days: 30, passphrase: PASSPHRASE });
  proxy = await ConnectProxy.start();
});

afterAll(async () => {
  for (const front of fronts) await front.close();
  await proxy.close();
  pki.close();
});

/** The scenario's simulator behind a TLS front requiring a client certificate of the bank's CA. */
async function frontOf(s: PollerScenario): Promise<TlsFront> {
  const front = await TlsFront.start({
    target: s.simulator.url,
    server: serverCertificate,
    clientCa: bankCa.certificate,
  });
  fronts.push(front);
  return front;
}

/** Stores the secret value naming the front, with this client certificate. */
async function storeSecret(
  s: PollerScenario,
  front: TlsFront,
  issued: IssuedCertificate,
  passphrase?: string,
) {
  const program = s.simulator.programs[0]!;
  await scenarios.aws.secretsManager.send(
    new PutSecretValueCommand({
      SecretId: s.secretId,
      SecretString: JSON.stringify({
        base_url: front.url,
        client_id: program.clientId,
        client_secret: program.clientSecret,
        client_certificate: issued.certificate,
        client_key: issued.key,
        ...(passphrase === undefined ? {} : { client_key_passphrase: passphrase }),
        ca_certificate: bankCa.certificate,
      }),
    }),
  );
}

/** What of the key material the function's output must never show. */
function keyMaterialIn(output: string, issued: IssuedCertificate, passphrase?: string): string[] {
  const lines = issued.key.split('\n').filter((line) => line.length > 40);
  return [...lines, ...(passphrase === undefined ? [] : [passphrase])].filter((secret) =>
    output.includes(secret),
  );
}

const daysLeftIn = (stdout: string): number[] =>
  emfDocuments(stdout).flatMap((document) =>
    typeof document.ClientCertificateDaysLeft === 'number' ? [document.ClientCertificateDaysLeft] : [],
  );

describe('mutual TLS, as deployed', () => {
  it('presents the client certificate to a bank that requires one, counts its days left, and follows a rotation', async () => {
    const s = await scenarios.start({ environment: { CREDENTIALS_TTL_SECONDS: '0' } });
    const front = await frontOf(s);
    await storeSecret(s, front, client, PASSPHRASE);
    const first = s.simulator.generate(3);

    const invocation = await s.invoke();

    expect(summaryOf(invocation)).toMatchObject({ published: 3, checkpoint: first.at(-1)!.sequence_number });
    expect(front.accepted.length).toBeGreaterThan(0);
    expect(new Set(front.accepted.map((connection) => connection.clientCommonName))).toEqual(
      new Set(['poller']),
    );
    // Issued for 30 days a moment ago: 29 whole days left.
    expect(daysLeftIn(invocation.stdout)).toEqual([29]);

    // The operator stores a renewed certificate (no passphrase this time): the next run uses it.
    const renewed = bankCa.issue({ commonName: 'poller-renewed', usage: 'client', days: 90 });
    await storeSecret(s, front, renewed);
    const accepted = front.accepted.length;
    const second = s.simulator.generate(2);

    const after = await s.invoke();

    expect(summaryOf(after)).toMatchObject({ published: 2, checkpoint: second.at(-1)!.sequence_number });
    const made = front.accepted.slice(accepted);
    expect(made.length).toBeGreaterThan(0);
    expect(new Set(made.map((connection) => connection.clientCommonName))).toEqual(
      new Set(['poller-renewed']),
    );
    expect(daysLeftIn(after.stdout)).toEqual([89]);
    expect(await s.deliveredIds()).toEqual([...first, ...second].map((event) => event.id));
    expect(keyMaterialIn(s.lambda.output, client, PASSPHRASE)).toEqual([]);
    expect(keyMaterialIn(s.lambda.output, renewed)).toEqual([]);
  });

  it('refuses an expired certificate at the first run, naming the field, and reports it expired', async () => {
    const s = await scenarios.start();
    const front = await frontOf(s);
    const expired = bankCa.issue({
      commonName: 'poller-expired',
      usage: 'client',
      period: { from: new Date('2020-01-01T00:00:00Z'), to: new Date('2020-02-01T00:00:00Z') },
      passphrase: PASSPHRASE,
    });
    await storeSecret(s, front, expired, PASSPHRASE);
    s.simulator.generate(2);

    const invocation = await s.invoke();

    expect(invocation.outcome).toMatchObject({ kind: 'error', errorType: 'ClientCertificateError' });
    expect(invocation.outcome.kind === 'error' && invocation.outcome.errorMessage).toContain(
      'client_certificate',
    );
    expect(`${invocation.stdout}${invocation.stderr}`).toMatch(/"code":"CLIENT_CERTIFICATE_INVALID"/);
    expect(daysLeftIn(invocation.stdout)[0]).toBeLessThan(0);
    expect(front.accepted).toEqual([]);
    expect(s.simulator.requests).toEqual([]);
    expect(await s.checkpoint()).toBeNull();
    expect(keyMaterialIn(s.lambda.output, expired, PASSPHRASE)).toEqual([]);
  });
});

describe('the egress proxy, as deployed', () => {
  it('carries the token request and the polls through HTTPS_PROXY while the AWS calls go direct', async () => {
    // HTTP_PROXY too: moto is plain HTTP, so an AWS client that read either variable would show up.
    const s = await scenarios.start({ environment: { HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url } });
    const front = await frontOf(s);
    await storeSecret(s, front, client, PASSPHRASE);
    const events = s.simulator.generate(3);
    const logged = proxy.log.length;

    const invocation = await s.invoke();

    expect(summaryOf(invocation)).toMatchObject({ published: 3 });
    expect(await s.deliveredIds()).toEqual(events.map((event) => event.id));
    const lines = proxy.log.slice(logged);
    expect(lines.length).toBeGreaterThan(0);
    // Only the bank, only tunnels: Secrets Manager, DynamoDB and EventBridge (moto) never went through it.
    expect(new Set(lines)).toEqual(new Set([`CONNECT localhost:${front.port}`]));
    const paths = s.simulator.requests.map((request) => `${request.method} ${request.path}`);
    expect(paths).toContain('POST /oauth2/token');
    expect(paths).toContain('GET /events');
    // Every connection the bank accepted came out of the proxy, with the client certificate.
    expect(front.accepted).toHaveLength(lines.length);
    for (const connection of front.accepted) {
      expect(proxy.tunnelPorts.has(connection.remotePort)).toBe(true);
      expect(connection.clientCommonName).toBe('poller');
    }
    const program = s.simulator.programs[0]!;
    const secrets = [program.clientSecret, ...s.simulator.issuedTokens()];
    expect(secrets.filter((secret) => lines.some((line) => line.includes(secret)))).toEqual([]);
  });

  it('carries the stream too (stream mode), with the client certificate inside the tunnel', async () => {
    const s = await scenarios.start({ environment: { FEED_MODE: 'stream', HTTPS_PROXY: proxy.url } });
    const front = await frontOf(s);
    await storeSecret(s, front, client, PASSPHRASE);
    const events = s.simulator.generate(2);

    const summary = summaryOf(await s.invoke());

    expect(summary).toMatchObject({ published: 2, checkpoint: events.at(-1)!.sequence_number });
    expect(s.simulator.requests.map((request) => request.path)).toContain('/events/stream');
    expect(front.accepted.length).toBeGreaterThan(0);
    for (const connection of front.accepted) {
      expect(proxy.tunnelPorts.has(connection.remotePort)).toBe(true);
      expect(connection.clientCommonName).toBe('poller');
    }
  });

  it('leaves the bank out of the proxy when NO_PROXY names its host', async () => {
    const s = await scenarios.start({
      environment: {
        HTTPS_PROXY: proxy.url,
        NO_PROXY: `bank.example.com,localhost,${new URL(inject('motoEndpoint')).hostname}`,
      },
    });
    const front = await frontOf(s);
    await storeSecret(s, front, client, PASSPHRASE);
    s.simulator.generate(2);
    const logged = proxy.log.length;

    const invocation = await s.invoke();

    expect(summaryOf(invocation)).toMatchObject({ published: 2 });
    expect(proxy.log.slice(logged)).toEqual([]);
    expect(front.accepted.length).toBeGreaterThan(0);
    for (const connection of front.accepted) expect(proxy.tunnelPorts.has(connection.remotePort)).toBe(false);
  });
});
