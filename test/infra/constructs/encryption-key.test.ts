/**
 * `encryptionKey`: every store the construct creates is encrypted with it, its policy admits the
 * services that use it on the construct's behalf (each scoped by source ARN or encryption
 * context), and the roles may use it only through the services they call. Existing resources
 * encrypted with their own keys keep working: the grants follow their keys.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { beforeAll, describe, expect, it } from 'vitest';
import { BankingEventsPoller } from '../../../infra/constructs/index.ts';
import { cdkJsonContext, logicalIdOf } from '../support/poller-app-fixture.ts';

type Json = Record<string, unknown>;

function newStack(): Stack {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  return new Stack(app, 'Host', { env: { account: '123456789012', region: 'eu-west-1' } });
}

function consumerIn(stack: Stack): lambda.Function {
  return new lambda.Function(stack, 'Consumer', {
    runtime: lambda.Runtime.NODEJS_24_X,
    handler: 'index.handler',
    code: lambda.Code.fromInline('export const handler = async () => {};'),
  });
}

/** The statements of every IAM policy attached to `roleId`. */
function roleStatements(template: Template, roleId: string): Json[] {
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((policy) =>
      JSON.stringify((policy as { Properties: Json }).Properties.Roles).includes(`"${roleId}"`),
    )
    .flatMap(
      (policy) =>
        (policy as { Properties: { PolicyDocument: { Statement: Json[] } } }).Properties.PolicyDocument
          .Statement,
    );
}

const VIA = (service: string) => ({
  StringEquals: { 'kms:ViaService': `${service}.eu-west-1.amazonaws.com` },
});

