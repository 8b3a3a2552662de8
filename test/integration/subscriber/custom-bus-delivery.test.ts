/**
 * The kit's handlers on what a Custom Event Bus subscriber delivers, each event handled once on
 * Powertools idempotency persisted in moto's DynamoDB: the array a Lambda target receives
 * (`makeEventBatchHandler`), and the messages of a FIFO subscriber's SQS FIFO queue
 * (`makeSqsBatchHandler`). What is checked is the order a FIFO subscriber relies on: no event of
 * a group handled after an earlier one of that group failed.
 */
import { randomUUID } from 'node:crypto';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { BankingEvent } from '../../../functions/core/banking-event.ts';
import {
  makeEventBatchHandler,
  makeSqsBatchHandler,
  type SubscriberLogger,
} from '../../../functions/subscriber/index.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import {
  busSystemMetadata,
  deliveredText,
  deliveredWithMetadata,
  published,
  rawEvent,
} from '../../support/published-events.ts';

function lambdaContext(): Context {
  const deadline = Date.now() + 30_000;
  return {
    functionName: 'custom-bus-subscriber-under-test',
    awsRequestId: randomUUID(),
    getRemainingTimeInMillis: () => deadline - Date.now(),
  } as Context;
}

/** A message of an SQS FIFO queue that a FIFO subscriber delivers to, its group the event's. */
function fifoRecord(event: BankingEvent, group: string): SQSRecord {
  const messageId = randomUUID();
  return {
    messageId,
    receiptHandle: `handle-${messageId}`,
    body: deliveredText(event),
    attributes: { ApproximateReceiveCount: '1', MessageGroupId: group } as SQSRecord['attributes'],
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:account-status.fifo',
    awsRegion: 'us-east-1',
  };
}

function silentLogger(): SubscriberLogger & { readonly errors: string[] } {
  const errors: string[] = [];
  return {
    errors,
    info: () => {},
    warn: () => {},
    error: (message, attributes) => errors.push(`${message} ${JSON.stringify(attributes)}`),
  };
}

describe('Custom Event Bus deliveries, handled once (moto DynamoDB)', () => {
  let aws: MotoEnvironment;
  let tableName: string;
  let sequence = 0;

  /** Account status events with fresh ids, in feed order. */
  function statuses(...values: string[]): BankingEvent[] {
    return published(
      values.map((status) => {
        sequence += 1;
        return rawEvent(sequence, 'account_status', { account_id: 'acc-1', status }, randomUUID());
      }),
    );
  }

  beforeAll(async () => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
    tableName = await aws.createIdempotencyTable();
  });

  afterAll(() => aws?.restore());

  it("a Lambda target's batch: stops at the first failure, and the bus's retry handles the rest in order, once", async () => {
    const events = statuses('OPEN', 'FROZEN', 'CLOSED');
    const batch = events.map((event, index) =>
      deliveredWithMetadata(
        event,
        busSystemMetadata(event, { EventGroupId: 'account:acc-1', 'aws:SequenceNumber': `${index + 1}` }),
      ),
    );
    const applied: string[] = [];
    let failFrozen = true;
    const logger = silentLogger();
    const handler = makeEventBatchHandler(
      async (event) => {
        if (event.kind !== 'account_status') return '';
        if (event.detail.data.status === 'FROZEN' && failFrozen) throw new Error('ledger unavailable');
        applied.push(`${event.detail.data.status}@${event.busEventGroup}#${event.busSequenceNumber}`);
        return event.detail.data.status ?? '';
      },
      { idempotency: { tableName }, logger },
    );

    await expect(handler(batch, lambdaContext())).rejects.toThrow('ledger unavailable');
    expect(applied).toEqual(['OPEN@account:acc-1#1']);
    expect(logger.errors).toEqual([
      expect.stringMatching(/"batchIndex":1,"batchSize":3,.*"busEventGroup":"account:acc-1"/),
    ]);

    failFrozen = false;
    const results = await handler(batch, lambdaContext());

    expect(applied).toEqual(['OPEN@account:acc-1#1', 'FROZEN@account:acc-1#2', 'CLOSED@account:acc-1#3']);
    expect(results).toEqual(['OPEN', 'FROZEN', 'CLOSED']);
  });

  it('a FIFO queue: a failed record fails the later ones of its group unhandled, other groups go on, in queue order', async () => {
    const [open, frozen, other] = statuses('OPEN', 'FROZEN', 'OPEN');
    // Queue order puts the later feed position first: a FIFO queue's order is kept, never re-sorted.
    const records = [
      fifoRecord(other!, 'account:acc-2'),
      fifoRecord(open!, 'account:acc-1'),
      fifoRecord(frozen!, 'account:acc-1'),
    ];
    const handled: string[] = [];
    let failOpen = true;
    const handler = makeSqsBatchHandler(
      async (event) => {
        if (failOpen && event.detail.id === open!.id) throw new Error('ledger unavailable');
        handled.push(event.detail.id ?? '');
      },
      { idempotency: { tableName }, logger: silentLogger() },
    );
    const [, acc1Open, acc1Frozen] = records;

    const first = await handler({ Records: records } satisfies SQSEvent, lambdaContext());

    expect(handled).toEqual([other!.id]);
    expect(first.batchItemFailures).toEqual([
      { itemIdentifier: acc1Open!.messageId },
      { itemIdentifier: acc1Frozen!.messageId },
    ]);

    failOpen = false;
    const again = await handler({ Records: [acc1Open!, acc1Frozen!] }, lambdaContext());

    expect(again.batchItemFailures).toEqual([]);
    expect(handled).toEqual([other!.id, open!.id, frozen!.id]);
  });
});
