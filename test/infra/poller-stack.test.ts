/**
 * The app as `npx cdk synth` builds it from cdk.json (defaults): focused assertions on what the
 * person on call and the downstream teams rely on. Logical ids come from the constructs, never
 * from hashes written down here.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { CfnElement } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import type { BankingEventsPoller } from 'banking-events-poller';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROGRAM_OUTPUTS_MAX } from '../../infra/poller-stack.ts';
import {
  logicalIdOf,
  REPO_ROOT,
  type SynthesizedPollerApp,
  synthPollerApp,
} from './support/poller-app-fixture.ts';

type Json = Record<string, unknown>;

let synth: SynthesizedPollerApp;
let poller: BankingEventsPoller;
/** Logical id of a construct's default resource in this stack. */
let id: (construct: { node: { defaultChild?: unknown } }) => string;

beforeAll(() => {
  synth = synthPollerApp();
  poller = synth.stack.poller;
  id = (construct) => logicalIdOf(synth.stack, construct);
});
afterAll(() => synth.dispose());

const getAtt = (logicalId: string, attribute = 'Arn') => ({ 'Fn::GetAtt': [logicalId, attribute] });
const ref = (logicalId: string) => ({ Ref: logicalId });

function resourcesOfType(type: string): [string, Json][] {
  return Object.entries(synth.template.findResources(type)).map(([logicalId, resource]) => [
    logicalId,
    (resource as { Properties: Json }).Properties,
  ]);
}

/** The role EventBridge Scheduler assumes: the one whose trust policy names scheduler.amazonaws.com. */
function schedulerRoleId(): string {
  const roles = resourcesOfType('AWS::IAM::Role').filter(([, role]) =>
    JSON.stringify(role.AssumeRolePolicyDocument).includes('scheduler.amazonaws.com'),
  );
  expect(roles).toHaveLength(1);
  return roles[0]![0];
}

describe('schedule', () => {
  it('invokes the function every minute as the one worker, no window, no retries, a DLQ, once the programs are seeded', () => {
    synth.template.resourceCountIs('AWS::Scheduler::Schedule', 1);
    const seeding = poller.node.findChild('ProgramSeeding').node.findChild('Resource').node.defaultChild;
    synth.template.hasResource('AWS::Scheduler::Schedule', {
      DependsOn: [synth.stack.getLogicalId(seeding as CfnElement)],
    });
    synth.template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 minute)',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
      Target: {
        Arn: getAtt(id(poller.pollerFunction)),
        Input: JSON.stringify({ worker: 0 }),
        RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 },
        DeadLetterConfig: { Arn: getAtt(id(poller.scheduleDeadLetterQueue)) },
        RoleArn: getAtt(schedulerRoleId()),
      },
    });
  });
});

describe('function', () => {
  it('runs the handler on the latest Node.js runtime, arm64, 256 MiB, timeout = interval + 5 s overlap + 10 s margin', () => {
    synth.template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      MemorySize: 256,
      Timeout: 75,
      LoggingConfig: { LogGroup: ref(id(poller.logGroup)) },
      TracingConfig: Match.absent(),
    });
  });

  it('gets the environment of the handler contract', () => {
    const secretId = id(poller.secrets.get('default')!);

    synth.template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: {
          SECRET_ID: ref(secretId),
          DEFAULT_PROGRAM: 'default',
          CHECKPOINT_TABLE: ref(id(poller.checkpointTable)),
          EVENT_BUS_NAME: ref(id(poller.eventBus!)),
          EVENT_SOURCE: 'banking.events',
          POWERTOOLS_SERVICE_NAME: 'banking-events-poller',
          POWERTOOLS_METRICS_NAMESPACE: 'BankingEventsPoller',
          POWERTOOLS_LOG_LEVEL: 'INFO',
          POLL_LIMIT: '100',
          POLL_CURSOR_PARAM: 'last_sequence_number',
          POLL_LIMIT_PARAM: 'limit',
          SAFETY_MARGIN_MS: '10000',
          LEASE_WAIT_MS: '20000',
          PUBLISH_CONCURRENCY: '8',
          FEED_MODE: 'poll',
          GAP_REPAIR_MAX_LOOKUPS: '100',
          GAP_REPAIR_GRACE_SECONDS: '300',
          MAX_EVENT_ENTRY_BYTES: '1000000',
          CLAIM_CHECK_BUCKET: ref(id(poller.claimCheckBucket)),
          START_POSITION: 'beginning',
          NODE_OPTIONS: '--enable-source-maps',
        },
      },
    });
  });

  it('passes the query parameter names from the context to the function', () => {
    const renamed = synthPollerApp({ pollCursorParam: 'after', pollLimitParam: 'page_size' });
    try {
      renamed.template.hasResourceProperties('AWS::Lambda::Function', {
        Environment: {
          Variables: Match.objectLike({ POLL_CURSOR_PARAM: 'after', POLL_LIMIT_PARAM: 'page_size' }),
        },
      });
    } finally {
      renamed.dispose();
    }
  });

  it('reads the stream in stream mode, with its settings and gap repair from the context', () => {
    const streaming = synthPollerApp({
      feedMode: 'stream',
      streamRecovery: 'lookup',
      streamLingerMs: 50,
      streamCursorParam: 'from',
      gapRepairMaxLookups: 20,
      gapRepairGraceSeconds: 600,
    });
    try {
      streaming.template.hasResourceProperties('AWS::Lambda::Function', {
        Environment: {
          Variables: Match.objectLike({
            FEED_MODE: 'stream',
            STREAM_RECOVERY: 'lookup',
            STREAM_LINGER_MS: '50',
            STREAM_CURSOR_PARAM: 'from',
            GAP_REPAIR_MAX_LOOKUPS: '20',
            GAP_REPAIR_GRACE_SECONDS: '600',
          }),
        },
      });
    } finally {
      streaming.dispose();
    }
  });

  it('is not retried by Lambda on asynchronous failure: the next tick covers', () => {
    synth.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: ref(id(poller.pollerFunction)),
      // The version the schedule invokes (the unqualified function is $LATEST).
      Qualifier: '$LATEST',
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: 60,
    });
  });

  it('logs to its own log group with a retention', () => {
    synth.template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
  });
});

