/**
 * The function's schedules: one EventBridge Scheduler schedule per worker, invoking the
 * unqualified function with `{"worker": i}` (the worker polls the active programs rendezvous
 * hashing gives it: `functions/core/fleet/assignment.ts`), no retries, and a dead-letter queue for
 * ticks Scheduler could not deliver. Their number follows `workers`, never the programs.
 *
 * Before this release each program had a schedule sending `{"program": name}`; a deploy over such
 * a stack creates the workers' schedules and then deletes the programs', while both fire into the
 * same function: the program's lease keeps them to one holder at a time, and the hand-over between
 * them is the one between any two runs.
 */
import { Aws, Duration, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as schedulerTargets from 'aws-cdk-lib/aws-scheduler-targets';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { grantKeyThrough } from './encryption-key.ts';

export interface PollerSchedules {
  /** Worker `i`'s schedule at index `i`. */
  readonly schedules: readonly scheduler.Schedule[];
  /** Invocations EventBridge Scheduler could not deliver. */
  readonly deadLetterQueue: sqs.Queue;
}

/** The schedule DLQ, the scheduler role and one schedule per worker, in `scope`. */
export function createPollerSchedules(
  scope: Construct,
  pollerFunction: lambda.IFunction,
  workers: number,
  interval: Duration,
  encryptionKey?: kms.IKey,
): PollerSchedules {
  const deadLetterQueue = new sqs.Queue(scope, 'ScheduleDeadLetterQueue', {
    ...(encryptionKey === undefined
      ? { encryption: sqs.QueueEncryption.SQS_MANAGED }
      : { encryption: sqs.QueueEncryption.KMS, encryptionMasterKey: encryptionKey }),
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  Validations.of(deadLetterQueue).acknowledge({
    id: 'AwsSolutions-SQS3',
    reason:
      'This queue is the dead-letter queue of the EventBridge Scheduler schedules; cdk-nag only recognises ' +
      'DLQs named in an SQS redrive policy or a Lambda DeadLetterConfig.',
  });
  const role = new iam.Role(scope, 'SchedulerRole', {
    assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
      conditions: {
        StringEquals: {
          'aws:SourceAccount': Aws.ACCOUNT_ID,
          'aws:SourceArn': Stack.of(scope).formatArn({
            service: 'scheduler',
            resource: 'schedule-group',
            resourceName: 'default',
          }),
        },
      },
    }),
    description: 'EventBridge Scheduler: invoke the banking events poller, or park the tick in the DLQ',
  });
  // Scheduler sends undeliverable ticks to the DLQ with this role: SendMessage on an encrypted queue
  // needs a data key.
  if (encryptionKey !== undefined) grantKeyThrough(encryptionKey, role, 'sqs');
  for (const pack of ['HIPAA.Security', 'NIST.800.53.R5', 'PCI.DSS.321']) {
    Validations.of(role).acknowledge({
      id: `${pack}-IAMNoInlinePolicy`,
      reason:
        "CDK's grants write the role's own inline policy: invoke the one unqualified function and send to " +
        'the one schedule dead-letter queue; a managed policy would hold the same and could be attached elsewhere.',
    });
  }
  const schedules: scheduler.Schedule[] = [];
  for (let worker = 0; worker < workers; worker += 1) {
    const target = new InvokeUnqualifiedFunction(pollerFunction, {
      role,
      // The worker reads its programs and their secrets itself (the programs table, SECRETS_PREFIX).
      input: scheduler.ScheduleTargetInput.fromObject({ worker }),
      deadLetterQueue,
      // No retries: the next tick polls from the same checkpoints.
      retryAttempts: 0,
      maxEventAge: Duration.minutes(1),
    });
    schedules.push(
      new scheduler.Schedule(scope, `ScheduleWorker${worker}`, {
        schedule: scheduler.ScheduleExpression.rate(interval),
        target,
        timeWindow: scheduler.TimeWindow.off(),
        description: `Worker ${worker} of ${workers}: polls the banking event feeds of the programs assigned to it`,
      }),
    );
  }
  return { schedules, deadLetterQueue };
}

/**
 * `LambdaInvoke` grants `lambda:InvokeFunction` on `function:*` (every version and alias); the
 * schedule only ever invokes the unqualified function, so grant exactly that.
 */
class InvokeUnqualifiedFunction
  extends schedulerTargets.ScheduleTargetBase
  implements scheduler.IScheduleTarget
{
  private readonly fn: lambda.IFunction;

  constructor(fn: lambda.IFunction, props: schedulerTargets.ScheduleTargetBaseProps) {
    super(props, fn.functionArn);
    this.fn = fn;
  }

  protected addTargetActionToRole(role: iam.IRole): void {
    this.fn.grantInvokeLatestVersion(role);
  }
}
