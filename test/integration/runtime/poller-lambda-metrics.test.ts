/**
 * What the shipped function sends CloudWatch, read off its output under the runtime harness: under
 * `PROGRAM_METRICS=alarmed` (a fleet's per-condition alarms) a program's own metrics only while
 * something is wrong, everything once for the deployment; under the default `all` every metric
 * with its `Program`; and a run without a healthy cycle counted in `StalledRuns` either way.
 */
import { CreateSecretCommand } from '@aws-sdk/client-secrets-manager';
import { Duration } from 'aws-cdk-lib';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { DynamoDbProgramRegistry } from '../../../functions/adapters/aws/dynamodb-program-registry.ts';
import type { WorkerSummary } from '../../../functions/core/fleet/worker-summary.ts';
import { SETTINGS } from '../../../functions/settings/settings.ts';
import { type RunningSimulator, startSimulator } from '../../../functions/simulator/banking-simulator.ts';
import { PollerMetrics } from '../../../infra/constructs/poller-metrics.ts';
import type { LambdaContainer } from '../../support/lambda-runtime/lambda-container.ts';
import { emfDocuments, pollerLambda, summaryOf, usePollerScenarios } from '../../support/poller-lambda.ts';

const scenarios = usePollerScenarios(3_800);
const scenario = scenarios.start;

/** What the worker test opened: closed, and its output scanned for the banks' secrets, afterwards. */
const opened: { simulators: RunningSimulator[]; containers: LambdaContainer[] } = {
  simulators: [],
  containers: [],
};
afterEach(async () => {
  const secrets = opened.simulators.flatMap((simulator) => [
    ...simulator.programs.map((program) => program.clientSecret),
    ...simulator.issuedTokens(),
  ]);
  const output = opened.containers.map((container) => container.output).join('\n');
  for (const container of opened.containers.splice(0)) await container.close();
  for (const simulator of opened.simulators.splice(0)) await simulator.close();
  expect(secrets.filter((secret) => output.includes(secret))).toEqual([]);
});

type Emf = Record<string, unknown> & {
  _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] };
};

const documents = (stdout: string): Emf[] => emfDocuments(stdout) as Emf[];
const dimensionsOf = (document: Emf): string[][] => document._aws.CloudWatchMetrics[0]!.Dimensions;
const ofProgram = (document: Emf): boolean => dimensionsOf(document).flat().includes('Program');

describe('PROGRAM_METRICS=alarmed: a fleet', () => {
  it("sends a healthy program's run for the deployment only: no metric of its own", async () => {
    const s = await scenario({ environment: { PROGRAM_METRICS: 'alarmed' } });
    s.simulator.generate(5);

    const invocation = await s.invoke();

    expect(summaryOf(invocation)).toMatchObject({ status: 'completed', published: 5 });
    const emf = documents(invocation.stdout);
    expect(emf.filter(ofProgram)).toEqual([]);
    expect(emf).toHaveLength(1);
    expect(dimensionsOf(emf[0]!)).toEqual([['service']]);
    expect(emf[0]).toMatchObject({ EventsPublished: 5, CycleDurationMs: expect.any(Number) });
    expect(emf[0]).not.toHaveProperty('CheckpointSequence');
    expect(emf[0]).not.toHaveProperty('StalledRuns');
  });

  it('names a run that failed with its Program, in StalledRuns, beside the deployment-wide counts', async () => {
    const s = await scenario({ environment: { PROGRAM_METRICS: 'alarmed' } });
    s.simulator.generate(2);
    s.simulator.faults.malformedNext(1, 'bad-schema');

    const failed = await s.invoke();

    expect(failed.outcome).toMatchObject({ kind: 'error', errorType: 'PayloadValidationError' });
    const emf = documents(failed.stdout);
    const [program, ...others] = emf.filter(ofProgram);
    expect(others).toEqual([]);
    expect(dimensionsOf(program!)).toEqual([['service', 'Program']]);
    expect(program).toMatchObject({ Program: s.program, StalledRuns: 1 });
    expect(program).not.toHaveProperty('PollRequests');
    expect(emf.filter((document) => !ofProgram(document))).toEqual([
      expect.objectContaining({ PollRequests: 1, StalledRuns: 1 }),
    ]);
  });
});

describe('PROGRAM_METRICS unset (all): a few programs, each with its own alarms', () => {
  it('sends every metric of the run with its Program, a failed run counted in StalledRuns', async () => {
    const s = await scenario();
    s.simulator.generate(2);
    s.simulator.faults.malformedNext(1, 'bad-schema');

    const failed = await s.invoke();
    const healthy = await s.invoke();

    expect(documents(failed.stdout)).toEqual([
      expect.objectContaining({ Program: s.program, PollRequests: 1, StalledRuns: 1 }),
    ]);
    expect(summaryOf(healthy).published).toBe(2);
    const [metrics, ...rest] = documents(healthy.stdout);
    expect(rest).toEqual([]);
    expect(metrics).toMatchObject({
      Program: s.program,
      EventsPublished: 2,
      CycleDurationMs: expect.any(Number),
    });
    expect(metrics).not.toHaveProperty('StalledRuns');
  });
});