describe('claim-check bucket', () => {
  it('is encrypted, TLS only, never public, versioned, expires objects after 30 days, and is retained', () => {
    synth.template.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Retain',
      Properties: {
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        VersioningConfiguration: { Status: 'Enabled' },
        LifecycleConfiguration: {
          Rules: [
            {
              Id: 'ExpireClaimChecks',
              ExpirationInDays: 30,
              NoncurrentVersionExpiration: { NoncurrentDays: 30 },
              Status: 'Enabled',
            },
            { Id: 'RemoveExpiredDeleteMarkers', ExpiredObjectDeleteMarker: true, Status: 'Enabled' },
          ],
        },
        // ACLs off: objects belong to the bucket's account, whoever wrote them.
        OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      },
    });
    synth.template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: ref(id(poller.claimCheckBucket)),
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('takes the entry-size limit and the retention from the context', () => {
    const custom = synthPollerApp({ maxEventEntryBytes: 262_144, claimCheckRetentionDays: 7 });
    try {
      custom.template.hasResourceProperties('AWS::Lambda::Function', {
        Environment: { Variables: Match.objectLike({ MAX_EVENT_ENTRY_BYTES: '262144' }) },
      });
      custom.template.hasResourceProperties('AWS::S3::Bucket', {
        LifecycleConfiguration: {
          Rules: Match.arrayWith([
            Match.objectLike({ ExpirationInDays: 7, NoncurrentVersionExpiration: { NoncurrentDays: 7 } }),
          ]),
        },
      });
    } finally {
      custom.dispose();
    }
  });
});

describe('checkpoint table', () => {
  it('is on-demand, encrypted, recoverable to a point in time, keyed by pk, and retained', () => {
    synth.template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
      },
    });
  });
});

describe('secret', () => {
  it('is created with the JSON shape and placeholders only, never a value', () => {
    const [[, secret]] = resourcesOfType('AWS::SecretsManager::Secret') as [[string, Json]];

    expect(secret.SecretString).toBeUndefined();
    expect(secret.GenerateSecretString).toMatchObject({ GenerateStringKey: 'client_secret' });
    const template = JSON.parse((secret.GenerateSecretString as Json).SecretStringTemplate as string) as Json;
    expect(template).toEqual({ base_url: 'https://<banking-service-host>', client_id: '<client-id>' });
  });
});

describe('bus, archive and schemas', () => {
  it('creates the named bus and archives every poller event for 30 days', () => {
    synth.template.hasResourceProperties('AWS::Events::EventBus', { Name: 'banking-events' });
    synth.template.hasResourceProperties('AWS::Events::Archive', {
      SourceArn: getAtt(id(poller.eventBus!)),
      EventPattern: { source: ['banking.events'] },
      RetentionDays: 30,
    });
  });

  it('registers a JSON Schema for account_status, transaction and invalid_event events', () => {
    const schemas = resourcesOfType('AWS::EventSchemas::Schema').map(([, schema]) => schema);

    expect(schemas.map((schema) => schema.SchemaName).sort()).toEqual([
      'banking.events@AccountStatus',
      'banking.events@InvalidEvent',
      'banking.events@Transaction',
    ]);
    for (const schema of schemas) {
      expect(schema.Type).toBe('JSONSchemaDraft4');
      expect(schema.RegistryName).toEqual(
        getAtt(synth.stack.getLogicalId(poller.schemas.registry), 'RegistryName'),
      );
      const content = JSON.parse(schema.Content as string) as { properties: Record<string, Json> };
      expect(content.properties.source).toEqual({ type: 'string', enum: ['banking.events'] });
    }
  });
});

