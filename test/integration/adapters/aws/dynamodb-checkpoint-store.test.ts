/**
 * The DynamoDB store on moto: the checkpoint store contract (the same cases the memory and file
 * stores pass, `test/support/checkpoint-store-contract.ts`), then what only this store has: the
 * item's formats, the operator's move, the cycle record on its own, AWS errors.
 */
import { type AttributeValue, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  CHECKPOINT_ITEM_FORMAT,
  DynamoDbCheckpointStore,
} from '../../../../functions/adapters/aws/dynamodb-checkpoint-store.ts';
import type { OpenGap } from '../../../../functions/core/checkpoint/store.ts';
import { ConfigurationError, LeaseLostError } from '../../../../functions/core/errors.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../../support/aws-test-env.ts';
import { describeCheckpointStoreContract } from '../../../support/checkpoint-store-contract.ts';
import { describeContractAcrossPrograms } from '../../../support/checkpoint-store-programs.ts';

const LEASE_MS = 60_000;

describe('DynamoDbCheckpointStore against moto', () => {
  let aws: MotoEnvironment;
  let tableName: string;
  let now = 0;

  beforeAll(async () => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
    tableName = await aws.createCheckpointTable();
  });

  afterAll(() => aws.restore());

  /** A store for a program no other test uses, on the shared table. */
  function newStore(program: string = aws.uniqueName('program')): DynamoDbCheckpointStore {
    return new DynamoDbCheckpointStore({ client: aws.dynamodb, tableName, program, clock: () => now });
  }

  /** The item as DynamoDB holds it, attribute by attribute. */
  async function rawItem(program: string): Promise<Record<string, AttributeValue>> {
    const output = await aws.dynamodb.send(
      new GetItemCommand({
        TableName: tableName,
        Key: { pk: { S: `program#${program}` } },
        ConsistentRead: true,
      }),
    );
    return output.Item ?? {};
  }

  describeCheckpointStoreContract(
    'DynamoDbCheckpointStore',
    (clock) =>
      new DynamoDbCheckpointStore({
        client: aws.dynamodb,
        tableName,
        program: aws.uniqueName('program'),
        clock,
      }),
  );

  // A worker's programs share the table: each case on four neighbouring programs' rows at once.
  describeContractAcrossPrograms(
    'DynamoDbCheckpointStore',
    () => aws.uniqueName('program'),
    (program, clock) => new DynamoDbCheckpointStore({ client: aws.dynamodb, tableName, program, clock }),
  );

  const lease = (owner: string, at: number) => ({ owner, now: at, expiresAt: at + LEASE_MS });
  const FEED = 'feed-program-1';
  const commit = (
    store: DynamoDbCheckpointStore,
    owner: string,
    sequenceNumber: number,
    options: { feedProgramId?: string | null; signal?: AbortSignal; openGaps?: OpenGap[] } = {},
  ) =>
    store.commit({
      owner,
      sequenceNumber,
      feedProgramId: options.feedProgramId === undefined ? FEED : options.feedProgramId,
      openGaps: options.openGaps,
      signal: options.signal,
    });

  describe('the item format', () => {
    /** A row as 0.1.x wrote it: format 1, no format_version, no start record. */
    async function putFormatOneItem(program: string, attributes: Record<string, AttributeValue>) {
      await aws.dynamodb.send(
        new PutItemCommand({
          TableName: tableName,
          Item: { pk: { S: `program#${program}` }, ...attributes },
        }),
      );
    }

    it('reads an item of the previous format and upgrades it at the next lease', async () => {
      const program = aws.uniqueName('program');
      await putFormatOneItem(program, {
        checkpoint: { N: '41' },
        updated_at: { S: '2026-11-20T00:00:00.000Z' },
        feed_program_id: { S: FEED },
        open_gaps: { S: JSON.stringify([{ from: 30, to: 31, seenAt: 5 }]) },
        newest_created_dt: { S: '2026-11-20T00:00:00.000Z' },
        last_cycle_ended_at: { S: '2026-11-20T00:00:01.000Z' },
        last_cycle_outcome: { S: 'completed' },
        last_cycle_published: { N: '3' },
      });
      const store = new DynamoDbCheckpointStore({
        client: aws.dynamodb,
        tableName,
        program,
        clock: () => now,
      });

      const grant = await store.acquireLease(lease('A', 7_000));
      await commit(store, 'A', 45);
      const item = (
        await aws.dynamodb.send(
          new GetItemCommand({
            TableName: tableName,
            Key: { pk: { S: `program#${program}` } },
            ConsistentRead: true,
          }),
        )
      ).Item!;

      expect(grant).toEqual({
        acquired: true,
        checkpoint: 41,
        feedProgramId: FEED,
        openGaps: [{ from: 30, to: 31, seenAt: 5 }],
        heldJumps: [],
        firstLeasedAt: 7_000,
        startApplied: true,
        highestSeen: null,
      });
      expect(item.format_version?.N).toBe(String(CHECKPOINT_ITEM_FORMAT));
      expect(item.checkpoint?.N).toBe('45');
      expect(item.last_cycle_published?.N).toBe('3');
    });

    it('reads a format-1 row whose latest start landed on an empty feed as started (it has no checkpoint)', async () => {
      const program = aws.uniqueName('program');
      await putFormatOneItem(program, {
        last_cycle_ended_at: { S: '2026-11-20T00:00:01.000Z' },
        last_cycle_outcome: { S: 'completed' },
        last_cycle_published: { N: '0' },
      });
      const store = new DynamoDbCheckpointStore({
        client: aws.dynamodb,
        tableName,
        program,
        clock: () => now,
      });

      expect(await store.acquireLease(lease('A', 0))).toMatchObject({ checkpoint: null, startApplied: true });
    });

    it('refuses an item of a newer format, taking no lease and writing nothing', async () => {
      const program = aws.uniqueName('program');
      await putFormatOneItem(program, { checkpoint: { N: '9' }, format_version: { N: '99' } });
      const store = new DynamoDbCheckpointStore({
        client: aws.dynamodb,
        tableName,
        program,
        clock: () => now,
      });

      const error = await store.acquireLease(lease('A', 0)).catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as ConfigurationError).message).toContain('format 99');
      await expect(store.read()).rejects.toBeInstanceOf(ConfigurationError);
      const item = (
        await aws.dynamodb.send(
          new GetItemCommand({
            TableName: tableName,
            Key: { pk: { S: `program#${program}` } },
            ConsistentRead: true,
          }),
        )
      ).Item!;
      expect(item.lease_owner).toBeUndefined();
    });
  });

  describe('highest_seen (the highest number any run saw at the end of the feed)', () => {
    // Its rules (holder only, never lowered) are in the contract; here, how the item holds it.
    it('is a number attribute, granted with the lease, within the item format', async () => {
      const program = aws.uniqueName('program');
      const store = newStore(program);
      await store.acquireLease(lease('A', 0));

      await store.recordHighestSeen({ owner: 'A', sequenceNumber: 0 });
      const empty = await rawItem(program);
      await store.recordHighestSeen({ owner: 'A', sequenceNumber: 12 });
      await store.releaseLease('A');
      const grant = await store.acquireLease(lease('B', 10));

      expect(empty.highest_seen).toEqual({ N: '0' });
      expect((await rawItem(program)).highest_seen).toEqual({ N: '12' });
      expect((await rawItem(program)).format_version).toEqual({ N: String(CHECKPOINT_ITEM_FORMAT) });
      expect(grant).toMatchObject({ acquired: true, highestSeen: 12, startApplied: false });
    });

    it('is not written by an invocation whose lease was taken over', async () => {
      const program = aws.uniqueName('program');
      const store = newStore(program);
      await store.acquireLease(lease('A', 0));
      await store.acquireLease(lease('B', LEASE_MS + 1));

      await expect(store.recordHighestSeen({ owner: 'A', sequenceNumber: 3 })).rejects.toBeInstanceOf(
        LeaseLostError,
      );

      expect((await rawItem(program)).highest_seen).toBeUndefined();
    });
  });

  describe("moveCheckpoint (the operator's rewind)", () => {
    it('refuses while another invocation holds a live lease, and writes nothing', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));
      await commit(store, 'A', 100);
      now = 30_000;

      const outcome = await store.moveCheckpoint({ to: 50, expected: 100 });

      expect(outcome).toMatchObject({ moved: false, reason: 'lease-held' });
      expect((await store.read()).checkpoint).toBe(100);
    });

    it('moves back once the lease expired, and forward too', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));
      await commit(store, 'A', 100);
      now = LEASE_MS + 1;

      const back = await store.moveCheckpoint({ to: 50, expected: 100 });
      const forward = await store.moveCheckpoint({ to: 70, expected: 50 });

      expect(back).toMatchObject({ moved: true, state: { checkpoint: 50 } });
      expect(forward).toMatchObject({ moved: true, state: { checkpoint: 70, feedProgramId: FEED } });
    });

    it('refuses when the checkpoint is no longer the one the operator saw', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));
      await commit(store, 'A', 100);
      now = LEASE_MS + 1;

      const outcome = await store.moveCheckpoint({ to: 50, expected: 90 });

      expect(outcome).toMatchObject({
        moved: false,
        reason: 'checkpoint-changed',
        state: { checkpoint: 100 },
      });
    });

    it('takes a live lease away with breakLease, so the running invocation cannot write over the move', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));
      await commit(store, 'A', 100);
      now = 30_000;

      const outcome = await store.moveCheckpoint({ to: 50, expected: 100, breakLease: true });
      const late = await commit(store, 'A', 110).catch((caught: unknown) => caught);

      expect(outcome).toMatchObject({ moved: true, state: { checkpoint: 50, lease: null } });
      expect(late).toBeInstanceOf(LeaseLostError);
      expect((await store.read()).checkpoint).toBe(50);
    });

    it('sets a first checkpoint, with its feed, on a program that has none', async () => {
      const store = newStore();

      const outcome = await store.moveCheckpoint({ to: 12, expected: null, feedProgramId: FEED });

      expect(outcome).toMatchObject({ moved: true, state: { checkpoint: 12, feedProgramId: FEED } });
    });
  });

  describe("decideHeldJump (the operator's jumps accept|reject)", () => {
    const MAX = Number.MAX_SAFE_INTEGER;
    const held = [
      { sequenceNumber: 2_000_000, eventId: 'e-low', fingerprint: 'a'.repeat(64), heldAt: 1 },
      { sequenceNumber: MAX, eventId: 'e-max', fingerprint: 'b'.repeat(64), heldAt: 2 },
    ];
    /** A row whose run held two jumps with checkpoint 5, its lease taken at 0. */
    async function rowWithHeldJumps(): Promise<{ store: DynamoDbCheckpointStore; program: string }> {
      const program = aws.uniqueName('program');
      const store = newStore(program);
      await store.acquireLease(lease('A', 0));
      await store.commit({ owner: 'A', sequenceNumber: 5, feedProgramId: FEED, heldJumps: held });
      return { store, program };
    }

    it('is stored as JSON text in held_jumps, written with the checkpoint', async () => {
      const { program } = await rowWithHeldJumps();

      const item = await rawItem(program);

      expect(JSON.parse(item.held_jumps!.S!)).toEqual(held);
      expect(item.checkpoint).toEqual({ N: '5' });
    });

    it('refuses while an invocation holds a live lease, and writes nothing', async () => {
      const { store, program } = await rowWithHeldJumps();
      const before = await rawItem(program);
      now = 30_000;

      const outcome = await store.decideHeldJump({
        sequenceNumber: MAX,
        eventId: 'e-max',
        decision: 'accepted',
      });

      expect(outcome).toMatchObject({ decided: false, reason: 'lease-held' });
      expect(await rawItem(program)).toEqual(before);
    });

    it('records the decision on that one jump once the lease expired; the next lease hands it to the run', async () => {
      const { store } = await rowWithHeldJumps();
      now = LEASE_MS + 1;

      const outcome = await store.decideHeldJump({
        sequenceNumber: MAX,
        eventId: 'e-max',
        decision: 'rejected',
      });
      const grant = await store.acquireLease(lease('B', LEASE_MS + 2));

      expect(outcome).toMatchObject({ decided: true, state: { checkpoint: 5 } });
      expect(grant).toMatchObject({
        acquired: true,
        heldJumps: [held[0], { ...held[1], decision: 'rejected', decidedAt: LEASE_MS + 1 }],
      });
    });

    it('takes a live lease away with breakLease, so the running invocation cannot write its held jumps over the decision', async () => {
      const { store } = await rowWithHeldJumps();
      now = 30_000;

      const outcome = await store.decideHeldJump({
        sequenceNumber: 2_000_000,
        eventId: 'e-low',
        decision: 'accepted',
        breakLease: true,
      });
      const late = await store
        .commit({ owner: 'A', sequenceNumber: 6, feedProgramId: FEED, heldJumps: held })
        .catch((caught: unknown) => caught);

      expect(outcome).toMatchObject({ decided: true, state: { lease: null } });
      expect(late).toBeInstanceOf(LeaseLostError);
      expect((await store.read()).heldJumps?.[0]).toMatchObject({ eventId: 'e-low', decision: 'accepted' });
    });

    it('refuses when a run changed the held jumps between the read and the write', async () => {
      const { store, program } = await rowWithHeldJumps();
      now = LEASE_MS + 1;
      const run = newStore(program);
      // A run takes the lease, holds a third jump and gives the lease back just before the write.
      const client = {
        send: async (command: { input: { UpdateExpression?: string } }, options?: unknown) => {
          if (command.input.UpdateExpression?.startsWith('SET held_jumps')) {
            await run.acquireLease(lease('B', LEASE_MS + 2));
            const third = {
              sequenceNumber: 5_000_000,
              eventId: 'e-3',
              fingerprint: 'c'.repeat(64),
              heldAt: 3,
            };
            await run.commit({
              owner: 'B',
              sequenceNumber: 6,
              feedProgramId: FEED,
              heldJumps: [...held, third],
            });
            await run.releaseLease('B');
          }
          return aws.dynamodb.send(command as never, options as never);
        },
      };
      const racing = new DynamoDbCheckpointStore({
        client: client as never,
        tableName,
        program,
        clock: () => now,
      });

      const outcome = await racing.decideHeldJump({
        sequenceNumber: MAX,
        eventId: 'e-max',
        decision: 'accepted',
      });

      expect(outcome).toMatchObject({ decided: false, reason: 'changed', state: { checkpoint: 6 } });
      expect((await store.read()).heldJumps?.every((jump) => jump.decision === undefined)).toBe(true);
    });

    it('refuses a jump the row does not hold, by number or by event id', async () => {
      const { store } = await rowWithHeldJumps();
      now = LEASE_MS + 1;

      const byNumber = await store.decideHeldJump({
        sequenceNumber: 7,
        eventId: 'e-max',
        decision: 'accepted',
      });
      const byId = await store.decideHeldJump({
        sequenceNumber: MAX,
        eventId: 'other',
        decision: 'accepted',
      });

      expect(byNumber).toMatchObject({ decided: false, reason: 'not-held' });
      expect(byId).toMatchObject({ decided: false, reason: 'not-held' });
      expect((await store.read()).heldJumps).toEqual(held);
    });
  });

  describe('what status reads', () => {
    it('records the last cycle, keeps the last error after a success, and never lets an older record win', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));

      await store.recordCycle({
        endedAt: '2026-01-01T00:01:00.000Z',
        outcome: 'failed',
        published: 0,
        lagSeconds: null,
        error: { code: 'AUTHENTICATION_FAILED', message: 'token refused' },
      });
      await store.recordCycle({
        endedAt: '2026-01-01T00:02:00.000Z',
        outcome: 'completed',
        published: 7,
        lagSeconds: 1.5,
      });
      await store.recordCycle({
        endedAt: '2026-01-01T00:00:30.000Z',
        outcome: 'completed',
        published: 1,
        lagSeconds: 0,
      });

      expect(await store.read()).toMatchObject({
        lastCycle: {
          endedAt: '2026-01-01T00:02:00.000Z',
          outcome: 'completed',
          published: 7,
          lagSeconds: 1.5,
        },
        lastError: {
          code: 'AUTHENTICATION_FAILED',
          message: 'token refused',
          at: '2026-01-01T00:01:00.000Z',
        },
      });
    });
  });

  it('reports a missing table as a ConfigurationError naming it', async () => {
    const missing = aws.uniqueName('no-such-table');
    const store = new DynamoDbCheckpointStore({ client: aws.dynamodb, tableName: missing, program: 'p' });

    const error = await store.read().catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).message).toContain(missing);
  });
});
