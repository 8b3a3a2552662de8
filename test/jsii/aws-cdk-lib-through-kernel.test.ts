/**
 * The jsii kernel client (test/support/jsii-kernel/) drives aws-cdk-lib as a Python or Java app
 * does: the same app built through `@jsii/runtime` and in TypeScript synthesizes the same template.
 * This is the harness the construct's own jsii build will be proven with.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as cdk from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ForeignValueError,
  installedPackages,
  JsiiKernel,
  JsiiKernelError,
  type JsiiObject,
  kernelApp,
  synthesizedTemplate,
} from '../support/jsii-kernel/index.ts';
import { spawnedNode } from '../support/spawned-node.ts';

let kernel: JsiiKernel;
const cleanups: (() => void)[] = [];

beforeAll(async () => {
  kernel = await JsiiKernel.start({ node: spawnedNode().path });
  for (const pkg of await installedPackages('aws-cdk-lib')) await kernel.load(pkg);
});

afterAll(async () => {
  await kernel?.close();
  for (const cleanup of cleanups) cleanup();
});

/** The app in TypeScript: a KMS key, a queue encrypted with it, a role granted to send, an aspect. */
function typescriptTemplate(): Record<string, unknown> {
  const outdir = mkdtempSync(path.join(tmpdir(), 'jsii-kernel-ts-app-'));
  cleanups.push(() => rmSync(outdir, { recursive: true, force: true }));
  const app = new cdk.App({ outdir });
  const stack = new cdk.Stack(app, 'Stack');
  const key = new kms.Key(stack, 'Key', {
    enableKeyRotation: true,
    removalPolicy: cdk.RemovalPolicy.DESTROY,
  });
  const queue = new sqs.Queue(stack, 'Queue', {
    encryption: sqs.QueueEncryption.KMS,
    encryptionMasterKey: key,
    retentionPeriod: cdk.Duration.days(4),
  });
  const role = new iam.Role(stack, 'Role', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
  queue.grantSendMessages(role);
  new cdk.CfnOutput(stack, 'Region', { value: cdk.Aws.REGION });
  cdk.Aspects.of(stack).add({
    visit(node: IConstruct) {
      if (node instanceof sqs.CfnQueue) node.addPropertyOverride('DelaySeconds', 5);
    },
  });
  return app.synth().getStackArtifact('Stack').template as Record<string, unknown>;
}

describe('aws-cdk-lib through the jsii kernel', () => {
  it('synthesizes the template the TypeScript app does: structs as plain data, enums by name, statics, a grant, an aspect called back', async () => {
    const { app, dispose } = await kernelApp(kernel);
    cleanups.push(dispose);
    const stack = await kernel.create('aws-cdk-lib.Stack', [app, 'Stack']);
    const key = await kernel.create('aws-cdk-lib.aws_kms.Key', [
      stack,
      'Key',
      { enableKeyRotation: true, removalPolicy: 'DESTROY' },
    ]);
    const queue = await kernel.create('aws-cdk-lib.aws_sqs.Queue', [
      stack,
      'Queue',
      {
        encryption: 'KMS',
        encryptionMasterKey: key,
        retentionPeriod: await kernel.sinvoke('aws-cdk-lib.Duration', 'days', [4]),
      },
    ]);
    const role = await kernel.create('aws-cdk-lib.aws_iam.Role', [
      stack,
      'Role',
      { assumedBy: await kernel.create('aws-cdk-lib.aws_iam.ServicePrincipal', ['lambda.amazonaws.com']) },
    ]);
    const grant = (await kernel.invoke(queue, 'grantSendMessages', [role])) as JsiiObject;
    expect(grant.fqn).toBe('aws-cdk-lib.aws_iam.Grant');
    await kernel.create('aws-cdk-lib.CfnOutput', [
      stack,
      'Region',
      { value: await kernel.sget('aws-cdk-lib.Aws', 'REGION') },
    ]);
    // The aspect lives on this side: the kernel calls `visit` back during synth, and the handler
    // calls the kernel meanwhile.
    const visited: string[] = [];
    const aspect = await kernel.implement(['aws-cdk-lib.IAspect'], {
      visit: async (node: unknown) => {
        const construct = node as JsiiObject;
        visited.push(construct.fqn);
        if (construct.fqn === 'aws-cdk-lib.aws_sqs.CfnQueue') {
          await kernel.invoke(construct, 'addPropertyOverride', ['DelaySeconds', 5]);
        }
      },
    });
    await kernel.invoke((await kernel.sinvoke('aws-cdk-lib.Aspects', 'of', [stack])) as JsiiObject, 'add', [
      aspect,
    ]);

    const template = await synthesizedTemplate(kernel, app, 'Stack');

    expect(visited).toContain('aws-cdk-lib.aws_sqs.CfnQueue');
    expect(template).toEqual(typescriptTemplate());
    // Not two empty templates: the key, the encrypted queue with the aspect's override, the grant.
    const resources = Object.values(
      template.Resources as Record<string, { Type: string; Properties: unknown }>,
    );
    expect(resources.map((resource) => resource.Type).sort()).toEqual([
      'AWS::IAM::Policy',
      'AWS::IAM::Role',
      'AWS::KMS::Key',
      'AWS::SQS::Queue',
    ]);
    expect(resources.find((resource) => resource.Type === 'AWS::SQS::Queue')?.Properties).toMatchObject({
      DelaySeconds: 5,
      MessageRetentionPeriod: 345_600,
      KmsMasterKeyId: { 'Fn::GetAtt': [expect.stringMatching(/^Key/), 'Arn'] },
    });
    expect(JSON.stringify(template)).toContain('sqs:SendMessage');
  });

  it('refuses a misspelt struct member by name, which the kernel itself would drop without a word', async () => {
    const { app, dispose } = await kernelApp(kernel);
    cleanups.push(dispose);
    const stack = await kernel.create('aws-cdk-lib.Stack', [app, 'Stack']);
    const fourDays = (await kernel.sinvoke('aws-cdk-lib.Duration', 'days', [4])) as JsiiObject;

    const misspelt = kernel.create('aws-cdk-lib.aws_sqs.Queue', [
      stack,
      'Queue',
      { retentionPeriodd: fourDays },
    ]);
    await expect(misspelt).rejects.toBeInstanceOf(ForeignValueError);
    await expect(
      kernel.create('aws-cdk-lib.aws_sqs.Queue', [stack, 'Queue', { retentionPeriodd: fourDays }]),
    ).rejects.toThrow(/QueueProps has no member "retentionPeriodd"/);

    // The same request unchecked: the kernel creates the queue and the member is gone.
    const unchecked = await kernel.raw({
      api: 'create',
      fqn: 'aws-cdk-lib.aws_sqs.Queue',
      args: [
        stack.toWire(),
        'Unchecked',
        {
          '$jsii.struct': {
            fqn: 'aws-cdk-lib.aws_sqs.QueueProps',
            data: { retentionPeriodd: fourDays.toWire() },
          },
        },
      ],
    });
    expect((unchecked as JsiiObject).fqn).toBe('aws-cdk-lib.aws_sqs.Queue');
    const template = await synthesizedTemplate(kernel, app, 'Stack');
    expect(
      Object.values(template.Resources as Record<string, { Properties?: object }>)[0]?.Properties,
    ).toBeUndefined();
  });

  it('refuses a missing required member, an enum member that does not exist and an object of the wrong type', async () => {
    const { app, dispose } = await kernelApp(kernel);
    cleanups.push(dispose);
    const stack = await kernel.create('aws-cdk-lib.Stack', [app, 'Stack']);

    await expect(kernel.create('aws-cdk-lib.aws_iam.Role', [stack, 'Role', {}])).rejects.toThrow(
      'new aws-cdk-lib.aws_iam.Role(props): RoleProps requires "assumedBy"',
    );
    await expect(
      kernel.create('aws-cdk-lib.aws_kms.Key', [stack, 'Key', { removalPolicy: 'DELETE' }]),
    ).rejects.toThrow(
      /^new aws-cdk-lib\.aws_kms\.Key\(props\)\.removalPolicy: aws-cdk-lib\.RemovalPolicy has no member "DELETE" \(members: DESTROY, RETAIN, SNAPSHOT, RETAIN_ON_UPDATE_OR_DELETE\)$/,
    );
    await expect(
      kernel.create('aws-cdk-lib.aws_sqs.Queue', [stack, 'Queue', { encryptionMasterKey: stack }]),
    ).rejects.toThrow(/encryptionMasterKey: expected aws-cdk-lib\.aws_kms\.IKey, got aws-cdk-lib\.Stack@\d+/);
    await expect(kernel.create('aws-cdk-lib.aws_sqs.Queue', [stack])).rejects.toThrow(
      'new aws-cdk-lib.aws_sqs.Queue(id): required, not given',
    );
  });

  it("answers with the kernel's named errors, and releases an object on del", async () => {
    const { app, dispose } = await kernelApp(kernel);
    cleanups.push(dispose);
    // A construct id used twice: aws-cdk-lib's own error, through the kernel.
    await kernel.create('aws-cdk-lib.Stack', [app, 'Twice']);
    const twice = kernel.create('aws-cdk-lib.Stack', [app, 'Twice']);
    await expect(twice).rejects.toBeInstanceOf(JsiiKernelError);
    await expect(twice).rejects.toMatchObject({
      // The library's own error's name: constructs throws a plain Error here.
      kernelName: 'Error',
      message: expect.stringMatching(/There is already a Construct with name 'Twice'/),
    });

    const duration = (await kernel.sinvoke('aws-cdk-lib.Duration', 'minutes', [3])) as JsiiObject;
    expect(await kernel.invoke(duration, 'toSeconds')).toBe(180);
    const before = await kernel.objectCount();
    await kernel.del(duration);
    expect(await kernel.objectCount()).toBe(before - 1);
    await expect(kernel.invoke(duration, 'toSeconds')).rejects.toMatchObject({
      kernelName: '@jsii/kernel.Fault',
      message: expect.stringMatching(/Object aws-cdk-lib\.Duration@\d+ not found/),
    });
  });
});
