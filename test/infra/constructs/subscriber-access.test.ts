/**
 * The construct's grants for subscribers, embedded in another app: read on the claim-check
 * objects only, and an idempotency table (the subscriber's own, or one the construct creates once
 * and shares).
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import { BankingEventsPoller } from '../../../infra/constructs/index.ts';
import { cdkJsonContext } from '../support/poller-app-fixture.ts';

function embedding(): { stack: Stack; poller: BankingEventsPoller } {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Subscribers');
  return { stack, poller: new BankingEventsPoller(stack, 'Poller') };
}

function role(stack: Stack, id: string): iam.Role {
  return new iam.Role(stack, id, { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
}

/** The statements of the policies attached to `grantee`. */
function statementsOf(stack: Stack, grantee: iam.Role): unknown[] {
  const template = Template.fromStack(stack);
  const roleId = stack.getLogicalId(grantee.node.defaultChild as iam.CfnRole);
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .map((resource) => (resource as { Properties: Record<string, unknown> }).Properties)
    .filter((policy) => JSON.stringify(policy.Roles) === JSON.stringify([{ Ref: roleId }]))
    .flatMap((policy) => (policy.PolicyDocument as { Statement: unknown[] }).Statement);
}

describe('grantClaimCheckRead', () => {
  it('allows s3:GetObject on the claim-check objects and nothing else, creating nothing', () => {
    const { stack, poller } = embedding();
    const consumer = role(stack, 'Consumer');

    poller.grantClaimCheckRead(consumer);

    const bucketId = stack.getLogicalId(poller.claimCheckBucket.node.defaultChild as never);
    expect(statementsOf(stack, consumer)).toEqual([
      {
        Effect: 'Allow',
        Action: 's3:GetObject',
        Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId, 'Arn'] }, '/*']] },
      },
    ]);
    // The checkpoint and programs tables only.
    Template.fromStack(stack).resourceCountIs('AWS::DynamoDB::Table', 2);
  });
});

describe('grantSubscriber', () => {
  it('creates one idempotency table for every subscriber without its own, and grants each its records', () => {
    const { stack, poller } = embedding();
    const first = role(stack, 'First');
    const second = role(stack, 'Second');

    const a = poller.grantSubscriber(first);
    const b = poller.grantSubscriber(second);

    expect(a.idempotencyTable).toBe(b.idempotencyTable);
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::DynamoDB::Table', 3);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      TimeToLiveSpecification: { AttributeName: 'expiration', Enabled: true },
    });
    const tableId = stack.getLogicalId(a.idempotencyTable.node.defaultChild as never);
    expect(tableId).toMatch(/^PollerSubscriberIdempotencyTable[0-9A-F]{8}$/);
    for (const grantee of [first, second]) {
      expect(statementsOf(stack, grantee)).toContainEqual({
        Effect: 'Allow',
        Action: ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
        Resource: { 'Fn::GetAtt': [tableId, 'Arn'] },
      });
      expect(statementsOf(stack, grantee)).toContainEqual(
        expect.objectContaining({ Action: 's3:GetObject' }),
      );
    }
  });

  it("uses the subscriber's own table when it brings one, and creates none", () => {
    const { stack, poller } = embedding();
    const consumer = role(stack, 'Consumer');
    const own = new dynamodb.Table(stack, 'OwnIdempotency', {
      partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING },
      timeToLiveAttribute: 'expiration',
    });

    const { idempotencyTable } = poller.grantSubscriber(consumer, { idempotencyTable: own });

    expect(idempotencyTable).toBe(own);
    Template.fromStack(stack).resourceCountIs('AWS::DynamoDB::Table', 3);
    expect(statementsOf(stack, consumer)).toContainEqual(
      expect.objectContaining({
        Resource: { 'Fn::GetAtt': [stack.getLogicalId(own.node.defaultChild as never), 'Arn'] },
      }),
    );
  });
});