describe('routing', () => {
  const routeNamed = (name: string) => poller.routing!.routes.find((candidate) => candidate.name === name)!;

  // Every rule: on the poller's bus, enabled, one queue target with its DLQ and the retry policy.
  it.each([
    [
      'routes account_status events to their own queue',
      ['account_status'],
      () => routeNamed('account_status'),
    ],
    ['routes transaction events to their own queue', ['transaction'], () => routeNamed('transaction')],
    [
      'sends events that failed validation (invalid_event) to the quarantine queue',
      ['invalid_event'],
      () => poller.routing!.quarantine!,
    ],
    [
      'sends every other type to the unrouted queue, so a new upstream type is never lost',
      [{ 'anything-but': ['account_status', 'transaction', 'invalid_event'] }],
      () => poller.routing!.catchAll,
    ],
  ] as const)('%s', (_title, detailType, routeOf) => {
    const route = routeOf();

    synth.template.resourceCountIs('AWS::Events::Rule', 4);
    synth.template.hasResourceProperties('AWS::Events::Rule', {
      EventBusName: ref(id(poller.eventBus!)),
      EventPattern: { source: ['banking.events'], 'detail-type': detailType },
      State: 'ENABLED',
      Targets: [
        {
          Arn: getAtt(id(route.queue!)),
          Id: Match.anyValue(),
          DeadLetterConfig: { Arn: getAtt(id(route.deadLetterQueue)) },
          RetryPolicy: { MaximumEventAgeInSeconds: 86_400, MaximumRetryAttempts: 185 },
        },
      ],
    });
  });

  it('redrives each route queue to its DLQ after 5 receives', () => {
    for (const route of poller.routing!.routes) {
      synth.template.hasResourceProperties('AWS::SQS::Queue', {
        RedrivePolicy: { deadLetterTargetArn: getAtt(id(route.deadLetterQueue)), maxReceiveCount: 5 },
      });
    }
  });

  it('encrypts every queue, takes messages as large as the bus delivers, and refuses plain HTTP to each', () => {
    const queues = resourcesOfType('AWS::SQS::Queue');
    const policies = resourcesOfType('AWS::SQS::QueuePolicy').map(([, policy]) => policy);

    expect(queues).toHaveLength(9);
    for (const [logicalId, queue] of queues) {
      expect(queue.SqsManagedSseEnabled, logicalId).toBe(true);
      expect(queue.MessageRetentionPeriod, logicalId).toBe(1_209_600);
      // Route queues and their DLQs receive events from the bus; the schedule DLQ only ticks.
      if (logicalId !== id(poller.scheduleDeadLetterQueue)) {
        expect(queue.MaximumMessageSize, logicalId).toBe(1_048_576);
      }
      const policy = policies.find((candidate) =>
        (candidate.Queues as unknown[]).some(
          (queueRef) => JSON.stringify(queueRef) === JSON.stringify(ref(logicalId)),
        ),
      );
      expect(policy?.PolicyDocument, logicalId).toMatchObject({
        Statement: expect.arrayContaining([
          expect.objectContaining({
            Effect: 'Deny',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      });
    }
  });

  it('lets each rule send what it could not deliver to its own DLQ, and nothing else write there', () => {
    const routes = [...poller.routing!.routes];
    expect(routes.map((route) => route.name).sort()).toEqual(
      ['account_status', 'invalid_event', 'transaction', 'unrouted'].sort(),
    );
    for (const route of routes) {
      synth.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [ref(id(route.deadLetterQueue))],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Allow',
              Principal: { Service: 'events.amazonaws.com' },
              Action: 'sqs:SendMessage',
              Resource: getAtt(id(route.deadLetterQueue)),
              Condition: { ArnEquals: { 'aws:SourceArn': getAtt(id(route.rule)) } },
            }),
          ]),
        },
      });
    }
  });

  it('lets only its rule write to each route queue', () => {
    for (const route of poller.routing!.routes) {
      synth.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [ref(id(route.queue!))],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Allow',
              Principal: { Service: 'events.amazonaws.com' },
              Condition: { ArnEquals: { 'aws:SourceArn': getAtt(id(route.rule)) } },
            }),
          ]),
        },
      });
    }
  });
});

