/**
 * The DynamoDB program registry on moto: the registry contract (the cases the memory and file
 * registries pass, `test/support/program-registry-contract.ts`), each case on a table of its own,
 * then what only this registry has: items written by hand, or by a later version.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DynamoDbProgramRegistry } from '../../../../functions/adapters/aws/dynamodb-program-registry.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../../support/aws-test-env.ts';
import { describeProgramRegistryContract } from '../../../support/program-registry-contract.ts';

describe('DynamoDbProgramRegistry against moto', () => {
  let aws: MotoEnvironment;

  beforeAll(() => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
  });

  afterAll(() => aws.restore());

  /** Writes `items` (record-shaped JSON, as a hand edit would) into the table as they are. */
  async function seeded(
    items: readonly unknown[],
  ): Promise<{ registry: DynamoDbProgramRegistry; tableName: string }> {
    const tableName = await aws.createCheckpointTable();
    for (const item of items) {
      const { name, secretId, ...rest } = item as Record<string, unknown>;
      await aws.dynamodb.send(
        new PutItemCommand({
          TableName: tableName,
          Item: marshall({ pk: name, secret_id: secretId, ...rest }, { removeUndefinedValues: true }),
        }),
      );
    }
    return { registry: new DynamoDbProgramRegistry({ client: aws.dynamodb, tableName }), tableName };
  }

  describeProgramRegistryContract('DynamoDbProgramRegistry', async (seed) => (await seeded(seed)).registry);

  it('reads an item with attributes a later version added, leaving them out', async () => {
    const { registry } = await seeded([
      {
        name: 'cards',
        secretId: 'bep/Test/cards',
        state: 'active',
        owner: 'stack',
        revision: 2,
        added_by: 'v9',
      },
    ]);

    expect((await registry.list()).records).toEqual([
      {
        name: 'cards',
        secretId: 'bep/Test/cards',
        state: 'active',
        owner: 'stack',
        settings: {},
        revision: 2,
      },
    ]);
  });

  it('refuses alone an item whose settings hold a value no setting takes (a set), listing the others', async () => {
    const { registry, tableName } = await seeded([
      { name: 'cards', secretId: 'bep/Test/cards', state: 'active', owner: 'operator', revision: 1 },
    ]);
    await aws.dynamodb.send(
      new PutItemCommand({
        TableName: tableName,
        Item: {
          pk: { S: 'loans' },
          secret_id: { S: 'bep/Test/loans' },
          state: { S: 'active' },
          owner: { S: 'operator' },
          settings: { M: { pollLimit: { NS: ['1', '2'] } } },
          revision: { N: '1' },
        },
      }),
    );

    const { records, refused } = await registry.list();

    expect(records.map((record) => record.name)).toEqual(['cards']);
    expect(refused.map((item) => item.key)).toEqual(['loans']);
  });

  it('reads every page of a table larger than one scan answers', async () => {
    const names = Array.from({ length: 1_200 }, (_, i) => `program-${String(i).padStart(4, '0')}`);
    const padding = 'x'.repeat(900);
    const { registry } = await seeded(
      names.map((name) => ({
        name,
        secretId: `bep/Test/${name}/${padding}`,
        state: 'active',
        owner: 'operator',
        revision: 1,
      })),
    );

    const { records } = await registry.list();

    expect(records.map((record) => record.name)).toEqual(names);
  }, 120_000);
});
