/**
 * The function's schedules: one EventBridge Scheduler schedule per program, invoking the
 * unqualified function with `{"program": …}`, no retries, and a dead-letter queue for ticks
 * Scheduler could not deliver.
 */
import { Aws, Duration, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as schedulerTargets from 'aws-cdk-lib/aws-scheduler-targets';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { pascalCase } from './construct-names.ts';
import { grantKeyThrough } from './encryption-key.ts';
import type { PollerProgram } from './poller-props.ts';

export interface PollerSchedules {
  /** Program name → its schedule. */
  readonly schedules: ReadonlyMap<string, scheduler.Schedule>;
  /** Invocations EventBridge Scheduler could not deliver. */
  readonly deadLetterQueue: sqs.Queue;
}

/** The schedule DLQ, the scheduler role and one schedule per program, in `scope`. */
export function createPollerSchedules(
  scope: Construct,
  pollerFunction: lambda.IFunction,
  programs: readonly PollerProgram[],
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
  const schedules = new Map<string, scheduler.Schedule>();
  for (const program of programs) {
    const target = new InvokeUnqualifiedFunction(pollerFunction, {
      role,
      // The function looks the program's secret up itself (SECRET_ID / PROGRAM_SECRETS).
      input: scheduler.ScheduleTargetInput.fromObject({ program: program.name }),
      deadLetterQueue,
      // No retries: the next tick polls from the same checkpoint.
      retryAttempts: 0,
      maxEventAge: Duration.minutes(1),
    });
    schedules.set(
      program.name,
      new scheduler.Schedule(scope, `Schedule${pascalCase(program.name)}`, {
        schedule: scheduler.ScheduleExpression.rate(interval),
        target,
        timeWindow: scheduler.TimeWindow.off(),
        description: `Polls the banking event feed of program ${program.name}`,
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