describe('alarms', () => {
  const dimensions = [
    { Name: 'Program', Value: 'default' },
    { Name: 'service', Value: 'banking-events-poller' },
  ];

  it('raises lag when LagSeconds stays above 300 s for 3 consecutive minutes', () => {
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'BankingEventsPoller',
      MetricName: 'LagSeconds',
      Dimensions: dimensions,
      Statistic: 'Maximum',
      Period: 60,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      Threshold: 300,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
    });
  });

  it('raises stall when no cycle completes for 5 minutes, missing data breaching', () => {
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'BankingEventsPoller',
      MetricName: 'CycleDurationMs',
      Dimensions: dimensions,
      Statistic: 'SampleCount',
      Period: 60,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 5,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'breaching',
    });
  });

  it('raises failed entries when the bus rejects entries in 3 of 5 minutes', () => {
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'BankingEventsPoller',
      MetricName: 'FailedEntries',
      Dimensions: dimensions,
      Statistic: 'Sum',
      Period: 60,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
  });

  it('raises skipped sequence numbers that no event filled within the gap-repair grace, missing data not breaching', () => {
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'BankingEventsPoller',
      MetricName: 'GapsUnfilled',
      Dimensions: dimensions,
      Statistic: 'Sum',
      Period: 60,
      EvaluationPeriods: 1,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmDescription: Match.stringLikeRegexp('Runbook: docs/runbook.md#alarm-sequence-gaps$'),
    });
  });

  it('raises a held sequence jump at once and stays raised while one awaits a decision, missing data not breaching', () => {
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'BankingEventsPoller',
      MetricName: 'SequenceJumpsHeld',
      Dimensions: dimensions,
      Statistic: 'Maximum',
      Period: 60,
      EvaluationPeriods: 1,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmDescription: Match.stringLikeRegexp('Runbook: docs/runbook.md#alarm-sequence-jumps$'),
    });
    expect(synth.stack.poller.alarms.sequenceJumpsAlarms.size).toBe(1);
  });

  it('raises a page larger than asked for at once, in the interval it came, missing data not breaching', () => {
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'BankingEventsPoller',
      MetricName: 'OversizePages',
      Dimensions: dimensions,
      Statistic: 'Sum',
      Period: 60,
      EvaluationPeriods: 1,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmDescription: Match.stringLikeRegexp(
        '^Program default: the feed answered a page with more events than the poll asked for.*Runbook: docs/runbook.md#alarm-oversize-pages$',
      ),
    });
    expect(synth.stack.poller.alarms.oversizePagesAlarms.size).toBe(1);
    expect(Object.keys(synth.stack.poller.alarms.oversizePagesAlarmsByProgram)).toEqual(['default']);
  });

  it('gives the function the jump bound it is configured with', () => {
    const strict = synthPollerApp({ maxSequenceJump: 5_000 });
    try {
      strict.template.hasResourceProperties('AWS::Lambda::Function', {
        Handler: 'index.handler',
        Environment: { Variables: Match.objectLike({ MAX_SEQUENCE_JUMP: '5000' }) },
      });
    } finally {
      strict.dispose();
    }
  });

  it('raises sequence gaps as soon as the feed skips a number when gap repair is off', () => {
    const unrepaired = synthPollerApp({ gapRepairMaxLookups: 0 });
    try {
      unrepaired.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'SequenceGaps',
        EvaluationPeriods: 1,
        Threshold: 1,
        AlarmDescription: Match.stringLikeRegexp('the feed skipped sequence numbers; their events'),
      });
      expect(
        unrepaired.template.findResources('AWS::CloudWatch::Alarm', {
          Properties: { MetricName: 'GapsUnfilled' },
        }),
      ).toEqual({});
    } finally {
      unrepaired.dispose();
    }
  });

  it('raises lease busy when ticks keep failing to take the lease over, in 3 of 5 minutes', () => {
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'LeaseBusy',
      Namespace: 'BankingEventsPoller',
      Dimensions: Match.arrayWith([{ Name: 'Program', Value: 'default' }]),
      Statistic: 'Sum',
      Period: 60,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
      Threshold: 1,
      TreatMissingData: 'notBreaching',
    });
  });

  it.each(['Errors', 'Throttles'])('raises %s of the function in 3 of 5 minutes', (metricName) => {
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: metricName,
      Dimensions: [{ Name: 'FunctionName', Value: ref(id(poller.pollerFunction)) }],
      Statistic: 'Sum',
      Period: 60,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
  });

  it('raises an alarm as soon as the schedule DLQ, any route DLQ, the unrouted or the quarantine queue holds a message', () => {
    const queues = [
      poller.scheduleDeadLetterQueue,
      ...poller.routing!.routes.map((route) => route.deadLetterQueue),
      poller.routing!.catchAll.queue!,
      poller.routing!.quarantine!.queue!,
    ];
    for (const queue of queues) {
      synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: getAtt(id(queue), 'QueueName') }],
        Statistic: 'Maximum',
        Period: 60,
        EvaluationPeriods: 1,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      });
    }
  });

  it('notifies the encrypted alarm topic on ALARM and on OK, from every alarm', () => {
    const topic = ref(id(poller.alarmTopic!));
    const alarms = resourcesOfType('AWS::CloudWatch::Alarm');

    // 9 of the stack, the default program's 7, 7 over every program and the worker's stall alarm.
    expect(alarms).toHaveLength(24);
    for (const [logicalId, alarm] of alarms) {
      expect(alarm.AlarmActions, logicalId).toEqual([topic]);
      expect(alarm.OKActions, logicalId).toEqual([topic]);
    }
    synth.template.resourceCountIs('AWS::SNS::Subscription', 0);
  });

  it('links every alarm to its section of the runbook', () => {
    const runbook = readFileSync(path.join(REPO_ROOT, 'docs/runbook.md'), 'utf8');

    for (const [logicalId, alarm] of resourcesOfType('AWS::CloudWatch::Alarm')) {
      const anchor = /Runbook: docs\/runbook\.md#(alarm-[a-z-]+)$/.exec(
        alarm.AlarmDescription as string,
      )?.[1];
      expect(anchor, logicalId).toBeDefined();
      expect(runbook, `docs/runbook.md has no anchor ${anchor}`).toContain(`<a id="${anchor}"></a>`);
    }
  });

  it('encrypts the topic with a rotating key CloudWatch may use, and refuses plain HTTP', () => {
    synth.template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
    synth.template.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          }),
        ]),
      },
    });
    synth.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });
});

