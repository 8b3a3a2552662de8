/**
 * The construct's operator grants, embedded in another app: what each allows, on which of the
 * construct's resources, and that cdk-nag finds nothing unacknowledged on the granted roles.
 * What the CLI really calls is held against these grants in
 * test/integration/cli/operator-permissions.test.ts.
 */
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { BankingEventsPoller, type BankingEventsPollerProps } from '../../../infra/constructs/index.ts';
import { cdkJsonContext } from '../support/poller-app-fixture.ts';

function embedding(props: (stack: Stack) => BankingEventsPollerProps = () => ({})) {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Ops');
  const poller = new BankingEventsPoller(stack, 'Poller', props(stack));
  const operator = new iam.Role(stack, 'Operator', { assumedBy: new iam.AccountRootPrincipal() });
  return { app, stack, poller, operator };
}

interface Statement {
  readonly Action: string | string[];
  readonly Resource: unknown;
  readonly Condition?: unknown;
}

function statementsOf(stack: Stack, grantee: iam.Role): Statement[] {
  const roleId = stack.getLogicalId(grantee.node.defaultChild as iam.CfnRole);
  return Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy'))
    .map((resource) => (resource as { Properties: Record<string, unknown> }).Properties)
    .filter((policy) => JSON.stringify(policy.Roles) === JSON.stringify([{ Ref: roleId }]))
    .flatMap((policy) => (policy.PolicyDocument as { Statement: Statement[] }).Statement);
}

const actionsOf = (statements: readonly Statement[]) =>
  statements.flatMap((statement) => [statement.Action].flat()).sort();

/** The resources of the statement allowing `action`. */
function resourcesFor(statements: readonly Statement[], action: string): unknown[] {
  const statement = statements.find((candidate) => [candidate.Action].flat().includes(action));
  if (statement === undefined) throw new Error(`No statement allows ${action}`);
  return [statement.Resource].flat();
}

const arnOf = (stack: Stack, token: string) => stack.resolve(token);
/** `arn:<partition>:<service>:<region>:<account>:<rest>` as the template writes it. */
const formatted = (service: string, rest: string) => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      `:${service}:`,
      { Ref: 'AWS::Region' },
      ':',
      { Ref: 'AWS::AccountId' },
      rest,
    ],
  ],
});

describe('grantOperatorRead', () => {
  it('allows describing and reading the stack, table, bus, schedules and alarms: no write, no secret, no invoke', () => {
    const { stack, poller, operator } = embedding(() => ({
      programs: [{ name: 'cards' }, { name: 'loans' }],
    }));

    poller.grantOperatorRead(operator);

    const statements = statementsOf(stack, operator);
    expect(actionsOf(statements)).toEqual([
      'cloudformation:DescribeStacks',
      'cloudwatch:DescribeAlarms',
      'dynamodb:DescribeTable',
      'dynamodb:GetItem',
      'dynamodb:GetItem',
      'dynamodb:Scan',
      'dynamodb:Scan',
      'events:DescribeEventBus',
      'scheduler:GetSchedule',
    ]);
    expect(resourcesFor(statements, 'cloudformation:DescribeStacks')).toEqual([
      formatted('cloudformation', ':stack/Ops/*'),
    ]);
    expect(resourcesFor(statements, 'dynamodb:GetItem')).toEqual([
      arnOf(stack, poller.checkpointTable.tableArn),
    ]);
    // programs list: the records, read only.
    expect(statements).toContainEqual({
      Effect: 'Allow',
      Action: ['dynamodb:GetItem', 'dynamodb:Scan'],
      Resource: arnOf(stack, poller.programsTable.tableArn),
    });
    expect(resourcesFor(statements, 'events:DescribeEventBus')).toEqual([
      arnOf(stack, poller.eventBus!.eventBusArn),
    ]);
    expect(resourcesFor(statements, 'scheduler:GetSchedule')).toEqual(
      poller.workerSchedules.map((schedule) => arnOf(stack, schedule.scheduleArn)),
    );
    expect(resourcesFor(statements, 'cloudwatch:DescribeAlarms')).toEqual([
      formatted('cloudwatch', ':alarm:Ops-*'),
    ]);
  });
});

