/**
 * The construct's subscribers as they would be deployed: every `AWS::EventsV2::Subscriber` of the
 * synthesized custom-bus template created on the custom-bus stand-in (its requests checked against
 * botocore's model of CreateSubscriber), onto queues made on moto as the template declares them
 * (FIFO for an ordered route). Events the poller publishes then reach the queue of their route, the
 * quarantine's and the catch-all's included, and an ordered route's queue gets each group in order.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BankingEventsPoller } from '../../../infra/constructs/index.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { type CustomBus, startCustomBus } from '../../support/custom-bus/index.ts';
import { createQueue, drainMessages } from '../../support/sqs-queues.ts';

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

const ROLE_ARN = 'arn:aws:iam::123456789012:role/delivery';
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

/** Replaces each `Fn::GetAtt` of the template with the physical value the deployment gave it. */
function resolved(value: unknown, physical: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(value)) return value.map((item) => resolved(item, physical));
  if (value === null || typeof value !== 'object') return value;
  const getAtt = (value as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
  if (getAtt !== undefined) {
    const found = physical.get(getAtt[0]);
    if (found === undefined) throw new Error(`Nothing deployed for ${getAtt.join('.')}`);
    return found;
  }
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolved(item, physical)]));
}

describe('the synthesized subscribers on the custom-bus stand-in', () => {
  it('deliver each type to its route, in order per group on the ordered route', async () => {
    const stack = new Stack(new App(), 'Custom');
    new BankingEventsPoller(stack, 'Poller', {
      eventBusKind: 'custom',
      routes: { account_status: { ordered: true }, transaction: {} },
    });
    const resources = Template.fromStack(stack).toJSON().Resources as Resources;

    // Deploy: the bus, every queue as declared (FIFO ones named .fifo, as CloudFormation names them).
    const physical = new Map<string, string>();
    const queueUrls = new Map<string, string>();
    for (const [logicalId, resource] of Object.entries(resources)) {
      if (resource.Type === 'AWS::EventsV2::EventBus') {
        physical.set(logicalId, bus.admin.createEventBus(aws.uniqueName('bus')));
      } else if (resource.Type === 'AWS::SQS::Queue') {
        const fifo = resource.Properties.FifoQueue === true;
        const queue = await createQueue(
          aws.sqs,
          `${aws.uniqueName(logicalId.slice(-20))}${fifo ? '.fifo' : ''}`,
          fifo ? { FifoQueue: 'true', ContentBasedDeduplication: 'true' } : {},
        );
        physical.set(logicalId, queue.arn);
        queueUrls.set(logicalId, queue.url);
      } else if (resource.Type === 'AWS::IAM::Role') {
        physical.set(logicalId, ROLE_ARN);
      }
    }
    const subscribers = Object.values(resources).filter(
      (resource) => resource.Type === 'AWS::EventsV2::Subscriber',
    );
    for (const subscriber of subscribers) {
      bus.admin.createSubscriber(resolved(subscriber.Properties, physical) as Record<string, unknown>);
    }
    const busArn = [...physical.entries()].find(
      ([id]) => resources[id]!.Type === 'AWS::EventsV2::EventBus',
    )![1];

    // Publish as the poller does: account events of two groups interleaved, a transaction, a
    // quarantined event and a type no route names.
    const account = (id: string, status: string) => ({
      Source: 'banking.events',
      DetailType: 'account_status',
      Detail: JSON.stringify({ id, data: { status } }),
      SystemMetadata: { EventGroupId: `account:${id}`, DeduplicationId: `${id}-${status}` },
    });
    const published = bus.admin.putEvents({
      EventBusArn: busArn,
      Entries: [
        account('a', 'OPEN'),
        account('b', 'OPEN'),
        account('a', 'FROZEN'),
        { Source: 'banking.events', DetailType: 'transaction', Detail: '{"id":"t1"}' },
        account('b', 'CLOSED'),
        account('a', 'CLOSED'),
        { Source: 'banking.events', DetailType: 'invalid_event', Detail: '{"id":"x1"}' },
        { Source: 'banking.events', DetailType: 'card.issued', Detail: '{"id":"c1"}' },
        { Source: 'someone.else', DetailType: 'transaction', Detail: '{"id":"other"}' },
      ],
    });
    await bus.settled();
    expect(published.FailedEntryCount).toBe(0);

    const queueOf = (path: string) => {
      const id = [...queueUrls.keys()].find((logicalId) => logicalId.startsWith(`PollerRouting${path}`));
      return queueUrls.get(id!)!;
    };
    const ordered = await drainMessages(aws.sqs, queueOf('RouteAccountStatusFifoQueue'));
    const byGroup = (group: string) =>
      ordered
        .filter((message) => message.group === group)
        .map(
          (message) =>
            (JSON.parse(message.body) as { detail: { data: { status: string } } }).detail.data.status,
        );
    expect(byGroup('account:a')).toEqual(['OPEN', 'FROZEN', 'CLOSED']);
    expect(byGroup('account:b')).toEqual(['OPEN', 'CLOSED']);
    expect(ordered).toHaveLength(5);

    const ids = async (path: string) =>
      (await drainMessages(aws.sqs, queueOf(path))).map(
        (message) => (JSON.parse(message.body) as { detail: { id: string } }).detail.id,
      );
    expect(await ids('RouteTransactionQueue')).toEqual(['t1']);
    expect(await ids('QuarantineQueue')).toEqual(['x1']);
    expect(await ids('UnroutedQueue')).toEqual(['c1']);
    for (const path of ['RouteAccountStatusFifoDeadLetterQueue', 'RouteTransactionDeadLetterQueue']) {
      expect(await drainMessages(aws.sqs, queueOf(path)), path).toEqual([]);
    }
  });
});