describe('IAM', () => {
  /** Statements of every inline policy attached to the role with this logical id. */
  function statementsOfRole(roleLogicalId: string): Json[] {
    return resourcesOfType('AWS::IAM::Policy')
      .filter(([, policy]) => JSON.stringify(policy.Roles) === JSON.stringify([ref(roleLogicalId)]))
      .flatMap(([, policy]) => (policy.PolicyDocument as { Statement: Json[] }).Statement);
  }

  it('lets the function read its secrets, touch only items of its table, scan the programs, put events on its bus, write its logs', () => {
    const secretId = id(poller.secrets.get('default')!);

    const statements = statementsOfRole(id(poller.pollerFunction.role!));

    expect(statements).toEqual(
      expect.arrayContaining([
        {
          Effect: 'Allow',
          Action: ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'],
          // The secrets under the prefix (programs added at run time), and the stack's own.
          Resource: [
            {
              'Fn::Join': [
                '',
                [
                  'arn:',
                  { Ref: 'AWS::Partition' },
                  ':secretsmanager:',
                  { Ref: 'AWS::Region' },
                  ':',
                  { Ref: 'AWS::AccountId' },
                  ':secret:banking-events-poller/BankingEventsPoller/*',
                ],
              ],
            },
            ref(secretId),
          ],
        },
        {
          Effect: 'Allow',
          Action: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
          Resource: getAtt(id(poller.checkpointTable)),
        },
        // Read only: a worker never writes a program record (GetItem: an operator request's program).
        {
          Effect: 'Allow',
          Action: ['dynamodb:GetItem', 'dynamodb:Scan'],
          Resource: getAtt(id(poller.programsTable)),
        },
        { Effect: 'Allow', Action: 'events:PutEvents', Resource: getAtt(id(poller.eventBus!)) },
        {
          Effect: 'Allow',
          Action: 's3:PutObject',
          Resource: { 'Fn::Join': ['', [getAtt(id(poller.claimCheckBucket)), '/*']] },
        },
        {
          Effect: 'Allow',
          Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          Resource: getAtt(id(poller.logGroup)),
        },
      ]),
    );
    expect(statements).toHaveLength(6);
    synth.template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [Match.objectLike({ Principal: { Service: 'lambda.amazonaws.com' } })],
      },
      ManagedPolicyArns: Match.absent(),
    });
  });

  it('lets the scheduler invoke only the unqualified function and write only to its DLQ', () => {
    const fn = getAtt(id(poller.pollerFunction));

    expect(statementsOfRole(schedulerRoleId())).toEqual([
      {
        Effect: 'Allow',
        Action: 'lambda:InvokeFunction',
        Resource: [fn, { 'Fn::Join': ['', [fn, ':$LATEST']] }],
      },
      { Effect: 'Allow', Action: 'sqs:SendMessage', Resource: getAtt(id(poller.scheduleDeadLetterQueue)) },
    ]);
  });

  it("lets only this account's schedules of the default group assume the scheduler role", () => {
    const [role] = resourcesOfType('AWS::IAM::Role').filter(([logicalId]) => logicalId === schedulerRoleId());

    expect((role![1].AssumeRolePolicyDocument as { Statement: Json[] }).Statement).toEqual([
      {
        Effect: 'Allow',
        Action: 'sts:AssumeRole',
        Principal: { Service: 'scheduler.amazonaws.com' },
        Condition: {
          StringEquals: {
            'aws:SourceAccount': { Ref: 'AWS::AccountId' },
            'aws:SourceArn': {
              'Fn::Join': [
                '',
                [
                  'arn:',
                  { Ref: 'AWS::Partition' },
                  ':scheduler:',
                  { Ref: 'AWS::Region' },
                  ':',
                  { Ref: 'AWS::AccountId' },
                  ':schedule-group/default',
                ],
              ],
            },
          },
        },
      },
    ]);
  });

  it('grants no wildcard resource where a specific ARN exists, and no wildcard action, in any identity policy', () => {
    const statements = resourcesOfType('AWS::IAM::Policy').flatMap(
      ([, policy]) => (policy.PolicyDocument as { Statement: Json[] }).Statement,
    );
    // The exceptions: claim-check objects are named at run time, so PutObject alone on the
    // objects of that one bucket; and the program secrets are added at run time, so the read of
    // the secrets under the deployment's prefix, and no other.
    const claimCheckObjects = JSON.stringify({
      'Fn::Join': ['', [getAtt(id(poller.claimCheckBucket)), '/*']],
    });
    const underPrefix = '":secret:banking-events-poller/BankingEventsPoller/*"';

    for (const statement of statements) {
      const resources = JSON.stringify(statement.Resource);
      if (resources === claimCheckObjects) {
        expect(statement.Action).toBe('s3:PutObject');
        continue;
      }
      const prefixed = [statement.Resource]
        .flat()
        .filter((resource) => JSON.stringify(resource).includes(underPrefix));
      if (prefixed.length > 0) {
        expect(statement.Action).toEqual(['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue']);
        expect(prefixed).toHaveLength(1);
        expect(
          JSON.stringify([statement.Resource].flat().filter((resource) => !prefixed.includes(resource))),
        ).not.toMatch(/"\*"|:\*"|\/\*"/);
        continue;
      }
      expect(resources, JSON.stringify(statement)).not.toMatch(/"\*"|:\*"|\/\*"/);
      expect(JSON.stringify(statement.Action)).not.toContain('*');
    }
  });
});

