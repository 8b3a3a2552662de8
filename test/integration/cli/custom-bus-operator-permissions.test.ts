/**
 * The operator grants on a Custom Event Bus held against what the CLI really calls there. The bus
 * is the stand-in (test/support/custom-bus/), which records every request it answers; the stack's
 * outputs, the checkpoint table and the queues are in moto. The construct is synthesized with
 * `eventBusKind: 'custom'` and the three grants, the route subscribers are created on the stand-in
 * under the construct's names, and the grants' bus and PassRole statements are resolved against
 * them. Then IAM's evaluation is asked: is every bus call of each command (its action, every
 * resource IAM checks for it, and the `iam:PassRole` a CreateSubscriber implies, to EventBridge)
 * allowed by the grant the command needs? And does each grant allow no bus action none of its
 * commands calls? The moto calls these commands make are the classic ones, held in
 * operator-permissions.test.ts.
 */
import { cbor } from '@smithy/core/cbor';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pascalCase } from '../../../infra/constructs/construct-names.ts';
import { BankingEventsPoller } from '../../../infra/constructs/index.ts';
import { cdkJsonContext } from '../../infra/support/poller-app-fixture.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { type CliResult, motoCliEnvironment, startCli } from '../../support/cli-process.ts';
import { type CustomBus, startCustomBus } from '../../support/custom-bus/index.ts';
import type { RecordedExchange } from '../../support/custom-bus/rpc-v2-cbor-server.ts';
import {
  type AuthorizationRequest,
  actionsOf,
  type IntrinsicBindings,
  isAllowed,
  type PolicyStatement,
  resolveIntrinsics,
} from '../../support/iam-policy-evaluation.ts';
import { createOutputsStack } from '../../support/moto-deployment.ts';
import { createQueue } from '../../support/sqs-queues.ts';

type GrantName = 'read' | 'tail' | 'recovery';

/** Each command run, and the grant docs/security.md says it needs. */
const COMMANDS: ReadonlyArray<{
  readonly command: string;
  readonly grant: GrantName;
  readonly exitCode: number;
}> = [
  { command: 'status', grant: 'read', exitCode: 0 },
  // 1: the bank checks have no function to ask here.
  { command: 'doctor --no-write-probes', grant: 'read', exitCode: 1 },
  { command: 'doctor --event-bus (no --stack)', grant: 'read', exitCode: 0 },
  { command: 'tail', grant: 'tail', exitCode: 0 },
  { command: 'archive-replay', grant: 'recovery', exitCode: 0 },
];

