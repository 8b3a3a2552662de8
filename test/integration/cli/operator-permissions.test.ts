/**
 * The operator grants held against what the CLI really calls. Each command runs against a
 * deployment in moto through a proxy that records every AWS call; the construct is synthesized
 * with the three grants, its statements resolved against moto's resources (the same names and
 * ARNs), and IAM's evaluation asked: is every recorded call allowed by the grant its command
 * needs (its action, every resource ARN, its conditions)? And does each grant allow no action
 * that none of its commands calls?
 *
 * COMMANDS is the table the docs' "Operator permissions" section describes. Rows marked
 * `pendingOpreq` still read the secret and talk to the bank from the CLI (`GetSecretValue`, and
 * `PutEvents` for replay): once operator requests run inside the function (issue 25, branch
 * opreq), they call `lambda:InvokeFunction` instead. At that merge, delete each `pendingOpreq`
 * (the test then fails until it is: it checks that the moved calls are still made) and let the
 * recovery grant's `lambda:InvokeFunction` be covered by the recorded calls.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
import { type RunningSimulator, startSimulator } from '../../../functions/simulator/banking-simulator.ts';
import { BankingEventsPoller } from '../../../infra/constructs/index.ts';
import { cdkJsonContext } from '../../infra/support/poller-app-fixture.ts';
import { AwsCallRecorder, type RecordedAwsCall } from '../../support/aws-call-recorder.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { type CliResult, motoCliEnvironment, type RunningCli, startCli } from '../../support/cli-process.ts';
import {
  actionsOf,
  type IntrinsicBindings,
  isAllowed,
  type PolicyStatement,
  resolveIntrinsics,
} from '../../support/iam-policy-evaluation.ts';
import { createMotoDeployment, type MotoDeployment } from '../../support/moto-deployment.ts';
import { type AccountScope, authorizationsOf, iamActionOf } from './operator-call-authorization.ts';

type GrantName = 'read' | 'tail' | 'recovery';

interface CommandRow {
  /** As docs/deploy.md names it. */
  readonly command: string;
  /** The grants a principal needs for it. */
  readonly grants: readonly GrantName[];
  /**
   * Calls the CLI makes today that move into the function with operator requests (branch opreq),
   * replaced there by `lambda:InvokeFunction`, which the recovery grant allows (a doctor row then
   * needs `recovery` beside `read`). Remove at that merge.
   */
  readonly pendingOpreq?: readonly string[];
  /** Calls the command makes that its grants deliberately do not allow, each with the reason. */
  readonly notGranted?: Readonly<Record<string, string>>;
}

const BANK_CALLS = ['secretsmanager:GetSecretValue'];

const COMMANDS: readonly CommandRow[] = [
  { command: 'status', grants: ['read'] },
  { command: 'status --checkpoint-table (no --stack)', grants: ['read'] },
  { command: 'doctor --no-write-probes', grants: ['read'], pendingOpreq: BANK_CALLS },
  {
    command: 'doctor',
    grants: ['read', 'recovery'],
    pendingOpreq: BANK_CALLS,
    notGranted: {
      'events:PutEvents':
        'the bus write probe: no operator command publishes to the bus (the function does), so no grant allows it; pass --no-write-probes',
    },
  },
  { command: 'tail', grants: ['tail'] },
  { command: 'event', grants: ['recovery'], pendingOpreq: BANK_CALLS },
  {
    command: 'replay',
    grants: ['recovery'],
    pendingOpreq: [...BANK_CALLS, 'events:PutEvents'],
  },
  { command: 'rewind --no-feed-check', grants: ['recovery'] },
  { command: 'rewind', grants: ['recovery'], pendingOpreq: BANK_CALLS },
  { command: 'rewind --to latest', grants: ['recovery'], pendingOpreq: BANK_CALLS },
  { command: 'archive-replay --rule', grants: ['recovery'] },
  { command: 'archive-replay --event-bus (no --stack)', grants: ['recovery'] },
  { command: 'secret set', grants: ['recovery'] },
];

/**
 * The operator requests (`event`, `replay`, rewind's feed reads, doctor's bank checks) go to the
 * function: the recovery grant allows it, the CLI calls it once opreq has landed.
 */
const OPERATOR_REQUEST = 'lambda:InvokeFunction';

/** The function the operator requests go to; moto runs no Lambda, so it is named, not created. */
const FUNCTION_ARN = 'arn:aws:lambda:us-east-1:123456789012:function:poller';