describe("PROGRAM_METRICS=alarmed: a worker's run", () => {
  it("names only the program in trouble, sends every program's counts for the deployment, and the worker's own with its Worker", async () => {
    const { aws } = scenarios;
    const bank = await startSimulator({
      seed: 3_900,
      programs: [{}, {}, {}],
      maxPollHoldMs: 500,
      unknownTypeRatio: 0,
    });
    opened.simulators.push(bank);
    bank.generate(3, { programId: bank.programs[0]!.programId });
    bank.generate(3, { programId: bank.programs[1]!.programId });
    const prefix = `${aws.uniqueName('bep')}/`;
    const programsTable = await aws.createCheckpointTable();
    const checkpointTable = await aws.createCheckpointTable();
    const registry = new DynamoDbProgramRegistry({ client: aws.dynamodb, tableName: programsTable });
    const names = ['healthy-a', 'healthy-b', 'revoked'];
    for (const [index, name] of names.entries()) {
      const program = bank.programs[index]!;
      const secretId = `${prefix}${name}`;
      const clientSecret = name === 'revoked' ? 'not-the-secret-it-was-given' : program.clientSecret;
      await aws.secretsManager.send(
        new CreateSecretCommand({
          Name: secretId,
          SecretString: JSON.stringify({
            base_url: bank.url,
            client_id: program.clientId,
            client_secret: clientSecret,
          }),
        }),
      );
      await registry.put({ name, secretId, state: 'active', owner: 'operator', settings: {} }, 'absent');
    }
    const bus = await aws.createRecordedBus();
    const container = pollerLambda({
      artifact: inject('pollerArtifact'),
      motoEndpoint: inject('motoEndpoint'),
      secretId: `${prefix}healthy-a`,
      checkpointTable,
      eventBusName: bus.busName,
      timeoutMs: 8_000,
      environment: {
        DEFAULT_PROGRAM: 'healthy-a',
        PROGRAMS_TABLE: programsTable,
        SECRETS_PREFIX: prefix,
        WORKER_COUNT: '1',
        PROGRAM_METRICS: 'alarmed',
      },
    });
    opened.containers.push(container);

    const run = await container.invoke({ worker: 0 });

    expect(run.outcome.kind).toBe('response');
    const summary = (run.outcome as { result: WorkerSummary }).result;
    expect(summary.programs).toMatchObject({ assigned: 3, completed: 2, failed: 1 });
    const emf = documents(run.stdout);
    // The one program in trouble has a document of its own; the healthy ones none.
    expect(emf.filter(ofProgram)).toEqual([
      expect.objectContaining({ Program: 'revoked', CycleFailures: 1, StalledRuns: 1 }),
    ]);
    // What the construct's stall alarm over every program reads is exactly that document: its
    // namespace, its dimension set (SCHEMA), its service (WHERE), its Program (GROUP BY).
    const query = new PollerMetrics(SETTINGS.metricsNamespace.default).programsQuery('StalledRuns', {
      aggregate: 'SUM',
      period: Duration.minutes(1),
    }).expression;
    const [, namespace, groupedBy, service] =
      /^SELECT SUM\("StalledRuns"\) FROM SCHEMA\("([^"]+)", "(\w+)", "service"\) WHERE "service" = '([^']+)' GROUP BY "\2"/.exec(
        query,
      )!;
    const [named] = emf.filter(ofProgram);
    const directive = named!._aws.CloudWatchMetrics[0]!;
    expect(directive.Namespace).toBe(namespace);
    expect(directive.Dimensions).toEqual([['service', groupedBy]]);
    expect(directive.Metrics.map((metric) => metric.Name)).toContain('StalledRuns');
    expect(named).toMatchObject({ service, [groupedBy!]: 'revoked' });
    const deployment = emf.filter((document) => dimensionsOf(document).every((set) => set.length === 1));
    expect(deployment.reduce((sum, document) => sum + Number(document.EventsPublished ?? 0), 0)).toBe(6);
    expect(deployment.filter((document) => typeof document.CycleDurationMs === 'number')).toHaveLength(2);
    const worker = emf.filter((document) => dimensionsOf(document).flat().includes('Worker'));
    expect(worker).toEqual([expect.objectContaining({ Worker: '0', WorkerDurationMs: expect.any(Number) })]);
    expect(dimensionsOf(worker[0]!)).toEqual([['service', 'Worker']]);
  });
});
