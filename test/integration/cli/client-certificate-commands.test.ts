/**
 * The CLI with a secret that holds a client certificate, against a bank that requires one (the
 * simulator behind a TLS front): `doctor` names the certificate and its expiry and gets a token
 * over mutual TLS, and refuses an expired certificate naming the field; `secret set` stores the
 * mutual TLS fields, checks them before writing, and keeps them when only the client secret changes.
 */
import { GetSecretValueCommand, PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { type CertificateAuthority, type IssuedCertificate, TestPki } from '../../support/test-pki.ts';
import { TlsFront } from '../../support/tls-front.ts';
import { type CliScenario, cliScenario } from './cli-scenario.ts';

interface DoctorReport {
  readonly ok: boolean;
  readonly checks: Array<{ check: string; verdict: string; detail: string; fix?: string }>;
}

describe('the CLI with a client certificate', () => {
  let aws: MotoEnvironment;
  let pki: TestPki;
  let bankCa: CertificateAuthority;
  let scenario: CliScenario;
  let front: TlsFront;
  let seed = 2_750;

  beforeAll(() => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
    pki = TestPki.create();
    bankCa = pki.authority('Test Bank CA');
  });
  afterAll(() => {
    aws.restore();
    pki.close();
  });
  afterEach(async () => {
    await front?.close();
    await scenario?.close();
  });

  const secretValue = async () =>
    JSON.parse(
      (await aws.secretsManager.send(new GetSecretValueCommand({ SecretId: scenario.deployment.secretId })))
        .SecretString!,
    ) as Record<string, unknown>;
  const keyLinesIn = (text: string, issued: IssuedCertificate) =>
    issued.key.split('\n').filter((line) => line.length > 40 && text.includes(line));

  /** The secret value naming the front, with this client certificate. */
  function valueWith(client: IssuedCertificate): Record<string, string> {
    const program = scenario.simulator.programs[0]!;
    return {
      base_url: front.url,
      client_id: program.clientId,
      client_secret: program.clientSecret,
      client_certificate: client.certificate,
      client_key: client.key,
      ca_certificate: bankCa.certificate,
    };
  }

  /** A deployment whose secret names the simulator behind a front requiring this client certificate. */
  async function deploymentWith(client: IssuedCertificate): Promise<CliScenario> {
    seed += 1;
    scenario = await cliScenario(aws, inject('motoEndpoint'), { seed, events: 2 });
    front = await TlsFront.start({
      target: scenario.simulator.url,
      server: bankCa.issue({ commonName: 'localhost', usage: 'server' }),
      clientCa: bankCa.certificate,
    });
    await aws.secretsManager.send(
      new PutSecretValueCommand({
        SecretId: scenario.deployment.secretId,
        SecretString: JSON.stringify(valueWith(client)),
      }),
    );
    return scenario;
  }

  it("names the certificate's subject and expiry and gets a token over mutual TLS", async () => {
    const client = bankCa.issue({ commonName: 'poller', usage: 'client', days: 90 });
    const { cli } = await deploymentWith(client);

    const doctor = await cli(['doctor', '--local', '--json']);

    const report = JSON.parse(doctor.stdout) as DoctorReport;
    const verdicts = Object.fromEntries(report.checks.map((check) => [check.check, check]));
    expect(verdicts['client certificate (default)']).toMatchObject({ verdict: 'ok' });
    const detail = verdicts['client certificate (default)']!.detail;
    expect(detail).toContain('CN=poller');
    expect(detail).toContain('CN=Test Bank CA');
    expect(detail).toContain('89 days left');
    expect(verdicts['token (default)']).toMatchObject({ verdict: 'ok' });
    expect(verdicts['GET /events (default)']).toMatchObject({ verdict: 'ok' });
    expect(front.accepted.map((connection) => connection.clientCommonName)).toContain('poller');
  });

  it('fails an expired certificate naming client_certificate, and asks nothing of the bank', async () => {
    const expired = bankCa.issue({
      commonName: 'poller-expired',
      usage: 'client',
      period: { from: new Date('2020-01-01T00:00:00Z'), to: new Date('2020-02-01T00:00:00Z') },
    });
    const { cli, simulator } = await deploymentWith(expired);

    const doctor = await cli(['doctor', '--local', '--json']);

    expect(doctor.code).toBe(1);
    const report = JSON.parse(doctor.stdout) as DoctorReport;
    const verdicts = Object.fromEntries(report.checks.map((check) => [check.check, check]));
    expect(verdicts['client certificate (default)']).toMatchObject({ verdict: 'failed' });
    expect(verdicts['client certificate (default)']!.detail).toContain('client_certificate');
    expect(verdicts['token (default)']).toMatchObject({ verdict: 'skipped' });
    expect(simulator.requests).toEqual([]);
    expect(keyLinesIn(`${doctor.stdout}${doctor.stderr}`, expired)).toEqual([]);
  });

  it('secret set stores the mutual TLS fields after getting a token over mutual TLS', async () => {
    const old = bankCa.issue({ commonName: 'poller-old', usage: 'client' });
    const renewed = bankCa.issue({ commonName: 'poller-renewed', usage: 'client', passphrase: 'pw' });
    const { cli } = await deploymentWith(old);
    const value = { ...valueWith(renewed), client_key_passphrase: 'pw' };

    const result = await cli(['secret', 'set', '--verify'], { input: JSON.stringify(value) });

    expect(result.code, result.stderr).toBe(0);
    expect(await secretValue()).toEqual(value);
    expect(front.accepted.map((connection) => connection.clientCommonName)).toEqual(['poller-renewed']);
    expect(keyLinesIn(`${result.stdout}${result.stderr}`, renewed)).toEqual([]);
  });

  it('secret set keeps the mutual TLS fields when given the client secret alone', async () => {
    const client = bankCa.issue({ commonName: 'poller', usage: 'client' });
    const { cli } = await deploymentWith(client);
    const before = await secretValue();

    const result = await cli(
      ['secret', 'set', '--base-url', String(before.base_url), '--client-id', String(before.client_id)],
      { input: `${String(before.client_secret)}\n` },
    );

    expect(result.code, result.stderr).toBe(0);
    expect(await secretValue()).toEqual(before);
  });

  it('secret set refuses a key that does not match the certificate, naming client_key, writing nothing', async () => {
    const client = bankCa.issue({ commonName: 'poller', usage: 'client' });
    const other = bankCa.issue({ commonName: 'other', usage: 'client' });
    const { cli } = await deploymentWith(client);
    const before = await secretValue();

    const result = await cli(['secret', 'set'], {
      input: JSON.stringify({ ...before, client_key: other.key }),
    });

    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('client_key');
    expect(await secretValue()).toEqual(before);
    expect(keyLinesIn(`${result.stdout}${result.stderr}`, other)).toEqual([]);
    expect(keyLinesIn(`${result.stdout}${result.stderr}`, client)).toEqual([]);
  });
});