describe('outputs', () => {
  it.each([
    [PROGRAM_OUTPUTS_MAX, PROGRAM_OUTPUTS_MAX],
    [PROGRAM_OUTPUTS_MAX + 1, 1],
  ])(
    'with %i programs in props, names %i of them one by one (CloudFormation allows 200 outputs)',
    (count, named) => {
      const names = Array.from({ length: count }, (_, index) => `p${String(index).padStart(4, '0')}`);
      const many = synthPollerApp({ programs: names.map((name) => ({ name })) });
      try {
        const outputs = many.template.toJSON().Outputs as Record<string, { Value: unknown }>;
        const keys = Object.keys(outputs);

        expect(keys.filter((key) => key.startsWith('SecretArn'))).toHaveLength(named);
        expect(keys.filter((key) => key.startsWith('ScheduleName'))).toHaveLength(named);
        expect(outputs.Programs?.Value).toBe(names.slice(0, named).join(','));
      } finally {
        many.dispose();
      }
    },
  );

  it("names every worker's schedule, worker i's at index i, for doctor (one output, whatever the count)", () => {
    const fleet = synthPollerApp({ workers: 3, programs: [{ name: 'default' }, { name: 'cards' }] });
    try {
      const outputs = fleet.template.toJSON().Outputs as Record<string, { Value: unknown }>;
      const resources = fleet.template.toJSON().Resources as Record<string, { Properties: Json }>;
      const scheduleIds = fleet.stack.poller.workerSchedules.map((schedule) =>
        logicalIdOf(fleet.stack, schedule),
      );

      expect(scheduleIds).toHaveLength(3);
      expect(outputs.WorkerCount?.Value).toBe('3');
      expect(outputs.WorkerScheduleNames?.Value).toEqual({ 'Fn::Join': [',', scheduleIds.map(ref)] });
      // Each sends its own index: the output's order is the workers'.
      for (const [worker, scheduleId] of scheduleIds.entries()) {
        const target = resources[scheduleId]!.Properties.Target as { Input: string };
        expect(JSON.parse(target.Input)).toEqual({ worker });
      }
    } finally {
      fleet.dispose();
    }
  });

  it('names the bus, table, secret, queues and dashboard for operators and subscribers', () => {
    const outputs = synth.template.toJSON().Outputs as Record<string, { Value: unknown }>;

    expect(Object.keys(outputs).sort()).toEqual(
      [
        'AlarmTopicArn',
        'ArchiveName',
        'CheckpointTableName',
        'DashboardUrl',
        'ClaimCheckBucketName',
        'DeadLetterQueueUrlAccountStatus',
        'DeadLetterQueueUrlQuarantine',
        'DeadLetterQueueUrlTransaction',
        'DeadLetterQueueUrlUnrouted',
        'EventBusArn',
        'EventBusName',
        'EventSource',
        'PollerFunctionArn',
        'PollerFunctionName',
        'Programs',
        'ProgramsTableName',
        'QueueUrlAccountStatus',
        'QueueUrlQuarantine',
        'QueueUrlTransaction',
        'QueueUrlUnrouted',
        'ScheduleDeadLetterQueueUrl',
        'ScheduleNameDefault',
        'SchemaRegistryName',
        'SecretArnDefault',
        'SecretsPrefix',
        'WorkerCount',
        'WorkerScheduleNames',
      ].sort(),
    );
    expect(JSON.stringify(outputs.DashboardUrl?.Value)).toContain('#dashboards:name=');
    // Each names the resource its key says: subscribers and the CLI (--stack) read them by key.
    const routing = poller.routing!;
    const route = (name: string) => routing.routes.find((candidate) => candidate.name === name)!;
    const values: Record<string, unknown> = {
      EventBusName: ref(id(poller.eventBus!)),
      EventBusArn: getAtt(id(poller.eventBus!)),
      CheckpointTableName: ref(id(poller.checkpointTable)),
      ProgramsTableName: ref(id(poller.programsTable)),
      SecretsPrefix: 'banking-events-poller/BankingEventsPoller/',
      WorkerCount: '1',
      // One worker: CDK gives a join of one name as that name.
      WorkerScheduleNames: ref(id(poller.workerSchedules[0]!)),
      // The CLI sends event, replay, doctor and rewind's feed reads to it as operator requests.
      PollerFunctionName: ref(id(poller.pollerFunction)),
      PollerFunctionArn: getAtt(id(poller.pollerFunction)),
      SecretArnDefault: ref(id(poller.secrets.get('default')!)),
      ClaimCheckBucketName: ref(id(poller.claimCheckBucket)),
      AlarmTopicArn: ref(id(poller.alarmTopic!)),
      SchemaRegistryName: getAtt(synth.stack.getLogicalId(poller.schemas.registry), 'RegistryName'),
      ScheduleDeadLetterQueueUrl: ref(id(poller.scheduleDeadLetterQueue)),
      QueueUrlAccountStatus: ref(id(route('account_status').queue!)),
      QueueUrlTransaction: ref(id(route('transaction').queue!)),
      QueueUrlQuarantine: ref(id(routing.quarantine!.queue!)),
      QueueUrlUnrouted: ref(id(routing.catchAll.queue!)),
      DeadLetterQueueUrlAccountStatus: ref(id(route('account_status').deadLetterQueue)),
      DeadLetterQueueUrlTransaction: ref(id(route('transaction').deadLetterQueue)),
      DeadLetterQueueUrlQuarantine: ref(id(routing.quarantine!.deadLetterQueue)),
      DeadLetterQueueUrlUnrouted: ref(id(routing.catchAll.deadLetterQueue)),
    };
    for (const [key, value] of Object.entries(values)) expect(outputs[key]?.Value, key).toEqual(value);
    // Ref of a schedule is its name: what `aws scheduler get-schedule --name` takes (runbook).
    expect(outputs.ScheduleNameDefault?.Value).toEqual(ref(id(poller.schedules.get('default')!)));
    // What the CLI reads with --stack: the programs, default first, the source and the archive.
    expect(outputs.Programs?.Value).toBe('default');
    expect(outputs.EventSource?.Value).toBe('banking.events');
    expect(outputs.ArchiveName?.Value).toEqual(ref(id(poller.archive!)));
  });
});

