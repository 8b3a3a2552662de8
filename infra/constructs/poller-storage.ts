/**
 * What the poller keeps: the checkpoint table (one item per program: checkpoint and lease), each
 * program's credentials secret, and the claim-check bucket for events too large for the bus.
 * Created in the construct's own scope, so their logical ids are the construct's.
 */
import { type Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { pascalCase } from './construct-names.ts';

/**
 * On demand, point-in-time recovery, encrypted (the AWS-managed key, or `encryptionKey`),
 * partition key `pk`; retained when the stack goes.
 */
export function createCheckpointTable(scope: Construct, encryptionKey?: kms.IKey): dynamodb.Table {
  const table = new dynamodb.Table(scope, 'CheckpointTable', {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    ...tableEncryption(encryptionKey),
    // Losing the checkpoint means republishing the feed from the start.
    removalPolicy: RemovalPolicy.RETAIN,
  });
  acknowledgeBackupPlan(table);
  return table;
}

/** The table's encryption props: the AWS-managed key, or the customer-managed one. */
export function tableEncryption(
  encryptionKey?: kms.IKey,
): Pick<dynamodb.TableProps, 'encryption' | 'encryptionKey'> {
  return encryptionKey === undefined
    ? { encryption: dynamodb.TableEncryption.AWS_MANAGED }
    : { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey };
}

/** The regulated packs' backup-plan rule, acknowledged on a table with point-in-time recovery. */
export function acknowledgeBackupPlan(table: dynamodb.Table): void {
  const reason =
    'Point-in-time recovery is on: the table can be restored to any second of the last 35 days, which is ' +
    'what an AWS Backup plan would add for a table that holds only small, rewritten-every-minute items.';
  for (const pack of ['HIPAA.Security', 'NIST.800.53.R5']) {
    Validations.of(table).acknowledge({ id: `${pack}-DynamoDBInBackupPlan`, reason });
  }
}

/**
 * A program's credentials secret as a placeholder of the right shape: `client_secret` is random
 * and `client_id` is a marker the handler rejects by name, so no credential is ever in the
 * template or the context.
 */
export function createProgramSecret(
  scope: Construct,
  program: string,
  encryptionKey?: kms.IKey,
): secretsmanager.Secret {
  const secret = new secretsmanager.Secret(scope, `Secret${pascalCase(program)}`, {
    encryptionKey,
    description:
      `Banking service credentials for program ${program}: {"base_url","client_id","client_secret"}. ` +
      'Set with aws secretsmanager put-secret-value.',
    generateSecretString: {
      secretStringTemplate: JSON.stringify({
        base_url: 'https://<banking-service-host>',
        client_id: '<client-id>',
      }),
      generateStringKey: 'client_secret',
      excludePunctuation: true,
      passwordLength: 32,
    },
  });
  const reason =
    'The banking service issues and rotates these client credentials; operators store the new value ' +
    'with put-secret-value and the handler re-reads the secret on a 401.';
  for (const id of [
    'AwsSolutions-SMG4',
    'HIPAA.Security-SecretsManagerRotationEnabled',
    'NIST.800.53.R5-SecretsManagerRotationEnabled',
  ]) {
    Validations.of(secret).acknowledge({ id, reason });
  }
  return secret;
}

/** How the claim-check bucket is encrypted and where its access logs go. */
export interface ClaimCheckBucketOptions {
  readonly retention: Duration;
  /** SSE-KMS with a bucket key under this key; SSE-S3 without. */
  readonly encryptionKey?: kms.IKey;
  /** Server access logs go here; none without. */
  readonly accessLogsBucket?: s3.IBucket;
}

/**
 * The claim-check bucket: the full text of events too large for the bus, one object per event,
 * read by consumers through the pointer events. Encrypted (SSE-S3, or SSE-KMS with a bucket key
 * under `encryptionKey`), TLS only, never public, versioned (an overwritten or deleted body can be
 * recovered), objects and their old versions expire after `retention`; retained when the stack
 * goes (pointers on the bus and in the archive still name its objects).
 */
export function createClaimCheckBucket(scope: Construct, options: ClaimCheckBucketOptions): s3.Bucket {
  const { retention, encryptionKey, accessLogsBucket } = options;
  const bucket = new s3.Bucket(scope, 'ClaimCheckBucket', {
    ...(encryptionKey === undefined
      ? { encryption: s3.BucketEncryption.S3_MANAGED }
      : { encryption: s3.BucketEncryption.KMS, encryptionKey, bucketKeyEnabled: true }),
    enforceSSL: true,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    versioned: true,
    lifecycleRules: [
      { id: 'ExpireClaimChecks', expiration: retention, noncurrentVersionExpiration: retention },
      // Once an expired body's last version is gone, its delete marker is all that is left.
      { id: 'RemoveExpiredDeleteMarkers', expiredObjectDeleteMarker: true },
    ],
    serverAccessLogsBucket: accessLogsBucket,
    serverAccessLogsPrefix: accessLogsBucket === undefined ? undefined : 'claim-check/',
    removalPolicy: RemovalPolicy.RETAIN,
  });
  if (accessLogsBucket === undefined) {
    // The regulated packs' logging rules stay unacknowledged: claimCheckAccessLogsBucket answers them.
    Validations.of(bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Objects are written only by the poller function (its role may PutObject and nothing else) and read by ' +
        'consumers through pointer events; CloudTrail data events are the audit trail if one is needed. Pass ' +
        'claimCheckAccessLogsBucket for server access logs.',
    });
  }
  const replication =
    'Claim-check bodies are transient copies kept for the retention period of the events that point to them; ' +
    'the bank keeps the source of record and the feed can be replayed, so a cross-region replica would ' +
    'duplicate data without making any event recoverable that is not already.';
  for (const pack of ['HIPAA.Security', 'NIST.800.53.R5', 'PCI.DSS.321']) {
    Validations.of(bucket).acknowledge({ id: `${pack}-S3BucketReplicationEnabled`, reason: replication });
  }
  return bucket;
}
