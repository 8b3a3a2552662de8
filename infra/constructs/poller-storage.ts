/**
 * What the poller keeps: the checkpoint table (one item per program: checkpoint and lease), each
 * program's credentials secret, and the claim-check bucket for events too large for the bus.
 * Created in the construct's own scope, so their logical ids are the construct's.
 */
import { type Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { pascalCase } from './construct-names.ts';

/** On demand, point-in-time recovery, encrypted, partition key `pk`; retained when the stack goes. */
export function createCheckpointTable(scope: Construct): dynamodb.Table {
  return new dynamodb.Table(scope, 'CheckpointTable', {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    encryption: dynamodb.TableEncryption.AWS_MANAGED,
    // Losing the checkpoint means republishing the feed from the start.
    removalPolicy: RemovalPolicy.RETAIN,
  });
}

/**
 * A program's credentials secret as a placeholder of the right shape: `client_secret` is random
 * and `client_id` is a marker the handler rejects by name, so no credential is ever in the
 * template or the context.
 */
export function createProgramSecret(scope: Construct, program: string): secretsmanager.Secret {
  const secret = new secretsmanager.Secret(scope, `Secret${pascalCase(program)}`, {
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
  Validations.of(secret).acknowledge({
    id: 'AwsSolutions-SMG4',
    reason:
      'The banking service issues and rotates these client credentials; operators store the new value ' +
      'with put-secret-value and the handler re-reads the secret on a 401.',
  });
  return secret;
}

/**
 * The claim-check bucket: the full text of events too large for the bus, one object per event,
 * read by consumers through the pointer events. Encrypted (SSE-S3), TLS only, never public,
 * objects expire after `retention`; retained when the stack goes (pointers on the bus and in the
 * archive still name its objects).
 */
export function createClaimCheckBucket(scope: Construct, retention: Duration): s3.Bucket {
  const bucket = new s3.Bucket(scope, 'ClaimCheckBucket', {
    encryption: s3.BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    lifecycleRules: [{ id: 'ExpireClaimChecks', expiration: retention }],
    removalPolicy: RemovalPolicy.RETAIN,
  });
  Validations.of(bucket).acknowledge({
    id: 'AwsSolutions-S1',
    reason:
      'Objects are written only by the poller function (its role may PutObject and nothing else) and read by ' +
      'consumers through pointer events; CloudTrail data events are the audit trail if one is needed. Server ' +
      'access logs would need a second bucket holding a copy of every access, for no finding of ours.',
  });
  return bucket;
}
