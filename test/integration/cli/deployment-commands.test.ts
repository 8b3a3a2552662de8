/**
 * `doctor`, `secret set` and `simulate`: checking a deployment, storing its credentials without
 * ever showing them, and the simulator for trying things by hand.
 */
import { GetScheduleCommand, SchedulerClient, UpdateScheduleCommand } from '@aws-sdk/client-scheduler';
import { GetSecretValueCommand, PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { requestSimulatorToken, type SimulateDetails, startCli } from '../../support/cli-process.ts';
import { type CliScenario, cliScenario, lines } from './cli-scenario.ts';

interface DoctorReport {
  readonly ok: boolean;
  readonly checks: Array<{ check: string; verdict: string; detail: string; fix?: string }>;
}

describe('deployment commands of the CLI', () => {
  let aws: MotoEnvironment;
  let scenario: CliScenario;
  let seed = 800;

  beforeAll(() => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
  });
  afterAll(() => aws.restore());
  afterEach(async () => scenario?.close());

  const newScenario = async (events = 3) => {
    seed += 1;
    scenario = await cliScenario(aws, inject('motoEndpoint'), { seed, events });
    return scenario;
  };
  const secretValue = async (secretId: string) =>
    (await aws.secretsManager.send(new GetSecretValueCommand({ SecretId: secretId }))).SecretString;

  it('doctor passes every check of a healthy deployment', async () => {
    const { cli } = await newScenario();

    const doctor = await cli(['doctor', '--local', '--json']);

    expect(doctor.code, doctor.stderr).toBe(0);
    const report = JSON.parse(doctor.stdout) as DoctorReport;
    expect(report.ok).toBe(true);
    expect(report.checks.map((check) => [check.check, check.verdict])).toEqual([
      ['secret (default)', 'ok'],
      ['token (default)', 'ok'],
      ['GET /events (default)', 'ok'],
      ['checkpoint table', 'ok'],
      ['event bus', 'ok'],
      ['schedule (default)', 'ok'],
      ['alarms', 'ok'],
    ]);
  });

  it('doctor reports a broken secret in plain words, with the fix, and exits 1', async () => {
    const { cli, deployment } = await newScenario();
    await aws.secretsManager.send(
      new PutSecretValueCommand({
        SecretId: deployment.secretId,
        SecretString: JSON.stringify({
          base_url: 'https://<banking-service-host>',
          client_id: '<client-id>',
          client_secret: 'x',
        }),
      }),
    );

    const table = await cli(['doctor', '--local']);
    const json = await cli(['doctor', '--local', '--json']);

    expect(table.code).toBe(1);
    expect(table.stdout).toMatch(
      /✖ secret \(default\)\s+secret .*: client_id must be a non-empty string \(is the placeholder still there\?\)/,
    );
    expect(table.stdout).toContain(
      `→ store the credentials: banking-events-poller secret set --secret-id ${deployment.secretId}`,
    );
    expect(table.stdout).toMatch(/- token \(default\)\s+needs a valid secret/);
    expect(table.stdout).toMatch(/✔ checkpoint table/);
    expect(lines(table.stderr)).toEqual(['banking-events-poller: 1 check(s) failed: see the fixes above']);
    const report = JSON.parse(json.stdout) as DoctorReport;
    expect(report.ok).toBe(false);
    expect(report.checks.find((check) => check.check === 'secret (default)')?.verdict).toBe('failed');
  });

  it('doctor says when a schedule is disabled: the program is not polled', async () => {
    const { cli, deployment } = await newScenario();
    const scheduler = new SchedulerClient({});
    const schedule = await scheduler.send(new GetScheduleCommand({ Name: deployment.scheduleName }));
    await scheduler.send(
      new UpdateScheduleCommand({
        Name: deployment.scheduleName,
        ScheduleExpression: schedule.ScheduleExpression,
        FlexibleTimeWindow: schedule.FlexibleTimeWindow,
        Target: schedule.Target,
        State: 'DISABLED',
      }),
    );
    scheduler.destroy();

    const doctor = await cli(['doctor', '--local', '--json']);

    expect(doctor.code).toBe(1);
    expect(
      (JSON.parse(doctor.stdout) as DoctorReport).checks.find(
        (check) => check.check === 'schedule (default)',
      ),
    ).toMatchObject({
      verdict: 'failed',
      detail: `${deployment.scheduleName} is DISABLED: default is not polled`,
    });
  });

  it('secret set stores the JSON read from stdin, after getting a token with it, and never prints the secret', async () => {
    const { cli, deployment, simulator } = await newScenario();
    const [program] = simulator.programs;
    const value = {
      base_url: simulator.url,
      client_id: program!.clientId,
      client_secret: program!.clientSecret,
    };

    const result = await cli(['secret', 'set', '--verify'], { input: JSON.stringify(value) });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /^Secret .* updated \(version .*\): base_url http:\/\/127\.0\.0\.1:\d+, client_id local-client, token obtained\./,
    );
    expect(`${result.stdout}${result.stderr}`).not.toContain(program!.clientSecret);
    expect(JSON.parse((await secretValue(deployment.secretId))!)).toEqual(value);
  });

  it('secret set takes the client secret alone on stdin, with the other two fields as flags', async () => {
    const { cli, deployment } = await newScenario();
    const clientSecret = 'an-operator-typed-s3cret';

    const result = await cli(
      ['secret', 'set', '--base-url', 'https://bank.example.com', '--client-id', 'ops', '--json'],
      {
        input: `${clientSecret}\n`,
      },
    );

    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      baseUrl: 'https://bank.example.com',
      clientId: 'ops',
      verified: false,
    });
    expect(`${result.stdout}${result.stderr}`).not.toContain(clientSecret);
    expect(JSON.parse((await secretValue(deployment.secretId))!)).toEqual({
      base_url: 'https://bank.example.com',
      client_id: 'ops',
      client_secret: clientSecret,
    });
  });

  it('secret set refuses a plain-http base URL that is not loopback, writing nothing and showing no secret', async () => {
    const { cli, deployment } = await newScenario();
    const before = await secretValue(deployment.secretId);
    const clientSecret = 'never-shown-s3cret';

    const result = await cli(['secret', 'set'], {
      input: JSON.stringify({
        base_url: 'http://bank.example.com',
        client_id: 'ops',
        client_secret: clientSecret,
      }),
    });

    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toHaveLength(1);
    expect(result.stderr).toMatch(/base_url must use https:\/\//);
    expect(`${result.stdout}${result.stderr}`).not.toContain(clientSecret);
    expect(await secretValue(deployment.secretId)).toBe(before);
  });

  it('simulate prints its base URL and test credentials, serves tokens, and stops on Ctrl-C', async () => {
    const simulate = startCli(['simulate', '--port', '0', '--backlog', '3', '--json']);
    await simulate.waitFor('stdout', /\n}\n/);
    const details = JSON.parse(simulate.stdout()) as SimulateDetails;

    const token = await requestSimulatorToken(details);
    simulate.child.kill('SIGINT');
    const result = await simulate.result;

    expect(details.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(token.status).toBe(200);
    expect(result.code).toBe(0);
  });
});
