/**
 * A deployment of the poller in moto, as far as the operator CLI sees one: the checkpoint table,
 * a program's secret, the bus (with its archive and a queue recording every event), a schedule,
 * alarms named like CloudFormation names a stack's, optionally a claim-check bucket, and a
 * CloudFormation stack whose outputs name them all, as infra/poller-stack.ts does. (moto's CloudFormation cannot create the real
 * template's resources, so they are created directly and the stack only carries the outputs.)
 */
import { randomUUID } from 'node:crypto';
import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, PutMetricAlarmCommand, SetAlarmStateCommand } from '@aws-sdk/client-cloudwatch';
import { CreateArchiveCommand, DescribeEventBusCommand } from '@aws-sdk/client-eventbridge';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { DynamoDbProgramRegistry } from '../../functions/adapters/aws/dynamodb-program-registry.ts';
import { assignedWorker } from '../../functions/core/fleet/assignment.ts';
import type { MotoEnvironment } from './aws-test-env.ts';

export interface MotoDeployment {
  readonly stackName: string;
  readonly tableName: string;
  readonly secretId: string;
  readonly busName: string;
  /** Receives every event published to the bus with source `banking.events`. */
  readonly queueUrl: string;
  readonly archiveName: string;
  /** Program `default`'s schedule (its worker's, on a stack with `programs`). */
  readonly scheduleName: string;
  /** The workers' schedules, worker `i`'s at index `i` (one, on a stack without `programs`). */
  readonly workerScheduleNames: readonly string[];
  readonly alarmNames: readonly string[];
  /** The claim-check bucket, when asked for (give it to the function as `CLAIM_CHECK_BUCKET`). */
  readonly claimCheckBucket?: string;
  /** The programs table and the secrets prefix, when asked for (`programs`). */
  readonly programs?: {
    readonly tableName: string;
    readonly secretsPrefix: string;
    readonly workers: number;
  };
}

export interface MotoDeploymentOptions {
  /**
   * The poller function's name, written as the stack's `PollerFunctionName` output (serve it with
   * `LambdaInvokeEndpoint`). @default none: a stack deployed before operator requests
   */
  readonly pollerFunctionName?: string;
  /** Creates a claim-check bucket. @default false */
  readonly claimCheckBucket?: boolean;
  /**
   * Creates a programs table, with the stack program `default` seeded as a deploy would, and the
   * outputs of a stack of this release (`ProgramsTableName`, `SecretsPrefix`, `WorkerCount`,
   * `WorkerScheduleNames`), with a schedule per worker.
   * @default none: a stack deployed before programs were records
   */
  readonly programs?: { readonly workers: number };
}

