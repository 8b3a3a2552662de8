/**
 * What IAM checks for each AWS call the operator CLI makes: the IAM action of the operation (the
 * two differ for a few: `DeleteMessageBatch` is `sqs:DeleteMessage`, `Invoke` is
 * `lambda:InvokeFunction`) and the ARN of every resource the Service Authorization Reference
 * lists for it, taken from moto's answer where moto returned one, else built from the request's
 * names in the documented format. A call that implies another action (a queue created with
 * tags) is checked for both.
 */
import type { RecordedAwsCall } from '../../support/aws-call-recorder.ts';
import type { AuthorizationRequest } from '../../support/iam-policy-evaluation.ts';

export interface AccountScope {
  readonly partition: string;
  readonly region: string;
  readonly account: string;
}

/** SigV4 signing names whose IAM prefix differs. */
const IAM_PREFIX: Readonly<Record<string, string>> = { monitoring: 'cloudwatch' };

/** Operations authorized as another action. */
const IAM_ACTION: Readonly<Record<string, string>> = {
  'sqs:DeleteMessageBatch': 'sqs:DeleteMessage',
  'sqs:SendMessageBatch': 'sqs:SendMessage',
  'sqs:ChangeMessageVisibilityBatch': 'sqs:ChangeMessageVisibility',
  'lambda:Invoke': 'lambda:InvokeFunction',
};

/** `service:Action` as IAM names it. */
export function iamActionOf(call: RecordedAwsCall): string {
  const named = `${IAM_PREFIX[call.service] ?? call.service}:${call.operation}`;
  return IAM_ACTION[named] ?? named;
}

type Answer = Record<string, unknown>;

/**
 * What IAM checks for `call`: its own action, and the actions it implies (a `CreateQueue` with
 * tags is also checked as `sqs:TagQueue` on the queue).
 */
export function authorizationsOf(call: RecordedAwsCall, scope: AccountScope): AuthorizationRequest[] {
  const own = authorizationOf(call, scope);
  const implied =
    own.action === 'sqs:CreateQueue' && call.request.tags !== undefined
      ? [{ action: 'sqs:TagQueue', resources: own.resources }]
      : own.action === 'secretsmanager:CreateSecret' && call.request.Tags !== undefined
        ? [{ action: 'secretsmanager:TagResource', resources: own.resources }]
        : [];
  return [own, ...implied];
}

function authorizationOf(call: RecordedAwsCall, scope: AccountScope): AuthorizationRequest {
  const action = iamActionOf(call);
  const request = call.request as Record<string, unknown>;
  const answer = (typeof call.response === 'object' && call.response !== null ? call.response : {}) as Answer;
  const arn = (service: string, resource: string) =>
    `arn:${scope.partition}:${service}:${scope.region}:${scope.account}:${resource}`;
  const busArn = (name: unknown) =>
    String(name).startsWith('arn:') ? String(name) : arn('events', `event-bus/${String(name ?? 'default')}`);
  const ruleArn = (name: unknown, bus: unknown) =>
    arn('events', `rule/${bus === undefined || bus === 'default' ? '' : `${String(bus)}/`}${String(name)}`);
  const queueArn = (url: unknown) => arn('sqs', String(url).split('/').pop()!);
  const table = () => [arn('dynamodb', `table/${String(request.TableName)}`)];
  const resources = (): readonly string[] => {
    switch (action) {
      case 'cloudformation:DescribeStacks': {
        const id = /<StackId>([^<]+)<\/StackId>/.exec(String(call.response));
        if (id === null) throw new Error(`DescribeStacks answered no StackId: ${String(call.response)}`);
        return [id[1]!];
      }
      case 'dynamodb:GetItem':
      case 'dynamodb:UpdateItem':
      case 'dynamodb:PutItem':
      case 'dynamodb:DeleteItem':
      case 'dynamodb:Scan':
      case 'dynamodb:DescribeTable':
        return table();
      case 'secretsmanager:GetSecretValue':
      case 'secretsmanager:PutSecretValue':
      case 'secretsmanager:CreateSecret': {
        // A secret not there yet is named by the request (IAM sees its name without the suffix).
        const named = request.SecretId ?? request.Name;
        if (answer.ARN !== undefined) return [String(answer.ARN)];
        return [
          String(named).startsWith('arn:') ? String(named) : arn('secretsmanager', `secret:${String(named)}`),
        ];
      }
      case 'scheduler:GetSchedule':
        return [String(answer.Arn)];
      case 'cloudwatch:DescribeAlarms': {
        const alarms = ((answer.MetricAlarms ?? []) as Array<{ AlarmArn: string }>).map(
          (alarm) => alarm.AlarmArn,
        );
        return alarms.length > 0 ? alarms : [arn('cloudwatch', `alarm:${String(request.AlarmNamePrefix)}`)];
      }
      case 'events:DescribeEventBus':
        return [String(answer.Arn)];
      case 'events:PutEvents':
        return [
          ...new Set(
            (request.Entries as Array<{ EventBusName?: string }>).map((e) => busArn(e.EventBusName)),
          ),
        ];
      case 'events:DescribeArchive':
        return [String(answer.ArchiveArn)];
      case 'events:ListArchives':
        return ['*'];
      case 'events:DescribeRule':
        return [String(answer.Arn)];
      case 'events:StartReplay':
        return [
          String(answer.ReplayArn),
          String(request.EventSourceArn),
          String((request.Destination as { Arn: string }).Arn),
        ];
      case 'events:DescribeReplay':
        return [String(answer.ReplayArn)];
      case 'events:PutRule':
        return [String(answer.RuleArn)];
      case 'events:PutTargets':
      case 'events:RemoveTargets':
        return [ruleArn(request.Rule, request.EventBusName)];
      case 'events:DeleteRule':
        return [ruleArn(request.Name, request.EventBusName)];
      case 'sqs:CreateQueue':
        return [arn('sqs', String(request.QueueName))];
      case 'sqs:GetQueueAttributes':
      case 'sqs:SetQueueAttributes':
      case 'sqs:ReceiveMessage':
      case 'sqs:DeleteMessage':
      case 'sqs:DeleteQueue':
        return [queueArn(request.QueueUrl)];
      case 's3:GetObject':
        return [`arn:${scope.partition}:s3:::${String(request.Bucket)}/${String(request.Key)}`];
      case 'lambda:InvokeFunction':
        return [
          String(request.FunctionName).startsWith('arn:')
            ? String(request.FunctionName)
            : arn('lambda', `function:${String(request.FunctionName)}`),
        ];
      default:
        throw new Error(`No resource mapping for ${action}: add it from the Service Authorization Reference`);
    }
  };
  const conditionKeys: Record<string, readonly string[]> =
    action === 'events:PutTargets'
      ? { 'events:TargetArn': (request.Targets as Array<{ Arn: string }>).map((target) => target.Arn) }
      : {};
  return { action, resources: resources(), conditionKeys };
}