describe('grantOperatorTail', () => {
  it('allows a rule and a queue named bep-tail-… on the bus, the rule targeting only such a queue', () => {
    const { stack, poller, operator } = embedding();

    poller.grantOperatorTail(operator);

    const statements = statementsOf(stack, operator);
    const queues = formatted('sqs', ':bep-tail-*');
    const bus = arnOf(stack, poller.eventBus!.eventBusName);
    const rules = {
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          ':events:',
          { Ref: 'AWS::Region' },
          ':',
          { Ref: 'AWS::AccountId' },
          ':rule/',
          bus,
          '/bep-tail-*',
        ],
      ],
    };
    expect(statements).toEqual(
      expect.arrayContaining([
        {
          Effect: 'Allow',
          Action: [
            'sqs:CreateQueue',
            'sqs:DeleteMessage',
            'sqs:DeleteQueue',
            'sqs:GetQueueAttributes',
            'sqs:ReceiveMessage',
            'sqs:SetQueueAttributes',
            'sqs:TagQueue',
          ],
          Resource: queues,
        },
        {
          Effect: 'Allow',
          Action: ['events:DeleteRule', 'events:PutRule', 'events:RemoveTargets'],
          Resource: rules,
        },
        {
          Effect: 'Allow',
          Action: 'events:PutTargets',
          Resource: rules,
          Condition: { ArnLike: { 'events:TargetArn': queues } },
        },
      ]),
    );
    expect(actionsOf(statements)).not.toContain('events:PutEvents');
  });

  it('names the rules of the default bus without a bus segment, as EventBridge does', () => {
    const { stack, poller, operator } = embedding((scope) => ({
      existingEventBus: events.EventBus.fromEventBusName(scope, 'Default', 'default'),
    }));

    poller.grantOperatorTail(operator);

    expect(resourcesFor(statementsOf(stack, operator), 'events:PutRule')).toEqual([
      formatted('events', ':rule/bep-tail-*'),
    ]);
  });
});

describe('grantOperatorRecovery', () => {
  it("allows exactly the recovery commands' calls on the construct's resources: no secret read, no PutEvents", () => {
    const { stack, poller, operator } = embedding(() => ({
      programs: [{ name: 'cards' }, { name: 'loans' }],
    }));

    poller.grantOperatorRecovery(operator);

    const statements = statementsOf(stack, operator);
    expect(actionsOf(statements)).toEqual([
      'cloudformation:DescribeStacks',
      'dynamodb:GetItem',
      'dynamodb:UpdateItem',
      'events:DescribeArchive',
      'events:DescribeEventBus',
      'events:DescribeReplay',
      'events:DescribeRule',
      'events:ListArchives',
      'events:StartReplay',
      'lambda:InvokeFunction',
      's3:GetObject',
      'secretsmanager:PutSecretValue',
    ]);
    expect(resourcesFor(statements, 'lambda:InvokeFunction')).toEqual([
      arnOf(stack, poller.pollerFunction.functionArn),
    ]);
    // The answers the function leaves in the claim-check bucket, not the events' bodies.
    expect(resourcesFor(statements, 's3:GetObject')).toEqual([
      arnOf(stack, poller.claimCheckBucket.arnForObjects('operator-answers/*')),
    ]);
    expect(resourcesFor(statements, 'dynamodb:UpdateItem')).toEqual([
      arnOf(stack, poller.checkpointTable.tableArn),
    ]);
    expect(resourcesFor(statements, 'events:StartReplay')).toEqual(
      expect.arrayContaining([
        formatted('events', ':replay/*'),
        arnOf(stack, poller.archive!.archiveArn),
        arnOf(stack, poller.eventBus!.eventBusArn),
      ]),
    );
    expect(resourcesFor(statements, 'events:StartReplay')).toHaveLength(3);
    expect(resourcesFor(statements, 'events:ListArchives')).toEqual(['*']);
    expect(resourcesFor(statements, 'secretsmanager:PutSecretValue')).toEqual(
      [...poller.secrets.values()].map((secret) => arnOf(stack, secret.secretArn)),
    );
  });

  it('grants a secret imported by name with the suffix Secrets Manager appends, and its key through Secrets Manager only', () => {
    const { stack, poller, operator } = embedding((scope) => {
      const key = new kms.Key(scope, 'SecretKey', { enableKeyRotation: true });
      const imported = secretsmanager.Secret.fromSecretAttributes(scope, 'Imported', {
        secretPartialArn: 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:bank/cards',
        encryptionKey: key,
      });
      return { programs: [{ name: 'cards', existingSecret: imported }] };
    });

    poller.grantOperatorRecovery(operator);

    const statements = statementsOf(stack, operator);
    expect(resourcesFor(statements, 'secretsmanager:PutSecretValue')).toEqual([
      'arn:aws:secretsmanager:eu-west-1:111122223333:secret:bank/cards-??????',
    ]);
    // In the key's policy, as CDK grants a key through a service (the function's kms:Decrypt too).
    Template.fromStack(stack).hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: {
        Statement: Match.arrayWith([
          {
            Effect: 'Allow',
            Action: 'kms:GenerateDataKey',
            Principal: {
              AWS: { 'Fn::GetAtt': [stack.getLogicalId(operator.node.defaultChild as iam.CfnRole), 'Arn'] },
            },
            Resource: '*',
            Condition: {
              StringEquals: {
                'kms:ViaService': {
                  'Fn::Join': ['', ['secretsmanager.', { Ref: 'AWS::Region' }, '.amazonaws.com']],
                },
              },
            },
          },
        ]),
      },
    });
  });
});

