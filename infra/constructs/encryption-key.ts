/**
 * The customer-managed key (`encryptionKey`): the key-policy statements for the AWS services that
 * use it on the construct's behalf, each scoped to this deployment by source account and source
 * ARN, and the grants to the construct's own roles, each only through the service they call
 * (`kms:ViaService`). What each store is encrypted with is decided where the store is created.
 */
import { Annotations, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';

/** What the AWS services do with the key in this deployment. */
export interface KeyServiceUses {
  /**
   * The bus the rules and the archive belong to, by name and ARN as literals (a reference to the
   * bus resource would make the key depend on the bus that is encrypted with it). EventBridge
   * encrypts the archive with the key and delivers the rules' events, and their failures, to
   * queues encrypted with it.
   */
  readonly bus?: { readonly name: string; readonly arn: string };
  /**
   * The Custom Event Bus encrypted with the key, by its name and its ARN with the service's id as a
   * wildcard (literals again: the bus references the key). EventBridge encrypts what the bus stores
   * with it; the subscribers' delivery roles use the key through SQS with their own grants.
   */
  readonly customBus?: { readonly name: string; readonly arnPattern: string };
  /** CloudWatch Logs encrypts the function's log group (created in `scope`'s stack) with the key. */
  readonly logGroups?: boolean;
  /** CloudWatch alarms publish to a topic encrypted with the key. */
  readonly alarms?: boolean;
}

/** The data-key actions a service needs to write and read what it encrypts. */
const DATA_KEY_ACTIONS = ['kms:Decrypt', 'kms:GenerateDataKey'] as const;

/**
 * Adds to `key`'s policy a statement per service that uses it here. An imported key's policy
 * cannot be changed from the app: synth then warns, naming the statements to add by hand.
 */
export function admitKeyServices(scope: Construct, key: kms.IKey, uses: KeyServiceUses): void {
  const stack = Stack.of(scope);
  const arn = (service: string, resource: string) =>
    `arn:${stack.partition}:${service}:${stack.region}:${stack.account}:${resource}`;
  const sameAccount = { 'aws:SourceAccount': stack.account };
  const statements: { sid: string; statement: iam.PolicyStatement }[] = [];
  if (uses.bus !== undefined) {
    // The archive, as EventBridge documents it: data keys bound to the bus by the encryption
    // context, and DescribeKey (the key's metadata only) to check the key when the archive is set up.
    statements.push({
      sid: 'EventBridgeArchive',
      statement: new iam.PolicyStatement({
        sid: 'EventBridgeArchive',
        principals: [new iam.ServicePrincipal('events.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey', 'kms:ReEncrypt*'],
        resources: ['*'],
        conditions: { StringEquals: { 'kms:EncryptionContext:aws:events:event-bus:arn': uses.bus.arn } },
      }),
    });
    statements.push(eventBridgeDescribeKey());
    statements.push({
      sid: 'EventBridgeRuleDelivery',
      statement: new iam.PolicyStatement({
        sid: 'EventBridgeRuleDelivery',
        principals: [new iam.ServicePrincipal('events.amazonaws.com')],
        actions: [...DATA_KEY_ACTIONS],
        resources: ['*'],
        // The rules' ARNs, not the rules: naming a rule here would make the key depend on the
        // rule, which depends on its queue, which depends on the key.
        conditions: {
          StringEquals: sameAccount,
          ArnLike: { 'aws:SourceArn': arn('events', `rule/${uses.bus.name}/*`) },
        },
      }),
    });
  }
  if (uses.customBus !== undefined) {
    // The custom bus: DescribeKey to check the key when the bus is created or updated, and the
    // data-key actions for this one bus of this account (the custom bus's user guide,
    // eb-custom-bus-encryption: "the key's policy must allow the events.amazonaws.com principal").
    statements.push(eventBridgeDescribeKey());
    statements.push({
      sid: 'EventBridgeCustomBus',
      statement: new iam.PolicyStatement({
        sid: 'EventBridgeCustomBus',
        principals: [new iam.ServicePrincipal('events.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*', 'kms:ReEncrypt*'],
        resources: ['*'],
        conditions: {
          StringEquals: sameAccount,
          ArnLike: { 'aws:SourceArn': uses.customBus.arnPattern },
        },
      }),
    });
  }
  if (uses.logGroups === true) {
    statements.push({
      sid: 'CloudWatchLogsLogGroups',
      statement: new iam.PolicyStatement({
        sid: 'CloudWatchLogsLogGroups',
        principals: [new iam.ServicePrincipal(`logs.${stack.region}.amazonaws.com`)],
        actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
        resources: ['*'],
        // CloudFormation names a log group without a name `<stack name>-<logical id>-<suffix>`;
        // the log group's own ARN would make the key depend on the log group that depends on it.
        conditions: {
          ArnLike: {
            'kms:EncryptionContext:aws:logs:arn': arn('logs', `log-group:${stack.stackName}-*`),
          },
        },
      }),
    });
  }
  if (uses.alarms === true) {
    statements.push({
      sid: 'CloudWatchAlarmsPublish',
      statement: new iam.PolicyStatement({
        sid: 'CloudWatchAlarmsPublish',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: {
          StringEquals: sameAccount,
          ArnLike: { 'aws:SourceArn': arn('cloudwatch', 'alarm:*') },
        },
      }),
    });
  }
  const missing = statements
    .filter(({ statement }) => !key.addToResourcePolicy(statement, true).statementAdded)
    .map(({ sid }) => sid);
  if (missing.length > 0) {
    Annotations.of(scope).addWarningV2(
      'banking-events-poller:importedEncryptionKey',
      `encryptionKey is imported, so its key policy cannot be changed from this app: add the statements ` +
        `${missing.join(', ')} to it by hand (docs/deploy.md, "Deploying in a regulated environment")`,
    );
  }
}

/**
 * `kms:Decrypt`/`kms:GenerateDataKey` (or `actions`) on `key` for `grantee`, only in requests that
 * `service` makes for it: the role can use the key through that service and never directly.
 */
export function grantKeyThrough(
  key: kms.IKey,
  grantee: iam.IGrantable,
  service: 'dynamodb' | 'secretsmanager' | 's3' | 'sqs',
  actions: readonly string[] = DATA_KEY_ACTIONS,
): iam.Grant {
  return iam.Grant.addToPrincipal({
    grantee,
    actions: [...actions],
    resourceArns: [key.keyArn],
    // The key's region: a service uses keys of its own region only.
    conditions: { StringEquals: { 'kms:ViaService': `${service}.${key.env.region}.amazonaws.com` } },
  });
}

/** `kms:DescribeKey` for EventBridge: either bus checks the key when it is created or updated. */
function eventBridgeDescribeKey(): { sid: string; statement: iam.PolicyStatement } {
  return {
    sid: 'EventBridgeDescribeKey',
    statement: new iam.PolicyStatement({
      sid: 'EventBridgeDescribeKey',
      principals: [new iam.ServicePrincipal('events.amazonaws.com')],
      actions: ['kms:DescribeKey'],
      resources: ['*'],
    }),
  };
}
