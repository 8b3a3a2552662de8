/**
 * What the operator CLI (`functions/cli/commands/`) calls against a deployment, as four grants:
 * read (`status`, `jumps list`, `doctor --no-write-probes`, `programs list`), tail (`tail`),
 * recovery (`rewind`, `jumps accept|reject`, `replay`, `event`, `archive-replay`, `secret set`) and
 * programs (`programs add | pause | resume | remove`, `secret set --program`). Each statement names
 * the construct's own resources;
 * the few that cannot are named in `OPERATOR_WILDCARDS` with the reason. No grant reads a secret:
 * commands that need the banking service ask the deployed function (`lambda:InvokeFunction`),
 * which holds the credentials. On a Custom Event Bus the bus statements are its own (subscribers
 * instead of rules, retention instead of an archive); the rest is the same.
 * `test/integration/cli/operator-permissions.test.ts` records every call each command makes at
 * moto and holds it against these statements; `custom-bus-operator-permissions.test.ts` does so
 * for the calls to a Custom Event Bus.
 */
import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as scheduler from 'aws-cdk-lib/aws-scheduler';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct, type IConstruct } from 'constructs';
import {
  OPERATOR_ANSWER_PREFIX,
  REPLAY_SUBSCRIBER_PREFIX,
  TAIL_RESOURCE_PREFIX,
} from '../../functions/cli/operator-resource-names.ts';
import { grantKeyThrough } from './encryption-key.ts';
import type { PollerBusStrategy } from './poller-bus.ts';

/** The construct's resources the operator commands work on. */
export interface OperatorResources {
  readonly checkpointTable: dynamodb.ITable;
  /** The program records. */
  readonly programsTable: dynamodb.ITable;
  /** The name path of the program secrets the CLI creates (`secret set --program`). */
  readonly secretsPrefix: string;
  /** The bus's own statements: each kind grants what the commands call on it. */
  readonly bus: Pick<PollerBusStrategy, 'grantOperatorRead' | 'grantOperatorTail' | 'grantOperatorRecovery'>;
  /** Program name → its credentials secret. */
  readonly secrets: ReadonlyMap<string, secretsmanager.ISecret>;
  /** The workers' schedules. */
  readonly schedules: readonly scheduler.ISchedule[];
  readonly pollerFunction: lambda.IFunction;
  /** Where the function leaves operator answers too large to return (`operator-answers/`). */
  readonly claimCheckBucket: s3.IBucket;
}

/**
 * The statements whose resource is a pattern rather than one of the construct's ARNs, and why;
 * cdk-nag's `AwsSolutions-IAM5` findings for them are acknowledged on the grantee with these reasons.
 */
export const OPERATOR_WILDCARDS = Object.freeze({
  stack: 'CloudFormation stack ARNs end in an id assigned at creation: stack/<name>/* is the one stack.',
  alarms:
    'CloudFormation names the stack\'s alarms "<stack>-<logical id>-<suffix>" and doctor lists them by that prefix.',
  tailQueues: `tail creates its queue at run time, named ${TAIL_RESOURCE_PREFIX}<random>; only such queues.`,
  tailRules: `tail creates its rule at run time on the poller's bus, named ${TAIL_RESOURCE_PREFIX}<random>; only such rules.`,
  replays:
    'archive-replay names its replay at run time (--name, or bep-<time>-<4 hex>); StartReplay is also bound to the archive and the bus.',
  rules: "archive-replay --rule names any rule of the poller's bus to replay to; DescribeRule only.",
  listArchives: 'events:ListArchives has no resource type: "*" is the only resource IAM accepts for it.',
  tailSubscribers: `tail creates its subscriber at run time on the poller's Custom Event Bus, named ${TAIL_RESOURCE_PREFIX}<random> (the ARN ends in a service-generated id); only such subscribers.`,
  operatorAnswers: `event and replay read an answer the function left in the claim-check bucket (too large to return) under ${OPERATOR_ANSWER_PREFIX}, named by its digest at run time; only those objects, not the events' bodies.`,
  replaySubscribers: `archive-replay copies subscribers at run time on the poller's Custom Event Bus, named ${REPLAY_SUBSCRIBER_PREFIX}<time>-<4 hex>-<n> (the ARN ends in a service-generated id); only such subscribers.`,
  programSecrets:
    'secret set --program creates and writes the program secrets of the deployment at run time, named <secretsPrefix><program>; only those (CreateSecret and PutSecretValue, never GetSecretValue).',
});

/** `cloudformation:DescribeStacks` on the construct's stack: how `--stack` finds everything else. */
function grantDescribeStack(scope: Construct, grantee: iam.IGrantable): iam.Grant {
  return iam.Grant.addToPrincipal({
    grantee,
    actions: ['cloudformation:DescribeStacks'],
    resourceArns: [stackArn(Stack.of(scope))],
  });
}

function stackArn(stack: Stack): string {
  return stack.formatArn({
    service: 'cloudformation',
    resource: 'stack',
    resourceName: `${stack.stackName}/*`,
  });
}

