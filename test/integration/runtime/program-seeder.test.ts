/**
 * The program seeding's provider as `cdk deploy` ships it (the prebuilt handler with the stack's
 * seed list, from a synth of the app), under the runtime harness, against moto's DynamoDB and a
 * loopback server standing in for CloudFormation's presigned response URL. What CloudFormation
 * sees (the answer PUT to the URL) and what the programs table holds afterwards.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DynamoDbProgramRegistry } from '../../../functions/adapters/aws/dynamodb-program-registry.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { LambdaContainer } from '../../support/lambda-runtime/lambda-container.ts';
import { type ProgramSeederArtifact, synthProgramSeederArtifact } from '../../support/poller-artifact.ts';
import { type ScriptedHttpServer, startScriptedServer } from '../../support/scripted-http-server.ts';

/** The presigned URL's signature: it must never reach the provider's output. */
const SIGNATURE = 'X-Amz-Signature=5ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e7';

interface Answer {
  readonly Status: 'SUCCESS' | 'FAILED';
  readonly Reason: string;
  readonly PhysicalResourceId: string;
  readonly StackId: string;
  readonly RequestId: string;
  readonly LogicalResourceId: string;
  readonly Data?: Record<string, number>;
}

let aws: MotoEnvironment;
let outdir: string;
let created: ProgramSeederArtifact;
let flat: ProgramSeederArtifact;
let cloudFormation: ScriptedHttpServer;

beforeAll(async () => {
  aws = useMotoEnvironment(inject('motoEndpoint'));
  outdir = mkdtempSync(path.join(tmpdir(), 'seeder-artifact-'));
  created = synthProgramSeederArtifact(path.join(outdir, 'created'), {
    programs: [{ name: 'cards' }, { name: 'loans' }],
  });
  flat = synthProgramSeederArtifact(path.join(outdir, 'flat'), {
    programs: [{ name: 'cards' }, { name: 'deposits' }],
    createProgramSecrets: false,
  });
  cloudFormation = await startScriptedServer((_request, response) => {
    response.writeHead(200).end();
  });
});

afterAll(async () => {
  await cloudFormation.close();
  rmSync(outdir, { recursive: true, force: true });
  aws.restore();
});

/** Runs one CloudFormation request through a fresh provider and returns the answer it sent. */
async function request(
  artifact: ProgramSeederArtifact,
  requestType: 'Create' | 'Update' | 'Delete',
  table: string,
): Promise<{ answer: Answer; output: string }> {
  const container = new LambdaContainer({
    codeDir: artifact.codeDir,
    handler: artifact.handler,
    functionName: 'program-seeder',
    timeoutMs: 60_000,
    environment: {
      AWS_REGION: 'us-east-1',
      AWS_DEFAULT_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_ENDPOINT_URL: inject('motoEndpoint'),
    },
  });
  const requestId = aws.uniqueName('request');
  const stackSecrets = Object.fromEntries(
    Object.keys(artifact.properties.StackSecrets as object).map((program) => [
      program,
      `arn:aws:secretsmanager:us-east-1:123456789012:secret:BankingEventsPoller-Secret${program}-AbC123`,
    ]),
  );
  try {
    const before = cloudFormation.requests.length;
    const invocation = await container.invoke({
      RequestType: requestType,
      ResponseURL: `${cloudFormation.baseUrl}/cfn-response/${requestId}?${SIGNATURE}`,
      StackId: 'arn:aws:cloudformation:us-east-1:123456789012:stack/BankingEventsPoller/1',
      RequestId: requestId,
      ResourceType: 'Custom::ProgramSeeding',
      LogicalResourceId: 'PollerProgramSeeding55A6BF48',
      ...(requestType === 'Create' ? {} : { PhysicalResourceId: table }),
      ResourceProperties: {
        ServiceToken: 'arn:aws:lambda:us-east-1:123456789012:function:seeder',
        ...artifact.properties,
        ProgramsTable: table,
        StackSecrets: stackSecrets,
      },
    });
    expect(invocation.outcome.kind, invocation.stderr).toBe('response');
    const answers = cloudFormation.requests.slice(before);
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({ method: 'PUT', url: `/cfn-response/${requestId}?${SIGNATURE}` });
    // Signed without a content type: S3 refuses a PUT whose headers differ from the signed ones.
    expect(answers[0]!.headers['content-type']).toBe('');
    const output = invocation.stdout + invocation.stderr;
    expect(output).not.toContain(SIGNATURE.split('=')[1]);
    return { answer: JSON.parse(answers[0]!.body) as Answer, output };
  } finally {
    await container.close();
  }
}

