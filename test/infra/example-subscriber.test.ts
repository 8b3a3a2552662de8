/**
 * The app with `exampleSubscriber` on: the subscriber's own rule, queue and DLQ, its function on
 * the queue with partial batch responses, and the grants the construct gives subscribers.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExampleSubscriber } from '../../infra/example-subscriber.ts';
import { logicalIdOf, type SynthesizedPollerApp, synthPollerApp } from './support/poller-app-fixture.ts';

type Json = Record<string, unknown>;

let synth: SynthesizedPollerApp;
let subscriber: ExampleSubscriber;
let id: (construct: { node: { defaultChild?: unknown } }) => string;

beforeAll(() => {
  synth = synthPollerApp({ exampleSubscriber: true });
  subscriber = synth.stack.exampleSubscriber!;
  id = (construct) => logicalIdOf(synth.stack, construct);
});
afterAll(() => synth?.dispose());

const getAtt = (logicalId: string, attribute = 'Arn') => ({ 'Fn::GetAtt': [logicalId, attribute] });
const ref = (logicalId: string) => ({ Ref: logicalId });

function statementsOfRole(roleLogicalId: string): Json[] {
  return Object.values(synth.template.findResources('AWS::IAM::Policy'))
    .map((resource) => (resource as { Properties: Json }).Properties)
    .filter((policy) => JSON.stringify(policy.Roles) === JSON.stringify([ref(roleLogicalId)]))
    .flatMap((policy) => (policy.PolicyDocument as { Statement: Json[] }).Statement);
}

describe('example subscriber', () => {
  it('is off in the cdk.json defaults: a deployment gets no subscriber and no idempotency table', () => {
    const defaults = synthPollerApp();
    try {
      expect(defaults.stack.exampleSubscriber).toBeUndefined();
      defaults.template.resourceCountIs('AWS::Lambda::EventSourceMapping', 0);
      // The checkpoint table and the programs table only.
      defaults.template.resourceCountIs('AWS::DynamoDB::Table', 2);
    } finally {
      defaults.dispose();
    }
  });

  it('is refused on the custom bus, which has no rules, naming the context key', () => {
    expect(() => synthPollerApp({ eventBusKind: 'custom', exampleSubscriber: true })).toThrow(
      /"exampleSubscriber" subscribes with a rule of the classic bus, and the custom bus has none/,
    );
  });

  it("takes transactions of the poller's source from the bus into a queue of its own, with a DLQ", () => {
    synth.template.hasResourceProperties('AWS::Events::Rule', {
      EventBusName: ref(id(synth.stack.poller.eventBus!)),
      EventPattern: { source: ['banking.events'], 'detail-type': ['transaction'] },
      Targets: [
        Match.objectLike({
          Arn: getAtt(id(subscriber.queue)),
          DeadLetterConfig: { Arn: getAtt(id(subscriber.deadLetterQueue)) },
          RetryPolicy: { MaximumRetryAttempts: 185, MaximumEventAgeInSeconds: 86_400 },
        }),
      ],
    });
    synth.template.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: { deadLetterTargetArn: getAtt(id(subscriber.deadLetterQueue)), maxReceiveCount: 5 },
      VisibilityTimeout: 180,
      SqsManagedSseEnabled: true,
    });
  });

  it('runs the example handler on the queue, batches of 10, with partial batch responses', () => {
    synth.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: getAtt(id(subscriber.queue)),
      FunctionName: ref(id(subscriber.subscriberFunction)),
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    synth.template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Timeout: 30,
      Environment: {
        Variables: {
          IDEMPOTENCY_TABLE: ref(id(subscriber.idempotencyTable)),
          CLAIM_CHECK_BUCKET: ref(id(synth.stack.poller.claimCheckBucket)),
          EVENT_SOURCE: 'banking.events',
          POWERTOOLS_SERVICE_NAME: 'example-subscriber',
          NODE_OPTIONS: '--enable-source-maps',
        },
      },
    });
  });

  it('may read the claim-check objects, use its idempotency records, consume its queue and log; nothing else', () => {
    const statements = statementsOfRole(id(subscriber.subscriberFunction.role!));

    expect(statements).toEqual(
      expect.arrayContaining([
        {
          Effect: 'Allow',
          Action: 's3:GetObject',
          Resource: { 'Fn::Join': ['', [getAtt(id(synth.stack.poller.claimCheckBucket)), '/*']] },
        },
        {
          Effect: 'Allow',
          Action: ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
          Resource: getAtt(id(subscriber.idempotencyTable)),
        },
        expect.objectContaining({
          Action: expect.arrayContaining(['sqs:ReceiveMessage', 'sqs:DeleteMessage']),
          Resource: getAtt(id(subscriber.queue)),
        }),
        {
          Effect: 'Allow',
          Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          Resource: getAtt(id(subscriber.subscriberFunction.logGroup)),
        },
      ]),
    );
    expect(statements).toHaveLength(4);
  });

  it("keeps its records in the construct's idempotency table: Powertools' layout, expiring, logical id pinned", () => {
    const tables = synth.template.findResources('AWS::DynamoDB::Table');

    // Renaming it would replace the table and forget which events were handled.
    expect(id(subscriber.idempotencyTable)).toBe('PollerSubscriberIdempotencyTable9BACF4AF');
    expect(tables.PollerSubscriberIdempotencyTable9BACF4AF).toMatchObject({
      Properties: {
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        TimeToLiveSpecification: { AttributeName: 'expiration', Enabled: true },
        BillingMode: 'PAY_PER_REQUEST',
        SSESpecification: { SSEEnabled: true },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      },
      DeletionPolicy: 'Delete',
    });
  });

  it('names its queue and function for operators', () => {
    synth.template.hasOutput('ExampleSubscriberQueueUrl', { Value: ref(id(subscriber.queue)) });
    synth.template.hasOutput('ExampleSubscriberFunctionName', {
      Value: ref(id(subscriber.subscriberFunction)),
    });
  });
});
