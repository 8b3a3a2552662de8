/**
 * `eventBusKind: 'custom'`: the EventBridge Custom Event Bus instead of the classic bus, its rules
 * and its archive. Each route a subscriber onto its queue (an ordered one FIFO onto FIFO queues),
 * the function publishing to the bus by its ARN with PutEvents on it alone, the customer-managed key
 * on the bus and the key policy it needs, the order-broken alarm, and what the construct refuses.
 */
import { App, type CfnElement, Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { beforeAll, describe, expect, it } from 'vitest';
import { BankingEventsPoller, type BankingEventsPollerProps } from '../../../infra/constructs/index.ts';
import { cdkJsonContext, logicalIdOf } from '../support/poller-app-fixture.ts';

type Json = Record<string, unknown>;

function newStack(): Stack {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  return new Stack(app, 'Host', { env: { account: '123456789012', region: 'eu-west-1' } });
}

function synth(props: BankingEventsPollerProps): {
  stack: Stack;
  poller: BankingEventsPoller;
  template: Template;
} {
  const stack = newStack();
  const poller = new BankingEventsPoller(stack, 'Poller', props);
  return { stack, poller, template: Template.fromStack(stack) };
}

function variables(template: Template): Json {
  const [fn] = Object.values(
    template.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.handler' } }),
  ) as { Properties: { Environment: { Variables: Json } } }[];
  return fn!.Properties.Environment.Variables;
}

const CUSTOM: BankingEventsPollerProps = {
  eventBusKind: 'custom',
  eventBusName: 'payments',
  busRetention: Duration.days(30),
  eventGroupBy: 'account',
  routes: {
    account_status: { ordered: true, retryAttempts: 12, maxEventAge: Duration.hours(2) },
    transaction: {},
  },
};

describe('the custom bus', () => {
  let stack: Stack;
  let poller: BankingEventsPoller;
  let template: Template;
  let busId: string;

  beforeAll(() => {
    ({ stack, poller, template } = synth(CUSTOM));
    busId = stack.getLogicalId(poller.customBus!.resource);
  });

  it('is an AWS::EventsV2::EventBus keeping events for busRetention, with no classic bus, rule or archive', () => {
    template.resourceCountIs('AWS::EventsV2::EventBus', 1);
    template.hasResourceProperties('AWS::EventsV2::EventBus', {
      Name: 'payments',
      StorageConfiguration: { RetentionPeriodInDays: 30 },
      EncryptionConfiguration: Match.absent(),
    });
    for (const type of ['AWS::Events::EventBus', 'AWS::Events::Rule', 'AWS::Events::Archive']) {
      template.resourceCountIs(type, 0);
    }
    // The schema registry documents the types for either bus.
    template.resourceCountIs('AWS::EventSchemas::Registry', 1);
  });

  it('has one subscriber per route, the quarantine and the catch-all, each filtering on the detail-type', () => {
    const patterns = Object.values(template.findResources('AWS::EventsV2::Subscriber')).map(
      (resource) =>
        JSON.parse(
          (resource as { Properties: { FilterConfiguration: { Filters: { Pattern: string }[] } } }).Properties
            .FilterConfiguration.Filters[0]!.Pattern,
        ) as Json,
    );

    expect(patterns).toEqual([
      { source: ['banking.events'], 'detail-type': ['account_status'] },
      { source: ['banking.events'], 'detail-type': ['transaction'] },
      { source: ['banking.events'], 'detail-type': ['invalid_event'] },
      {
        source: ['banking.events'],
        'detail-type': [{ 'anything-but': ['account_status', 'transaction', 'invalid_event'] }],
      },
    ]);
    template.allResourcesProperties('AWS::EventsV2::Subscriber', {
      EventBusArn: { 'Fn::GetAtt': [busId, 'EventBusArn'] },
      FilterConfiguration: {
        Language: 'EVENT_BRIDGE_PATTERN',
        Filters: [Match.objectLike({ Scope: 'DATA' })],
      },
      Transformer: { Type: 'RAW' },
    });
  });

  it("delivers each route to its queue with the route's retry policy and its DLQ as the on-failure destination", () => {
    const transaction = poller.subscriberRouting!.routes.find((route) => route.name === 'transaction')!;
    const accountStatus = poller.subscriberRouting!.routes.find((route) => route.name === 'account_status')!;

    template.hasResourceProperties('AWS::EventsV2::Subscriber', {
      Type: 'UNORDERED',
      InvokeConfiguration: {
        TargetArn: { 'Fn::GetAtt': [logicalIdOf(stack, transaction.queue), 'Arn'] },
        RoleArn: { 'Fn::GetAtt': [logicalIdOf(stack, transaction.deliveryRole), 'Arn'] },
        SqsParameters: Match.absent(),
      },
      RetryPolicy: { MaxEventAgeInSeconds: 86_400, MaxRetryAttempts: 185, RetryStrategy: 'ALL' },
      OnFailureConfiguration: {
        Arn: { 'Fn::GetAtt': [logicalIdOf(stack, transaction.deadLetterQueue), 'Arn'] },
      },
    });
    template.hasResourceProperties('AWS::EventsV2::Subscriber', {
      InvokeConfiguration: Match.objectLike({
        TargetArn: { 'Fn::GetAtt': [logicalIdOf(stack, accountStatus.queue), 'Arn'] },
      }),
      RetryPolicy: { MaxEventAgeInSeconds: 7200, MaxRetryAttempts: 12, RetryStrategy: 'ALL' },
    });
  });

  it('makes an ordered route a FIFO subscriber onto a FIFO queue and DLQ, grouped by the event group', () => {
    const route = poller.subscriberRouting!.routes.find((candidate) => candidate.ordered)!;

    expect(route.name).toBe('account_status');
    template.hasResourceProperties('AWS::EventsV2::Subscriber', {
      Type: 'FIFO',
      InvokeConfiguration: Match.objectLike({
        SqsParameters: { MessageGroupId: '{% $events.SystemMetadata.EventGroupId %}' },
      }),
    });
    const queues = template.findResources('AWS::SQS::Queue', { Properties: { FifoQueue: true } });
    expect(Object.keys(queues).sort()).toEqual(
      [logicalIdOf(stack, route.queue), logicalIdOf(stack, route.deadLetterQueue)].sort(),
    );
    template.hasResourceProperties('AWS::SQS::Queue', {
      FifoQueue: true,
      ContentBasedDeduplication: true,
      RedrivePolicy: {
        deadLetterTargetArn: { 'Fn::GetAtt': [logicalIdOf(stack, route.deadLetterQueue), 'Arn'] },
      },
    });
  });

  it("lets only EventBridge, for that one subscriber of this account or archive-replay's copies of it, assume a delivery role that may send to two queues", () => {
    const route = poller.subscriberRouting!.routes.find((candidate) => candidate.name === 'transaction')!;
    const subscriberName = route.subscriber.name;

    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [
          {
            Action: 'sts:AssumeRole',
            Effect: 'Allow',
            Principal: { Service: 'events.amazonaws.com' },
            Condition: {
              StringEquals: { 'aws:SourceAccount': '123456789012' },
              ArnLike: {
                'aws:SourceArn': [
                  `arn:aws:events:eu-west-1:123456789012:subscriber/${subscriberName}/*`,
                  'arn:aws:events:eu-west-1:123456789012:subscriber/bep-replay-*/*',
                ],
              },
            },
          },
        ],
      },
    });
    const roleId = logicalIdOf(stack, route.deliveryRole);
    const [policy] = Object.values(
      template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: roleId }] } }),
    ) as { Properties: { PolicyDocument: { Statement: Json[] } } }[];
    const [statement, ...others] = policy!.Properties.PolicyDocument.Statement;
    expect(others).toEqual([]);
    expect(statement).toMatchObject({ Action: 'sqs:SendMessage', Effect: 'Allow' });
    expect(statement!.Resource).toHaveLength(2);
    expect(statement!.Resource).toEqual(
      expect.arrayContaining([
        { 'Fn::GetAtt': [logicalIdOf(stack, route.queue), 'Arn'] },
        { 'Fn::GetAtt': [logicalIdOf(stack, route.deadLetterQueue), 'Arn'] },
      ]),
    );
  });

  it('gives the function the bus by its ARN, the kind and the grouping, and PutEvents on that bus alone', () => {
    expect(variables(template)).toMatchObject({
      EVENT_BUS_NAME: { 'Fn::GetAtt': [busId, 'EventBusArn'] },
      EVENT_BUS_KIND: 'custom',
      EVENT_GROUP_BY: 'account',
    });
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .flatMap(
        (policy) =>
          (policy as { Properties: { PolicyDocument: { Statement: Json[] } } }).Properties.PolicyDocument
            .Statement,
      )
      .filter((statement) => JSON.stringify(statement.Action).includes('events:'));
    expect(statements).toEqual([
      { Action: 'events:PutEvents', Effect: 'Allow', Resource: { 'Fn::GetAtt': [busId, 'EventBusArn'] } },
    ]);
  });

  it("keeps the poller's source to the poller with the bus's resource policy, exemptions included", () => {
    const own = newStack();
    const guarded = new BankingEventsPoller(own, 'Poller', CUSTOM);
    const oncall = new iam.Role(own, 'Oncall', { assumedBy: new iam.AccountRootPrincipal() });
    guarded.allowPublishAsPoller(oncall);
    const updated = Template.fromStack(own);
    const functionRoleId = own.getLogicalId(guarded.pollerFunction.role!.node.defaultChild as CfnElement);

    updated.hasResourceProperties('AWS::EventsV2::ResourcePolicy', {
      EventBusArn: { 'Fn::GetAtt': [busId, 'EventBusArn'] },
      PolicyDocument: {
        Version: '2012-10-17',
        Statement: [
          {
            Sid: 'OnlyThePollerPublishesItsSource',
            Effect: 'Deny',
            Principal: '*',
            Action: 'events:PutEvents',
            Resource: { 'Fn::GetAtt': [busId, 'EventBusArn'] },
            Condition: {
              'ForAnyValue:StringEquals': { 'events:source': 'banking.events' },
              ArnNotEquals: {
                'aws:PrincipalArn': [
                  { 'Fn::GetAtt': [functionRoleId, 'Arn'] },
                  { 'Fn::GetAtt': [logicalIdOf(own, oncall), 'Arn'] },
                ],
              },
            },
          },
        ],
      },
    });
    updated.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: logicalIdOf(own, oncall) }],
      PolicyDocument: {
        Statement: [
          { Action: 'events:PutEvents', Effect: 'Allow', Resource: { 'Fn::GetAtt': [busId, 'EventBusArn'] } },
        ],
      },
    });
  });

  it('alarms on a broken order per program, linking the runbook like every alarm', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'OrderBroken',
      Dimensions: Match.arrayWith([{ Name: 'Program', Value: 'default' }]),
      Statistic: 'Sum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
      AlarmDescription: Match.stringLikeRegexp('Runbook: docs/runbook\\.md#alarm-order-broken$'),
    });
    expect(poller.alarms.orderBrokenAlarms.size).toBe(1);
    const [dashboard] = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
    expect(JSON.stringify(dashboard)).toContain('OrderBroken');
  });

  it("leaves the classic bus's members out, and names the bus and its routes as either kind does", () => {
    expect(poller.eventBus).toBeUndefined();
    expect(poller.archive).toBeUndefined();
    expect(poller.routing).toBeUndefined();
    expect(stack.resolve(poller.bus.eventBusArn)).toEqual({ 'Fn::GetAtt': [busId, 'EventBusArn'] });
    expect(poller.bus.eventBusName).toBe('payments');
    expect(poller.routes.map((route) => route.name)).toEqual([
      'account_status',
      'transaction',
      'invalid_event',
      'unrouted',
    ]);
  });
});

