/**
 * An upgrade from a stack of per-program schedules (the release before workers) to this one, as
 * CloudFormation runs it, on the shipped bundles under the runtime harness against the simulator
 * and moto. Before: two programs of the props, each with the secret the stack created, their
 * checkpoints written by runs of the old function (`{"program": …}`, `PROGRAM_SECRETS`, no programs
 * table). The update then, in CloudFormation's order: the function's new code and environment, the
 * program seeding (the shipped provider, with the seed list the new template deploys), the
 * workers' schedules, and last the old schedules' deletion, so for a while both fire: old runs
 * still polling meet a worker's run, and an old schedule's tick meets a worker's run still polling.
 *
 * What must hold (test/infra/stateful-resources.test.ts shows no stateful resource is replaced):
 * the old programs become the stack's records with their own secrets; every checkpoint is kept;
 * each program has one holder at a time, every run starting from the checkpoint the one before it
 * released; every event is published once, none twice, none missed. For each bus, and each way of
 * reading the feed (poll; the stream, its transactions read from pages on the classic bus and looked
 * up on the custom bus), kept lean: six runs per case.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateSecretCommand } from '@aws-sdk/client-secrets-manager';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { DynamoDbProgramRegistry } from '../../../functions/adapters/aws/dynamodb-program-registry.ts';
import { EventBridgeV2Rpc } from '../../../functions/adapters/aws/eventbridgev2/rpc-v2-cbor-client.ts';
import type { WorkerSummary } from '../../../functions/core/fleet/worker-summary.ts';
import type { CycleSummary } from '../../../functions/core/poll-cycle.ts';
import { type RunningSimulator, startSimulator } from '../../../functions/simulator/banking-simulator.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { type CustomBus, startCustomBus } from '../../support/custom-bus/index.ts';
import { type FeedModeCase, POLL_MODES, STREAM_MODES } from '../../support/feed-modes.ts';
import { type Invocation, LambdaContainer } from '../../support/lambda-runtime/lambda-container.ts';
import { type ProgramSeederArtifact, synthProgramSeederArtifact } from '../../support/poller-artifact.ts';
import { pollerLambda } from '../../support/poller-lambda.ts';
import { type ScriptedHttpServer, startScriptedServer } from '../../support/scripted-http-server.ts';
import { createQueue } from '../../support/sqs-queues.ts';

const PROGRAMS = ['cards', 'loans'] as const;

interface UpgradeCase {
  readonly name: string;
  readonly bus: 'classic' | 'custom';
  readonly feed: FeedModeCase;
}

const CASES: readonly UpgradeCase[] = [
  { name: 'classic bus, poll', bus: 'classic', feed: POLL_MODES[0]! },
  { name: 'classic bus, stream', bus: 'classic', feed: STREAM_MODES[0]! },
  { name: 'custom bus, poll', bus: 'custom', feed: POLL_MODES[0]! },
  { name: 'custom bus, stream', bus: 'custom', feed: STREAM_MODES[1]! },
];

let aws: MotoEnvironment;
let outdir: string;
let seeder: ProgramSeederArtifact;
let cloudFormation: ScriptedHttpServer;
let customBus: CustomBus;
let rpc: EventBridgeV2Rpc;
let seed = 4_100;
const containers: LambdaContainer[] = [];
const simulators: RunningSimulator[] = [];

beforeAll(async () => {
  aws = useMotoEnvironment(inject('motoEndpoint'));
  outdir = mkdtempSync(path.join(tmpdir(), 'upgrade-artifact-'));
  // The new template of a stack whose props name the two programs (their secrets created by the stack).
  seeder = synthProgramSeederArtifact(outdir, { programs: PROGRAMS.map((name) => ({ name })) });
  cloudFormation = await startScriptedServer((_request, response) => {
    response.writeHead(200).end();
  });
  customBus = await startCustomBus({ motoEndpoint: inject('motoEndpoint'), seed: 35 });
  rpc = new EventBridgeV2Rpc({
    client: {
      config: {
        credentials: async () => ({ accessKeyId: 'testing', secretAccessKey: 'testing' }),
        region: async () => customBus.region,
        useFipsEndpoint: async () => false,
      },
    },
    env: { AWS_ENDPOINT_URL_EVENTBRIDGEV2: customBus.endpoint },
  });
});

afterEach(async () => {
  const output = containers.map((container) => container.output).join('\n');
  const secrets = simulators.flatMap((simulator) => [
    ...simulator.programs.map((program) => program.clientSecret),
    ...simulator.issuedTokens(),
  ]);
  for (const container of containers.splice(0)) await container.close();
  for (const simulator of simulators.splice(0)) await simulator.close();
  expect(secrets.filter((secret) => output.includes(secret))).toEqual([]);
});

afterAll(async () => {
  await customBus?.close();
  await cloudFormation?.close();
  rmSync(outdir, { recursive: true, force: true });
  aws?.restore();
});

/** A bus and a queue receiving every event published to it, of the case's kind. */
async function recordingBus(kind: UpgradeCase['bus']): Promise<{
  environment: Record<string, string>;
  drain(): Promise<string[]>;
}> {
  if (kind === 'classic') {
    const bus = await aws.createRecordedBus();
    return {
      environment: { EVENT_BUS_NAME: bus.busName },
      drain: async () =>
        (await aws.drainQueue(bus.queueUrl)).map((message) => (message.detail as { id: string }).id),
    };
  }
  const created = await rpc.call<{ EventBusArn: string }>('CreateEventBus', { Name: aws.uniqueName('bank') });
  for (let describes = 0; ; describes += 1) {
    const described = await rpc.call<{ State: string }>('DescribeEventBus', {
      EventBusArn: created.EventBusArn,
    });
    if (described.State === 'ACTIVE') break;
    if (describes === 10) throw new Error(`bus still ${described.State}`);
  }
  const queue = await createQueue(aws.sqs, aws.uniqueName('upgrade'));
  const queueUrl = queue.url;
  await rpc.call('CreateSubscriber', {
    Name: aws.uniqueName('all'),
    EventBusArn: created.EventBusArn,
    Type: 'UNORDERED',
    InvokeConfiguration: {
      RoleArn: 'arn:aws:iam::123456789012:role/subscriber-delivery',
      TargetArn: queue.arn,
    },
  });
  return {
    environment: {
      EVENT_BUS_KIND: 'custom',
      EVENT_BUS_NAME: created.EventBusArn,
      AWS_ENDPOINT_URL_EVENTBRIDGEV2: customBus.endpoint,
    },
    drain: async () => {
      await customBus.settled();
      return (await aws.drainQueue(queueUrl)).map((message) => (message.detail as { id: string }).id);
    },
  };
}

