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
    expect(resourcesFor(statements, 'events:DescribeEventBus')).toEqual([
      arnOf(stack, poller.eventBus.eventBusArn),
    ]);
    expect(resourcesFor(statements, 'scheduler:GetSchedule')).toEqual(
      [...poller.schedules.values()].map((schedule) => arnOf(stack, schedule.scheduleArn)),
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
    const bus = arnOf(stack, poller.eventBus.eventBusName);
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
      'secretsmanager:PutSecretValue',
    ]);
    expect(resourcesFor(statements, 'lambda:InvokeFunction')).toEqual([
      arnOf(stack, poller.pollerFunction.functionArn),
    ]);
    expect(resourcesFor(statements, 'dynamodb:UpdateItem')).toEqual([
      arnOf(stack, poller.checkpointTable.tableArn),
    ]);
    expect(resourcesFor(statements, 'events:StartReplay')).toEqual(
      expect.arrayContaining([
        formatted('events', ':replay/*'),
        arnOf(stack, poller.archive.archiveArn),
        arnOf(stack, poller.eventBus.eventBusArn),
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
    const bus = `<${stack.getLogicalId(poller.eventBus.node.defaultChild as never)}>`;
    const stackPattern = `AwsSolutions-IAM5[Resource::${partOfArn('cloudformation')}stack/Ops/*]`;
    expect(acknowledged).toEqual([
      [stackPattern, `AwsSolutions-IAM5[Resource::${partOfArn('cloudwatch')}alarm:Ops-*]`],
      [
        stackPattern,
        `AwsSolutions-IAM5[Resource::${partOfArn('sqs')}bep-tail-*]`,
        `AwsSolutions-IAM5[Resource::${partOfArn('events')}rule/${bus}/bep-tail-*]`,
      ],
      [
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