describe('dashboard', () => {
  /** The dashboard body as text, intrinsics (the tokens in it) kept as their JSON. */
  const body = () => {
    const [[, dashboard]] = resourcesOfType('AWS::CloudWatch::Dashboard') as [[string, Json]];
    return JSON.stringify(dashboard.DashboardBody);
  };

  it('shows lag, cycles, events by type, errors, the checkpoint and queue depths', () => {
    for (const expected of [
      'LagSeconds',
      'CycleDurationMs',
      'LeaseBusy',
      'HandoverWaitMs',
      'MatchedEvents',
      'EventsPublished',
      'Errors',
      'Throttles',
      'PollErrors',
      'PollTimeouts',
      'FailedEntries',
      'SequenceGaps',
      'GapsUnfilled',
      'GapsRepaired',
      'PublishRetries',
      'AuthRefreshes',
      'LateEvents',
      'DuplicateEventIds',
      'StreamReconnects',
      'InvalidEvents',
      'ClaimChecks',
      'CheckpointSequence',
      'ApproximateNumberOfMessagesVisible',
    ]) {
      expect(body()).toContain(`"${expected}`);
    }
  });

  it('graphs the depth of every queue and the matches of every rule, and lists every alarm', () => {
    const text = body();
    const routes = poller.routing!.routes;
    const queues = [
      poller.scheduleDeadLetterQueue,
      ...routes.flatMap((route) => [route.queue!, route.deadLetterQueue]),
    ];

    expect(queues).toHaveLength(9);
    for (const queue of queues) expect(text).toContain(JSON.stringify(getAtt(id(queue), 'QueueName')));
    for (const route of routes) expect(text).toContain(JSON.stringify(ref(id(route.rule))));
    const alarms = resourcesOfType('AWS::CloudWatch::Alarm');
    // 9 of the stack, the default program's 7, 7 over every program and the worker's stall alarm.
    expect(alarms).toHaveLength(24);
    for (const [logicalId] of alarms) expect(text).toContain(JSON.stringify(getAtt(logicalId)));
  });
});

