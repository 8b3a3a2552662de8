/**
 * The poller function: its role, its log group, the handler's environment (written from the
 * settings table, `functions/settings/environment.ts`) and the least-privilege grants it runs with.
 */
import { type CfnElement, Duration, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { writeEnvironment } from '../../functions/settings/environment.ts';
import { grantKeyThrough } from './encryption-key.ts';
import { leaseWait } from './handover-timing.ts';
import { nagText } from './operator-grants.ts';
import {
  POLLER_ARCHITECTURE,
  POLLER_BUNDLING,
  POLLER_NODE_OPTIONS,
  POLLER_RUNTIME,
} from './poller-bundling.ts';
import type { PollerBusStrategy } from './poller-bus.ts';
import { PREBUILT_HANDLER, prebuiltHandlerCode } from './poller-code.ts';
import type { ResolvedPollerProps } from './poller-props-resolution.ts';
import { type ProgramSecretBinding, secretsUnderPrefixArn } from './program-secrets.ts';

/** What the function works with, created elsewhere in the construct. */
export interface PollerFunctionResources {
  readonly checkpointTable: dynamodb.ITable;
  /** The program records (`PROGRAMS_TABLE`): the function scans it, and writes nothing to it. */
  readonly programsTable: dynamodb.ITable;
  /** The props' programs and their secrets; the first program is the handler's default. */
  readonly programSecrets: readonly ProgramSecretBinding[];
  /** `SECRETS_PREFIX`: the function may read every secret under it. */
  readonly secretsPrefix: string;
  /** The bus the function publishes to: it names the bus in the environment and grants PutEvents on it. */
  readonly bus: Pick<PollerBusStrategy, 'functionEnvironment' | 'grantFunctionPublish'>;
  /** Where events too large for the bus are stored. */
  readonly claimCheckBucket: s3.Bucket;
}

export interface PollerFunction {
  /** A `NodejsFunction` when the props name an `entry`; otherwise the prebuilt handler. */
  readonly pollerFunction: lambda.Function;
  readonly logGroup: logs.LogGroup;
  readonly role: iam.Role;
}

/**
 * The function, in `scope`, with its own role: its programs' secrets (those under the secrets
 * prefix, and those the props name), item-level actions on its checkpoint table, a scan of the
 * programs table, PutEvents on its bus, PutObject on the claim-check bucket and writes to its log
 * group; nothing else.
 */
export function createPollerFunction(
  scope: Construct,
  props: ResolvedPollerProps,
  resources: PollerFunctionResources,
): PollerFunction {
  const { scheduleInterval, functionTimeout } = props;
  const { eventSource } = props.settings;
  const { checkpointTable, programsTable, programSecrets, bus } = resources;
  const [first, ...others] = programSecrets;
  // The programs the legacy `{"program": …}` invocation may name beside the default one: those
  // whose secret the stack created or was given (a program under the prefix is found by its record).
  const bound = others.filter((program) => program.secret !== undefined);
  // The table's retention periods are CloudWatch's, which RetentionDays enumerates by their days.
  const logGroup = new logs.LogGroup(scope, 'LogGroup', {
    retention: props.settings.logRetentionDays as logs.RetentionDays,
    encryptionKey: props.encryptionKey,
  });
  const role = new iam.Role(scope, 'FunctionRole', {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description:
      'Banking events poller: its secrets, its checkpoint items, its program records (read), PutEvents on its bus, its log group',
  });
  logGroup.grantWrite(role);
  const options = {
    description: `Polls the banking event feed and publishes to EventBridge (source ${eventSource})`,
    runtime: POLLER_RUNTIME,
    architecture: POLLER_ARCHITECTURE,
    memorySize: props.memorySize,
    timeout: functionTimeout,
    role,
    logGroup,
    tracing: props.settings.tracing ? lambda.Tracing.ACTIVE : lambda.Tracing.DISABLED,
    // Scheduler invokes asynchronously: a failed or stale tick is not retried, the next one covers it.
    retryAttempts: 0,
    maxEventAge: Duration.minutes(1),
    reservedConcurrentExecutions: props.reservedConcurrency,
    vpc: props.network?.vpc,
    vpcSubnets: props.network?.vpcSubnets,
    securityGroups: props.network?.securityGroups as ec2.ISecurityGroup[] | undefined,
    environment: {
      ...writeEnvironment(props.settings, {
        // Each program is bound to its own secret here, never by the invocation event.
        DEFAULT_PROGRAM: first!.name,
        SECRET_ID: first!.secretId,
        PROGRAM_SECRETS:
          bound.length > 0
            ? Stack.of(scope).toJsonString(
                Object.fromEntries(bound.map((program) => [program.name, program.secretId])),
              )
            : undefined,
        PROGRAMS_TABLE: programsTable.tableName,
        SECRETS_PREFIX: resources.secretsPrefix,
        CHECKPOINT_TABLE: checkpointTable.tableName,
        // EVENT_BUS_NAME and EVENT_BUS_KIND, as the bus's kind names it.
        ...bus.functionEnvironment(),
        // The next tick arrives while this run still polls: it waits for the lease, at most until a
        // crashed holder's lease would expire.
        LEASE_WAIT_MS: String(leaseWait(scheduleInterval, functionTimeout).toMilliseconds()),
        CLAIM_CHECK_BUCKET: resources.claimCheckBucket.bucketName,
        // Left out for `all`, the default: a deployment with per-program alarms keeps its environment.
        PROGRAM_METRICS:
          props.alarmPlan.programMetrics === 'all' ? undefined : props.alarmPlan.programMetrics,
      }),
      NODE_OPTIONS: POLLER_NODE_OPTIONS,
    },
  } satisfies Omit<lambda.FunctionProps, 'code' | 'handler'>;
  // The same construct id either way: the function's and its log group's logical ids never change.
  const pollerFunction =
    props.entry === undefined
      ? new lambda.Function(scope, 'Function', {
          ...options,
          code: prebuiltHandlerCode(),
          handler: PREBUILT_HANDLER,
        })
      : new nodejs.NodejsFunction(scope, 'Function', {
          ...options,
          entry: props.entry,
          handler: 'handler',
          bundling: POLLER_BUNDLING,
        });
  if (props.settings.tracing) {
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'xray:PutTraceSegments and xray:PutTelemetryRecords do not support resource-level permissions.',
    });
  }

  // Least privilege: item-level actions on the table only, its secrets only, PutEvents on its bus
  // only, and PutObject alone on the claim-check bucket's objects (`grantPut` would add tagging,
  // legal hold, retention and abort).
  // Each store's key (ours, or the one an existing resource was imported with) through its service
  // only. The secrets' keys are granted here too: grantRead grants an imported key nothing (its
  // via-service principal cannot hold an identity policy) and a key of the app only in its policy.
  for (const { secret } of programSecrets) {
    if (secret === undefined) continue;
    secret.grantRead(role);
    if (secret.encryptionKey !== undefined) {
      grantKeyThrough(secret.encryptionKey, role, 'secretsmanager', ['kms:Decrypt']);
    }
  }
  grantPrefixSecretsRead(role, resources.secretsPrefix, props.encryptionKey);
  checkpointTable.grant(role, 'dynamodb:GetItem', 'dynamodb:UpdateItem');
  if (checkpointTable.encryptionKey !== undefined)
    grantKeyThrough(checkpointTable.encryptionKey, role, 'dynamodb');
  // A worker reads every record with one paginated Scan per run, an operator request one record
  // (GetItem: a program an operator added); the function never writes one.
  programsTable.grant(role, 'dynamodb:Scan', 'dynamodb:GetItem');
  if (programsTable.encryptionKey !== undefined)
    grantKeyThrough(programsTable.encryptionKey, role, 'dynamodb', ['kms:Decrypt']);
  bus.grantFunctionPublish(role);
  const bucket = resources.claimCheckBucket;
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: ['s3:PutObject'], resources: [bucket.arnForObjects('*')] }),
  );
  // One PutObject per body (no multipart upload): a data key, never a decryption.
  if (bucket.encryptionKey !== undefined) {
    grantKeyThrough(bucket.encryptionKey, role, 's3', ['kms:GenerateDataKey']);
  }
  const bucketId = Stack.of(bucket).getLogicalId(bucket.node.defaultChild as CfnElement);
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/*]`,
    reason:
      'The claim-check objects are named at run time (program, sequence number, event id): s3:PutObject, and ' +
      'nothing else, on the objects of the one claim-check bucket is the narrowest grant there is.',
  });
  acknowledgeRegulatedFindings(pollerFunction, role);
  return { pollerFunction, logGroup, role };
}

/**
 * `GetSecretValue` (and `DescribeSecret`, as `grantRead` gives a secret of the props) on every
 * secret under the prefix: the programs added at run time (`programs add`, `secret set --program`).
 * With `encryptionKey`, `kms:Decrypt` on it through Secrets Manager, for the secrets the CLI creates
 * under it. The pattern is the narrowest IAM has for "this deployment's secrets, present and future".
 */