describe('the operator grants on a Custom Event Bus, held against the bus calls the CLI makes', () => {
  let aws: MotoEnvironment;
  let bus: CustomBus;
  let partition: string;
  const statements = new Map<GrantName, PolicyStatement[]>();
  const recorded = new Map<string, { result: CliResult; exchanges: RecordedExchange[] }>();
  let tailRoleArn: string;
  let routeRoleArns: string[];

  beforeAll(async () => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
    // The stand-in's clock behind the operator's: the replay window lies in the bus's past.
    bus = await startCustomBus({ motoEndpoint: inject('motoEndpoint'), startTime: Date.now() - 30 * 60_000 });
    partition = 'aws';
    const busName = aws.uniqueName('banking-events');
    const busArn = bus.admin.createEventBus(busName, { retentionDays: 14 });
    const arn = (service: string, resource: string) =>
      `arn:${partition}:${service}:${service === 'iam' ? '' : bus.region}:${bus.accountId}:${resource}`;

    // The construct, with the three grants, its bus named as the stand-in's.
    const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'CustomBusOperators');
    const poller = new BankingEventsPoller(stack, 'Poller', {
      eventBusKind: 'custom',
      eventBusName: busName,
    });
    const roles = {
      read: new iam.Role(stack, 'Reader', { assumedBy: new iam.AccountRootPrincipal() }),
      tail: new iam.Role(stack, 'Tailer', { assumedBy: new iam.AccountRootPrincipal() }),
      recovery: new iam.Role(stack, 'Recoverer', { assumedBy: new iam.AccountRootPrincipal() }),
    };
    poller.grantOperatorRead(roles.read);
    poller.grantOperatorTail(roles.tail);
    poller.grantOperatorRecovery(roles.recovery);

    // The route subscribers on the stand-in, under the construct's names, delivering to a queue in moto.
    const { arn: queueArn } = await createQueue(aws.sqs, aws.uniqueName('route'));
    const key = (token: string) => JSON.stringify(stack.resolve(token));
    tailRoleArn = arn('iam', 'role/TailDeliveryRole');
    const bindings = new Map<string, string>([
      ['AWS::Partition', partition],
      ['AWS::Region', bus.region],
      ['AWS::AccountId', bus.accountId],
      [key(poller.customBus!.eventBusArn), busArn],
      [key(poller.tailDeliveryRole!.roleArn), tailRoleArn],
    ]);
    const outputs: Record<string, string> = {};
    routeRoleArns = [];
    for (const route of poller.subscriberRouting!.routes) {
      const roleArn = arn('iam', `role/${route.subscriber.name}-delivery`);
      const subscriberArn = bus.admin.createSubscriber({
        Name: route.subscriber.name,
        EventBusArn: busArn,
        InvokeConfiguration: { RoleArn: roleArn, TargetArn: queueArn },
        FilterConfiguration: { Filters: [{ Scope: 'DATA', Pattern: '{"source":["banking.events"]}' }] },
      });
      bindings.set(key(route.subscriber.attrSubscriberArn), subscriberArn);
      bindings.set(key(route.deliveryRole.roleArn), roleArn);
      routeRoleArns.push(roleArn);
      const suffix = route.isCatchAll
        ? 'Unrouted'
        : route.isQuarantine
          ? 'Quarantine'
          : pascalCase(route.name);
      outputs[`SubscriberArn${suffix}`] = subscriberArn;
    }
    resolveGrants(stack, roles, bindings);

    const stackName = aws.uniqueName('CustomBusOperators');
    await createOutputsStack(stackName, {
      Programs: 'default',
      CheckpointTableName: await aws.createCheckpointTable(),
      EventBusKind: 'custom',
      EventBusName: busName,
      EventBusArn: busArn,
      EventSource: 'banking.events',
      BusRetentionDays: '14',
      TailDeliveryRoleArn: tailRoleArn,
      ...outputs,
    });

    const env = {
      ...motoCliEnvironment(inject('motoEndpoint')),
      AWS_ENDPOINT_URL_EVENTBRIDGEV2: bus.endpoint,
    };
    const run = async (command: string, args: string[], whileRunning?: () => Promise<void>) => {
      const from = bus.exchanges.length;
      const cli = startCli(args, { env });
      await whileRunning?.();
      const result = await cli.result;
      recorded.set(command, { result, exchanges: bus.exchanges.slice(from) });
      return cli;
    };
    await run('status', ['--stack', stackName, 'status', '--json']);
    await run('doctor --no-write-probes', ['--stack', stackName, 'doctor', '--no-write-probes', '--json']);
    await run('doctor --event-bus (no --stack)', [
      'doctor',
      '--event-bus',
      busArn,
      '--no-write-probes',
      '--json',
    ]);
    // No --delivery-role: tail reads the stack's TailDeliveryRoleArn.
    const start = bus.now();
    const from = bus.exchanges.length;
    const tailing = startCli(['--stack', stackName, 'tail', '--max-events', '1', '--json'], { env });
    await tailing.waitFor('stderr', /Listening on bus/);
    bus.admin.putEvents({
      EventBusArn: busArn,
      Entries: [
        {
          Source: 'banking.events',
          DetailType: 'transaction',
          Detail: JSON.stringify({ id: 'evt-1', sequence_number: 1, type: 'transaction', data: {} }),
          SystemMetadata: { EventGroupId: 'program-1', DeduplicationId: 'evt-1' },
        },
      ],
    });
    await bus.settled();
    recorded.set('tail', { result: await tailing.result, exchanges: bus.exchanges.slice(from) });
    await bus.advanceClock(60_000);
    await run('archive-replay', [
      '--stack',
      stackName,
      'archive-replay',
      '--since',
      new Date(start).toISOString(),
      '--until',
      new Date(start + 30_000).toISOString(),
      '--json',
    ]);
  }, 180_000);

  afterAll(async () => {
    await bus?.close();
    aws?.restore();
  });

  /** The grants' bus and PassRole statements, resolved against the stand-in's ARNs. */
  function resolveGrants(
    stack: Stack,
    roles: Record<GrantName, iam.Role>,
    bindings: IntrinsicBindings,
  ): void {
    const template = Template.fromStack(stack);
    for (const [grant, role] of Object.entries(roles) as Array<[GrantName, iam.Role]>) {
      const roleId = stack.getLogicalId(role.node.defaultChild as iam.CfnRole);
      const attached = Object.values(template.findResources('AWS::IAM::Policy'))
        .map((resource) => (resource as { Properties: Record<string, unknown> }).Properties)
        .filter((policy) => JSON.stringify(policy.Roles) === JSON.stringify([{ Ref: roleId }]))
        .flatMap((policy) => (policy.PolicyDocument as { Statement: PolicyStatement[] }).Statement)
        .filter((statement) => [statement.Action].flat().every((action) => /^(events|iam):/.test(action)));
      statements.set(grant, resolveIntrinsics(attached, bindings) as PolicyStatement[]);
    }
  }

  /**
   * What IAM checks for a bus request (eb-custom-bus-permissions): the bus for DescribeEventBus
   * and ListSubscribers; the subscriber for DescribeSubscriber and DeleteSubscriber; both for
   * CreateSubscriber, which also passes its delivery role to EventBridge.
   */
  function authorizationsOf(exchange: RecordedExchange): AuthorizationRequest[] {
    const input = exchange.input ?? {};
    const action = `events:${exchange.operation}`;
    switch (exchange.operation) {
      case 'DescribeEventBus':
      case 'ListSubscribers':
        return [{ action, resources: [String(input.EventBusArn)] }];
      case 'DescribeSubscriber':
      case 'DeleteSubscriber':
        return [{ action, resources: [String(input.SubscriberArn)] }];
      case 'CreateSubscriber': {
        const answer = cbor.deserialize(exchange.responseBody) as { SubscriberArn: string };
        const role = (input.InvokeConfiguration as { RoleArn: string }).RoleArn;
        return [
          { action, resources: [String(input.EventBusArn), answer.SubscriberArn] },
          {
            action: 'iam:PassRole',
            resources: [role],
            conditionKeys: { 'iam:PassedToService': ['events.amazonaws.com'] },
          },
        ];
      }
      default:
        throw new Error(`No IAM mapping for ${exchange.operation}: add it`);
    }
  }

  const callsOf = (command: string) => {
    const run = recorded.get(command);
    if (run === undefined) throw new Error(`${command} was not run`);
    return run;
  };

  it.each(COMMANDS)(
    '$command: every bus call it makes is allowed by the $grant grant',
    ({ command, grant, exitCode }) => {
      const { result, exchanges } = callsOf(command);
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(exitCode);
      expect(exchanges.length).toBeGreaterThan(0);
      expect(exchanges.filter((exchange) => exchange.status !== 200)).toEqual([]);

      const refused = exchanges
        .flatMap(authorizationsOf)
        .filter((request) => !isAllowed(statements.get(grant)!, request));

      expect(refused).toEqual([]);
    },
  );

  it("tail delivers through the stack's tail delivery role, and its grant passes no other role", () => {
    const created = callsOf('tail').exchanges.filter((exchange) => exchange.operation === 'CreateSubscriber');
    expect(
      created.map((exchange) => (exchange.input!.InvokeConfiguration as { RoleArn: string }).RoleArn),
    ).toEqual([tailRoleArn]);
    const pass = (role: string) => ({
      action: 'iam:PassRole',
      resources: [role],
      conditionKeys: { 'iam:PassedToService': ['events.amazonaws.com'] },
    });
    for (const role of routeRoleArns) expect(isAllowed(statements.get('tail')!, pass(role))).toBe(false);
    expect(isAllowed(statements.get('recovery')!, pass(tailRoleArn))).toBe(false);
    // Passed to another service: refused.
    expect(
      isAllowed(statements.get('tail')!, {
        ...pass(tailRoleArn),
        conditionKeys: { 'iam:PassedToService': ['lambda.amazonaws.com'] },
      }),
    ).toBe(false);
  });

  it("archive-replay copies each of the construct's subscribers as bep-replay-…, and the grants create no other name", () => {
    const created = callsOf('archive-replay').exchanges.filter(
      (exchange) => exchange.operation === 'CreateSubscriber',
    );
    expect(created).toHaveLength(routeRoleArns.length);
    for (const exchange of created) expect(String(exchange.input!.Name)).toMatch(/^bep-replay-/);
    const [replay] = authorizationsOf(created[0]!);
    const renamed = {
      ...replay!,
      resources: [
        replay!.resources[0]!,
        replay!.resources[1]!.replace(/subscriber\/[^/]+\//, 'subscriber/ledger/'),
      ],
    };
    expect(isAllowed(statements.get('recovery')!, replay!)).toBe(true);
    expect(isAllowed(statements.get('recovery')!, renamed)).toBe(false);
    expect(isAllowed(statements.get('tail')!, replay!)).toBe(false);
  });

  it.each(['read', 'tail', 'recovery'] as const)(
    'the %s grant allows no bus or PassRole action that none of its commands calls',
    (grant) => {
      const called = new Set(
        COMMANDS.filter((row) => row.grant === grant)
          .flatMap((row) => callsOf(row.command).exchanges)
          .flatMap(authorizationsOf)
          .map((request) => request.action),
      );

      expect(actionsOf(statements.get(grant)!).filter((action) => !called.has(action))).toEqual([]);
    },
  );
});
