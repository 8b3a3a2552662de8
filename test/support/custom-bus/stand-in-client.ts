/**
 * A test's own calls to a custom-bus stand-in: the function's RPC v2 CBOR client, signed with the
 * stand-in's test key (`testing`/`testing`, which it accepts by default) in its region; an active
 * bus made as the `EventBusActive` waiter waits for one; a FIFO subscriber onto a queue on moto.
 *
 * @example
 * const rpc = standInRpc(bus);
 * const busArn = await createActiveBus(rpc, { Name: aws.uniqueName('bank') });
 * const queueUrl = await subscribeFifoQueue(rpc, aws.sqs, { busArn, uniqueName: aws.uniqueName });
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Dispatcher } from 'undici';
import { EventBridgeV2Rpc } from '../../../functions/adapters/aws/eventbridgev2/rpc-v2-cbor-client.ts';
import { createQueue } from '../sqs-queues.ts';
import type { CustomBus } from './index.ts';

/** The key every stand-in accepts unless told otherwise (`CustomBusOptions.credentials`). */
export const STAND_IN_CREDENTIALS = Object.freeze({ accessKeyId: 'testing', secretAccessKey: 'testing' });

/** A client of `bus`, as the function's adapter builds one, with the test key and the bus's region. */
export function standInRpc(
  bus: Pick<CustomBus, 'endpoint' | 'region'>,
  options: { readonly dispatcher?: Dispatcher } = {},
): EventBridgeV2Rpc {
  return new EventBridgeV2Rpc({
    client: {
      config: {
        credentials: async () => STAND_IN_CREDENTIALS,
        region: async () => bus.region,
        useFipsEndpoint: async () => false,
      },
    },
    env: { AWS_ENDPOINT_URL_EVENTBRIDGEV2: bus.endpoint },
    ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
  });
}

/** `CreateEventBus` with `input`, then `DescribeEventBus` until it is ACTIVE; resolves to its ARN. */
export async function createActiveBus(
  rpc: EventBridgeV2Rpc,
  input: Record<string, unknown>,
): Promise<string> {
  const { EventBusArn } = await rpc.call<{ EventBusArn: string }>('CreateEventBus', input);
  // CREATING until DescribeEventBus has seen it (the stand-in's default: one call).
  for (let describes = 0; ; describes += 1) {
    const { State } = await rpc.call<{ State?: string }>('DescribeEventBus', { EventBusArn });
    if (State === 'ACTIVE') return EventBusArn;
    if (describes >= 10)
      throw new Error(`Custom bus ${EventBusArn} still ${State} after ${describes} describes`);
  }
}

/** The role a subscriber names; the stand-in does not assume it. */
const DELIVERY_ROLE_ARN = 'arn:aws:iam::123456789012:role/subscriber-delivery';

/**
 * A FIFO subscriber of `busArn` delivering every event RAW to a new SQS FIFO queue on moto, its
 * `MessageGroupId` the event's group and its de-duplication id the bus's event id, as the
 * construct's ordered route does; resolves to the queue's URL.
 */
export async function subscribeFifoQueue(
  rpc: EventBridgeV2Rpc,
  sqs: SQSClient,
  options: { readonly busArn: string; readonly uniqueName: (prefix: string) => string },
): Promise<string> {
  const queue = await createQueue(sqs, `${options.uniqueName('ordered')}.fifo`, { FifoQueue: 'true' });
  await rpc.call('CreateSubscriber', {
    Name: options.uniqueName('fifo'),
    EventBusArn: options.busArn,
    Type: 'FIFO',
    InvokeConfiguration: {
      RoleArn: DELIVERY_ROLE_ARN,
      TargetArn: queue.arn,
      SqsParameters: {
        MessageGroupId: '{% $events.SystemMetadata.EventGroupId %}',
        MessageDeduplicationId: '{% $events.SystemMetadata.`aws:EventId` %}',
      },
    },
  });
  return queue.url;
}
