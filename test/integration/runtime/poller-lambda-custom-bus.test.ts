/**
 * The shipped function with `EVENT_BUS_KIND=custom`, run as Lambda runs it, against the custom-bus
 * stand-in (test/support/custom-bus: RPC v2 CBOR, SigV4 checked, delivery to moto's SQS): the
 * simulator's events reach a FIFO subscriber's SQS FIFO queue in sequence order, each once; a
 * re-run after a rewind within the 5-minute window is answered DEDUPLICATED and delivers nothing
 * twice.
 */
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
} from '@aws-sdk/client-sqs';
import { cbor } from '@smithy/core/cbor';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DynamoDbCheckpointStore } from '../../../functions/adapters/aws/dynamodb-checkpoint-store.ts';
import { EventBridgeV2Rpc } from '../../../functions/adapters/aws/eventbridgev2/rpc-v2-cbor-client.ts';
import { type CustomBus, startCustomBus } from '../../support/custom-bus/index.ts';
import { summaryOf, usePollerScenarios } from '../../support/poller-lambda.ts';

const scenarios = usePollerScenarios(2_700);
const ROLE_ARN = 'arn:aws:iam::123456789012:role/subscriber-delivery';

let bus: CustomBus;
let rpc: EventBridgeV2Rpc;

beforeAll(async () => {
  bus = await startCustomBus({ motoEndpoint: inject('motoEndpoint'), seed: 27 });
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
});

/** A bus, ACTIVE, with a FIFO subscriber delivering RAW to a new SQS FIFO queue, grouped as published. */
async function busWithFifoQueue(): Promise<{ busArn: string; queueUrl: string }> {
  const { aws } = scenarios;
  const created = await rpc.call<{ EventBusArn: string }>('CreateEventBus', { Name: aws.uniqueName('bank') });
  for (let describes = 0; ; describes += 1) {
    const described = await rpc.call<{ State: string }>('DescribeEventBus', {
      EventBusArn: created.EventBusArn,
    });
    if (described.State === 'ACTIVE') break;
    if (describes === 10) throw new Error(`bus still ${described.State}`);
  }
  const queue = await aws.sqs.send(
    new CreateQueueCommand({
      QueueName: `${aws.uniqueName('ordered')}.fifo`,
      Attributes: { FifoQueue: 'true' },
    }),
  );
  const attributes = await aws.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queue.QueueUrl!, AttributeNames: ['QueueArn'] }),
  );
  await rpc.call('CreateSubscriber', {
    Name: aws.uniqueName('fifo'),
    EventBusArn: created.EventBusArn,
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
  return { busArn: created.EventBusArn, queueUrl: queue.QueueUrl! };
}

/** The delivered envelopes' details, in the order the FIFO queue hands them out. */
async function drainDetails(queueUrl: string): Promise<{ id: string; sequence_number: number }[]> {
  const { sqs } = scenarios.aws;
  const details: { id: string; sequence_number: number }[] = [];
  for (;;) {
    const received = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 60,
      }),
    );
    const messages = received.Messages ?? [];
    if (messages.length === 0) return details;
    for (const message of messages) {
      details.push((JSON.parse(message.Body!) as { detail: { id: string; sequence_number: number } }).detail);
    }
    await sqs.send(
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

/** The success codes the stand-in answered PutEvents with, from `from` on. */
function successCodes(from: number): string[] {
  return bus.exchanges
    .slice(from)
    .filter((exchange) => exchange.operation === 'PutEvents' && exchange.status === 200)
    .flatMap((exchange) =>
      (cbor.deserialize(exchange.responseBody) as { Entries: { SuccessCode?: string }[] }).Entries.map(
        (entry) => entry.SuccessCode ?? 'none',
      ),
    );
}

describe('the deployed function on a Custom Event Bus', () => {
  it('delivers the feed to a FIFO queue in sequence order, once, and a re-run after a rewind is de-duplicated', async () => {
    const { busArn, queueUrl } = await busWithFifoQueue();
    const s = await scenarios.start({
      timeoutMs: 8_000,
      environment: {
        EVENT_BUS_KIND: 'custom',
        EVENT_BUS_NAME: busArn,
        EVENT_GROUP_BY: 'program',
        AWS_ENDPOINT_URL_EVENTBRIDGEV2: bus.endpoint,
      },
    });
    const events = s.simulator.generate(150);
    const before = bus.exchanges.length;

    const first = await s.invoke();
    await bus.settled();
    const delivered = await drainDetails(queueUrl);

    expect(summaryOf(first)).toMatchObject({ status: 'completed', published: 150 });
    expect(delivered.map((detail) => detail.id)).toEqual(events.map((event) => event.id));
    expect(successCodes(before)).toEqual(events.map(() => 'PUBLISHED'));
    // 150 events in two requests: up to 100 entries each.
    const requests = bus.exchanges.slice(before).filter((exchange) => exchange.operation === 'PutEvents');
    expect(requests.map((exchange) => (exchange.input!.Entries as unknown[]).length)).toEqual([100, 50]);

    // Rewind 40 events, as `rewind` does, within the bus's 5-minute window (its clock stands still).
    const checkpoint = events.at(-1)!.sequence_number;
    const rewindTo = events[109]!.sequence_number;
    const store = new DynamoDbCheckpointStore({
      client: scenarios.aws.dynamodb,
      tableName: scenarios.checkpointTable,
      program: s.program,
    });
    await expect(store.moveCheckpoint({ to: rewindTo, expected: checkpoint })).resolves.toMatchObject({
      moved: true,
    });
    const again = bus.exchanges.length;

    const rerun = await s.invoke();
    await bus.settled();

    expect(summaryOf(rerun)).toMatchObject({ status: 'completed', published: 40, checkpoint });
    expect(successCodes(again)).toEqual(events.slice(110).map(() => 'DEDUPLICATED'));
    expect(await drainDetails(queueUrl)).toEqual([]);
    expect(await s.checkpoint()).toBe(checkpoint);
  });
});