/** Runs the shipped seeding provider once, as CloudFormation's Create, and returns its answer. */
async function seedPrograms(
  table: string,
  stackSecrets: Record<string, string>,
): Promise<Record<string, unknown>> {
  const container = new LambdaContainer({
    codeDir: seeder.codeDir,
    handler: seeder.handler,
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
  containers.push(container);
  const before = cloudFormation.requests.length;
  const invocation = await container.invoke({
    RequestType: 'Create',
    ResponseURL: `${cloudFormation.baseUrl}/cfn/${aws.uniqueName('r')}?X-Amz-Signature=abc`,
    StackId: 'arn:aws:cloudformation:us-east-1:123456789012:stack/BankingEventsPoller/1',
    RequestId: aws.uniqueName('request'),
    ResourceType: 'Custom::ProgramSeeding',
    LogicalResourceId: 'PollerProgramSeeding55A6BF48',
    ResourceProperties: { ...seeder.properties, ProgramsTable: table, StackSecrets: stackSecrets },
  });
  expect(invocation.outcome.kind).toBe('response');
  return JSON.parse(cloudFormation.requests[before]!.body) as Record<string, unknown>;
}

function result<T>(invocation: Invocation): T {
  if (invocation.outcome.kind !== 'response') {
    throw new Error(
      `Expected a response, got ${JSON.stringify(invocation.outcome)}\n${invocation.stdout.slice(-3000)}`,
    );
  }
  return invocation.outcome.result as T;
}

/** The "Cycle finished" line of each program's cycle in a worker's output, by program. */
function cyclesOf(invocation: Invocation): Map<string, CycleSummary> {
  const cycles = new Map<string, CycleSummary>();
  for (const line of invocation.stdout.split('\n')) {
    if (!line.includes('"Cycle finished"')) continue;
    const entry = JSON.parse(line) as CycleSummary & { program: string };
    cycles.set(entry.program, entry);
  }
  return cycles;
}

describe('an upgrade from per-program schedules to workers', () => {
  it.each(CASES)(
    '$name: records seeded, checkpoints and secrets kept, one holder at a time, no event missed or twice',
    async (upgrade) => {
      seed += 1;
      const bank = await startSimulator({
        seed,
        programs: PROGRAMS.map(() => ({})),
        maxPollHoldMs: 500,
        unknownTypeRatio: 0,
        ...upgrade.feed.simulator,
      });
      simulators.push(bank);
      const programId = new Map(PROGRAMS.map((name, index) => [name, bank.programs[index]!.programId]));
      const bus = await recordingBus(upgrade.bus);
      const checkpointTable = await aws.createCheckpointTable();
      // The secrets the old stack created (Secret<Program>), under CloudFormation's names.
      const secretArns = new Map<string, string>();
      for (const [index, name] of PROGRAMS.entries()) {
        const program = bank.programs[index]!;
        const created = await aws.secretsManager.send(
          new CreateSecretCommand({
            Name: aws.uniqueName(`BankingEventsPoller-Secret${name}`),
            SecretString: JSON.stringify({
              base_url: bank.url,
              client_id: program.clientId,
              client_secret: program.clientSecret,
            }),
          }),
        );
        secretArns.set(name, created.ARN!);
      }
      // The function's environment before the upgrade (the program bindings only), and after it.
      const old = {
        DEFAULT_PROGRAM: 'cards',
        PROGRAM_SECRETS: JSON.stringify({ loans: secretArns.get('loans') }),
        ...upgrade.feed.environment,
        ...bus.environment,
      };
      const function_ = (
        environment: Record<string, string>,
        options: { timeoutMs: number; leaseWaitMs?: number },
      ) => {
        const container = pollerLambda({
          artifact: inject('pollerArtifact'),
          motoEndpoint: inject('motoEndpoint'),
          secretId: secretArns.get('cards')!,
          checkpointTable,
          eventBusName: bus.environment.EVENT_BUS_NAME!,
          timeoutMs: options.timeoutMs,
          environment: {
            ...environment,
            ...(options.leaseWaitMs === undefined ? {} : { LEASE_WAIT_MS: String(options.leaseWaitMs) }),
          },
        });
        containers.push(container);
        return container;
      };
      // The artifact's environment is this release's: the old function had no programs table.
      const before = { ...old, PROGRAMS_TABLE: '', SECRETS_PREFIX: '', WORKER_COUNT: '' };
      const generated: string[] = [];
      const generate = (count: number) => {
        for (const name of PROGRAMS) {
          generated.push(
            ...bank.generate(count, { programId: programId.get(name) }).map((event) => event.id),
          );
        }
      };

      // Before: the old function's runs have checkpointed both programs.
      generate(5);
      const settled = await Promise.all(
        PROGRAMS.map((program) => function_(before, { timeoutMs: 4_000 }).invoke({ program })),
      );
      const checkpointsBefore = new Map(
        PROGRAMS.map((program, index) => [program, result<CycleSummary>(settled[index]!).checkpoint]),
      );

      // The update: the program seeding first (the workers' schedules depend on it).
      const programsTable = await aws.createCheckpointTable();
      const after = {
        ...old,
        PROGRAMS_TABLE: programsTable,
        SECRETS_PREFIX: 'banking-events-poller/BankingEventsPoller/',
        WORKER_COUNT: '1',
      };
      // The worker's container is warm (the new function has run there: with no record yet, it
      // polls nothing), so its tick reaches the leases while the old runs hold them instead of
      // racing their end with a cold start.
      const workerContainer = function_(after, { timeoutMs: 14_000, leaseWaitMs: 12_000 });
      expect(result<WorkerSummary>(await workerContainer.invoke({ worker: 0 })).programs).toMatchObject({
        assigned: 0,
      });
      const answer = await seedPrograms(programsTable, Object.fromEntries(secretArns));

      // Old runs polling (the old function, its last ticks) when the first worker's tick arrives:
      // the worker waits for each lease. An old schedule's tick then arrives while the worker polls.
      generate(4);
      const legacy = PROGRAMS.map((program) => function_(before, { timeoutMs: 8_000 }).invoke({ program }));
      await leasesHeld(checkpointTable, PROGRAMS, legacy);
      const worker = workerContainer.invoke({ worker: 0 });
      generate(3);
      const legacyRuns = await Promise.all(legacy);
      // Only the worker can publish these: the old runs are over. The tick comes once it polls.
      generate(2);
      await leasesHeld(checkpointTable, ['loans'], [worker]);
      const late = function_(after, { timeoutMs: 12_000, leaseWaitMs: 8_000 }).invoke({ program: 'loans' });
      const workerRun = await worker;
      // Only the late tick can publish these (loans' only: nothing polls cards any more).
      generated.push(...bank.generate(2, { programId: programId.get('loans') }).map((event) => event.id));
      const lateRun = await late;

      // The old programs are the stack's records, each with the secret it had.
      expect(answer).toMatchObject({ Status: 'SUCCESS', Data: { added: 2 } });
      const registry = new DynamoDbProgramRegistry({ client: aws.dynamodb, tableName: programsTable });
      expect((await registry.list()).records).toEqual(
        PROGRAMS.map((name) =>
          expect.objectContaining({ name, secretId: secretArns.get(name), owner: 'stack', state: 'active' }),
        ),
      );
      // One holder at a time: each run started from the checkpoint the one before it released.
      const legacyCycles = new Map(
        PROGRAMS.map((program, index) => [program, result<CycleSummary>(legacyRuns[index]!)]),
      );
      const workerCycles = cyclesOf(workerRun);
      expect(result<WorkerSummary>(workerRun).programs).toMatchObject({
        assigned: 2,
        completed: 2,
        leaseBusy: 0,
      });
      const lateCycle = result<CycleSummary>(lateRun);
      // The worker came while the old runs held both leases, and the late tick while it held loans'.
      const timeline = JSON.stringify({
        legacy: [...legacyCycles.values()].map(({ program, status, durationMs, stopReason }) => ({
          program,
          status,
          durationMs,
          stopReason,
        })),
        worker: [...workerCycles.values()].map(({ program, status, durationMs, stopReason }) => ({
          program,
          status,
          durationMs,
          stopReason,
        })),
        late: { status: lateCycle.status, durationMs: lateCycle.durationMs },
      });
      for (const program of PROGRAMS) {
        expect(waitedForTheLease(workerRun, program), `${program} ${timeline}`).toBe(true);
      }
      expect(waitedForTheLease(lateRun, 'loans'), timeline).toBe(true);
      for (const program of PROGRAMS) {
        expect(legacyCycles.get(program)).toMatchObject({
          status: 'completed',
          startCheckpoint: checkpointsBefore.get(program),
        });
        expect(workerCycles.get(program), program).toMatchObject({
          status: 'completed',
          startCheckpoint: legacyCycles.get(program)!.checkpoint,
        });
      }
      expect(lateCycle).toMatchObject({
        status: 'completed',
        startCheckpoint: workerCycles.get('loans')!.checkpoint,
      });
      const last = (program: (typeof PROGRAMS)[number]) =>
        bank.events(programId.get(program)).at(-1)!.sequence_number;
      expect(workerCycles.get('cards')!.checkpoint).toBe(last('cards'));
      expect(lateCycle.checkpoint).toBe(last('loans'));
      expect(await checkpointOf(checkpointTable, 'loans')).toBe(last('loans'));
      // Every event once: published once by the runs together, and delivered once to the bus's queue.
      const published = [
        ...settled.map((run) => result<CycleSummary>(run).published),
        ...[...legacyCycles.values()].map((cycle) => cycle.published),
        ...[...workerCycles.values()].map((cycle) => cycle.published),
        lateCycle.published,
      ].reduce((sum, count) => sum + count, 0);
      expect(published).toBe(generated.length);
      expect((await bus.drain()).sort()).toEqual([...generated].sort());
    },
  );
});

/** Whether a run found the program's lease held and waited for it (its log says so). */
function waitedForTheLease(invocation: Invocation, program: string): boolean {
  return invocation.stdout
    .split('\n')
    .some(
      (line) =>
        line.includes('"Another invocation holds the lease; waiting for it to hand over"') &&
        (JSON.parse(line) as { program?: string }).program === program,
    );
}

/**
 * Resolves once the programs' leases are held (by the runs the test awaits: no one else polls
 * them then), or those runs are over.
 */
async function leasesHeld(
  table: string,
  programs: readonly string[],
  runs: readonly Promise<unknown>[],
): Promise<void> {
  let over = false;
  void Promise.allSettled(runs).then(() => {
    over = true;
  });
  while (!over) {
    const owners = await Promise.all(
      programs.map(
        async (program) =>
          (
            await aws.dynamodb.send(
              new GetItemCommand({
                TableName: table,
                Key: { pk: { S: `program#${program}` } },
                ConsistentRead: true,
              }),
            )
          ).Item?.lease_owner?.S,
      ),
    );
    if (owners.every((owner) => owner !== undefined)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function checkpointOf(table: string, program: string): Promise<number | null> {
  const item = await aws.dynamodb.send(
    new GetItemCommand({ TableName: table, Key: { pk: { S: `program#${program}` } }, ConsistentRead: true }),
  );
  const value = item.Item?.checkpoint?.N;
  return value === undefined ? null : Number(value);
}