/** Creates everything for one program named `default`; `secretString` is its secret's value. */
export async function createMotoDeployment(
  aws: MotoEnvironment,
  secretString: string,
  options: MotoDeploymentOptions = {},
): Promise<MotoDeployment> {
  const stackName = `CliStack-${randomUUID().slice(0, 8)}`;
  const tableName = await aws.createCheckpointTable();
  const secretId = await aws.createSecret(secretString);
  const { busName, queueUrl } = await aws.createRecordedBus();
  const bus = await aws.eventBridge.send(new DescribeEventBusCommand({ Name: busName }));
  const archiveName = aws.uniqueName('archive');
  await aws.eventBridge.send(
    new CreateArchiveCommand({
      ArchiveName: archiveName,
      EventSourceArn: bus.Arn,
      EventPattern: JSON.stringify({ source: ['banking.events'] }),
    }),
  );
  let claimCheckBucket: string | undefined;
  if (options.claimCheckBucket === true) {
    claimCheckBucket = aws.uniqueName('claims');
    const s3 = new S3Client({});
    await s3.send(new CreateBucketCommand({ Bucket: claimCheckBucket }));
    s3.destroy();
  }
  let programs: MotoDeployment['programs'];
  if (options.programs !== undefined) {
    const programsTable = await aws.createCheckpointTable();
    programs = {
      tableName: programsTable,
      secretsPrefix: `banking-events-poller/${stackName}/`,
      workers: options.programs.workers,
    };
    await new DynamoDbProgramRegistry({ client: aws.dynamodb, tableName: programsTable }).put(
      { name: 'default', secretId, state: 'active', owner: 'stack', settings: {} },
      'absent',
    );
  }
  // A stack of this release has a schedule per worker, sending `{"worker": i}`; an older one, a
  // schedule per program. Program `default`'s is `scheduleName` either way.
  const scheduler = new SchedulerClient({});
  const workerScheduleNames: string[] = [];
  for (let worker = 0; worker < (programs?.workers ?? 1); worker += 1) {
    const name = aws.uniqueName(`schedule-${worker}`);
    await scheduler.send(
      new CreateScheduleCommand({
        Name: name,
        ScheduleExpression: 'rate(1 minute)',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: {
          Arn: 'arn:aws:lambda:us-east-1:123456789012:function:poller',
          RoleArn: 'arn:aws:iam::123456789012:role/scheduler',
          Input: JSON.stringify(programs === undefined ? { program: 'default' } : { worker }),
        },
      }),
    );
    workerScheduleNames.push(name);
  }
  const scheduleName =
    workerScheduleNames[programs === undefined ? 0 : assignedWorker('default', programs.workers)]!;
  scheduler.destroy();
  const cloudWatch = new CloudWatchClient({});
  const alarmNames = [
    `${stackName}-PollerAlarmsLagDefault-ABC123`,
    `${stackName}-PollerAlarmsStallDefault-DEF456`,
  ];
  for (const alarmName of alarmNames) {
    await cloudWatch.send(
      new PutMetricAlarmCommand({
        AlarmName: alarmName,
        Namespace: 'BankingEventsPoller',
        MetricName: 'LagSeconds',
        Statistic: 'Maximum',
        Period: 60,
        EvaluationPeriods: 3,
        Threshold: 300,
        ComparisonOperator: 'GreaterThanThreshold',
      }),
    );
    await cloudWatch.send(
      new SetAlarmStateCommand({ AlarmName: alarmName, StateValue: 'OK', StateReason: 'test' }),
    );
  }
  cloudWatch.destroy();
  const outputs: Record<string, string> = {
    Programs: 'default',
    CheckpointTableName: tableName,
    EventBusName: busName,
    EventBusArn: bus.Arn!,
    EventSource: 'banking.events',
    ArchiveName: archiveName,
    SecretArnDefault: secretId,
    ScheduleNameDefault: scheduleName,
    ...(programs === undefined
      ? {}
      : {
          ProgramsTableName: programs.tableName,
          SecretsPrefix: programs.secretsPrefix,
          WorkerCount: String(programs.workers),
          WorkerScheduleNames: workerScheduleNames.join(','),
        }),
    ...(options.pollerFunctionName === undefined
      ? {}
      : {
          PollerFunctionName: options.pollerFunctionName,
          // In the bus's partition, region and account, as the stack's function is.
          PollerFunctionArn: bus
            .Arn!.replace(/^(arn:[^:]+):events:([^:]*:[^:]*):.*$/, '$1:lambda:$2')
            .concat(`:function:${options.pollerFunctionName}`),
        }),
  };
  await createOutputsStack(stackName, outputs);
  return {
    stackName,
    tableName,
    secretId,
    busName,
    queueUrl,
    archiveName,
    scheduleName,
    workerScheduleNames,
    alarmNames,
    ...(claimCheckBucket === undefined ? {} : { claimCheckBucket }),
    ...(programs === undefined ? {} : { programs }),
  };
}

/**
 * A CloudFormation stack in moto that only carries `outputs` (and a topic: a stack needs a
 * resource), which is all the CLI reads of a deployment's stack.
 */
export async function createOutputsStack(
  stackName: string,
  outputs: Readonly<Record<string, string>>,
): Promise<void> {
  const cloudFormation = new CloudFormationClient({});
  try {
    await cloudFormation.send(
      new CreateStackCommand({
        StackName: stackName,
        TemplateBody: JSON.stringify({
          Resources: { AlarmTopic: { Type: 'AWS::SNS::Topic' } },
          Outputs: Object.fromEntries(Object.entries(outputs).map(([key, value]) => [key, { Value: value }])),
        }),
      }),
    );
  } finally {
    cloudFormation.destroy();
  }
}
