/**
 * Operator answers larger than Lambda returns, through the built CLI against a deployment in moto
 * and the shipped bundle behind the Invoke stand-in (whose harness fails an answer over 6,291,556
 * bytes as Lambda does): `event` on a 4 MiB event, whose answer the function leaves in the
 * claim-check bucket for the CLI to read, and `replay --dry-run` over 100 events of 50 KB, which
 * the function answers in pages. The CLI prints what `--local` prints, whole; every answer the
 * Invoke API returned is within the limit.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningSimulator, startSimulator } from '../../../functions/simulator/banking-simulator.ts';
import { AwsCallRecorder } from '../../support/aws-call-recorder.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { type CliResult, motoCliEnvironment, runCli } from '../../support/cli-process.ts';
import { LambdaInvokeEndpoint } from '../../support/lambda-invoke-endpoint.ts';
import { type LambdaContainer, RESPONSE_MAX_BYTES } from '../../support/lambda-runtime/lambda-container.ts';
import { createMotoDeployment } from '../../support/moto-deployment.ts';
import { pollerLambda, simulatorSecret } from '../../support/poller-lambda.ts';

const CLI_KEY = 'operator-cli';

interface AnswerScenario {
  readonly simulator: RunningSimulator;
  readonly recorder: AwsCallRecorder;
  readonly endpoint: LambdaInvokeEndpoint;
  cli(args: readonly string[]): Promise<CliResult>;
  close(): Promise<void>;
}

/** The text of a `data` object about `bytes` long, with quotes and backslashes to escape. */
function dataText(bytes: number, seed: string): string {
  const unit = `${seed} "quoted" \\ path/`;
  return JSON.stringify({
    transaction_id: `tx-${seed}`,
    note: unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes),
  });
}

describe('operator answers larger than Lambda returns', () => {
  let aws: MotoEnvironment;
  let scenario: AnswerScenario | undefined;
  let seed = 3_350;

  beforeAll(() => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
  });
  afterAll(() => aws.restore());
  afterEach(async () => {
    await scenario?.close();
    scenario = undefined;
  });

  async function start(options: { claimCheckBucket: boolean }): Promise<AnswerScenario> {
    seed += 1;
    const simulator = await startSimulator({ seed, maxPollHoldMs: 300, unknownTypeRatio: 0 });
    const functionName = aws.uniqueName('poller');
    const deployment = await createMotoDeployment(aws, simulatorSecret(simulator), {
      pollerFunctionName: functionName,
      claimCheckBucket: options.claimCheckBucket,
    });
    const lambda: LambdaContainer = pollerLambda({
      artifact: inject('pollerArtifact'),
      motoEndpoint: inject('motoEndpoint'),
      secretId: deployment.secretId,
      checkpointTable: deployment.tableName,
      eventBusName: deployment.busName,
      timeoutMs: 30_000,
      environment:
        deployment.claimCheckBucket === undefined ? {} : { CLAIM_CHECK_BUCKET: deployment.claimCheckBucket },
    });
    const endpoint = await LambdaInvokeEndpoint.start({ [functionName]: lambda });
    const recorder = await AwsCallRecorder.start(inject('motoEndpoint'));
    const cwd = await mkdtemp(join(tmpdir(), 'operator-answers-'));
    const env = {
      ...motoCliEnvironment(recorder.endpoint),
      AWS_ACCESS_KEY_ID: CLI_KEY,
      AWS_ENDPOINT_URL_LAMBDA: endpoint.endpoint,
    };
    scenario = {
      simulator,
      recorder,
      endpoint,
      cli: (args) => runCli(['--stack', deployment.stackName, ...args], { cwd, env }),
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

  /** Bytes of each answer the Invoke API returned, and whether the function left it in the bucket. */
  const answers = (endpoint: LambdaInvokeEndpoint) =>
    endpoint.invocations.map((served) => ({
      bytes: served.payloadBytes,
      outcome: served.invocation.outcome.kind,
      stored:
        served.invocation.outcome.kind === 'response' &&
        typeof (served.invocation.outcome.result as { stored?: unknown }).stored === 'object',
    }));

  it('event on a 4 MiB event: the CLI reads the answer the function left in the claim-check bucket, whole', async () => {
    const { cli, simulator, recorder, endpoint } = await start({ claimCheckBucket: true });
    simulator.generate(2);
    const large = simulator.append({ type: 'TRANSACTION', dataText: dataText(4 * 1024 * 1024, 'large') });

    const fromFunction = await cli(['event', String(large.sequence_number)]);
    const local = await cli(['event', '--local', String(large.sequence_number)]);

    expect(fromFunction.code, fromFunction.stderr).toBe(0);
    expect(fromFunction.stdout).toBe(local.stdout);
    expect(fromFunction.stdout.length).toBeGreaterThan(4 * 1024 * 1024);
    expect(answers(endpoint)).toEqual([{ bytes: expect.any(Number), outcome: 'response', stored: true }]);
    for (const answer of answers(endpoint)) expect(answer.bytes).toBeLessThanOrEqual(RESPONSE_MAX_BYTES);
    expect(recorder.count('s3:GetObject', CLI_KEY)).toBe(1);
  });

  it('event on a 4 MiB event without a claim-check bucket: says how large, and that --local reads it', async () => {
    const { cli, simulator, endpoint } = await start({ claimCheckBucket: false });
    const large = simulator.append({ type: 'TRANSACTION', dataText: dataText(4 * 1024 * 1024, 'large') });

    const result = await cli(['event', String(large.sequence_number)]);

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /answered event with \d+ bytes, more than Lambda returns .*\(6291556\).*--local/s,
    );
    expect(result.stderr.split('\n').filter(Boolean).length).toBeLessThanOrEqual(2);
    for (const answer of answers(endpoint)) expect(answer.bytes).toBeLessThanOrEqual(RESPONSE_MAX_BYTES);
  });

  it('replay --dry-run over 100 events of 50 KB: the function answers in pages, the CLI prints every event', async () => {
    const { cli, simulator, endpoint } = await start({ claimCheckBucket: true });
    for (let index = 0; index < 100; index += 1)
      simulator.append({ type: 'TRANSACTION', dataText: dataText(50 * 1024, `event-${index}`) });
    const args = ['replay', '--from', '1', '--to', '100', '--hold-seconds', '1', '--dry-run'];

    const fromFunction = await cli(args);
    const local = await cli([...args.slice(0, 1), '--local', ...args.slice(1)]);

    expect(fromFunction.code, fromFunction.stderr).toBe(0);
    expect(fromFunction.stdout).toBe(local.stdout);
    const lines = fromFunction.stdout.trimEnd().split('\n');
    expect(
      lines.map(
        (line) => (JSON.parse(line) as { detail: { sequence_number: number } }).detail.sequence_number,
      ),
    ).toEqual(Array.from({ length: 100 }, (_, index) => index + 1));
    const served = answers(endpoint);
    expect(served.length).toBeGreaterThan(1);
    for (const answer of served) {
      expect(answer).toMatchObject({ outcome: 'response', stored: false });
      expect(answer.bytes).toBeLessThanOrEqual(RESPONSE_MAX_BYTES);
    }
  });
});
