/**
 * The programs that have a checkpoint row in a table: for operators (`status` of every program,
 * "unknown program" errors that list the known ones). A Scan over the keys only; the table holds
 * one small item per program. The function itself never scans (its role may not).
 */
import { type AttributeValue, type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';

const ROW_PREFIX = 'program#';

/** Program names with a row, sorted. */
export async function listCheckpointPrograms(client: DynamoDBClient, tableName: string): Promise<string[]> {
  const programs: string[] = [];
  let startKey: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: tableName,
        ProjectionExpression: 'pk',
        FilterExpression: 'begins_with(pk, :prefix)',
        ExpressionAttributeValues: { ':prefix': { S: ROW_PREFIX } },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) {
      const key = item.pk?.S;
      if (key?.startsWith(ROW_PREFIX)) programs.push(key.slice(ROW_PREFIX.length));
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return programs.sort();
}
