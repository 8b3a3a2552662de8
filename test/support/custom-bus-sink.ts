/**
 * The sink of a fault run on the Custom Event Bus: a stand-in bus (`custom-bus/`), one bus on it,
 * and a FIFO subscriber delivering every event of the source to an SQS FIFO queue on moto, as the
 * construct's ordered route does (`MessageGroupId` from the event's group, content-based
 * de-duplication on the queue). The queue's own de-duplication cannot hide a duplicate of the
 * bus: every event the bus publishes carries a new `id` in its body.
 *
 * @example
 * const sink = await startCustomBusSink({ motoEndpoint, sqs, name: 'run-7', seed: 7 });
 * // ... the function publishes to sink.busArn through sink.bus.endpoint ...
 * const arrivals = await sink.drain(); // each with its MessageGroupId, in queue order
 * await sink.close();
 */
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { Agent } from 'undici';
import { EventBridgeV2Rpc } from '../../functions/adapters/aws/eventbridgev2/rpc-v2-cbor-client.ts';
import { type CustomBus, startCustomBus } from './custom-bus/index.ts';

/** The role a subscriber names; the stand-in does not assume it. */
const DELIVERY_ROLE_ARN = 'arn:aws:iam::123456789012:role/subscriber-delivery';
/** The construct's `MessageGroupId` of an ordered route: the event's group. */
const GROUP_OF_EVENT = '{% $events.SystemMetadata.EventGroupId %}';
/** A retry the stand-in scheduled falls due on its own clock: steps taken to flush them, at most. */
const MAX_RETRY_STEPS = 20;

/** One message of the FIFO queue, in the order the queue gave it out. */
export interface Arrival {
  readonly body: string;
  /** Its `MessageGroupId`: the event's group. */
  readonly group: string | undefined;
}

export interface CustomBusSink {
  readonly bus: CustomBus;
  readonly busArn: string;
  readonly subscriberArn: string;
  readonly queueUrl: string;
  /**
   * Waits for every delivery (a retry the stand-in scheduled is brought due by stepping its clock,
   * after the run: the de-duplication window no longer matters), then receives and deletes until
   * the queue is empty. A FIFO queue gives out a group's next message only once the last is gone.
   */
  drain(): Promise<Arrival[]>;
  close(): Promise<void>;
}

export async function startCustomBusSink(options: {
  readonly motoEndpoint: string;
  readonly sqs: SQSClient;
  /** Unique per run: names the bus, subscriber and queue. */
  readonly name: string;
  readonly seed: number;
  /** @default 'banking.events' */
  readonly source?: string;
}): Promise<CustomBusSink> {
  const bus = await startCustomBus({ motoEndpoint: options.motoEndpoint, seed: options.seed });
  const dispatcher = new Agent({ connections: 2 });
  const client = new EventBridgeClient({
    region: bus.region,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
  try {
    const rpc = new EventBridgeV2Rpc({
      client,
      env: { AWS_ENDPOINT_URL_EVENTBRIDGEV2: bus.endpoint },
      dispatcher,
    });
    const created = await rpc.call<{ EventBusArn: string }>('CreateEventBus', { Name: options.name });
    const busArn = created.EventBusArn;
    // CREATING until DescribeEventBus has seen it (the stand-in's default: one call).
    for (let describes = 0; ; describes += 1) {
      const { State } = await rpc.call<{ State: string }>('DescribeEventBus', { EventBusArn: busArn });
      if (State === 'ACTIVE') break;
      if (describes >= 10)
        throw new Error(`Custom bus ${busArn} still ${State} after ${describes} describes`);
    }
    const queue = await createFifoQueue(options.sqs, `${options.name}.fifo`);
    const subscriber = await rpc.call<{ SubscriberArn: string }>('CreateSubscriber', {
      Name: options.name,
      EventBusArn: busArn,
      Type: 'FIFO',
      InvokeConfiguration: {
        RoleArn: DELIVERY_ROLE_ARN,
        TargetArn: queue.arn,
        SqsParameters: { MessageGroupId: GROUP_OF_EVENT },
      },
      FilterConfiguration: {
        Filters: [
          { Scope: 'DATA', Pattern: JSON.stringify({ source: [options.source ?? 'banking.events'] }) },
        ],
      },
    });
    const subscriberArn = subscriber.SubscriberArn;
    return {
      bus,
      busArn,
      subscriberArn,
      queueUrl: queue.url,
      async drain() {
        await bus.settled();
        for (let step = 0; step < MAX_RETRY_STEPS && bus.backlog(subscriberArn) > 0; step += 1) {
          await bus.advanceClock(60_000);
        }
        return drainFifo(options.sqs, queue.url);
      },
      close: () => bus.close(),
    };
  } catch (error) {
    await bus.close();
    throw error;
  } finally {
    client.destroy();
    await dispatcher.close();
  }
}

async function createFifoQueue(sqs: SQSClient, name: string): Promise<{ url: string; arn: string }> {
  const created = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' },
    }),
  );
  const url = created.QueueUrl!;
  const attributes = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
  );
  return { url, arn: attributes.Attributes!.QueueArn! };
}

async function drainFifo(sqs: SQSClient, queueUrl: string): Promise<Arrival[]> {
  const arrivals: Arrival[] = [];
  for (;;) {
    const received = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 60,
        MessageSystemAttributeNames: ['MessageGroupId'],
      }),
    );
    const messages = received.Messages ?? [];
    if (messages.length === 0) return arrivals;
    for (const message of messages) {
      arrivals.push({ body: message.Body ?? 'null', group: message.Attributes?.MessageGroupId });
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