function registryOf(table: string): DynamoDbProgramRegistry {
  return new DynamoDbProgramRegistry({ client: aws.dynamodb, tableName: table });
}

describe('the program seeding provider', () => {
  it("seeds the props' programs as active records of the stack, each with the secret the stack created", async () => {
    const table = await aws.createCheckpointTable();

    const { answer } = await request(created, 'Create', table);

    expect(answer).toMatchObject({
      Status: 'SUCCESS',
      PhysicalResourceId: table,
      LogicalResourceId: 'PollerProgramSeeding55A6BF48',
      Data: { added: 2, updated: 0, removed: 0, unchanged: 0 },
    });
    expect((await registryOf(table).list()).records).toEqual([
      {
        name: 'cards',
        secretId:
          'arn:aws:secretsmanager:us-east-1:123456789012:secret:BankingEventsPoller-Secretcards-AbC123',
        state: 'active',
        owner: 'stack',
        settings: {},
        revision: 1,
      },
      expect.objectContaining({ name: 'loans', owner: 'stack', state: 'active' }),
    ]);
  });

  it("keeps an operator's pause of a stack program and the operator's own programs through an update", async () => {
    const table = await aws.createCheckpointTable();
    const registry = registryOf(table);
    await request(flat, 'Create', table);
    const { revision, ...cards } = (await registry.get('cards'))!;
    await registry.put({ ...cards, state: 'paused' }, revision);
    await registry.put(
      {
        name: 'fx',
        secretId: 'banking-events-poller/BankingEventsPoller/fx',
        state: 'active',
        owner: 'operator',
        settings: {},
      },
      'absent',
    );

    // The next deploy drops deposits from the props.
    const smaller = synthProgramSeederArtifact(path.join(outdir, 'smaller'), {
      programs: [{ name: 'cards' }],
      createProgramSecrets: false,
    });
    const { answer } = await request(smaller, 'Update', table);

    expect(answer).toMatchObject({
      Status: 'SUCCESS',
      PhysicalResourceId: table,
      Data: { removed: 1, unchanged: 1 },
    });
    expect((await registry.list()).records).toEqual([
      expect.objectContaining({
        name: 'cards',
        secretId: 'banking-events-poller/BankingEventsPoller/cards',
        state: 'paused',
        owner: 'stack',
      }),
      expect.objectContaining({ name: 'fx', owner: 'operator', state: 'active' }),
    ]);
  });

  it('fails the deploy, naming the program, when a program of the props was added by an operator, and writes nothing', async () => {
    const table = await aws.createCheckpointTable();
    await registryOf(table).put(
      {
        name: 'deposits',
        secretId: 'banking-events-poller/BankingEventsPoller/deposits',
        state: 'active',
        owner: 'operator',
        settings: {},
      },
      'absent',
    );

    const { answer, output } = await request(flat, 'Create', table);

    expect(answer.Status).toBe('FAILED');
    expect(answer.Reason).toMatch(
      /^PROGRAM_SEED_CONFLICT: Programs of the stack deposits were added by an operator/,
    );
    expect(answer.PhysicalResourceId).toBe(table);
    expect(output).toContain('"code":"PROGRAM_SEED_CONFLICT"');
    expect((await registryOf(table).list()).records.map(({ name }) => name)).toEqual(['deposits']);
  });

  it('removes nothing on a delete: the records stay with the retained table', async () => {
    const table = await aws.createCheckpointTable();
    await request(flat, 'Create', table);

    const { answer } = await request(flat, 'Delete', table);

    expect(answer).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: table });
    expect((await registryOf(table).list()).records).toHaveLength(2);
  });

  it('answers FAILED, naming the property, for a request it cannot read', async () => {
    const table = await aws.createCheckpointTable();

    const { answer } = await request(
      { ...flat, properties: { ...flat.properties, SeedDigest: 'nope' } },
      'Create',
      table,
    );

    expect(answer.Status).toBe('FAILED');
    expect(answer.Reason).toMatch(/ResourceProperties\.SeedDigest must be a SHA-256 digest/);
  });
});
