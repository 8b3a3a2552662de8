/**
 * The package as Python, Java, .NET and Go apps use it: their bindings drive the construct through
 * the jsii runtime (`@jsii/runtime`) over its JSON protocol, and so does this test
 * (test/support/jsii-kernel/). It starts the runtime, loads aws-cdk-lib's assemblies and the very
 * tarball `npm run package` made, builds an App, a Stack and the construct with props given as a
 * foreign language gives them (plain data, enums by name, objects by reference, an interface
 * implemented on this side), calls the grants, synthesizes, and compares the template with the one
 * the same app synthesizes in TypeScript.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as cdk from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  AlarmActions,
  BankingEventsPoller,
  type BankingEventsPollerProps,
} from '../../infra/constructs/index.ts';
import {
  installedPackages,
  JsiiEnumValue,
  JsiiKernel,
  JsiiKernelError,
  JsiiObject,
  kernelApp,
  packedPackage,
  synthesizedTemplate,
} from '../support/jsii-kernel/index.ts';
import { spawnedNode } from '../support/spawned-node.ts';

const PACKAGE = 'banking-events-poller';
const POLLER = `${PACKAGE}.BankingEventsPoller`;
/** An enum member of our assembly, as `FeedMode.STREAM` goes on the wire where a string also fits. */
const member = (enumName: string, name: string) => new JsiiEnumValue(`${PACKAGE}.${enumName}`, name);

let kernel: JsiiKernel;
const cleanups: (() => void)[] = [];

beforeAll(async () => {
  kernel = await JsiiKernel.start({ node: spawnedNode().path });
  for (const pkg of await installedPackages('aws-cdk-lib')) await kernel.load(pkg);
  await kernel.load(packedPackage(inject('packageTarball')));
});

afterAll(async () => {
  await kernel?.close();
  for (const cleanup of cleanups) cleanup();
});

function typescriptTemplate(build: (stack: cdk.Stack) => void): Record<string, unknown> {
  const outdir = mkdtempSync(path.join(tmpdir(), 'jsii-construct-ts-'));
  cleanups.push(() => rmSync(outdir, { recursive: true, force: true }));
  const app = new cdk.App({ outdir });
  build(new cdk.Stack(app, 'Stack'));
  return app.synth().getStackArtifact('Stack').template as Record<string, unknown>;
}

async function kernelTemplate(build: (stack: JsiiObject) => Promise<void>): Promise<Record<string, unknown>> {
  const { app, dispose } = await kernelApp(kernel);
  cleanups.push(dispose);
  const stack = await kernel.create('aws-cdk-lib.Stack', [app, 'Stack']);
  await build(stack);
  return synthesizedTemplate(kernel, app, 'Stack');
}

