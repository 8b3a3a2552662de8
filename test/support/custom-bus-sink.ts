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
import type { SQSClient } from '@aws-sdk/client-sqs';
import { Agent } from 'undici';
import { type CustomBus, startCustomBus } from './custom-bus/index.ts';
import { createActiveBus, standInRpc } from './custom-bus/stand-in-client.ts';
import { createQueue, drainMessages, type QueueMessage } from './sqs-queues.ts';

/** The role a subscriber names; the stand-in does not assume it. */
const DELIVERY_ROLE_ARN = 'arn:aws:iam::123456789012:role/subscriber-delivery';
/** The construct's `MessageGroupId` of an ordered route: the event's group. */
const GROUP_OF_EVENT = '{% $events.SystemMetadata.EventGroupId %}';
/** A retry the stand-in scheduled falls due on its own clock: steps taken to flush them, at most. */
const MAX_RETRY_STEPS = 20;

/** One message of the FIFO queue, in the order the queue gave it out; its `group` is the event's. */
export type Arrival = QueueMessage;

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
  try {
    const rpc = standInRpc(bus, { dispatcher });
    const busArn = await createActiveBus(rpc, { Name: options.name });
    const queue = await createQueue(options.sqs, `${options.name}.fifo`, {
      FifoQueue: 'true',
      ContentBasedDeduplication: 'true',
    });
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
        return drainMessages(options.sqs, queue.url);
      },
      close: () => bus.close(),
    };
  } catch (error) {
    await bus.close();
    throw error;
  } finally {
    await dispatcher.close();
  }
}
