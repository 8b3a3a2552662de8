/**
 * The commands that need the banking service, against a deployed stack: the CLI sends operator
 * requests to the poller function (the shipped bundle under the runtime harness, behind a Lambda
 * Invoke API stand-in, since moto cannot run it) and prints what it printed when it called the
 * bank itself (`--local`). The CLI's own AWS calls go through a recorder in front of moto, signed
 * with a key of their own: it never reads the secret, the function does.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { DynamoDbCheckpointStore } from '../../../functions/adapters/aws/dynamodb-checkpoint-store.ts';
import { type RunningSimulator, startSimulator } from '../../../functions/simulator/banking-simulator.ts';
import { AwsCallRecorder } from '../../support/aws-call-recorder.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { type CliResult, motoCliEnvironment, runCli } from '../../support/cli-process.ts';
import { LambdaInvokeEndpoint } from '../../support/lambda-invoke-endpoint.ts';
import type { LambdaContainer } from '../../support/lambda-runtime/lambda-container.ts';
import { createMotoDeployment, type MotoDeployment } from '../../support/moto-deployment.ts';
import { pollerLambda, simulatorSecret } from '../../support/poller-lambda.ts';
import { range } from './cli-scenario.ts';

const CLI_KEY = 'operator-cli';
const GET_SECRET_VALUE = 'secretsmanager:GetSecretValue';

interface OperatorScenario {
  readonly simulator: RunningSimulator;
  readonly deployment: MotoDeployment;
  readonly store: DynamoDbCheckpointStore;
  readonly recorder: AwsCallRecorder;
  readonly endpoint: LambdaInvokeEndpoint;
  readonly lambda: LambdaContainer;
  cli(args: readonly string[]): Promise<CliResult>;
  /** GetSecretValue calls signed with the CLI's key so far. */
  secretReads(): number;
  /** The kinds of the operator requests the function served, in order. */
  servedKinds(): string[];
  close(): Promise<void>;
}