describe('a construct given a key', () => {
  let stack: Stack;
  let template: Template;
  let keyArn: Json;
  let keyStatements: Json[];
  let poller: BankingEventsPoller;
  let busName: string;

  beforeAll(() => {
    stack = newStack();
    const key = new kms.Key(stack, 'Key', { enableKeyRotation: true });
    poller = new BankingEventsPoller(stack, 'Poller', {
      programs: [{ name: 'cards' }, { name: 'loans' }],
      encryptionKey: key,
    });
    poller.grantSubscriber(consumerIn(stack));
    template = Template.fromStack(stack);
    busName = template.findResources('AWS::Events::EventBus')[logicalIdOf(stack, poller.eventBus as never)]
      ?.Properties.Name as string;
    keyArn = { 'Fn::GetAtt': [logicalIdOf(stack, key), 'Arn'] };
    keyStatements = (
      template.toJSON().Resources[logicalIdOf(stack, key)] as {
        Properties: { KeyPolicy: { Statement: Json[] } };
      }
    ).Properties.KeyPolicy.Statement;
  });

  it('encrypts the three tables with it (checkpoints, programs, idempotency)', () => {
    const tables = Object.values(template.findResources('AWS::DynamoDB::Table'));
    expect(tables).toHaveLength(3);
    for (const table of tables) {
      expect((table as { Properties: Json }).Properties.SSESpecification).toEqual({
        KMSMasterKeyId: keyArn,
        SSEEnabled: true,
        SSEType: 'KMS',
      });
    }
  });

  it('encrypts the secrets, every queue, the log group, the topic, the bus and the archive with it', () => {
    const keyed = (type: string, property: string) =>
      Object.values(template.findResources(type)).map(
        (resource) => (resource as { Properties: Json }).Properties[property],
      );

    expect(keyed('AWS::SecretsManager::Secret', 'KmsKeyId')).toEqual([keyArn, keyArn]);
    // Two routes, the quarantine and the catch-all (a queue and a DLQ each), and the schedule DLQ.
    expect(keyed('AWS::SQS::Queue', 'KmsMasterKeyId')).toEqual(Array(9).fill(keyArn));
    template.hasResourceProperties('AWS::Logs::LogGroup', { KmsKeyId: keyArn });
    expect(keyed('AWS::SNS::Topic', 'KmsMasterKeyId')).toEqual([keyArn]);
    expect(keyed('AWS::Events::EventBus', 'KmsKeyIdentifier')).toEqual([keyArn]);
    expect(keyed('AWS::Events::Archive', 'KmsKeyIdentifier')).toEqual([keyArn]);
    // The topic uses the given key: no key of its own.
    template.resourceCountIs('AWS::KMS::Key', 1);
  });

  it('encrypts the claim-check bucket with SSE-KMS and a bucket key', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          {
            BucketKeyEnabled: true,
            ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: keyArn },
          },
        ],
      },
      VersioningConfiguration: { Status: 'Enabled' },
    });
  });

  it("admits EventBridge for the bus's rules only, by source account and source ARN", () => {
    expect(keyStatements).toContainEqual(
      expect.objectContaining({
        Sid: 'EventBridgeRuleDelivery',
        Principal: { Service: 'events.amazonaws.com' },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
        Condition: {
          StringEquals: { 'aws:SourceAccount': '123456789012' },
          ArnLike: { 'aws:SourceArn': `arn:aws:events:eu-west-1:123456789012:rule/${busName}/*` },
        },
      }),
    );
  });

  it('admits EventBridge for the bus and its archive, bound to the bus by the encryption context', () => {
    const busArn = `arn:aws:events:eu-west-1:123456789012:event-bus/${busName}`;
    expect(keyStatements).toContainEqual(
      expect.objectContaining({
        Principal: { Service: 'events.amazonaws.com' },
        Condition: {
          StringEquals: {
            'aws:SourceAccount': '123456789012',
            'aws:SourceArn': busArn,
            'kms:EncryptionContext:aws:events:event-bus:arn': busArn,
          },
        },
      }),
    );
    expect(keyStatements).toContainEqual(
      expect.objectContaining({
        Sid: 'EventBridgeArchive',
        Action: ['kms:Decrypt', 'kms:GenerateDataKey', 'kms:ReEncrypt*'],
        Condition: { StringEquals: { 'kms:EncryptionContext:aws:events:event-bus:arn': busArn } },
      }),
    );
  });

  it("admits CloudWatch Logs for this stack's log groups only, by the encryption context", () => {
    const statement = keyStatements.find((candidate) => candidate.Sid === 'CloudWatchLogsLogGroups');
    expect(statement?.Principal).toEqual({ Service: 'logs.eu-west-1.amazonaws.com' });
    expect(statement?.Condition).toEqual({
      ArnLike: {
        'kms:EncryptionContext:aws:logs:arn': 'arn:aws:logs:eu-west-1:123456789012:log-group:Host-*',
      },
    });
  });

  it('admits CloudWatch alarms of this account and region, to publish to the topic', () => {
    expect(keyStatements).toContainEqual(
      expect.objectContaining({
        Sid: 'CloudWatchAlarmsPublish',
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        Condition: {
          StringEquals: { 'aws:SourceAccount': '123456789012' },
          ArnLike: { 'aws:SourceArn': 'arn:aws:cloudwatch:eu-west-1:123456789012:alarm:*' },
        },
      }),
    );
  });

  it('admits no other service principal', () => {
    const services = new Set(
      keyStatements.flatMap((statement) => {
        const service = (statement.Principal as { Service?: unknown } | undefined)?.Service;
        return service === undefined ? [] : [JSON.stringify(service)];
      }),
    );
    expect([...services].sort()).toEqual([
      '"cloudwatch.amazonaws.com"',
      '"events.amazonaws.com"',
      '"logs.eu-west-1.amazonaws.com"',
    ]);
  });

  it('lets the function use the key only through DynamoDB, S3 (a data key) and Secrets Manager', () => {
    const roleId = logicalIdOf(stack, poller.pollerFunction.role as never);
    const statements = roleStatements(template, roleId).filter((statement) =>
      JSON.stringify(statement.Action).includes('kms:'),
    );
    expect(statements).toContainEqual(
      expect.objectContaining({
        Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
        Resource: keyArn,
        Condition: VIA('dynamodb'),
      }),
    );
    expect(statements).toContainEqual(
      expect.objectContaining({ Action: 'kms:GenerateDataKey', Resource: keyArn, Condition: VIA('s3') }),
    );
    expect(statements).toContainEqual(
      expect.objectContaining({ Action: 'kms:Decrypt', Resource: keyArn, Condition: VIA('secretsmanager') }),
    );
    // Secret.grantRead puts its own grant in the key policy, with the same condition.
    expect(keyStatements).toContainEqual(
      expect.objectContaining({
        Action: 'kms:Decrypt',
        Principal: { AWS: { 'Fn::GetAtt': [roleId, 'Arn'] } },
        Condition: VIA('secretsmanager'),
      }),
    );
    for (const statement of statements) expect(statement.Condition).toBeDefined();
  });

  it('lets the scheduler role use the key only through SQS, for the schedule DLQ', () => {
    const schedulerRole = stack.node
      .findAll()
      .find((construct) => construct.node.path === 'Host/Poller/SchedulerRole');
    const statements = roleStatements(template, logicalIdOf(stack, schedulerRole as never));
    expect(statements).toContainEqual(
      expect.objectContaining({
        Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
        Resource: keyArn,
        Condition: VIA('sqs'),
      }),
    );
  });

  it('lets a subscriber decrypt claim-check objects through S3 and use its idempotency table through DynamoDB', () => {
    const consumer = stack.node.findChild('Consumer') as lambda.Function;
    const statements = roleStatements(template, logicalIdOf(stack, consumer.role as never));
    expect(statements).toContainEqual(
      expect.objectContaining({ Action: 'kms:Decrypt', Resource: keyArn, Condition: VIA('s3') }),
    );
    expect(statements).toContainEqual(
      expect.objectContaining({
        Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
        Resource: keyArn,
        Condition: VIA('dynamodb'),
      }),
    );
  });

  it('keeps each route queue and its DLQ to its own rule, as without a key', () => {
    const policies = Object.values(template.findResources('AWS::SQS::QueuePolicy')).map((policy) =>
      JSON.stringify(policy),
    );
    const fromEvents = policies.filter((policy) => policy.includes('events.amazonaws.com'));
    expect(fromEvents.length).toBeGreaterThanOrEqual(8);
    for (const policy of fromEvents) {
      expect(policy).toContain('aws:SourceArn');
      expect(policy).not.toContain('aws:SourceAccount');
    }
    template.hasResourceProperties('AWS::Events::Rule', {
      Targets: [
        Match.objectLike({
          DeadLetterConfig: Match.objectLike({ Arn: Match.anyValue() }),
          RetryPolicy: { MaximumEventAgeInSeconds: 86_400, MaximumRetryAttempts: 185 },
        }),
      ],
    });
  });
});

