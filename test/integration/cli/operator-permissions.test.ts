/**
 * The operator grants held against what the CLI really calls. Each command runs against a
 * deployment in moto through a proxy that records every AWS call, signed with the operator's own
 * key; its Lambda calls (operator requests) go through the same proxy to a stand-in for the Invoke
 * API that runs the shipped handler bundle under the runtime harness (moto cannot run it), whose
 * own calls go to moto directly: they are the function role's, not the operator's. The construct
 * is synthesized with the three grants, its statements resolved against moto's resources (the same
 * names and ARNs, the function's from the stack outputs), and IAM's evaluation asked: is every
 * recorded call allowed by the grant its command needs (its action, every resource ARN, its
 * conditions)? And does each grant allow no action that none of its commands calls?
 *
 * COMMANDS is the table the docs' "Operator permissions" section describes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeArchiveCommand,
  DescribeEventBusCommand,
  ListRulesCommand,
  PutEventsCommand,
} from '@aws-sdk/client-eventbridge';
import { GetScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { DescribeSecretCommand } from '@aws-sdk/client-secrets-manager';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DynamoDbCheckpointStore } from '../../../functions/adapters/aws/dynamodb-checkpoint-store.ts';
import { PROBE_SOURCE } from '../../../functions/cli/classic-operator-bus.ts';
import { type RunningSimulator, startSimulator } from '../../../functions/simulator/banking-simulator.ts';
import { BankingEventsPoller } from '../../../infra/constructs/index.ts';
import { cdkJsonContext } from '../../infra/support/poller-app-fixture.ts';
import {
  AwsCallRecorder,
  type PendingAwsCall,
  type RecordedAwsCall,
} from '../../support/aws-call-recorder.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { type CliResult, motoCliEnvironment, type RunningCli, startCli } from '../../support/cli-process.ts';
import {
  actionsOf,
  type IntrinsicBindings,
  isAllowed,
  type PolicyStatement,
  resolveIntrinsics,
} from '../../support/iam-policy-evaluation.ts';
import { LambdaInvokeEndpoint } from '../../support/lambda-invoke-endpoint.ts';
import type { LambdaContainer } from '../../support/lambda-runtime/lambda-container.ts';
import { createMotoDeployment, type MotoDeployment } from '../../support/moto-deployment.ts';
import { pollerLambda } from '../../support/poller-lambda.ts';
import { type AccountScope, authorizationsOf, iamActionOf } from './operator-call-authorization.ts';

type GrantName = 'read' | 'tail' | 'recovery' | 'programs';

interface CommandRow {
  /** As docs/security.md names it. */
  readonly command: string;
  /** The grants a principal needs for it. */
  readonly grants: readonly GrantName[];
  /**
   * Run as a principal holding only `grants`: the calls they do not allow are refused as IAM
   * refuses them, and the command is held to what it does then.
   */
  readonly grantsOnly?: boolean;
  /** Its exit code. @default 0 */
  readonly exitCode?: number;
  /** The operator requests it sends the poller function, in order (their `kind`). */
  readonly operatorRequests?: readonly string[];
  /** Calls the command makes that its grants deliberately do not allow, each with the reason. */
  readonly notGranted?: Readonly<Record<string, string>>;
}