/**
 * `status` and `doctor --no-write-probes`: describe and read, nothing else. The checkpoint row
 * (`GetItem`; `Scan` lists the programs when `--stack` is not given), the table, the bus, the
 * schedules and the stack's alarms. No write, no secret, and no `lambda:InvokeFunction`: one
 * action covers every operator request the function takes, a replay included, so doctor's bank
 * checks need the recovery grant.
 */
export function grantOperatorRead(
  scope: Construct,
  resources: OperatorResources,
  grantee: iam.IGrantable,
): iam.Grant {
  const stack = Stack.of(scope);
  const alarms = stack.formatArn({
    service: 'cloudwatch',
    resource: 'alarm',
    resourceName: `${stack.stackName}-*`,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
  const grants = [
    grantDescribeStack(scope, grantee),
    resources.checkpointTable.grant(grantee, 'dynamodb:GetItem', 'dynamodb:Scan', 'dynamodb:DescribeTable'),
    ...tableKeyGrant(resources.checkpointTable, grantee, ['kms:Decrypt']),
    resources.bus.grantOperatorRead(grantee),
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['scheduler:GetSchedule'],
      resourceArns: resources.schedules.map((schedule) => schedule.scheduleArn),
    }),
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['cloudwatch:DescribeAlarms'],
      resourceArns: [alarms],
    }),
    // programs list, status and doctor of every program (those the stack does not name too).
    resources.programsTable.grant(grantee, 'dynamodb:Scan', 'dynamodb:GetItem'),
    ...tableKeyGrant(resources.programsTable, grantee, ['kms:Decrypt']),
  ];
  acknowledgeWildcards(grantee, [
    [stackArn(stack), OPERATOR_WILDCARDS.stack],
    [alarms, OPERATOR_WILDCARDS.alarms],
  ]);
  return grants.reduce((all, grant) => all.combine(grant));
}

/**
 * `tail`: it creates a queue and what feeds it from the bus (a rule, or a subscriber on a Custom
 * Event Bus), reads and deletes the queue's messages, and removes both. A grant of its own, apart
 * from read: it writes (only to resources named `bep-tail-…`) and it shows the events themselves,
 * the bank's data, where `status` and `doctor` show only the poller's state.
 */
export function grantOperatorTail(
  scope: Construct,
  resources: OperatorResources,
  grantee: iam.IGrantable,
): iam.Grant {
  const describeStack = grantDescribeStack(scope, grantee);
  acknowledgeWildcards(grantee, [[stackArn(Stack.of(scope)), OPERATOR_WILDCARDS.stack]]);
  return describeStack.combine(resources.bus.grantOperatorTail(grantee));
}

/**
 * `rewind`, `jumps accept|reject`, `replay`, `event`, `archive-replay` and `secret set`: exactly
 * what they call. `GetItem`/`UpdateItem` on the checkpoint table (rewind's conditional move, the
 * decision on a held sequence jump); invoking the poller
 * function (the operator requests: replay from the bank, event lookups, rewind's feed check and
 * `--to latest`, doctor's bank checks) and reading an answer it left in the claim-check bucket
 * (`operator-answers/*` only); describing the bus and its archive, starting and
 * following a replay of the archive to the bus; `PutSecretValue` on the programs' secrets (a
 * write: the value is never read back). No `GetSecretValue`, and no `PutEvents`: the function
 * publishes what an operator request replays.
 */
export function grantOperatorRecovery(
  scope: Construct,
  resources: OperatorResources,
  grantee: iam.IGrantable,
): iam.Grant {
  const grants = [
    grantDescribeStack(scope, grantee),
    resources.checkpointTable.grant(grantee, 'dynamodb:GetItem', 'dynamodb:UpdateItem'),
    ...tableKeyGrant(resources.checkpointTable, grantee, ['kms:Decrypt', 'kms:GenerateDataKey']),
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['lambda:InvokeFunction'],
      resourceArns: [resources.pollerFunction.functionArn],
    }),
    ...grantReadOperatorAnswers(resources.claimCheckBucket, grantee),
  ];
  acknowledgeWildcards(grantee, [[stackArn(Stack.of(scope)), OPERATOR_WILDCARDS.stack]]);
  grants.push(resources.bus.grantOperatorRecovery(grantee));
  // The secrets last (a grant adds its statement when made): the statements keep their order.
  grants.push(...[...resources.secrets.values()].map((secret) => grantPutSecretValue(secret, grantee)));
  return grants.reduce((all, grant) => all.combine(grant));
}

/**
 * `programs add | pause | resume | remove` and `secret set --program`: `GetItem`, `PutItem` and
 * `DeleteItem` on the programs table (every write conditional on the revision read), and on the
 * secrets under the prefix `CreateSecret` (with `TagResource`, which creating a tagged secret
 * needs) and `PutSecretValue`. No `GetSecretValue`: a value written is never read back. With an
 * `encryptionKey`, the data key a new value needs, through Secrets Manager only.
 */
