/**
 * The DynamoDB store under the no-loss property (the cycle over in-memory ports but this store on
 * moto, crashes at every step), and mutation tests of its condition expressions: each mutant drops
 * one condition from a copy of the store (a rule's expression in its `CONDITION` table, or a rule
 * from one write's list), and the contract or the property must fail on it, as the
 * memory store's mutants fail the property (`test/unit/core/no-loss-mutations.test.ts`).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DynamoDbCheckpointStore } from '../../../../functions/adapters/aws/dynamodb-checkpoint-store.ts';
import type { CheckpointStore } from '../../../../functions/core/checkpoint/store.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../../support/aws-test-env.ts';
import { type CheckpointStoreFactory, contractFailures } from '../../../support/checkpoint-store-contract.ts';
import { buildMutant, type Mutant } from '../../../support/cycle-mutants.ts';
import { assertNoLossProperty, checkNoLossProperty } from '../../../support/no-loss-property.ts';

const STORE_FILE = 'adapters/aws/dynamodb-checkpoint-store.ts';

/** A store class as a mutant's copy exports it. */
type StoreClass = new (options: {
  client: DynamoDBClient;
  tableName: string;
  program: string;
  clock: () => number;
}) => CheckpointStore;

interface StoreMutant extends Mutant {
  /** Contract cases that must fail on it (by name). */
  readonly failsCases: readonly string[];
  /** Whether the no-loss property must find an event lost on it too. */
  readonly losesEvents: boolean;
}

const MUTANTS: readonly StoreMutant[] = [
  {
    name: 'dynamodb commit not only forward',
    edits: [
      {
        file: STORE_FILE,
        find: "forwardOnly: '(attribute_not_exists(checkpoint) OR checkpoint <= :seq)'",
        replace:
          "forwardOnly: '(attribute_not_exists(checkpoint) OR checkpoint <= :seq OR checkpoint > :seq)'",
      },
    ],
    failsCases: ['never moves backwards, even for the holder'],
    losesEvents: false,
  },
  {
    name: 'dynamodb commit not only by the lease holder',
    edits: [
      {
        file: STORE_FILE,
        find: 'CONDITION.holderOnly,\n        CONDITION.forwardOnly,',
        replace: 'CONDITION.forwardOnly,',
      },
    ],
    failsCases: [
      'is refused to an owner that does not hold the lease, naming the holder',
      'is refused when nobody holds the lease',
      'is refused to the old holder once its expired lease was taken over, even moving forward',
    ],
    losesEvents: false,
  },
  {
    name: 'dynamodb landing on a row that has a checkpoint',
    edits: [
      {
        file: STORE_FILE,
        find: 'CONDITION.holderOnly,\n        CONDITION.noLandingOverCheckpoint,',
        replace: 'CONDITION.holderOnly,',
      },
    ],
    failsCases: ['a landing refused on a row that has a checkpoint (a writer without the lease set it)'],
    losesEvents: false,
  },
  {
    name: 'dynamodb first lease time replaced by every lease',
    edits: [
      {
        file: STORE_FILE,
        find: "'first_leased_at = if_not_exists(first_leased_at, :now)'",
        replace: "'first_leased_at = :now'",
      },
    ],
    failsCases: ['keeps the time of the first lease ever taken, whoever takes it later'],
    losesEvents: false,
  },
  {
    // A crashed run's lease is then never taken over: the feed stops at the first crash.
    name: 'dynamodb expired lease never taken over',
    edits: [
      {
        file: STORE_FILE,
        find: "leaseFree: '(attribute_not_exists(lease_owner) OR lease_expires_at < :now)'",
        replace: "leaseFree: 'attribute_not_exists(lease_owner)'",
      },
    ],
    failsCases: ['lets another owner take over an expired lease, handing it the row as it is'],
    losesEvents: true,
  },
];

describe('the DynamoDB checkpoint store under the no-loss property', () => {
  let aws: MotoEnvironment;
  let tableName: string;

  beforeAll(async () => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
    tableName = await aws.createCheckpointTable();
  });

  afterAll(() => aws.restore());

  /** A fresh row (its own program) of `Store` on the shared table. */
  const rowsOf =
    (Store: StoreClass): CheckpointStoreFactory =>
    (clock) =>
      new Store({ client: aws.dynamodb, tableName, program: aws.uniqueName('program'), clock });

  it('loses nothing, never moves the checkpoint back or past an unaccepted event, whatever faults are drawn', async () => {
    // Fewer schedules than on the memory store (400): each store call is a request to moto.
    await assertNoLossProperty({
      numRuns: 30,
      seed: Number(process.env.FC_SEED ?? 4_242),
      newStore: rowsOf(DynamoDbCheckpointStore),
    });
  }, 300_000);

  it.each(MUTANTS)(
    'catches a mutant of its conditions: $name',
    async (mutant) => {
      const code = await buildMutant(mutant);
      const Store = (await code.import(STORE_FILE)).DynamoDbCheckpointStore as StoreClass;

      const failed = await contractFailures(rowsOf(Store));

      expect(failed).toEqual(expect.arrayContaining([...mutant.failsCases]));
      if (mutant.losesEvents) {
        const details = await checkNoLossProperty(code.modules, {
          numRuns: 25,
          seed: 4_242,
          newStore: rowsOf(Store),
        });
        expect(details.failed, `${mutant.name}: no counterexample in ${details.numRuns} runs`).toBe(true);
      }
    },
    300_000,
  );
});
