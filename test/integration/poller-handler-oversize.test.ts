/**
 * An event too large for PutEvents, end to end: the events before it are published and
 * checkpointed, the run fails naming it, and later runs stop at it rather than skip it.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { type RunningSimulator, startSimulator } from '../simulator/banking-simulator.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../support/aws-test-env.ts';
import {
  captureOutput,
  lambdaContext as context,
  loadHandler,
  type PollerHandler,
  simulatorSecret,
} from '../support/handler-harness.ts';

let aws: MotoEnvironment;
let simulator: RunningSimulator;
let tableName: string;
let queues: ReadonlyMap<string, string>;
let handler: PollerHandler;

async function storedCheckpoint(): Promise<number | null> {
  const item = await aws.dynamodb.send(
    new GetItemCommand({ TableName: tableName, Key: { pk: { S: 'program#default' } }, ConsistentRead: true }),
  );
  return item.Item?.checkpoint?.N === undefined ? null : Number(item.Item.checkpoint.N);
}

beforeAll(async () => {
  captureOutput();
  aws = useMotoEnvironment(inject('motoEndpoint'));
  simulator = await startSimulator({ seed: 11, maxPollHoldMs: 200, unknownTypeRatio: 0 });
  tableName = await aws.createCheckpointTable();
  const secretId = await aws.createSecret(simulatorSecret(simulator));
  const bus = await aws.createRoutedBus(['transaction']);
  queues = bus.queueUrls;
  handler = await loadHandler({
    SECRET_ID: secretId,
    CHECKPOINT_TABLE: tableName,
    EVENT_BUS_NAME: bus.busName,
  });
});

afterAll(async () => {
  vi.restoreAllMocks();
  await simulator?.close();
  aws?.restore();
});

describe('an event too large for PutEvents', () => {
  it('publishes and checkpoints what comes before it, then stops at it on every run', async () => {
    const before = simulator.generate(3, { type: 'transaction' });
    const huge = simulator.append({
      type: 'TRANSACTION',
      data: { transaction_id: 'tx-huge', note: 'x'.repeat(300 * 1024) },
    });
    simulator.generate(2, { type: 'transaction' });

    const first = handler({}, context());
    await expect(first).rejects.toThrow(
      new RegExp(
        `Event ${huge.id} \\(sequence ${huge.sequence_number}\\) is \\d+ bytes as a PutEvents entry`,
      ),
    );
    await expect(first).rejects.toMatchObject({ code: 'EVENT_TOO_LARGE' });

    expect(await storedCheckpoint()).toBe(before.at(-1)!.sequence_number);
    const delivered = await aws.drainQueue(queues.get('transaction')!);
    expect(delivered.map((m) => (m.detail as { id: string }).id)).toEqual(before.map((e) => e.id));

    await expect(handler({}, context())).rejects.toMatchObject({ code: 'EVENT_TOO_LARGE' });
    expect(await storedCheckpoint()).toBe(before.at(-1)!.sequence_number);
    expect(await aws.drainQueue(queues.get('transaction')!)).toHaveLength(0);
  });
});
