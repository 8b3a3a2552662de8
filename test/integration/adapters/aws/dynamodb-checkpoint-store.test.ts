import { type AttributeValue, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  CHECKPOINT_ITEM_FORMAT,
  DynamoDbCheckpointStore,
} from '../../../../functions/adapters/aws/dynamodb-checkpoint-store.ts';
import type { OpenGap } from '../../../../functions/core/checkpoint-store.ts';
import {
  CheckpointRegressionError,
  ConfigurationError,
  DeadlineExceededError,
  FeedProgramMismatchError,
  LeaseLostError,
  type PollerError,
} from '../../../../functions/core/errors.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../../support/aws-test-env.ts';

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

  const lease = (owner: string, at: number) => ({ owner, now: at, expiresAt: at + LEASE_MS });

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

  describe('acquireLease', () => {
    it('grants a free lease and reports no checkpoint yet', async () => {
      const store = newStore();

      const grant = await store.acquireLease(lease('A', 0));

      expect(grant).toEqual({
        acquired: true,
        checkpoint: null,
        feedProgramId: null,
        openGaps: [],
        firstLeasedAt: 0,
        startApplied: false,
        highestSeen: null,
      });
      expect((await store.read()).lease).toEqual({ owner: 'A', expiresAt: LEASE_MS });
    });

    it('grants a free lease to exactly one of many simultaneous takers', async () => {
      // Concurrent requests, each on its own connection, as separate execution environments send them.
      for (let round = 0; round < 5; round += 1) {
        const program = aws.uniqueName('program');
        const takers = Array.from(
          { length: 12 },
          () => new DynamoDbCheckpointStore({ client: aws.dynamodb, tableName, program, clock: () => now }),
        );

        const grants = await Promise.all(
          takers.map((store, index) => store.acquireLease(lease(`T${index}`, 0))),
        );

        expect(
          grants.filter((grant) => grant.acquired),
          `round ${round}`,
        ).toHaveLength(1);
      }
    });

    it('refuses a live lease and names its holder and expiry', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));

      const grant = await store.acquireLease(lease('B', 10_000));

      expect(grant).toEqual({ acquired: false, holder: 'A', expiresAt: LEASE_MS });
    });

    it('still refuses at the very millisecond the lease expires', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));

      const grant = await store.acquireLease(lease('B', LEASE_MS));

      expect(grant.acquired).toBe(false);
    });

    it('lets another owner take over an expired lease and hands it the checkpoint', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));
      await commit(store, 'A', 41);

      const grant = await store.acquireLease(lease('B', LEASE_MS + 1));

      expect(grant).toEqual({
        acquired: true,
        checkpoint: 41,
        feedProgramId: FEED,
        openGaps: [],
        firstLeasedAt: 0,
        startApplied: true,
        highestSeen: null,
      });
      expect((await store.read()).lease?.owner).toBe('B');
    });

    it('is re-entrant for the holder and extends the expiry', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));

      const grant = await store.acquireLease(lease('A', 20_000));

      expect(grant.acquired).toBe(true);
      expect((await store.read()).lease).toEqual({ owner: 'A', expiresAt: 20_000 + LEASE_MS });
    });
  });

  describe('releaseLease', () => {
    it('frees the lease for the next invocation and keeps the checkpoint', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));
      await commit(store, 'A', 7);

      await store.releaseLease('A');
      const grant = await store.acquireLease(lease('B', 1_000));

      expect(grant).toEqual({
        acquired: true,
        checkpoint: 7,
        feedProgramId: FEED,
        openGaps: [],
        firstLeasedAt: 0,
        startApplied: true,
        highestSeen: null,
      });
    });

    it('writes the cycle record in the same update, so the next holder finds it', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));
      const record = {
        endedAt: '2026-01-01T00:01:00.000Z',
        outcome: 'failed' as const,
        published: 3,
        lagSeconds: null,
        error: { code: 'PUBLISH_FAILED', message: 'refused' },
      };

      await store.releaseLease('A', { record });

      expect(await store.read()).toMatchObject({
        lease: null,
        lastCycle: record,
        lastError: { code: 'PUBLISH_FAILED', at: record.endedAt },
      });
    });

    it('records the cycle of a holder that lost its lease only if no newer record is there', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));
      await store.acquireLease(lease('B', LEASE_MS + 1));
      const newer = {
        endedAt: '2026-01-01T00:05:00.000Z',
        outcome: 'completed' as const,
        published: 9,
        lagSeconds: 0,
      };
      await store.releaseLease('B', { record: newer });
      const older = {
        endedAt: '2026-01-01T00:04:00.000Z',
        outcome: 'failed' as const,
        published: 0,
        lagSeconds: null,
        error: { code: 'LEASE_LOST', message: 'lost' },
      };

      await store.releaseLease('A', { record: older });
      const kept = await store.read();
      await store.releaseLease('A', { record: { ...older, endedAt: '2026-01-01T00:06:00.000Z' } });

      expect(kept.lastCycle).toEqual(newer);
      expect((await store.read()).lastCycle).toMatchObject({
        outcome: 'failed',
        endedAt: '2026-01-01T00:06:00.000Z',
      });
    });

    it('does nothing when called by someone who does not hold the lease', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));

      await store.releaseLease('B');

      expect((await store.read()).lease?.owner).toBe('A');
    });

    it('does nothing (and creates no item) when there is no lease at all', async () => {
      const store = newStore();

      await store.releaseLease('A');

      expect(await store.read()).toEqual({
        checkpoint: null,
        updatedAt: null,
        lease: null,
        feedProgramId: null,
        openGaps: [],
      });
    });
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

  describe('the start record', () => {
    it('keeps the time of the first lease ever taken, whoever takes it later', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 5_000));
      await store.acquireLease(lease('B', 5_000 + LEASE_MS + 1));

      expect((await store.read()).firstLeasedAt).toBe(5_000);
    });

    it('records a landing without a number: applied, reading from the beginning', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));

      await store.recordStart({ owner: 'A', position: 'latest', checkpoint: null, feedProgramId: null });
      const grant = await store.acquireLease(lease('A', 10));

      expect(await store.read()).toMatchObject({ checkpoint: null, start: { position: 'latest' } });
      expect(grant).toMatchObject({ acquired: true, checkpoint: null, startApplied: true });
    });

    it('records a landing with its checkpoint and feed', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));

      await store.recordStart({ owner: 'A', position: 'latest', checkpoint: 40, feedProgramId: FEED });

      expect(await store.read()).toMatchObject({
        checkpoint: 40,
        feedProgramId: FEED,
        start: { position: 'latest' },
      });
    });

    it('refuses a landing by a non-holder, or on a row that has a checkpoint', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));
      const request = { position: '10', checkpoint: 9, feedProgramId: null };

      await expect(store.recordStart({ owner: 'B', ...request })).rejects.toBeInstanceOf(LeaseLostError);
      await commit(store, 'A', 3);
      await expect(store.recordStart({ owner: 'A', ...request })).rejects.toBeInstanceOf(
        CheckpointRegressionError,
      );

      expect(await store.read()).toMatchObject({ checkpoint: 3 });
      expect((await store.read()).start).toBeUndefined();
    });

    it('records the highest number seen as highest_seen (N) for the lease holder, never lowers it, and grants it with the lease', async () => {
      const program = aws.uniqueName('program');
      const store = newStore(program);
      await store.acquireLease(lease('A', 0));

      await store.recordHighestSeen({ owner: 'A', sequenceNumber: 0 });
      const empty = await rawItem(program);
      await store.recordHighestSeen({ owner: 'A', sequenceNumber: 12 });
      await store.recordHighestSeen({ owner: 'A', sequenceNumber: 5 });
      await expect(store.recordHighestSeen({ owner: 'B', sequenceNumber: 99 })).rejects.toBeInstanceOf(
        LeaseLostError,
      );
      await store.releaseLease('A');
      const grant = await store.acquireLease(lease('B', 10));

      expect(empty.highest_seen).toEqual({ N: '0' });
      expect((await rawItem(program)).highest_seen).toEqual({ N: '12' });
      expect(grant).toMatchObject({ acquired: true, highestSeen: 12, startApplied: false });
      expect(await store.read()).toMatchObject({ highestSeen: 12, checkpoint: null });
    });

    it('keeps highest_seen within the item format: a row with it stays readable by the format it had', async () => {
      const program = aws.uniqueName('program');
      const store = newStore(program);
      await store.acquireLease(lease('A', 0));

      await store.recordHighestSeen({ owner: 'A', sequenceNumber: 4 });

      expect((await rawItem(program)).format_version).toEqual({ N: String(CHECKPOINT_ITEM_FORMAT) });
      expect(CHECKPOINT_ITEM_FORMAT).toBe(2);
    });

    it('refuses highest_seen from an invocation whose lease expired and was taken over', async () => {
      const program = aws.uniqueName('program');
      const store = newStore(program);
      await store.acquireLease(lease('A', 0));
      await store.acquireLease(lease('B', LEASE_MS + 1));

      const error = await store
        .recordHighestSeen({ owner: 'A', sequenceNumber: 3 })
        .catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(LeaseLostError);
      expect((error as PollerError).context).toMatchObject({ owner: 'A', holder: 'B', sequenceNumber: 3 });
      expect((await rawItem(program)).highest_seen).toBeUndefined();
    });

    it('reads a row written before the start record existed: a completed cycle without checkpoint is applied', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));
      await store.releaseLease('A', {
        record: { endedAt: '2026-01-01T00:00:00.000Z', outcome: 'completed', published: 0, lagSeconds: 0 },
      });

      expect(await store.acquireLease(lease('B', 1))).toMatchObject({ acquired: true, startApplied: true });
    });
  });

  describe('commit', () => {
    it('moves the checkpoint forward and stamps updated_at', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));
      now = Date.parse('2024-05-01T12:00:00.000Z');

      await commit(store, 'A', 5);
      await commit(store, 'A', 10);

      expect(await store.read()).toMatchObject({ checkpoint: 10, updatedAt: '2024-05-01T12:00:00.000Z' });
    });

    it('gives up when its signal aborts (the invocation is ending) and leaves the checkpoint as it was', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));
      await commit(store, 'A', 5);

      await expect(commit(store, 'A', 9, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
        DeadlineExceededError,
      );
      await expect(store.releaseLease('A', { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
        DeadlineExceededError,
      );

      expect(await store.read()).toMatchObject({ checkpoint: 5, lease: { owner: 'A' } });
    });

    it('accepts the same sequence number twice (a retried commit)', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));
      await commit(store, 'A', 10);

      await commit(store, 'A', 10);

      expect((await store.read()).checkpoint).toBe(10);
    });

    it('refuses a commit by a non-holder with LeaseLostError and leaves the checkpoint alone', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));
      await commit(store, 'A', 3);

      const error = await commit(store, 'B', 9).catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(LeaseLostError);
      expect((error as LeaseLostError).context).toMatchObject({ owner: 'B', holder: 'A', sequenceNumber: 9 });
      expect((await store.read()).checkpoint).toBe(3);
    });

    it('refuses a commit when nobody holds the lease', async () => {
      const store = newStore();

      const error = await commit(store, 'A', 1).catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(LeaseLostError);
      expect((error as LeaseLostError).context).toMatchObject({ owner: 'A', holder: null });
      expect((await store.read()).checkpoint).toBeNull();
    });

    it('refuses the old holder after an expired lease was taken over', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));
      await store.acquireLease(lease('B', LEASE_MS + 1));
      await commit(store, 'B', 60);

      const error = await commit(store, 'A', 55).catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(LeaseLostError);
      expect((await store.read()).checkpoint).toBe(60);
    });

    it('never moves the checkpoint backwards, even for the holder', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));
      await commit(store, 'A', 10);

      const error = await commit(store, 'A', 5).catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(CheckpointRegressionError);
      expect((error as PollerError).code).toBe('CHECKPOINT_REGRESSION');
      expect((error as PollerError).context).toMatchObject({ checkpoint: 10, sequenceNumber: 5 });
      expect((await store.read()).checkpoint).toBe(10);
    });

    it('writes the open gaps with the checkpoint and hands them to the next lease holder', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));
      const openGaps = [{ from: 5, to: 6, seenAt: 1_000 }];

      await commit(store, 'A', 10, { openGaps });
      await commit(store, 'A', 12);

      expect((await store.read()).openGaps).toEqual(openGaps);
      expect(await store.acquireLease(lease('B', LEASE_MS + 1))).toMatchObject({ checkpoint: 12, openGaps });
    });

    it('records the feed program_id on the first commit and refuses another feed afterwards', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));
      await commit(store, 'A', 10);

      const error = await commit(store, 'A', 20, { feedProgramId: 'another-program' }).catch(
        (caught: unknown) => caught,
      );

      expect(error).toBeInstanceOf(FeedProgramMismatchError);
      expect((error as PollerError).context).toMatchObject({
        expectedProgramId: FEED,
        receivedProgramId: 'another-program',
      });
      expect(await store.read()).toMatchObject({ checkpoint: 10, feedProgramId: FEED });
    });

    it('moves the checkpoint without a feed program_id while none is known, and keeps the recorded one', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));

      await commit(store, 'A', 3, { feedProgramId: null });
      expect(await store.read()).toMatchObject({ checkpoint: 3, feedProgramId: null });

      await commit(store, 'A', 5);
      await commit(store, 'A', 7, { feedProgramId: null });
      expect(await store.read()).toMatchObject({ checkpoint: 7, feedProgramId: FEED });
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

  describe('what status reads', () => {
    it('keeps the newest created_dt of each commit that names one', async () => {
      const store = newStore();
      await store.acquireLease(lease('A', 0));

      await store.commit({
        owner: 'A',
        sequenceNumber: 5,
        feedProgramId: FEED,
        newestCreatedDt: '2026-01-01T00:00:05Z',
      });
      await commit(store, 'A', 6);

      expect(await store.read()).toMatchObject({ checkpoint: 6, newestCreatedDt: '2026-01-01T00:00:05Z' });
    });

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