const COMMANDS: readonly CommandRow[] = [
  { command: 'status', grants: ['read'] },
  { command: 'status --checkpoint-table (no --stack)', grants: ['read'] },
  {
    command: 'doctor --no-write-probes',
    grants: ['read', 'recovery'],
    operatorRequests: ['doctor-bank'],
  },
  {
    command: 'doctor --no-write-probes (read grant alone)',
    grants: ['read'],
    grantsOnly: true,
    exitCode: 1,
    notGranted: {
      'lambda:InvokeFunction':
        "the bank checks run in the function, and one action covers every operator request, a replay included: it is the recovery grant's; doctor reports them failed and checks the rest",
    },
  },
  {
    command: 'doctor',
    grants: ['read', 'recovery'],
    operatorRequests: ['doctor-bank'],
    notGranted: {
      'events:PutEvents':
        'the bus write probe: no operator command publishes to the bus (the function does), so no grant allows it; pass --no-write-probes',
    },
  },
  { command: 'tail', grants: ['tail'] },
  { command: 'event', grants: ['recovery'], operatorRequests: ['event'] },
  {
    command: 'event (an answer left in the claim-check bucket)',
    grants: ['recovery'],
    operatorRequests: ['event'],
  },
  { command: 'replay', grants: ['recovery'], operatorRequests: ['replay'] },
  { command: 'rewind --no-feed-check', grants: ['recovery'] },
  { command: 'rewind', grants: ['recovery'], operatorRequests: ['feed-oldest'] },
  { command: 'rewind --to latest', grants: ['recovery'], operatorRequests: ['feed-latest'] },
  { command: 'jumps list', grants: ['read'] },
  { command: 'jumps reject', grants: ['recovery'] },
  { command: 'archive-replay --rule', grants: ['recovery'] },
  { command: 'archive-replay --event-bus (no --stack)', grants: ['recovery'] },
  { command: 'secret set', grants: ['recovery'] },
  { command: 'programs list', grants: ['read'] },
  { command: 'programs add', grants: ['programs'] },
  { command: 'programs pause', grants: ['programs'] },
  { command: 'programs resume', grants: ['programs'] },
  { command: 'programs remove', grants: ['programs'] },
  // A program without a secret of the stack's: <prefix><program>, created at the first write.
  { command: 'secret set --program (created under the prefix)', grants: ['programs'] },
  { command: 'secret set --program (under the prefix)', grants: ['programs'] },
];

/** The operator's key: every call recorded is the CLI's (the function signs with its own, at moto). */
const CLI_KEY = 'operator-cli';

interface RecordedRun {
  readonly result: CliResult;
  readonly calls: readonly RecordedAwsCall[];
  /** The `kind` of each operator request the function served. */
  readonly served: readonly string[];
}

