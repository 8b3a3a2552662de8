/**
 * CustomBusPublisher against the custom-bus stand-in (RPC v2 CBOR, SigV4 checked, botocore's input
 * rules, delivery to moto's SQS): grouped by account, each account's status changes and each
 * transaction's lifecycle reach a FIFO subscriber's queue in their own message group, in order;
 * a batch sent again is accepted as DEDUPLICATED and delivers nothing twice.
 */
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CustomBusPublisher } from '../../../../functions/adapters/aws/eventbridgev2/custom-bus-publisher.ts';
import { EventBridgeV2Rpc } from '../../../../functions/adapters/aws/eventbridgev2/rpc-v2-cbor-client.ts';
import type { BankingEvent } from '../../../../functions/core/banking-event.ts';
import { createRandom } from '../../../../functions/simulator/seeded-random.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../../support/aws-test-env.ts';
import { type CustomBus, startCustomBus } from '../../../support/custom-bus/index.ts';
import { makeEvent } from '../../../support/in-memory-ports.ts';

const ROLE_ARN = 'arn:aws:iam::123456789012:role/subscriber-delivery';

let aws: MotoEnvironment;
let bus: CustomBus;
let rpc: EventBridgeV2Rpc;

beforeAll(async () => {
  aws = useMotoEnvironment(inject('motoEndpoint'));
  bus = await startCustomBus({ motoEndpoint: inject('motoEndpoint'), seed: 2_701 });
  rpc = new EventBridgeV2Rpc({
    client: {
      config: {
        credentials: async () => ({ accessKeyId: 'testing', secretAccessKey: 'testing' }),
        region: async () => bus.region,
        useFipsEndpoint: async () => false,
      },
    },
    env: { AWS_ENDPOINT_URL_EVENTBRIDGEV2: bus.endpoint },
  });
});

afterAll(async () => {
  await bus?.close();
  aws?.restore();
});

/** 300 events: five accounts' status changes and transactions' PENDING → COMPLETE, interleaved. */
function feed(): BankingEvent[] {
  const random = createRandom(2_701).next;
  const events: BankingEvent[] = [];
  const pending: string[] = [];
  let transactions = 0;
  for (let sequence = 1; sequence <= 300; sequence += 1) {
    const roll = random();
    if (roll < 0.5) {
      const account = `acct-${Math.floor(random() * 5)}`;
      events.push(
        makeEvent(sequence, { type: 'account_status', data: { account_id: account, n: sequence } }),
      );
    } else if (pending.length > 0 && (roll < 0.75 || transactions >= 40)) {
      const id = pending.splice(Math.floor(random() * pending.length), 1)[0]!;
      events.push(
        makeEvent(sequence, { type: 'transaction', data: { transaction_id: id, status: 'COMPLETE' } }),
      );
    } else {
      transactions += 1;
      const id = `tx-${transactions}`;
      pending.push(id);
      events.push(
        makeEvent(sequence, { type: 'transaction', data: { transaction_id: id, status: 'PENDING' } }),
      );
    }
  }
  return events;
}

async function fifoSubscriber(busArn: string): Promise<string> {
  const queue = await aws.sqs.send(
    new CreateQueueCommand({
      QueueName: `${aws.uniqueName('grouped')}.fifo`,
      Attributes: { FifoQueue: 'true' },
    }),
  );
  const attributes = await aws.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queue.QueueUrl!, AttributeNames: ['QueueArn'] }),
  );
  await rpc.call('CreateSubscriber', {
    Name: aws.uniqueName('fifo'),
    EventBusArn: busArn,
    Type: 'FIFO',
    InvokeConfiguration: {
      RoleArn: ROLE_ARN,
      TargetArn: attributes.Attributes!.QueueArn!,
      SqsParameters: {
        MessageGroupId: '{% $events.SystemMetadata.EventGroupId %}',
        MessageDeduplicationId: '{% $events.SystemMetadata.`aws:EventId` %}',
      },
    },
  });
  return queue.QueueUrl!;
}

/** Sequence numbers delivered, by SQS message group, in the order the queue hands them out. */
async function drainByGroup(queueUrl: string): Promise<Map<string, number[]>> {
  const groups = new Map<string, number[]>();
  for (;;) {
    const received = await aws.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 60,
        MessageSystemAttributeNames: ['MessageGroupId'],
      }),
    );
    const messages = received.Messages ?? [];
    if (messages.length === 0) return groups;
    for (const message of messages) {
      const group = message.Attributes!.MessageGroupId!;
      const detail = (JSON.parse(message.Body!) as { detail: { sequence_number: number } }).detail;
      groups.set(group, [...(groups.get(group) ?? []), detail.sequence_number]);
    }
    await aws.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages.map((message, index) => ({
          Id: String(index),
          ReceiptHandle: message.ReceiptHandle!,
        })),
      }),
    );
  }
}

describe('CustomBusPublisher on the stand-in', () => {
  it("delivers each account's and each transaction's events in order in their own group, and nothing twice", async () => {
    const created = await rpc.call<{ EventBusArn: string }>('CreateEventBus', {
      Name: aws.uniqueName('bank'),
    });
    const describe = { EventBusArn: created.EventBusArn };
    await expect
      .poll(async () => (await rpc.call<{ State: string }>('DescribeEventBus', describe)).State, {
        interval: 0,
      })
      .toBe('ACTIVE');
    const queueUrl = await fifoSubscriber(created.EventBusArn);
    const publisher = new CustomBusPublisher({
      rpc,
      eventBusArn: created.EventBusArn,
      source: 'banking.events',
      program: 'retail',
      groupBy: 'account',
    });
    const events = feed();
    const signal = new AbortController().signal;

    const outcomes = [];
    for (let start = 0; start < events.length; start += publisher.limits.maxEntriesPerBatch) {
      outcomes.push(...(await publisher.send(events.slice(start, start + 100), signal)));
    }
    const resent = await publisher.send(events.slice(100, 200), signal);
    await bus.settled();
    const delivered = await drainByGroup(queueUrl);

    const expected = new Map<string, number[]>();
    for (const event of events) {
      const group = publisher.eventGroup(event)!;
      expected.set(group, [...(expected.get(group) ?? []), event.sequence_number]);
    }
    expect(outcomes).toEqual(events.map(() => ({ ok: true })));
    expect(resent).toEqual(events.slice(100, 200).map(() => ({ ok: true })));
    expect([...expected.keys()].filter((group) => group.startsWith('account:'))).toHaveLength(5);
    expect([...expected.keys()].filter((group) => group.startsWith('transaction:')).length).toBeGreaterThan(
      10,
    );
    expect(delivered).toEqual(expected);
  });
});
