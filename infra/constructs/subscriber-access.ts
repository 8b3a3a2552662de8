/**
 * What a subscriber built with the subscriber kit (`functions/subscriber/`) needs from the
 * poller's deployment: `s3:GetObject` on the claim-check objects, to follow pointer events, and an
 * idempotency table in the layout Powertools idempotency persists to. Grants only; the table is
 * created by `BankingEventsPoller.grantSubscriber` when the subscriber brings none.
 */
import { type CfnElement, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct, type IConstruct } from 'constructs';

/** The idempotency records' table, as Powertools' DynamoDB persistence layer reads it by default. */
export const IDEMPOTENCY_TABLE_KEY = 'id';
/** Powertools' expiry attribute: DynamoDB deletes records past it (TTL). */
export const IDEMPOTENCY_TABLE_TTL = 'expiration';

/**
 * An on-demand, encrypted table of idempotency records: partition key `id`, TTL on `expiration`,
 * point-in-time recovery on. Records are keyed `<function name>#<hash>`, so subscribers can share
 * one. Destroyed with the stack: its records only matter while their events can still arrive.
 */
export function createIdempotencyTable(
  scope: Construct,
  id: string,
  encryption: Pick<dynamodb.TableProps, 'encryption' | 'encryptionKey'> = {
    encryption: dynamodb.TableEncryption.AWS_MANAGED,
  },
): dynamodb.Table {
  return new dynamodb.Table(scope, id, {
    partitionKey: { name: IDEMPOTENCY_TABLE_KEY, type: dynamodb.AttributeType.STRING },
    timeToLiveAttribute: IDEMPOTENCY_TABLE_TTL,
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    ...encryption,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    removalPolicy: RemovalPolicy.DESTROY,
  });
}

/** The item actions Powertools' DynamoDB persistence layer performs; no query, scan or batch. */
export function grantIdempotencyRecords(table: dynamodb.ITable, grantee: iam.IGrantable): iam.Grant {
  return table.grant(
    grantee,
    'dynamodb:GetItem',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:DeleteItem',
  );
}

/**
 * `s3:GetObject`, and nothing else, on the claim-check bucket's objects (`grantRead` would add
 * listing the bucket and reading its configuration). The objects' names are only known at run
 * time, so the grant is on `<bucket>/*`: cdk-nag's finding for that is acknowledged on the
 * grantee's role when it is a construct of the app, with the reason.
 */
export function grantClaimCheckRead(bucket: s3.IBucket, grantee: iam.IGrantable): iam.Grant {
  const grant = iam.Grant.addToPrincipal({
    grantee,
    actions: ['s3:GetObject'],
    resourceArns: [bucket.arnForObjects('*')],
  });
  const principal = grantee.grantPrincipal as unknown as IConstruct;
  const bucketResource = bucket.node.defaultChild as CfnElement | undefined;
  if (principal instanceof Construct && bucketResource !== undefined) {
    const bucketId = Stack.of(bucketResource).getLogicalId(bucketResource);
    Validations.of(principal).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/*]`,
      reason:
        'Claim-check objects are named at run time (program, sequence number, event id): s3:GetObject, and ' +
        'nothing else, on the objects of the one claim-check bucket is the narrowest grant a subscriber can have.',
    });
  }
  return grant;
}