describe('the custom bus with a customer-managed key', () => {
  it('encrypts the bus with it and admits EventBridge for this bus only, by name, without a cycle', () => {
    const stack = newStack();
    const key = new kms.Key(stack, 'Key', { enableKeyRotation: true });
    const poller = new BankingEventsPoller(stack, 'Poller', { ...CUSTOM, encryptionKey: key });
    const template = Template.fromStack(stack);
    const keyId = logicalIdOf(stack, key);

    template.hasResourceProperties('AWS::EventsV2::EventBus', {
      EncryptionConfiguration: { KmsKeyIdentifier: { 'Fn::GetAtt': [keyId, 'Arn'] } },
    });
    template.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({ Sid: 'EventBridgeDescribeKey', Action: 'kms:DescribeKey' }),
          {
            Sid: 'EventBridgeCustomBus',
            Effect: 'Allow',
            Principal: { Service: 'events.amazonaws.com' },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*', 'kms:ReEncrypt*'],
            Resource: '*',
            Condition: {
              StringEquals: { 'aws:SourceAccount': '123456789012' },
              ArnLike: { 'aws:SourceArn': 'arn:aws:events:eu-west-1:123456789012:event-busv2/payments/*' },
            },
          },
        ]),
      },
    });
    // The classic bus's statements have nothing to do here.
    expect(JSON.stringify(template.findResources('AWS::KMS::Key'))).not.toMatch(
      /EventBridgeRuleDelivery|EventBridgeArchive/,
    );
    // Each delivery role uses the key through SQS only.
    const roleId = logicalIdOf(stack, poller.subscriberRouting!.routes[0]!.deliveryRole);
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: roleId }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
            Effect: 'Allow',
            Resource: { 'Fn::GetAtt': [keyId, 'Arn'] },
            Condition: { StringEquals: { 'kms:ViaService': 'sqs.eu-west-1.amazonaws.com' } },
          },
        ]),
      },
    });
  });
});

