/**
 * The custom-bus stand-in's in-process set-up (`admin`), as other tests use it when their subject is
 * not the API: a bus and a FIFO subscriber onto an SQS FIFO queue, the group taken from the event's
 * system metadata. Also pins down which expression names the group: `EventGroupId`, as the user guide's
 * SystemMetadata table has it; `aws:EventGroupId` names nothing, so such a subscriber dead-letters.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { type CustomBus, startCustomBus } from '../../support/custom-bus/index.ts';
import { createQueue, drainMessages } from '../../support/sqs-queues.ts';

const ROLE_ARN = 'arn:aws:iam::123456789012:role/subscriber-delivery';
let aws: MotoEnvironment;
let bus: CustomBus;

beforeAll(async () => {
  aws = useMotoEnvironment(inject('motoEndpoint'));
  bus = await startCustomBus({ motoEndpoint: inject('motoEndpoint') });
});

afterAll(async () => {
  await bus?.close();
  aws?.restore();
});

describe('custom-bus stand-in set up in-process', () => {
  it('delivers a FIFO subscriber its groups in order, MessageGroupId from SystemMetadata.EventGroupId', async () => {
    const busArn = bus.admin.createEventBus(aws.uniqueName('admin'));
    const queue = await createQueue(aws.sqs, `${aws.uniqueName('ordered')}.fifo`, {
      FifoQueue: 'true',
      ContentBasedDeduplication: 'true',
    });
    bus.admin.createSubscriber({
      Name: aws.uniqueName('fifo'),
      EventBusArn: busArn,
      Type: 'FIFO',
      InvokeConfiguration: {
        RoleArn: ROLE_ARN,
        TargetArn: queue.arn,
        SqsParameters: { MessageGroupId: '{% $events.SystemMetadata.EventGroupId %}' },
      },
      FilterConfiguration: { Filters: [{ Scope: 'DATA', Pattern: '{"detail-type":["account_status"]}' }] },
    });

    const published = bus.admin.putEvents({
      EventBusArn: busArn,
      Entries: ['OPEN', 'FROZEN', 'CLOSED'].map((status) => ({
        Source: 'banking.events',
        DetailType: 'account_status',
        Detail: JSON.stringify({ status }),
        SystemMetadata: { EventGroupId: 'account:acc-1', DeduplicationId: status },
      })),
    });
    await bus.settled();
    const received = await drainMessages(aws.sqs, queue.url);

    expect(published.FailedEntryCount).toBe(0);
    expect(received.map((message) => JSON.parse(message.body).detail.status)).toEqual([
      'OPEN',
      'FROZEN',
      'CLOSED',
    ]);
    expect(new Set(received.map((message) => message.group))).toEqual(new Set(['account:acc-1']));
    expect(bus.admin.retainedEvents(busArn).map((event) => event.eventGroupId)).toEqual([
      'account:acc-1',
      'account:acc-1',
      'account:acc-1',
    ]);
  });

  it('dead-letters deliveries whose MessageGroupId expression names `aws:EventGroupId` (no such field)', async () => {
    const busArn = bus.admin.createEventBus(aws.uniqueName('admin'));
    const queue = await createQueue(aws.sqs, `${aws.uniqueName('ordered')}.fifo`, {
      FifoQueue: 'true',
      ContentBasedDeduplication: 'true',
    });
    const deadLetters = await createQueue(aws.sqs, aws.uniqueName('dlq'), {});
    bus.admin.createSubscriber({
      Name: aws.uniqueName('fifo'),
      EventBusArn: busArn,
      Type: 'FIFO',
      InvokeConfiguration: {
        RoleArn: ROLE_ARN,
        TargetArn: queue.arn,
        SqsParameters: { MessageGroupId: '{% $events.SystemMetadata.`aws:EventGroupId` %}' },
      },
      RetryPolicy: { MaxRetryAttempts: 0 },
      OnFailureConfiguration: { Arn: deadLetters.arn },
    });

    bus.admin.putEvents({
      EventBusArn: busArn,
      Entries: [
        {
          Source: 'banking.events',
          DetailType: 'account_status',
          Detail: '{}',
          SystemMetadata: { EventGroupId: 'g' },
        },
      ],
    });
    await bus.settled();

    expect(await drainMessages(aws.sqs, queue.url)).toEqual([]);
    const [record] = (await drainMessages(aws.sqs, deadLetters.url)).map((message) =>
      JSON.parse(message.body),
    );
    expect(record).toMatchObject({
      errorCode: 'INPUT_TRANSFORMATION_FAILURE',
      exhaustedRetryCondition: 'MaximumRetryAttempts',
      retryAttempts: 0,
    });
  });
});
