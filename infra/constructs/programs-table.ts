/**
 * The programs table: one small item per program record (`functions/adapters/aws/dynamodb-program-registry.ts`
 * documents its attributes), read by every worker run with one paginated Scan. A table of its own,
 * not the checkpoint table: checkpoint items are large (open gaps) and a scan would read them all.
 */
import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import { tableEncryption } from './poller-storage.ts';

/**
 * On demand, point-in-time recovery, encrypted (the AWS-managed key, or `encryptionKey`),
 * partition key `pk` (the program's name); retained when the stack goes, like the checkpoints:
 * the records are the operators' own (programs added, paused) and a redeploy must find them.
 */
export function createProgramsTable(scope: Construct, encryptionKey?: kms.IKey): dynamodb.Table {
  const table = new dynamodb.Table(scope, 'ProgramsTable', {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    ...tableEncryption(encryptionKey),
    removalPolicy: RemovalPolicy.RETAIN,
  });
  const reason =
    'Point-in-time recovery is on: the table can be restored to any second of the last 35 days, which is ' +
    'what an AWS Backup plan would add for a table of small records that change only when an operator or a deploy edits them.';
  for (const pack of ['HIPAA.Security', 'NIST.800.53.R5']) {
    Validations.of(table).acknowledge({ id: `${pack}-DynamoDBInBackupPlan`, reason });
  }
  return table;
}