describe('the construct through the jsii kernel, from the packed tarball', () => {
  it('default: the template of new BankingEventsPoller(stack, id)', async () => {
    let poller: JsiiObject | undefined;
    const template = await kernelTemplate(async (stack) => {
      poller = await kernel.create(POLLER, [stack, 'Poller']);
    });

    expect(template).toEqual(typescriptTemplate((stack) => new BankingEventsPoller(stack, 'Poller')));
    expect(JSON.stringify(template)).toContain('"Type":"AWS::Lambda::Function"');
    // The maps every language reads: plain objects keyed by program, holding objects by reference.
    const secrets = (await kernel.get(poller!, 'secretsByProgram')) as Record<string, JsiiObject>;
    expect(Object.keys(secrets)).toEqual(['default']);
    expect(secrets.default).toBeInstanceOf(JsiiObject);
    const alarms = (await kernel.get(poller!, 'alarms')) as JsiiObject;
    expect(Object.keys((await kernel.get(alarms, 'lagAlarmsByProgram')) as object)).toEqual(['default']);
  });

  it('bank profile: a key, a VPC with endpoints, two programs, enums by name and the grants', async () => {
    const template = await kernelTemplate(async (stack) => {
      const key = await kernel.create('aws-cdk-lib.aws_kms.Key', [
        stack,
        'Key',
        { enableKeyRotation: true, removalPolicy: 'RETAIN' },
      ]);
      const vpc = await kernel.create('aws-cdk-lib.aws_ec2.Vpc', [
        stack,
        'Vpc',
        { maxAzs: 2, natGateways: 2 },
      ]);
      const poller = await kernel.create(POLLER, [
        stack,
        'Poller',
        {
          programs: [{ name: 'cards' }, { name: 'loans' }],
          encryptionKey: key,
          vpc,
          vpcEndpoints: true,
          reservedConcurrency: 4,
          alarmEmail: 'oncall@example.com',
          logRetention: 'ONE_YEAR',
          feedMode: member('FeedMode', 'STREAM'),
          streamRecovery: member('StreamRecovery', 'LOOKUP'),
          startPosition: member('StartPosition', 'LATEST'),
        },
      ]);
      const operator = await kernel.create('aws-cdk-lib.aws_iam.Role', [
        stack,
        'Operator',
        { assumedBy: await kernel.create('aws-cdk-lib.aws_iam.AccountRootPrincipal') },
      ]);
      await kernel.invoke(poller, 'grantOperatorRead', [operator]);
      await kernel.invoke(poller, 'grantOperatorRecovery', [operator]);
      await kernel.invoke(poller, 'grantOperatorTail', [operator]);
      await kernel.invoke(poller, 'grantClaimCheckRead', [operator]);
      await kernel.invoke(poller, 'allowPublishAsPoller', [operator]);
      const grant = (await kernel.invoke(poller, 'grantSubscriber', [operator, {}])) as JsiiObject;
      expect(grant.interfaces).toEqual([`${PACKAGE}.SubscriberGrant`]);
      expect(await kernel.get(grant, 'idempotencyTable')).toBeInstanceOf(JsiiObject);
    });
    const expected = typescriptTemplate((stack) => {
      const key = new kms.Key(stack, 'Key', {
        enableKeyRotation: true,
        removalPolicy: cdk.RemovalPolicy.RETAIN,
      });
      const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 2 });
      const poller = new BankingEventsPoller(stack, 'Poller', {
        programs: [{ name: 'cards' }, { name: 'loans' }],
        encryptionKey: key,
        vpc,
        vpcEndpoints: true,
        reservedConcurrency: 4,
        alarmEmail: 'oncall@example.com',
        logRetention: logs.RetentionDays.ONE_YEAR,
        feedMode: 'stream',
        streamRecovery: 'lookup',
        startPosition: 'latest',
      });
      const operator = new iam.Role(stack, 'Operator', { assumedBy: new iam.AccountRootPrincipal() });
      poller.grantOperatorRead(operator);
      poller.grantOperatorRecovery(operator);
      poller.grantOperatorTail(operator);
      poller.grantClaimCheckRead(operator);
      poller.allowPublishAsPoller(operator);
      poller.grantSubscriber(operator, {});
    });

    expect(template).toEqual(expected);
    expect(JSON.stringify(template)).toContain('"Type":"AWS::EC2::VPCEndpoint"');
    expect(JSON.stringify(template)).toContain('"FEED_MODE":"stream"');
  });

  it('custom bus: the kind and the groups by enum, routes as a map of plain structs, an empty one kept, a static helper', async () => {
    const props: BankingEventsPollerProps = {
      eventBusKind: 'custom',
      eventGroupBy: 'account',
      routes: { transaction: { ordered: true }, account_status: {} },
    };
    const template = await kernelTemplate(async (stack) => {
      await kernel.create(POLLER, [
        stack,
        'Poller',
        {
          ...props,
          eventBusKind: member('EventBusKind', 'CUSTOM'),
          eventGroupBy: member('EventGroupBy', 'ACCOUNT'),
          alarmActions: await kernel.sinvoke(`${PACKAGE}.AlarmActions`, 'notifySns', [
            await kernel.create('aws-cdk-lib.aws_sns.Topic', [stack, 'Pager']),
            { onOk: false },
          ]),
        },
      ]);
    });

    const expected = typescriptTemplate((stack) => {
      const alarmActions = AlarmActions.notifySns(new sns.Topic(stack, 'Pager'), { onOk: false });
      new BankingEventsPoller(stack, 'Poller', { ...props, alarmActions });
    });

    expect(template).toEqual(expected);
    expect(JSON.stringify(template)).toContain('"Type":"AWS::EventsV2::EventBus"');
  });

  it("a route's targets built on the caller's side (IRouteTargets), as a Python class implements them", async () => {
    let bound = 0;
    const template = await kernelTemplate(async (stack) => {
      const queue = await kernel.create('aws-cdk-lib.aws_sqs.Queue', [stack, 'Mine', { enforceSSL: true }]);
      const routeTargets = await kernel.implement([`${PACKAGE}.IRouteTargets`], {
        bind: async (options) => {
          bound += 1;
          const given = options as JsiiObject;
          const target = await kernel.create('aws-cdk-lib.aws_events_targets.SqsQueue', [
            queue,
            {
              deadLetterQueue: await kernel.get(given, 'deadLetterQueue'),
              maxEventAge: await kernel.get(given, 'maxEventAge'),
              retryAttempts: await kernel.get(given, 'retryAttempts'),
            },
          ]);
          return [target];
        },
      });
      await kernel.create(POLLER, [stack, 'Poller', { routes: { transaction: { routeTargets } } }]);
    });

    expect(bound).toBe(1);
    expect(template).toEqual(
      typescriptTemplate((stack) => {
        const queue = new sqs.Queue(stack, 'Mine', { enforceSSL: true });
        new BankingEventsPoller(stack, 'Poller', {
          routes: { transaction: { targets: (options) => [new targets.SqsQueue(queue, options)] } },
        });
      }),
    );
  });

  it("refuses a misspelt prop before the kernel sees it, and answers a wrong value with the construct's named error", async () => {
    const { app, dispose } = await kernelApp(kernel);
    cleanups.push(dispose);
    const stack = await kernel.create('aws-cdk-lib.Stack', [app, 'Stack']);

    await expect(kernel.create(POLLER, [stack, 'Typo', { feedMod: 'stream' }])).rejects.toThrow(
      /BankingEventsPollerProps has no member "feedMod"/,
    );
    await expect(
      kernel.create(POLLER, [stack, 'Enum', { feedMode: member('FeedMode', 'SSE') }]),
    ).rejects.toThrow(/matches no type of the union/);
    const wrong = kernel.create(POLLER, [stack, 'Wrong', { feedMode: 'Stream' }]);
    await expect(wrong).rejects.toBeInstanceOf(JsiiKernelError);
    await expect(wrong).rejects.toMatchObject({
      kernelName: 'ConfigurationError',
      message: expect.stringContaining('feedMode must be "poll" or "stream"; got "Stream"'),
    });
  });
});