describe('grantOperatorPrograms', () => {
  it('allows item reads and conditional writes of the records, and creating and writing the secrets under the prefix: no read of a secret', () => {
    const { stack, poller, operator } = embedding(() => ({ secretsPrefix: 'payments/bep/' }));

    poller.grantOperatorPrograms(operator);

    const statements = statementsOf(stack, operator);
    expect(actionsOf(statements)).toEqual([
      'cloudformation:DescribeStacks',
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'secretsmanager:CreateSecret',
      'secretsmanager:PutSecretValue',
      'secretsmanager:TagResource',
    ]);
    expect(resourcesFor(statements, 'dynamodb:PutItem')).toEqual([
      arnOf(stack, poller.programsTable.tableArn),
    ]);
    expect(resourcesFor(statements, 'secretsmanager:CreateSecret')).toEqual([
      formatted('secretsmanager', ':secret:payments/bep/*'),
    ]);
  });

  it('lets it encrypt a new secret value under the deployment key, through Secrets Manager only', () => {
    const { stack, poller, operator } = embedding((scope) => ({ encryptionKey: new kms.Key(scope, 'Key') }));

    poller.grantOperatorPrograms(operator);

    expect(statementsOf(stack, operator)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Action: 'kms:GenerateDataKey',
          Condition: {
            StringEquals: {
              'kms:ViaService': {
                'Fn::Join': ['', ['secretsmanager.', { Ref: 'AWS::Region' }, '.amazonaws.com']],
              },
            },
          },
        }),
        // The records under the same key, through DynamoDB only.
        expect.objectContaining({ Action: ['kms:Decrypt', 'kms:GenerateDataKey'] }),
      ]),
    );
  });

  it('leaves no unacknowledged cdk-nag finding, the prefix acknowledged on its own', () => {
    const { app, stack, poller, operator } = embedding();
    poller.grantOperatorPrograms(operator);
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));

    const findings = app
      .synth()
      .getStackArtifact(stack.artifactId)
      .messages.filter((message) => message.level === 'error' || message.level === 'warning');

    expect(findings.map((finding) => `${finding.id}: ${String(finding.entry.data)}`)).toEqual([]);
    const acknowledged = operator.node.metadata
      .filter((entry) => entry.type === 'aws:cdk:acknowledged-rules')
      .flatMap((entry) => Object.keys(entry.data as Record<string, string>))
      .map((rule) => rule.replace(/^Annotation::/, ''));
    expect(acknowledged).toContain(
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:banking-events-poller/Ops/*]',
    );
  });
});

describe('the operator grants under cdk-nag', () => {
  it('leave no unacknowledged finding on the granted roles, each pattern acknowledged on its own', () => {
    const { app, stack, poller } = embedding();
    const roles = ['Reader', 'Tailer', 'Recoverer'].map(
      (id) => new iam.Role(stack, id, { assumedBy: new iam.AccountRootPrincipal() }),
    );
    poller.grantOperatorRead(roles[0]!);
    poller.grantOperatorTail(roles[1]!);
    poller.grantOperatorRecovery(roles[2]!);
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));

    const assembly = app.synth();

    const findings = assembly
      .getStackArtifact(stack.artifactId)
      .messages.filter((message) => message.level === 'error' || message.level === 'warning');
    expect(findings.map((finding) => `${finding.id}: ${String(finding.entry.data)}`)).toEqual([]);
    const acknowledged = roles.map((role) =>
      role.node.metadata
        .filter((entry) => entry.type === 'aws:cdk:acknowledged-rules')
        .flatMap((entry) => Object.keys(entry.data as Record<string, string>))
        .map((rule) => rule.replace(/^Annotation::/, '')),
    );
    const partOfArn = (service: string) => `arn:<AWS::Partition>:${service}:<AWS::Region>:<AWS::AccountId>:`;
    const bus = `<${stack.getLogicalId(poller.eventBus!.node.defaultChild as never)}>`;
    const stackPattern = `AwsSolutions-IAM5[Resource::${partOfArn('cloudformation')}stack/Ops/*]`;
    expect(acknowledged).toEqual([
      [stackPattern, `AwsSolutions-IAM5[Resource::${partOfArn('cloudwatch')}alarm:Ops-*]`],
      [
        stackPattern,
        `AwsSolutions-IAM5[Resource::${partOfArn('sqs')}bep-tail-*]`,
        `AwsSolutions-IAM5[Resource::${partOfArn('events')}rule/${bus}/bep-tail-*]`,
      ],
      [
        `AwsSolutions-IAM5[Resource::<${stack.getLogicalId(poller.claimCheckBucket.node.defaultChild as never)}.Arn>/operator-answers/*]`,
        stackPattern,
        `AwsSolutions-IAM5[Resource::${partOfArn('events')}replay/*]`,
        `AwsSolutions-IAM5[Resource::${partOfArn('events')}rule/${bus}/*]`,
        'AwsSolutions-IAM5[Resource::*]',
      ],
    ]);
  });
});

describe('operator grants with a customer-managed key (encryptionKey)', () => {
  it('lets read decrypt the checkpoint table, and recovery also write it, through DynamoDB only', () => {
    const { stack, poller, operator } = embedding((scope) => ({ encryptionKey: new kms.Key(scope, 'Key') }));
    const recovery = new iam.Role(stack, 'Recovery', { assumedBy: new iam.AccountRootPrincipal() });
    poller.grantOperatorRead(operator);
    poller.grantOperatorRecovery(recovery);

    const keyStatement = (role: iam.Role) =>
      statementsOf(stack, role).filter((statement) =>
        [statement.Action].flat().some((a) => a.startsWith('kms:')),
      );
    const via = {
      StringEquals: {
        'kms:ViaService': { 'Fn::Join': ['', ['dynamodb.', { Ref: 'AWS::Region' }, '.amazonaws.com']] },
      },
    };

    expect(keyStatement(operator)).toEqual([
      expect.objectContaining({ Action: 'kms:Decrypt', Condition: via }),
    ]);
    expect(keyStatement(recovery)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Action: ['kms:Decrypt', 'kms:GenerateDataKey'], Condition: via }),
        // The claim-check bucket's operator answers, read through S3 only.
        expect.objectContaining({
          Action: 'kms:Decrypt',
          Condition: {
            StringEquals: {
              'kms:ViaService': { 'Fn::Join': ['', ['s3.', { Ref: 'AWS::Region' }, '.amazonaws.com']] },
            },
          },
        }),
      ]),
    );
  });

  it('grants nothing on a key when the table has none', () => {
    const { stack, poller, operator } = embedding();
    poller.grantOperatorRead(operator);

    expect(actionsOf(statementsOf(stack, operator)).filter((action) => action.startsWith('kms:'))).toEqual(
      [],
    );
  });
});

describe('the operator grants on a Custom Event Bus', () => {
  const custom = (): BankingEventsPollerProps => ({
    eventBusKind: 'custom',
    eventBusName: 'payments',
    programs: [{ name: 'cards' }],
  });
  const subscriberPattern = (prefix: string) => formatted('events', `:subscriber/${prefix}*/*`);
  const passToEventBridge = { StringEquals: { 'iam:PassedToService': 'events.amazonaws.com' } };
  /** CDK writes a statement's resources in an order of its own. */
  const unordered = (values: readonly unknown[]) =>
    [...values].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

  it("read: the bus and its subscribers listed (on the bus), the construct's subscribers described; nothing written", () => {
    const { stack, poller, operator } = embedding(custom);

    poller.grantOperatorRead(operator);

    const statements = statementsOf(stack, operator);
    expect(actionsOf(statements)).toEqual([
      'cloudformation:DescribeStacks',
      'cloudwatch:DescribeAlarms',
      'dynamodb:DescribeTable',
      'dynamodb:GetItem',
      'dynamodb:GetItem',
      'dynamodb:Scan',
      'dynamodb:Scan',
      'events:DescribeEventBus',
      'events:DescribeSubscriber',
      'events:ListSubscribers',
      'scheduler:GetSchedule',
    ]);
    const bus = arnOf(stack, poller.customBus!.eventBusArn);
    expect(resourcesFor(statements, 'events:DescribeEventBus')).toEqual([bus]);
    expect(resourcesFor(statements, 'events:ListSubscribers')).toEqual([bus]);
    expect(unordered(resourcesFor(statements, 'events:DescribeSubscriber'))).toEqual(
      unordered(
        poller.subscriberRouting!.routes.map((route) => arnOf(stack, route.subscriber.attrSubscriberArn)),
      ),
    );
  });

  it('tail: a bep-tail-… subscriber on the bus and a bep-tail-… queue, passing the tail delivery role only, to EventBridge only', () => {
    const { stack, poller, operator } = embedding(custom);

    poller.grantOperatorTail(operator);

    const statements = statementsOf(stack, operator);
    const bus = arnOf(stack, poller.customBus!.eventBusArn);
    expect(actionsOf(statements)).toEqual([
      'cloudformation:DescribeStacks',
      'events:CreateSubscriber',
      'events:DeleteSubscriber',
      'events:DescribeEventBus',
      'iam:PassRole',
      'sqs:CreateQueue',
      'sqs:DeleteMessage',
      'sqs:DeleteQueue',
      'sqs:GetQueueAttributes',
      'sqs:ReceiveMessage',
      'sqs:TagQueue',
    ]);
    expect(statements).toEqual(
      expect.arrayContaining([
        { Effect: 'Allow', Action: 'events:DescribeEventBus', Resource: bus },
        {
          Effect: 'Allow',
          Action: 'events:CreateSubscriber',
          Resource: [bus, subscriberPattern('bep-tail-')],
        },
        { Effect: 'Allow', Action: 'events:DeleteSubscriber', Resource: subscriberPattern('bep-tail-') },
        {
          Effect: 'Allow',
          Action: 'iam:PassRole',
          Resource: arnOf(stack, poller.tailDeliveryRole!.roleArn),
          Condition: passToEventBridge,
        },
      ]),
    );
    expect(resourcesFor(statements, 'sqs:CreateQueue')).toEqual([formatted('sqs', ':bep-tail-*')]);
  });

  it("creates the tail delivery role: assumed by EventBridge for this account's bep-tail-… subscribers, sending to bep-tail-… queues only", () => {
    const { stack, poller } = embedding(custom);
    const template = Template.fromStack(stack);
    const roleId = stack.getLogicalId(poller.tailDeliveryRole!.node.defaultChild as iam.CfnRole);

    expect(template.toJSON().Resources[roleId].Properties.AssumeRolePolicyDocument.Statement).toEqual([
      {
        Action: 'sts:AssumeRole',
        Effect: 'Allow',
        Principal: { Service: 'events.amazonaws.com' },
        Condition: {
          StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
          ArnLike: { 'aws:SourceArn': subscriberPattern('bep-tail-') },
        },
      },
    ]);
    expect(statementsOf(stack, poller.tailDeliveryRole!)).toEqual([
      { Effect: 'Allow', Action: 'sqs:SendMessage', Resource: formatted('sqs', ':bep-tail-*') },
    ]);
  });

  it("recovery: bep-replay-… copies on the bus, passing only the construct's subscribers' delivery roles, and no archive action", () => {
    const { stack, poller, operator } = embedding(custom);

    poller.grantOperatorRecovery(operator);

    const statements = statementsOf(stack, operator);
    const bus = arnOf(stack, poller.customBus!.eventBusArn);
    expect(actionsOf(statements)).toEqual([
      'cloudformation:DescribeStacks',
      'dynamodb:GetItem',
      'dynamodb:UpdateItem',
      'events:CreateSubscriber',
      'events:DescribeEventBus',
      'events:DescribeSubscriber',
      'events:ListSubscribers',
      'iam:PassRole',
      'lambda:InvokeFunction',
      's3:GetObject',
      'secretsmanager:PutSecretValue',
    ]);
    const routes = poller.subscriberRouting!.routes;
    expect(statements).toEqual(
      expect.arrayContaining([
        {
          Effect: 'Allow',
          Action: 'events:CreateSubscriber',
          Resource: [bus, subscriberPattern('bep-replay-')],
        },
      ]),
    );
    const passRole = statements.find((statement) => statement.Action === 'iam:PassRole')!;
    expect(passRole.Condition).toEqual(passToEventBridge);
    expect(unordered([passRole.Resource].flat())).toEqual(
      unordered(routes.map((route) => arnOf(stack, route.deliveryRole.roleArn))),
    );
    expect(unordered(resourcesFor(statements, 'events:DescribeSubscriber'))).toEqual(
      unordered(routes.map((route) => arnOf(stack, route.subscriber.attrSubscriberArn))),
    );
    expect(resourcesFor(statements, 'iam:PassRole')).not.toContainEqual(
      arnOf(stack, poller.tailDeliveryRole!.roleArn),
    );
  });

  it('leave no unacknowledged cdk-nag finding, each subscriber pattern acknowledged on its own', () => {
    const { app, stack, poller } = embedding(custom);
    const roles = ['Reader', 'Tailer', 'Recoverer'].map(
      (id) => new iam.Role(stack, id, { assumedBy: new iam.AccountRootPrincipal() }),
    );
    poller.grantOperatorRead(roles[0]!);
    poller.grantOperatorTail(roles[1]!);
    poller.grantOperatorRecovery(roles[2]!);
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));

    const findings = app
      .synth()
      .getStackArtifact(stack.artifactId)
      .messages.filter((message) => message.level === 'error' || message.level === 'warning');

    expect(findings.map((finding) => `${finding.id}: ${String(finding.entry.data)}`)).toEqual([]);
    const acknowledged = (role: iam.Role) =>
      role.node.metadata
        .filter((entry) => entry.type === 'aws:cdk:acknowledged-rules')
        .flatMap((entry) => Object.keys(entry.data as Record<string, string>))
        .map((rule) => rule.replace(/^Annotation::/, ''));
    const partOfArn = 'arn:<AWS::Partition>:events:<AWS::Region>:<AWS::AccountId>:';
    expect(acknowledged(roles[1]!)).toContain(
      `AwsSolutions-IAM5[Resource::${partOfArn}subscriber/bep-tail-*/*]`,
    );
    expect(acknowledged(roles[2]!)).toContain(
      `AwsSolutions-IAM5[Resource::${partOfArn}subscriber/bep-replay-*/*]`,
    );
  });
});