describe('operator commands against a deployed stack run in the poller function', () => {
  let aws: MotoEnvironment;
  let scenario: OperatorScenario | undefined;
  let seed = 2500;

  beforeAll(() => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
  });
  afterAll(() => aws.restore());
  afterEach(async () => {
    await scenario?.close();
    scenario = undefined;
  });

  async function start(events: number, options: { withFunction?: boolean } = {}): Promise<OperatorScenario> {
    seed += 1;
    const simulator = await startSimulator({ seed, maxPollHoldMs: 300, unknownTypeRatio: 0 });
    simulator.generate(events);
    const functionName = aws.uniqueName('poller');
    const deployment = await createMotoDeployment(
      aws,
      simulatorSecret(simulator),
      options.withFunction === false ? {} : { pollerFunctionName: functionName },
    );
    const lambda = pollerLambda({
      artifact: inject('pollerArtifact'),
      motoEndpoint: inject('motoEndpoint'),
      secretId: deployment.secretId,
      checkpointTable: deployment.tableName,
      eventBusName: deployment.busName,
      timeoutMs: 20_000,
    });
    const endpoint = await LambdaInvokeEndpoint.start({ [functionName]: lambda });
    const recorder = await AwsCallRecorder.start(inject('motoEndpoint'));
    const cwd = await mkdtemp(join(tmpdir(), 'operator-requests-'));
    const env = {
      ...motoCliEnvironment(recorder.endpoint),
      AWS_ACCESS_KEY_ID: CLI_KEY,
      AWS_ENDPOINT_URL_LAMBDA: endpoint.endpoint,
    };
    scenario = {
      simulator,
      deployment,
      store: new DynamoDbCheckpointStore({
        client: aws.dynamodb,
        tableName: deployment.tableName,
        program: 'default',
      }),
      recorder,
      endpoint,
      lambda,
      cli: (args) => runCli(['--stack', deployment.stackName, ...args], { cwd, env }),
      secretReads: () => recorder.count(GET_SECRET_VALUE, CLI_KEY),
      servedKinds: () =>
        endpoint.invocations.map(
          (served) => (served.event as { operatorRequest: { kind: string } }).operatorRequest.kind,
        ),
      close: async () => {
        await endpoint.close();
        await lambda.close();
        await recorder.close();
        await simulator.close().catch(() => {});
        await rm(cwd, { recursive: true, force: true });
      },
    };
    return scenario;
  }

  /** What the bus delivered, as subscribers see it, ordered by sequence number. */
  async function delivered(deployment: MotoDeployment): Promise<Array<Record<string, unknown>>> {
    const bodies = await aws.drainQueueBodies(deployment.queueUrl);
    return bodies
      .map((body) => JSON.parse(body) as Record<string, unknown>)
      .map((event) => ({ source: event.source, 'detail-type': event['detail-type'], detail: event.detail }))
      .sort(
        (a, b) =>
          (a.detail as { sequence_number: number }).sequence_number -
          (b.detail as { sequence_number: number }).sequence_number,
      );
  }

  it('event prints what --local prints, by sequence number, by id and for none, without reading the secret', async () => {
    const { cli, simulator, secretReads, servedKinds } = await start(5);
    const target = simulator.events()[2]!;

    const bySequence = await cli(['event', '3']);
    const byId = await cli(['event', target.id]);
    const missing = await cli(['event', '99']);
    const readsInFunctionMode = secretReads();
    const local = await cli(['event', '--local', '3']);
    const localMissing = await cli(['event', '--local', '99']);

    expect(bySequence.code, bySequence.stderr).toBe(0);
    expect(JSON.parse(bySequence.stdout)).toMatchObject({ 'detail-type': target.type.toLowerCase() });
    expect(bySequence.stdout).toBe(local.stdout);
    expect(byId.stdout).toBe(local.stdout);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(localMissing.stderr);
    expect(servedKinds()).toEqual(['event', 'event', 'event']);
    expect(readsInFunctionMode).toBe(0);
    // The recorder sees the CLI's reads: the local path does read the secret.
    expect(secretReads()).toBeGreaterThan(0);
  });

  it('doctor reports the bank checks the function ran, the same as --local, without reading the secret', async () => {
    const { cli, secretReads, servedKinds } = await start(3);

    const doctor = await cli(['doctor', '--json']);
    const readsInFunctionMode = secretReads();
    const local = await cli(['doctor', '--local', '--json']);

    expect(doctor.code, doctor.stderr).toBe(0);
    const report = JSON.parse(doctor.stdout) as {
      ok: boolean;
      checks: Array<{ check: string; verdict: string }>;
    };
    expect(report.ok).toBe(true);
    expect(report.checks.slice(0, 3).map((check) => [check.check, check.verdict])).toEqual([
      ['secret (default)', 'ok'],
      ['token (default)', 'ok'],
      ['GET /events (default)', 'ok'],
    ]);
    expect(report).toEqual(JSON.parse(local.stdout));
    expect(servedKinds()).toEqual(['doctor-bank']);
    expect(readsInFunctionMode).toBe(0);
  });

  it('replay publishes the range from the function: the same entries and summary as --local, the checkpoint untouched', async () => {
    const { cli, deployment, store, secretReads, servedKinds } = await start(30);

    const dryRun = await cli(['replay', '--from', '5', '--to', '12', '--hold-seconds', '1', '--dry-run']);
    const replay = await cli(['replay', '--from', '5', '--to', '12', '--hold-seconds', '1', '--json']);
    const fromFunction = await delivered(deployment);
    const readsInFunctionMode = secretReads();
    const localDryRun = await cli([
      'replay',
      '--local',
      '--from',
      '5',
      '--to',
      '12',
      '--hold-seconds',
      '1',
      '--dry-run',
    ]);
    const local = await cli([
      'replay',
      '--local',
      '--from',
      '5',
      '--to',
      '12',
      '--hold-seconds',
      '1',
      '--json',
    ]);
    const fromHere = await delivered(deployment);

    expect(replay.code, replay.stderr).toBe(0);
    expect(
      fromFunction.map((event) => (event.detail as { sequence_number: number }).sequence_number),
    ).toEqual(range(5, 12));
    expect(fromFunction).toEqual(fromHere);
    expect(JSON.parse(replay.stdout)).toEqual(JSON.parse(local.stdout));
    expect(dryRun.code, dryRun.stderr).toBe(0);
    expect(dryRun.stdout).toBe(localDryRun.stdout);
    expect(await store.read()).toMatchObject({ checkpoint: null, lease: null });
    expect(servedKinds()).toEqual(['replay', 'replay']);
    expect(readsInFunctionMode).toBe(0);
  });

  it("reports the function's failure in one line, without a secret, when the banking service is down", async () => {
    const { cli, simulator } = await start(3);
    const credentials = [simulator.programs[0]!.clientSecret];
    await simulator.close();

    const result = await cli(['event', '3']);

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^banking-events-poller: The poller function \S+ answered event with \w+Error: /,
    );
    for (const secret of credentials) expect(result.stderr).not.toContain(secret);
  });

  it('names the fix for a stack deployed before operator requests, and for --secret-id without --local', async () => {
    const { cli, deployment } = await start(1, { withFunction: false });

    const old = await cli(['event', '1']);
    const secretHere = await cli(['event', '--secret-id', deployment.secretId, '1']);

    expect(old.code).toBe(2);
    expect(old.stderr).toMatch(/has no output PollerFunctionName .*pass --local/);
    expect(secretHere.code).toBe(2);
    expect(secretHere.stderr).toMatch(/--secret-id reads the secret on this machine.*add --local/);
  });

  it('rewind reads the feed through the function: --to latest lands on the newest event, a move back checks retention', async () => {
    const { cli, store, secretReads, servedKinds } = await start(12);

    const latest = await cli(['rewind', '--to', 'latest', '--yes', '--json']);
    const back = await cli(['rewind', '--to', '4', '--yes', '--json']);

    expect(latest.code, latest.stderr).toBe(0);
    expect(JSON.parse(latest.stdout)).toMatchObject({ before: null, after: 12, moved: true });
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout)).toMatchObject({ before: 12, after: 4, moved: true });
    expect((await store.read()).checkpoint).toBe(4);
    expect(servedKinds()).toEqual(['feed-latest', 'feed-oldest']);
    expect(secretReads()).toBe(0);
  });
});