describe('schedule rates', () => {
  // The stall window follows the interval (max(5 min, 2 ticks)): a 6-minute rate once failed synth
  // because the 5-minute default was shorter than one tick.
  it.each([1, 5, 6, 14])('synthesizes with a tick every %i minute(s)', (minutes) => {
    const rated = synthPollerApp({
      scheduleRate: minutes === 1 ? 'rate(1 minute)' : `rate(${minutes} minutes)`,
    });
    try {
      const stallMinutes = Math.max(5, 2 * minutes);
      rated.template.hasResourceProperties('AWS::Scheduler::Schedule', {
        ScheduleExpression: minutes === 1 ? 'rate(1 minute)' : `rate(${minutes} minutes)`,
      });
      rated.template.hasResourceProperties('AWS::Lambda::Function', { Timeout: minutes * 60 + 15 });
      rated.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'CycleDurationMs',
        Period: 60,
        EvaluationPeriods: stallMinutes,
        AlarmDescription: Match.stringLikeRegexp(`no poll cycle completed for ${stallMinutes} minutes`),
      });
      rated.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'LagSeconds',
        Period: minutes * 60,
        EvaluationPeriods: 3,
      });
    } finally {
      rated.dispose();
    }
  });
});

describe('existing secrets under their own keys (programs[].secretKeyArn)', () => {
  it('grants the function kms:Decrypt on each key, through Secrets Manager only', () => {
    const keyArn = (n: number) =>
      `arn:aws:kms:eu-west-1:123456789012:key/0000000${n}-12ab-34cd-56ef-1234567890ab`;
    const custom = synthPollerApp({
      programs: [
        {
          name: 'cards',
          secretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/banking/cards-AbC123',
          secretKeyArn: keyArn(1),
        },
        { name: 'fx', secretName: 'prod/banking/fx', secretKeyArn: keyArn(2) },
      ],
    });
    try {
      const statements = Object.values(custom.template.findResources('AWS::IAM::Policy')).flatMap(
        (policy) =>
          (policy as { Properties: { PolicyDocument: { Statement: Record<string, unknown>[] } } }).Properties
            .PolicyDocument.Statement,
      );
      for (const key of [keyArn(1), keyArn(2)]) {
        // One statement may name both keys: CDK merges statements that differ only in resource.
        const grant = statements.find((statement) => [statement.Resource].flat().includes(key));
        expect(grant?.Action, key).toBe('kms:Decrypt');
        expect(JSON.stringify(grant?.Condition), key).toMatch(/kms:ViaService.*secretsmanager\./);
      }
      // The secret by name is granted as "<name>-??????", as without a key.
      expect(JSON.stringify(statements)).toContain(':secret:prod/banking/fx-??????');
    } finally {
      custom.dispose();
    }
  });
});

describe('the custom bus (-c eventBusKind=custom)', () => {
  let custom: SynthesizedPollerApp;
  beforeAll(() => {
    custom = synthPollerApp({
      eventBusKind: 'custom',
      eventGroupBy: 'account',
      routes: { account_status: { ordered: true }, transaction: { retryAttempts: 10 } },
    });
  });
  afterAll(() => custom.dispose());

  it('outputs the bus by its ARN, its retention, and each subscriber and queue, and no archive', () => {
    const outputs = custom.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    const customBus = custom.stack.poller.customBus!;
    const busId = custom.stack.getLogicalId(customBus.resource);

    expect(outputs.EventBusKind?.Value).toBe('custom');
    expect(outputs.EventBusName?.Value).toBe('banking-events');
    expect(outputs.EventBusArn?.Value).toEqual({ 'Fn::GetAtt': [busId, 'EventBusArn'] });
    expect(outputs.BusRetentionDays?.Value).toBe('14');
    // What tail --stack delivers through (functions/cli/deployment.ts reads it).
    expect(outputs.TailDeliveryRoleArn?.Value).toEqual({
      'Fn::GetAtt': [
        custom.stack.getLogicalId(custom.stack.poller.tailDeliveryRole!.node.defaultChild as CfnElement),
        'Arn',
      ],
    });
    expect(outputs.ArchiveName).toBeUndefined();
    for (const suffix of ['AccountStatus', 'Transaction', 'Quarantine', 'Unrouted']) {
      expect(Object.keys(outputs)).toEqual(
        expect.arrayContaining([
          `SubscriberArn${suffix}`,
          `QueueUrl${suffix}`,
          `QueueArn${suffix}`,
          `DeadLetterQueueUrl${suffix}`,
          `DeadLetterQueueArn${suffix}`,
        ]),
      );
    }
    const ordered = custom.stack.poller.subscriberRouting!.routes.find((route) => route.ordered)!;
    expect(outputs.SubscriberArnAccountStatus?.Value).toEqual({
      'Fn::GetAtt': [custom.stack.getLogicalId(ordered.subscriber), 'SubscriberArn'],
    });
  });

  it('passes the route options of the context to the subscribers', () => {
    custom.template.hasResourceProperties('AWS::EventsV2::Subscriber', {
      Type: 'FIFO',
      Description: 'Delivers account_status events from banking.events',
    });
    custom.template.hasResourceProperties('AWS::EventsV2::Subscriber', {
      Type: 'UNORDERED',
      Description: 'Delivers transaction events from banking.events',
      RetryPolicy: Match.objectLike({ MaxRetryAttempts: 10 }),
    });
  });
});