export function grantOperatorPrograms(
  scope: Construct,
  resources: OperatorResources & { readonly encryptionKey?: kms.IKey },
  grantee: iam.IGrantable,
): iam.Grant {
  const secrets = Stack.of(scope).formatArn({
    service: 'secretsmanager',
    resource: 'secret',
    resourceName: `${resources.secretsPrefix}*`,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
  const grants = [
    grantDescribeStack(scope, grantee),
    resources.programsTable.grant(grantee, 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'),
    ...tableKeyGrant(resources.programsTable, grantee, ['kms:Decrypt', 'kms:GenerateDataKey']),
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['secretsmanager:CreateSecret', 'secretsmanager:TagResource', 'secretsmanager:PutSecretValue'],
      resourceArns: [secrets],
    }),
  ];
  if (resources.encryptionKey !== undefined) {
    grants.push(grantKeyThrough(resources.encryptionKey, grantee, 'secretsmanager', ['kms:GenerateDataKey']));
  }
  acknowledgeWildcards(grantee, [
    [stackArn(Stack.of(scope)), OPERATOR_WILDCARDS.stack],
    [secrets, OPERATOR_WILDCARDS.programSecrets],
  ]);
  return grants.reduce((all, grant) => all.combine(grant));
}

/**
 * `s3:GetObject` on the claim-check bucket's `operator-answers/*`, and nothing else: an operator
 * request's answer too large for Lambda to return is left there and the CLI reads it. The events'
 * own bodies (the pointers' objects) stay out of reach. A bucket under a customer-managed key is
 * granted `kms:Decrypt` through S3 only.
 */
function grantReadOperatorAnswers(bucket: s3.IBucket, grantee: iam.IGrantable): iam.Grant[] {
  const answers = bucket.arnForObjects(`${OPERATOR_ANSWER_PREFIX}*`);
  acknowledgeWildcards(grantee, [[answers, OPERATOR_WILDCARDS.operatorAnswers]]);
  const read = iam.Grant.addToPrincipal({ grantee, actions: ['s3:GetObject'], resourceArns: [answers] });
  return bucket.encryptionKey === undefined
    ? [read]
    : [read, grantKeyThrough(bucket.encryptionKey, grantee, 's3', ['kms:Decrypt'])];
}

/**
 * A checkpoint table under a customer-managed key (`encryptionKey`, or an existing table's own):
 * reading it needs the key's `Decrypt`, writing also `GenerateDataKey`, through DynamoDB only.
 */
function tableKeyGrant(
  table: dynamodb.ITable,
  grantee: iam.IGrantable,
  actions: readonly string[],
): iam.Grant[] {
  return table.encryptionKey === undefined
    ? []
    : [grantKeyThrough(table.encryptionKey, grantee, 'dynamodb', actions)];
}

/**
 * `secretsmanager:PutSecretValue` alone (`grantWrite` would add `UpdateSecret`, which can change
 * the key and the description). A secret imported by name is granted as `<name>-??????`, matching
 * the suffix Secrets Manager appends; a customer-managed key is granted `kms:GenerateDataKey`
 * through Secrets Manager only, which encrypting the new value needs.
 */
function grantPutSecretValue(secret: secretsmanager.ISecret, grantee: iam.IGrantable): iam.Grant {
  const grant = iam.Grant.addToPrincipal({
    grantee,
    actions: ['secretsmanager:PutSecretValue'],
    resourceArns: [secret.secretFullArn ?? `${secret.secretArn}-??????`],
  });
  if (secret.encryptionKey === undefined) return grant;
  const viaSecretsManager = new kms.ViaServicePrincipal(
    `secretsmanager.${Stack.of(secret).region}.amazonaws.com`,
    grantee.grantPrincipal,
  );
  return grant.combine(secret.encryptionKey.grant(viaSecretsManager, 'kms:GenerateDataKey'));
}

/**
 * cdk-nag's `AwsSolutions-IAM5` findings for the patterns above, acknowledged one by one on the
 * grantee when it is a construct of the app (a role of another account's is not).
 */
export function acknowledgeWildcards(
  grantee: iam.IGrantable,
  patterns: ReadonlyArray<readonly [resourceArn: string, reason: string]>,
): void {
  const principal = grantee.grantPrincipal as unknown as IConstruct;
  if (!(principal instanceof Construct)) return;
  const stack = Stack.of(principal);
  for (const [resourceArn, reason] of patterns) {
    Validations.of(principal).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagText(stack.resolve(resourceArn))}]`,
      reason: `Operator grant (docs/security.md#operator-permissions): ${reason}`,
    });
  }
}

/** A resolved ARN as cdk-nag writes it in a finding: `<AWS::Region>`, `<LogicalId>`, `<LogicalId.Arn>`. */
export function nagText(value: unknown): string {
  if (typeof value === 'string') return value;
  const intrinsic = value as {
    Ref?: string;
    'Fn::GetAtt'?: [string, string];
    'Fn::Join'?: [string, unknown[]];
  };
  if (intrinsic.Ref !== undefined) return `<${intrinsic.Ref}>`;
  if (intrinsic['Fn::GetAtt'] !== undefined) return `<${intrinsic['Fn::GetAtt'].join('.')}>`;
  if (intrinsic['Fn::Join'] !== undefined) {
    const [separator, parts] = intrinsic['Fn::Join'];
    return parts.map(nagText).join(separator);
  }
  return JSON.stringify(value);
}