describe('the classic bus, the default', () => {
  it('writes neither the kind nor the grouping, and has no custom bus or order alarm', () => {
    const { poller, template } = synth({});

    expect(Object.keys(variables(template))).not.toContain('EVENT_BUS_KIND');
    expect(Object.keys(variables(template))).not.toContain('EVENT_GROUP_BY');
    template.resourceCountIs('AWS::EventsV2::EventBus', 0);
    template.resourceCountIs('AWS::EventsV2::Subscriber', 0);
    expect(poller.customBus).toBeUndefined();
    expect(poller.subscriberRouting).toBeUndefined();
    expect(poller.tailDeliveryRole).toBeUndefined();
    expect(poller.bus.eventBusArn).toBe(poller.eventBus!.eventBusArn);
    expect(poller.alarms.orderBrokenAlarms.size).toBe(0);
    expect(JSON.stringify(template.findResources('AWS::CloudWatch::Dashboard'))).not.toContain('OrderBroken');
  });
});

describe('what the custom bus refuses', () => {
  it.each([
    [
      'an ordered route on the classic bus',
      { routes: { transaction: { ordered: true } } },
      /Route "transaction": ordered applies to eventBusKind 'custom' only/,
    ],
    [
      'an ordered route without event groups',
      { ...CUSTOM, eventGroupBy: 'none' },
      /Route "account_status": ordered needs an event group, and eventGroupBy is 'none'/,
    ],
    [
      'caller-built rule targets',
      { eventBusKind: 'custom', routes: { transaction: { targets: () => [] } } },
      /Route "transaction": targets builds rule targets, and the custom bus has no rules/,
    ],
    [
      'a custom-bus setting on the classic bus',
      { eventGroupBy: 'account' },
      /eventGroupBy applies to eventBusKind 'custom' only; eventBusKind is 'classic'/,
    ],
    [
      'a retention outside 1 to 365 days',
      { eventBusKind: 'custom', busRetention: Duration.days(400) },
      /busRetention must be a Duration of whole days from 1 to 365/,
    ],
  ] as const)('refuses %s', (_case, props, message) => {
    expect(() => synth(props as BankingEventsPollerProps)).toThrow(message);
  });

  it('refuses an existing classic bus with the custom kind', () => {
    const stack = newStack();
    const existing = 'arn:aws:events:eu-west-1:123456789012:event-bus/shared';

    expect(
      () =>
        new BankingEventsPoller(stack, 'Poller', {
          eventBusKind: 'custom',
          existingEventBus: events.EventBus.fromEventBusArn(stack, 'Shared', existing),
        }),
    ).toThrow(/existingEventBus is a classic bus; eventBusKind 'custom' creates its own Custom Event Bus/);
  });
});