describe('a key imported into the app', () => {
  it('is used, and synth warns that its policy needs the statements added by hand', () => {
    const stack = newStack();
    const key = kms.Key.fromKeyArn(
      stack,
      'Key',
      'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
    );
    new BankingEventsPoller(stack, 'Poller', { encryptionKey: key });

    Annotations.fromStack(stack).hasWarning(
      '/Host/Poller',
      Match.stringLikeRegexp('EventBridgeRuleDelivery.*CloudWatchLogsLogGroups.*CloudWatchAlarmsPublish'),
    );
    Template.fromStack(stack).hasResourceProperties('AWS::Logs::LogGroup', { KmsKeyId: key.keyArn });
  });
});

describe('existing resources encrypted with their own keys', () => {
  it('grant the function their keys, through their services', () => {
    const stack = newStack();
    const tableKey = new kms.Key(stack, 'TableKey', { enableKeyRotation: true });
    const secretKey = new kms.Key(stack, 'SecretKey', { enableKeyRotation: true });
    const poller = new BankingEventsPoller(stack, 'Poller', {
      programs: [
        {
          name: 'cards',
          existingSecret: secretsmanager.Secret.fromSecretAttributes(stack, 'Cards', {
            secretCompleteArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:cards-AbC123',
            encryptionKey: secretKey,
          }),
        },
      ],
      existingCheckpointTable: dynamodb.Table.fromTableAttributes(stack, 'Checkpoints', {
        tableName: 'poller-checkpoints',
        encryptionKey: tableKey,
      }),
    });
    const template = Template.fromStack(stack);
    const roleId = logicalIdOf(stack, poller.pollerFunction.role as never);
    const statements = roleStatements(template, roleId);
    const arnOf = (key: kms.Key) => ({ 'Fn::GetAtt': [logicalIdOf(stack, key), 'Arn'] });

    expect(statements).toContainEqual(
      expect.objectContaining({ Resource: arnOf(tableKey), Condition: VIA('dynamodb') }),
    );
    expect(statements).toContainEqual(
      expect.objectContaining({
        Action: 'kms:Decrypt',
        Resource: arnOf(secretKey),
        Condition: VIA('secretsmanager'),
      }),
    );
    // Without encryptionKey the construct's own stores keep their AWS-managed keys.
    template.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
  });
});