function grantPrefixSecretsRead(role: iam.Role, prefix: string, encryptionKey: kms.IKey | undefined): void {
  const resource = secretsUnderPrefixArn(role, prefix);
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'],
      resources: [resource],
    }),
  );
  if (encryptionKey !== undefined) grantKeyThrough(encryptionKey, role, 'secretsmanager', ['kms:Decrypt']);
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::${nagText(Stack.of(role).resolve(resource))}]`,
    reason:
      "The deployment's program secrets are named <secretsPrefix><program> and added at run time (banking-events-poller " +
      'secret set --program); the function may read those and no other secret (docs/security.md#program-secrets).',
  });
}

/** The regulated packs' findings on the function and its role that hold by design, with the reason. */
function acknowledgeRegulatedFindings(pollerFunction: lambda.Function, role: iam.Role): void {
  const dlq =
    'A failed run is not retried on purpose (retryAttempts 0): the next tick, a minute later, polls again ' +
    'from the same checkpoint, so no event is lost; the errors alarm reports failed runs, and ticks ' +
    'Scheduler could not deliver go to the schedule dead-letter queue.';
  const inline =
    "CDK's grants write the role's own inline policy, each statement scoped to this deployment's resources " +
    '(its secrets, its table, its bus, its bucket, its key through named services); a managed policy would ' +
    'hold the same statements and could be attached elsewhere.';
  for (const pack of ['HIPAA.Security', 'NIST.800.53.R5']) {
    Validations.of(pollerFunction).acknowledge({ id: `${pack}-LambdaDLQ`, reason: dlq });
  }
  for (const pack of ['HIPAA.Security', 'NIST.800.53.R5', 'PCI.DSS.321']) {
    Validations.of(role).acknowledge({ id: `${pack}-IAMNoInlinePolicy`, reason: inline });
  }
}