describe('operator permissions: every AWS call of the CLI against the grant it needs', () => {
  let aws: MotoEnvironment;
  let recorder: AwsCallRecorder;
  let simulator: RunningSimulator;
  let deployment: MotoDeployment;
  let cwd: string;
  let scope: AccountScope;
  const statements = new Map<GrantName, PolicyStatement[]>();
  const recorded = new Map<string, { result: CliResult; calls: readonly RecordedAwsCall[] }>();

  const run = async (
    command: string,
    args: readonly string[],
    options: { stack?: boolean; input?: string; whileRunning?: (cli: RunningCli) => Promise<void> } = {},
  ): Promise<void> => {
    recorder.clear();
    const argv = options.stack === false ? args : ['--stack', deployment.stackName, ...args];
    const running = startCli(argv, { cwd, env: motoCliEnvironment(recorder.endpoint), input: options.input });
    await options.whileRunning?.(running);
    const result = await running.result;
    await recorder.idle();
    recorded.set(command, { result, calls: [...recorder.calls] });
  };

  beforeAll(async () => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
    recorder = await AwsCallRecorder.start(inject('motoEndpoint'));
    simulator = await startSimulator({ seed: 2501, maxPollHoldMs: 300 });
    simulator.generate(5);
    const [program] = simulator.programs;
    const credentials = {
      base_url: simulator.url,
      client_id: program!.clientId,
      client_secret: program!.clientSecret,
    };
    deployment = await createMotoDeployment(aws, JSON.stringify(credentials));
    cwd = await mkdtemp(join(tmpdir(), 'operator-permissions-'));
    const bus = await aws.eventBridge.send(new DescribeEventBusCommand({ Name: deployment.busName }));
    const [, partition, , region, account] = bus.Arn!.split(':');
    scope = { partition: partition!, region: region!, account: account! };

    // The construct's grants, synthesized in a stack of the deployment's name.
    const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, deployment.stackName);
    const poller = new BankingEventsPoller(stack, 'Poller');
    const roles = {
      read: new iam.Role(stack, 'Reader', { assumedBy: new iam.AccountRootPrincipal() }),
      tail: new iam.Role(stack, 'Tailer', { assumedBy: new iam.AccountRootPrincipal() }),
      recovery: new iam.Role(stack, 'Recoverer', { assumedBy: new iam.AccountRootPrincipal() }),
    };
    poller.grantOperatorRead(roles.read);
    poller.grantOperatorTail(roles.tail);
    poller.grantOperatorRecovery(roles.recovery);
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
    await run('replay', ['replay', '--from', '1', '--to', '2', '--json']);
    await run('rewind --no-feed-check', ['rewind', '--to', '3', '--yes', '--no-feed-check', '--json']);
    await run('rewind', ['rewind', '--to', '0', '--yes', '--json']);
    await run('rewind --to latest', ['rewind', '--to', 'latest', '--yes', '--json']);
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
  }, 300_000);

  afterAll(async () => {
    await recorder?.close();
    await simulator?.close();
    if (cwd !== undefined) await rm(cwd, { recursive: true, force: true });
    aws?.restore();
  });

  /** Each intrinsic of the grants' statements → the resource moto holds in its place. */
  async function deployedBindings(stack: Stack, poller: BankingEventsPoller): Promise<IntrinsicBindings> {
    const key = (token: string) => JSON.stringify(stack.resolve(token));
    const table = await aws.dynamodb.send(new DescribeTableCommand({ TableName: deployment.tableName }));
    const archive = await aws.eventBridge.send(
      new DescribeArchiveCommand({ ArchiveName: deployment.archiveName }),
    );
    const secret = await aws.secretsManager.send(
      new DescribeSecretCommand({ SecretId: deployment.secretId }),
    );
    const scheduler = new SchedulerClient({});
    const schedule = await scheduler.send(new GetScheduleCommand({ Name: deployment.scheduleName }));
    scheduler.destroy();
    const busArn = archive.EventSourceArn!;
    return new Map([
      ['AWS::Partition', scope.partition],
      ['AWS::Region', scope.region],
      ['AWS::AccountId', scope.account],
      [key(poller.checkpointTable.tableArn), table.Table!.TableArn!],
      [key(poller.eventBus.eventBusArn), busArn],
      [key(poller.eventBus.eventBusName), deployment.busName],
      [key(poller.archive.archiveArn), archive.ArchiveArn!],
      [key(poller.secrets.get('default')!.secretArn), secret.ARN!],
      [key(poller.schedules.get('default')!.scheduleArn), schedule.Arn!],
      [key(poller.pollerFunction.functionArn), FUNCTION_ARN],
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
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(calls.length).toBeGreaterThan(0);
    const moved = new Set(row.pendingOpreq ?? []);
    const denied = new Set(Object.keys(row.notGranted ?? {}));
    const policy = grantStatements(row.grants);
    const refused = calls
      .flatMap((call) => authorizationsOf(call, scope))
      .filter((request) => !moved.has(request.action) && !denied.has(request.action))
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

  it.each(COMMANDS.filter((row) => row.pendingOpreq !== undefined))(
    '$command (pending opreq): still makes the calls that move into the function',
    (row) => {
      const actions = new Set(callsOf(row).calls.map(iamActionOf));
      for (const action of row.pendingOpreq!) {
        expect(
          actions.has(action),
          `${row.command} no longer calls ${action}: operator requests have landed; remove pendingOpreq from its row`,
        ).toBe(true);
      }
    },
  );

  it('no command reads a secret except those pending opreq, and no grant allows it', () => {
    for (const row of COMMANDS) {
      const reads = callsOf(row).calls.filter(
        (call) => iamActionOf(call) === 'secretsmanager:GetSecretValue',
      );
      if (!(row.pendingOpreq ?? []).includes('secretsmanager:GetSecretValue'))
        expect(reads, row.command).toEqual([]);
    }
    for (const [grant, policy] of statements) {
      expect(
        actionsOf(policy).filter((action) => /^secretsmanager:Get/i.test(action)),
        grant,
      ).toEqual([]);
    }
  });

  it.each(['read', 'tail', 'recovery'] as const)(
    'the %s grant allows no action beyond what its commands call',
    (grant) => {
      const rows = COMMANDS.filter((row) => row.grants.includes(grant));
      const called = new Set(
        rows.flatMap((row) => {
          const moved = new Set(row.pendingOpreq ?? []);
          return callsOf(row)
            .calls.flatMap((call) => authorizationsOf(call, scope))
            .map((request) => request.action)
            .filter((action) => !moved.has(action));
        }),
      );
      if (grant === 'recovery' && COMMANDS.some((row) => row.pendingOpreq !== undefined)) {
        called.add(OPERATOR_REQUEST);
      }

      expect(actionsOf(statements.get(grant)!).filter((action) => !called.has(action))).toEqual([]);
    },
  );
});