describe('operator permissions: every AWS call of the CLI against the grant it needs', () => {
  let aws: MotoEnvironment;
  let recorder: AwsCallRecorder;
  let simulator: RunningSimulator;
  let invoke: LambdaInvokeEndpoint;
  let pollerFunction: LambdaContainer;
  let deployment: MotoDeployment;
  let functionName: string;
  let cwd: string;
  let scope: AccountScope;
  const statements = new Map<GrantName, PolicyStatement[]>();
  const recorded = new Map<string, RecordedRun>();

  const run = async (
    command: string,
    args: readonly string[],
    options: { stack?: boolean; input?: string; whileRunning?: (cli: RunningCli) => Promise<void> } = {},
  ): Promise<void> => {
    const row = COMMANDS.find((candidate) => candidate.command === command);
    if (row === undefined) throw new Error(`${command} is not in COMMANDS`);
    recorder.clear();
    const servedBefore = invoke.invocations.length;
    if (row.grantsOnly === true) recorder.refuseWhen(refusedBy(row.grants));
    const argv = options.stack === false ? args : ['--stack', deployment.stackName, ...args];
    const env = { ...motoCliEnvironment(recorder.endpoint), AWS_ACCESS_KEY_ID: CLI_KEY };
    const running = startCli(argv, { cwd, env, input: options.input });
    await options.whileRunning?.(running);
    const result = await running.result;
    await recorder.idle();
    recorder.refuseWhen(() => undefined);
    const served = invoke.invocations
      .slice(servedBefore)
      .map((invocation) => (invocation.event as { operatorRequest: { kind: string } }).operatorRequest.kind);
    recorded.set(command, { result, calls: [...recorder.calls], served });
  };

  /**
   * IAM decides before a call is answered. The recorder can only decide here the calls whose
   * resources the request itself names; of those the CLI makes, that is `lambda:InvokeFunction`
   * (the function's name). Every other call of a `grantsOnly` row is held against its grants
   * afterwards, as for every row, and must be allowed.
   */
  const refusedBy =
    (grants: readonly GrantName[]) =>
    (pending: PendingAwsCall): string | undefined => {
      const call: RecordedAwsCall = { ...pending, status: 0, response: undefined };
      if (iamActionOf(call) !== 'lambda:InvokeFunction') return undefined;
      const denied = authorizationsOf(call, scope).filter(
        (request) => !isAllowed(grantStatements(grants), request),
      );
      return denied.length === 0
        ? undefined
        : denied.map((request) => `${request.action} on ${request.resources.join(', ')}`).join('; ');
    };

  beforeAll(async () => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
    simulator = await startSimulator({ seed: 2501, maxPollHoldMs: 300 });
    simulator.generate(5);
    const [program] = simulator.programs;
    const credentials = {
      base_url: simulator.url,
      client_id: program!.clientId,
      client_secret: program!.clientSecret,
    };
    functionName = aws.uniqueName('poller');
    deployment = await createMotoDeployment(aws, JSON.stringify(credentials), {
      pollerFunctionName: functionName,
      claimCheckBucket: true,
      programs: { workers: 2 },
    });
    pollerFunction = pollerLambda({
      artifact: inject('pollerArtifact'),
      motoEndpoint: inject('motoEndpoint'),
      secretId: deployment.secretId,
      checkpointTable: deployment.tableName,
      eventBusName: deployment.busName,
      timeoutMs: 20_000,
      environment: { CLAIM_CHECK_BUCKET: deployment.claimCheckBucket! },
    });
    invoke = await LambdaInvokeEndpoint.start({ [functionName]: pollerFunction });
    recorder = await AwsCallRecorder.start(inject('motoEndpoint'), { routes: { lambda: invoke.endpoint } });
    cwd = await mkdtemp(join(tmpdir(), 'operator-permissions-'));
    const bus = await aws.eventBridge.send(new DescribeEventBusCommand({ Name: deployment.busName }));
    const [, partition, , region, account] = bus.Arn!.split(':');
    scope = { partition: partition!, region: region!, account: account! };

    // The construct's grants, synthesized in a stack of the deployment's name.
    const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, deployment.stackName);
    // As many workers as the deployment in moto: doctor reads each worker's schedule.
    const poller = new BankingEventsPoller(stack, 'Poller', { workers: deployment.programs!.workers });
    const roles = {
      read: new iam.Role(stack, 'Reader', { assumedBy: new iam.AccountRootPrincipal() }),
      tail: new iam.Role(stack, 'Tailer', { assumedBy: new iam.AccountRootPrincipal() }),
      recovery: new iam.Role(stack, 'Recoverer', { assumedBy: new iam.AccountRootPrincipal() }),
      programs: new iam.Role(stack, 'ProgramsAdmin', { assumedBy: new iam.AccountRootPrincipal() }),
    };
    poller.grantOperatorRead(roles.read);
    poller.grantOperatorTail(roles.tail);
    poller.grantOperatorRecovery(roles.recovery);
    poller.grantOperatorPrograms(roles.programs);
    const bindings = await deployedBindings(stack, poller);
    const template = Template.fromStack(stack);
    for (const [grant, role] of Object.entries(roles) as Array<[GrantName, iam.Role]>) {
      const roleId = stack.getLogicalId(role.node.defaultChild as iam.CfnRole);
      const attached = Object.values(template.findResources('AWS::IAM::Policy'))
        .map((resource) => (resource as { Properties: Record<string, unknown> }).Properties)
        .filter((policy) => JSON.stringify(policy.Roles) === JSON.stringify([{ Ref: roleId }]))
        .flatMap((policy) => (policy.PolicyDocument as { Statement: unknown[] }).Statement);
      statements.set(grant, resolveIntrinsics(attached, bindings) as PolicyStatement[]);
    }

    // Every command once, in this order (rewind moves the checkpoint the next one starts from).
    const ruleName = (await aws.eventBridge.send(new ListRulesCommand({ EventBusName: deployment.busName })))
      .Rules![0]!.Name!;
    await run('status', ['status', '--json']);
    await run(
      'status --checkpoint-table (no --stack)',
      ['status', '--checkpoint-table', deployment.tableName, '--json'],
      { stack: false },
    );
    await run('doctor --no-write-probes', ['doctor', '--no-write-probes', '--json']);
    await run('doctor --no-write-probes (read grant alone)', ['doctor', '--no-write-probes', '--json']);
    await run('doctor', ['doctor', '--json']);
    await run('tail', ['tail', '--max-events', '1'], {
      whileRunning: async (tail) => {
        await tail.waitFor('stderr', /Listening on bus/);
        await aws.eventBridge.send(
          new PutEventsCommand({
            Entries: [
              {
                EventBusName: deployment.busName,
                Source: 'banking.events',
                DetailType: 'transaction',
                Detail: JSON.stringify({ id: 'tail-probe', sequence_number: 1 }),
              },
            ],
          }),
        );
      },
    });
    await run('event', ['event', '2']);
    // An event whose answer is larger than Lambda returns: left in the claim-check bucket, read there.
    const large = simulator.append({
      type: 'TRANSACTION',
      data: { transaction_id: 'tx-large', note: 'x'.repeat(4 * 1024 * 1024) },
    });
    await run('event (an answer left in the claim-check bucket)', ['event', String(large.sequence_number)]);
    await run('replay', ['replay', '--from', '1', '--to', '2', '--json']);
    await run('rewind --no-feed-check', ['rewind', '--to', '3', '--yes', '--no-feed-check', '--json']);
    await run('rewind', ['rewind', '--to', '0', '--yes', '--json']);
    await run('rewind --to latest', ['rewind', '--to', 'latest', '--yes', '--json']);
    // A jump held as a run records it (the test's own credentials, not the operator's).
    const store = new DynamoDbCheckpointStore({
      client: aws.dynamodb,
      tableName: deployment.tableName,
      program: 'default',
    });
    const row = await store.read();
    await store.acquireLease({ owner: 'probe-run', now: Date.now(), expiresAt: Date.now() + 60_000 });
    await store.commit({
      owner: 'probe-run',
      sequenceNumber: row.checkpoint ?? 0,
      feedProgramId: row.feedProgramId,
      heldJumps: [
        { sequenceNumber: Number.MAX_SAFE_INTEGER, eventId: 'held', fingerprint: 'f'.repeat(64), heldAt: 1 },
      ],
    });
    await store.releaseLease('probe-run');
    await run('jumps list', ['jumps', 'list', '--json']);
    await run('jumps reject', ['jumps', 'reject', String(Number.MAX_SAFE_INTEGER), '--yes', '--json']);
    await run('archive-replay --rule', [
      'archive-replay',
      '--since',
      '1h',
      '--rule',
      ruleName,
      '--poll-seconds',
      '0.2',
      '--json',
    ]);
    await run(
      'archive-replay --event-bus (no --stack)',
      [
        'archive-replay',
        '--event-bus',
        deployment.busName,
        '--since',
        '1h',
        '--poll-seconds',
        '0.2',
        '--json',
      ],
      { stack: false },
    );
    await run('secret set', ['secret', 'set', '--json'], { input: JSON.stringify(credentials) });
    await run('programs add', ['programs', 'add', 'cards', '--json']);
    await run('programs list', ['programs', 'list', '--json']);
    await run('programs pause', ['programs', 'pause', 'cards', '--json']);
    await run('programs resume', ['programs', 'resume', 'cards', '--json']);
    await run(
      'secret set --program (created under the prefix)',
      ['secret', 'set', '--program', 'cards', '--json'],
      {
        input: JSON.stringify(credentials),
      },
    );
    await run('secret set --program (under the prefix)', ['secret', 'set', '--program', 'cards', '--json'], {
      input: JSON.stringify(credentials),
    });
    await run('programs remove', ['programs', 'remove', 'cards', '--json']);
  }, 300_000);

  afterAll(async () => {
    await recorder?.close();
    await invoke?.close();
    await pollerFunction?.close();
    await simulator?.close();
    if (cwd !== undefined) await rm(cwd, { recursive: true, force: true });
    aws?.restore();
  });

  /** Each intrinsic of the grants' statements → the resource moto holds in its place. */
  async function deployedBindings(stack: Stack, poller: BankingEventsPoller): Promise<IntrinsicBindings> {
    const key = (token: string) => JSON.stringify(stack.resolve(token));
    const table = await aws.dynamodb.send(new DescribeTableCommand({ TableName: deployment.tableName }));
    const programsTable = await aws.dynamodb.send(
      new DescribeTableCommand({ TableName: deployment.programs!.tableName }),
    );
    const archive = await aws.eventBridge.send(
      new DescribeArchiveCommand({ ArchiveName: deployment.archiveName }),
    );
    const secret = await aws.secretsManager.send(
      new DescribeSecretCommand({ SecretId: deployment.secretId }),
    );
    const scheduler = new SchedulerClient({});
    const schedules = await Promise.all(
      deployment.workerScheduleNames.map((name) => scheduler.send(new GetScheduleCommand({ Name: name }))),
    );
    scheduler.destroy();
    const cloudFormation = new CloudFormationClient({});
    const stackOutputs = await cloudFormation.send(
      new DescribeStacksCommand({ StackName: deployment.stackName }),
    );
    cloudFormation.destroy();
    const functionArn = stackOutputs.Stacks![0]!.Outputs!.find(
      (output) => output.OutputKey === 'PollerFunctionArn',
    )!.OutputValue!;
    const busArn = archive.EventSourceArn!;
    return new Map([
      ['AWS::Partition', scope.partition],
      ['AWS::Region', scope.region],
      ['AWS::AccountId', scope.account],
      [key(poller.checkpointTable.tableArn), table.Table!.TableArn!],
      [key(poller.programsTable.tableArn), programsTable.Table!.TableArn!],
      [key(poller.eventBus!.eventBusArn), busArn],
      [key(poller.eventBus!.eventBusName), deployment.busName],
      [key(poller.archive!.archiveArn), archive.ArchiveArn!],
      [key(poller.secrets.get('default')!.secretArn), secret.ARN!],
      ...poller.workerSchedules.map((schedule, worker): [string, string] => [
        key(schedule.scheduleArn),
        schedules[worker]!.Arn!,
      ]),
      [key(poller.pollerFunction.functionArn), functionArn],
      [key(poller.claimCheckBucket.bucketArn), `arn:${scope.partition}:s3:::${deployment.claimCheckBucket!}`],
    ]);
  }

  const callsOf = (row: CommandRow) => {
    const run = recorded.get(row.command);
    if (run === undefined) throw new Error(`${row.command} was not run`);
    return run;
  };
  const grantStatements = (grants: readonly GrantName[]) => grants.flatMap((grant) => statements.get(grant)!);

  it.each(COMMANDS)('$command: every call it makes is allowed by its grants ($grants)', (row) => {
    const { result, calls } = callsOf(row);
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(row.exitCode ?? 0);
    expect(calls.length).toBeGreaterThan(0);
    expect(new Set(calls.map((call) => call.accessKeyId))).toEqual(new Set([CLI_KEY]));
    const denied = new Set(Object.keys(row.notGranted ?? {}));
    const policy = grantStatements(row.grants);
    const refused = calls
      .flatMap((call) => authorizationsOf(call, scope))
      .filter((request) => !denied.has(request.action))
      .filter((request) => !isAllowed(policy, request))
      .map((request) => `${request.action} on ${request.resources.join(', ')}`);
    expect(refused).toEqual([]);
  });

  it.each(COMMANDS.filter((row) => row.notGranted !== undefined))(
    '$command: the calls left out of its grants on purpose are refused by them',
    (row) => {
      const { calls } = callsOf(row);
      const policy = grantStatements(row.grants);
      for (const action of Object.keys(row.notGranted!)) {
        const requests = calls
          .flatMap((call) => authorizationsOf(call, scope))
          .filter((r) => r.action === action);
        expect(
          requests.length,
          `${row.command} no longer calls ${action}: drop it from notGranted`,
        ).toBeGreaterThan(0);
        for (const request of requests) expect(isAllowed(policy, request)).toBe(false);
      }
    },
  );

  it.each(COMMANDS)(
    "$command: its operator requests reach the stack's function and are served there",
    (row) => {
      const { calls, served } = callsOf(row);
      const invocations = calls.filter((call) => iamActionOf(call) === 'lambda:InvokeFunction');

      expect(served).toEqual(row.operatorRequests ?? []);
      expect(invocations.map((call) => call.request.FunctionName)).toEqual(
        invocations.map(() => functionName),
      );
      // A refused invocation is recorded, and never reaches the function.
      expect(invocations.filter((call) => call.status === 200)).toHaveLength(served.length);
    },
  );

  it('doctor with the read grant alone reports its bank checks failed, naming the action, and checks the rest', () => {
    const report = (command: string) => JSON.parse(recorded.get(command)!.result.stdout) as DoctorReport;
    const full = report('doctor --no-write-probes');
    const readOnly = report('doctor --no-write-probes (read grant alone)');
    const bank = ['secret (default)', 'token (default)', 'GET /events (default)'];

    expect(readOnly.ok).toBe(false);
    expect(readOnly.checks.slice(0, 3).map((check) => [check.check, check.verdict])).toEqual([
      [bank[0], 'failed'],
      [bank[1], 'skipped'],
      [bank[2], 'skipped'],
    ]);
    expect(readOnly.checks[0]!.fix).toContain('lambda:InvokeFunction');
    expect(full.checks.slice(0, 3).map((check) => [check.check, check.verdict])).toEqual(
      bank.map((name) => [name, 'ok']),
    );
    expect(readOnly.checks.slice(3)).toEqual(full.checks.slice(3));
    expect(readOnly.checks.slice(3).map((check) => check.verdict)).not.toContain('failed');
  });

  it("no command reads a secret or publishes the poller's events with the operator's credentials, and no grant allows either", () => {
    for (const row of COMMANDS) {
      const { calls } = callsOf(row);
      expect(
        calls.filter((call) => iamActionOf(call) === 'secretsmanager:GetSecretValue'),
        row.command,
      ).toEqual([]);
      const published = calls
        .filter((call) => iamActionOf(call) === 'events:PutEvents')
        .flatMap((call) => call.request.Entries as Array<{ Source: string }>);
      // doctor's probe only, with a source no rule of the stack matches.
      expect(
        published.filter((entry) => entry.Source !== PROBE_SOURCE),
        row.command,
      ).toEqual([]);
    }
    for (const [grant, policy] of statements) {
      expect(
        actionsOf(policy).filter((action) => /^secretsmanager:Get|^events:PutEvents$/i.test(action)),
        grant,
      ).toEqual([]);
    }
  });

  it.each(['read', 'tail', 'recovery', 'programs'] as const)(
    'the %s grant allows no action beyond what its commands call',
    (grant) => {
      const rows = COMMANDS.filter((row) => row.grants.includes(grant));
      const called = new Set(
        rows.flatMap((row) => {
          const denied = new Set(Object.keys(row.notGranted ?? {}));
          return callsOf(row)
            .calls.flatMap((call) => authorizationsOf(call, scope))
            .map((request) => request.action)
            .filter((action) => !denied.has(action));
        }),
      );

      expect(actionsOf(statements.get(grant)!).filter((action) => !called.has(action))).toEqual([]);
    },
  );
});

interface DoctorReport {
  readonly ok: boolean;
  readonly checks: ReadonlyArray<{ check: string; verdict: string; detail: string; fix?: string }>;
}
