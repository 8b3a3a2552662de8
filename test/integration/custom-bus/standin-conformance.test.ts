/**
 * The custom-bus stand-in (test/support/custom-bus) against the real client: every call goes through
 * boto3's `eventbridgev2` client (serializer, SigV4 signer, parser, waiters) in a Python process, and
 * after each test every request the stand-in received and every answer it gave is checked against
 * botocore's service model (ParamValidator on the decoded CBOR). Golden CBOR captures of boto3's
 * requests and the stand-in's answers live in test/fixtures/eventbridgev2/standin-*.cbor; regenerate
 * them with UPDATE_EVENTBRIDGEV2_GOLDENS=1 when the stand-in's answers change on purpose.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { cbor } from '@smithy/core/cbor';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { type Boto3Driver, startBoto3Driver } from '../../support/custom-bus/boto3-driver.ts';
import { BOTO3_VERSION, ensureEventBridgeV2Python } from '../../support/custom-bus/eventbridgev2-python.ts';
import {
  type CustomBus,
  DEDUPLICATION_WINDOW_MS,
  type RecordedExchange,
  startCustomBus,
} from '../../support/custom-bus/index.ts';
import { extractRequestModel, loadRequestModel } from '../../support/custom-bus/request-validation.ts';
import { createQueue, drainMessages } from '../../support/sqs-queues.ts';

const GOLDEN_DIR = fileURLToPath(new URL('../../fixtures/eventbridgev2/', import.meta.url));
const ROLE_ARN = 'arn:aws:iam::123456789012:role/subscriber-delivery';
const BUS_ARN = /^arn:aws:events:us-east-1:123456789012:event-busv2\/[A-Za-z0-9._-]+\/[a-z0-9]{25}$/;

let aws: MotoEnvironment;
let bus: CustomBus;
let boto3: Boto3Driver;
let pythonPath: string;
let checkedExchanges = 0;

beforeAll(async () => {
  pythonPath = await ensureEventBridgeV2Python();
  aws = useMotoEnvironment(inject('motoEndpoint'));
  // A whole second, so timestamps the client truncates still land where the test puts them.
  bus = await startCustomBus({
    motoEndpoint: inject('motoEndpoint'),
    startTime: Date.UTC(2026, 10, 26, 12, 0, 0),
  });
  boto3 = await startBoto3Driver({ endpoint: bus.endpoint, region: bus.region, pythonPath });
}, 300_000);

afterAll(async () => {
  await boto3?.close();
  await bus?.close();
  aws?.restore();
});

// Every request the stand-in took and every answer it gave must fit botocore's model.
afterEach(async () => {
  const fresh = bus.exchanges.slice(checkedExchanges);
  checkedExchanges = bus.exchanges.length;
  expect(await modelReports(boto3, fresh)).toEqual([]);
});

describe('custom-bus stand-in, driven by boto3 eventbridgev2', () => {
  it('runs against the botocore that has eventbridgev2', () => {
    expect(boto3.botocoreVersion).toBe(BOTO3_VERSION);
  });

  it('creates a bus in CREATING that the EventBusActive waiter sees become ACTIVE', async () => {
    const created = await call('create_event_bus', {
      Name: aws.uniqueName('orders'),
      StorageConfiguration: { RetentionPeriodInDays: 3 },
    });
    expect(created.State).toBe('CREATING');
    expect(created.EventBusArn).toMatch(BUS_ARN);

    const waited = await boto3.wait('event_bus_active', {
      EventBusArn: created.EventBusArn,
      WaiterConfig: { Delay: 0 },
    });
    expect(waited.error).toBeUndefined();
    const described = await call('describe_event_bus', { EventBusArn: created.EventBusArn });

    expect(described.State).toBe('ACTIVE');
    expect(described.StorageConfiguration).toEqual({
      RetentionPeriodInDays: 3,
      // A bus younger than its retention period reads from its creation time.
      RetentionWindowStartTime: created.CreationTime,
    });
    const describes = bus.exchanges.filter((exchange) => exchange.operation === 'DescribeEventBus');
    expect(describes.length).toBeGreaterThanOrEqual(2); // the waiter polled at least once before ACTIVE
  });

  it('de-duplicates within 5 minutes per account and group, and publishes again after the window', async () => {
    const busArn = await activeBus();
    const entry = (group: string) => ({
      Source: 'banking.events',
      DetailType: 'transaction',
      Detail: '{"id":"evt-1"}',
      SystemMetadata: { EventGroupId: group, DeduplicationId: 'evt-1' },
    });

    const first = await putEvents(busArn, [entry('program-a'), entry('program-a'), entry('program-b')]);
    const [original, repeat, otherGroup] = first.Entries;
    expect(first.FailedEntryCount).toBe(0);
    expect(original).toMatchObject({ SuccessCode: 'PUBLISHED' });
    expect(repeat).toEqual({ ...original, SuccessCode: 'DEDUPLICATED' });
    expect(otherGroup).toMatchObject({ SuccessCode: 'PUBLISHED' });
    expect(otherGroup!.EventId).not.toBe(original!.EventId);

    await bus.advanceClock(DEDUPLICATION_WINDOW_MS - 1_000);
    const late = await putEvents(busArn, [entry('program-a')]);
    expect(late.Entries[0]).toEqual({ ...original, SuccessCode: 'DEDUPLICATED' });

    await bus.advanceClock(1_000);
    const after = await putEvents(busArn, [entry('program-a')]);
    expect(after.Entries[0]).toMatchObject({ SuccessCode: 'PUBLISHED' });
    expect(after.Entries[0]!.EventId).not.toBe(original!.EventId);
    expect(BigInt(after.Entries[0]!.SequenceNumber as string)).toBeGreaterThan(
      BigInt(original!.SequenceNumber as string),
    );
  });

  it('delivers each group in publish order to a FIFO queue, a failing event holding up only its own group', async () => {
    const busArn = await activeBus();
    const queue = await createQueue(aws.sqs, `${aws.uniqueName('ordered')}.fifo`, { FifoQueue: 'true' });
    const subscriber = await call('create_subscriber', {
      Name: aws.uniqueName('fifo'),
      EventBusArn: busArn,
      Type: 'FIFO',
      InvokeConfiguration: {
        RoleArn: ROLE_ARN,
        TargetArn: queue.arn,
        SqsParameters: {
          MessageGroupId: '{% $events.SystemMetadata.EventGroupId %}',
          MessageDeduplicationId: '{% $events.SystemMetadata.`aws:EventId` %}',
        },
      },
      FilterConfiguration: { Filters: [{ Scope: 'DATA', Pattern: '{"source":[{"prefix":"banking."}]}' }] },
    });
    // b-2's first attempt fails at the target.
    bus.faults.failDeliveries(
      (delivery) =>
        (delivery.data.detail as { n: string }).n === 'b-2'
          ? { errorCode: 'THROTTLING', errorMessage: 'injected' }
          : undefined,
      { times: 1 },
    );
    const entry = (group: string, n: number) => ({
      Source: 'banking.events',
      DetailType: 'account_status',
      Detail: JSON.stringify({ n: `${group}-${n}` }),
      SystemMetadata: { EventGroupId: group, DeduplicationId: `${group}-${n}` },
    });
    for (const request of [
      [entry('a', 1), entry('b', 1), entry('a', 2)],
      [entry('b', 2), entry('a', 3), entry('b', 3)],
      [entry('a', 4), entry('b', 4)],
    ]) {
      await putEvents(busArn, request);
    }
    await bus.settled();

    const held = await drainDetails(aws.sqs, queue.url);
    expect(held.filter((n) => n.startsWith('a'))).toEqual(['a-1', 'a-2', 'a-3', 'a-4']);
    expect(held.filter((n) => n.startsWith('b'))).toEqual(['b-1']);
    expect(bus.backlog(subscriber.SubscriberArn as string)).toBe(3);

    await bus.advanceClock(1_000); // the retry falls due
    expect(await drainDetails(aws.sqs, queue.url)).toEqual(['b-2', 'b-3', 'b-4']);
  });

  it('delivers WITH_METADATA as Data, Metadata and SystemMetadata', async () => {
    const busArn = await activeBus();
    const queue = await createQueue(aws.sqs, aws.uniqueName('metadata'));
    await call('create_subscriber', {
      Name: aws.uniqueName('with-metadata'),
      EventBusArn: busArn,
      InvokeConfiguration: { RoleArn: ROLE_ARN, TargetArn: queue.arn },
      Transformer: { Type: 'WITH_METADATA' },
    });

    const put = await putEvents(busArn, [
      {
        Source: 'banking.events',
        DetailType: 'transaction',
        Detail: '{"transaction_id":"t-1"}',
        Time: { $timestamp: Date.UTC(2026, 10, 1, 8, 30, 0) / 1000 },
        Resources: ['arn:aws:sqs:us-east-1:123456789012:x'],
        SystemMetadata: { EventGroupId: 'program-a', DeduplicationId: 'evt-9' },
      },
    ]);
    await bus.settled();
    const [delivered] = (await drainBodies(aws.sqs, queue.url)).map((body) => JSON.parse(body));
    const published = put.Entries[0]!;

    expect(delivered).toEqual({
      Data: {
        version: '0',
        id: published.EventId,
        'detail-type': 'transaction',
        source: 'banking.events',
        account: bus.accountId,
        time: '2026-11-01T08:30:00Z',
        region: 'us-east-1',
        resources: ['arn:aws:sqs:us-east-1:123456789012:x'],
        detail: { transaction_id: 't-1' },
      },
      Metadata: {},
      SystemMetadata: {
        ContentType: 'application/eventbridge+json',
        'aws:EventId': published.EventId,
        'aws:Source': 'banking.events',
        'aws:DetailType': 'transaction',
        'aws:IngestionTime': new Date(bus.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        'aws:SequenceNumber': published.SequenceNumber,
        'aws:DeliveryType': 'LIVE',
        EventGroupId: 'program-a',
        DeduplicationId: 'evt-9',
      },
    });
  });

  it('replays retained events to a POINT_IN_TIME subscriber, from its starting point up to its end point', async () => {
    const busArn = await activeBus();
    const publish = (tag: string) =>
      putEvents(busArn, [
        { Source: 'banking.events', DetailType: 'transaction', Detail: JSON.stringify({ n: tag }) },
      ]);
    await publish('before-1');
    await publish('before-2');
    await bus.advanceClock(60_000);
    const start = bus.now();
    await publish('inside-1');
    await publish('inside-2');
    await bus.advanceClock(60_000);
    await publish('after-1');
    const window = await createQueue(aws.sqs, aws.uniqueName('window'));
    const horizon = await createQueue(aws.sqs, aws.uniqueName('horizon'));

    await call('create_subscriber', {
      Name: aws.uniqueName('replay-window'),
      EventBusArn: busArn,
      InvokeConfiguration: { RoleArn: ROLE_ARN, TargetArn: window.arn },
      Transformer: { Type: 'WITH_METADATA' },
      StartingPosition: 'POINT_IN_TIME',
      PointInTimeConfiguration: {
        PointType: 'TIMESTAMP',
        StartingPoint: { $timestamp: start / 1000 },
        EndPoint: { $timestamp: (start + 30_000) / 1000 },
      },
    });
    await call('create_subscriber', {
      Name: aws.uniqueName('replay-all'),
      EventBusArn: busArn,
      InvokeConfiguration: { RoleArn: ROLE_ARN, TargetArn: horizon.arn },
      StartingPosition: 'POINT_IN_TIME',
      PointInTimeConfiguration: { PointType: 'HORIZON' },
    });
    await bus.settled();

    const replayed = (await drainBodies(aws.sqs, window.url)).map((body) => JSON.parse(body));
    expect(replayed.map((event) => event.Data.detail.n).sort()).toEqual(['inside-1', 'inside-2']);
    expect(replayed.map((event) => event.SystemMetadata['aws:DeliveryType'])).toEqual(['REPLAY', 'REPLAY']);
    const all = (await drainBodies(aws.sqs, horizon.url)).map((body) => JSON.parse(body).detail.n);
    expect(all.sort()).toEqual(['after-1', 'before-1', 'before-2', 'inside-1', 'inside-2']);
  });

  it("holds a STOPPED subscriber's backlog and delivers it on resume, or skips it with ResumePosition LATEST", async () => {
    const busArn = await activeBus();
    const kept = await createQueue(aws.sqs, aws.uniqueName('kept'));
    const skipped = await createQueue(aws.sqs, aws.uniqueName('skipped'));
    const subscriber = async (queueArn: string) =>
      (
        await call('create_subscriber', {
          Name: aws.uniqueName('paused'),
          EventBusArn: busArn,
          InvokeConfiguration: { RoleArn: ROLE_ARN, TargetArn: queueArn },
          State: 'STOPPED',
        })
      ).SubscriberArn as string;
    const keptArn = await subscriber(kept.arn);
    const skippedArn = await subscriber(skipped.arn);
    const publish = (n: string) =>
      putEvents(busArn, [
        { Source: 'banking.events', DetailType: 'transaction', Detail: JSON.stringify({ n }) },
      ]);
    await publish('while-stopped');
    await bus.settled();
    expect(await drainBodies(aws.sqs, kept.url)).toEqual([]);

    await call('update_subscriber', { SubscriberArn: keptArn, State: 'RUNNING' });
    await call('update_subscriber', {
      SubscriberArn: skippedArn,
      State: 'RUNNING',
      ResumePosition: 'LATEST',
    });
    await publish('after-resume');
    await bus.settled();

    expect(await drainDetails(aws.sqs, kept.url)).toEqual(['while-stopped', 'after-resume']);
    expect(await drainDetails(aws.sqs, skipped.url)).toEqual(['after-resume']);
  });

  it('lets events expire after the retention period: the window start moves on and HORIZON starts there', async () => {
    const created = await call('create_event_bus', {
      Name: aws.uniqueName('short'),
      StorageConfiguration: { RetentionPeriodInDays: 1 },
    });
    const busArn = created.EventBusArn as string;
    await boto3.wait('event_bus_active', { EventBusArn: busArn, WaiterConfig: { Delay: 0 } });
    const publish = (n: string) =>
      putEvents(busArn, [
        { Source: 'banking.events', DetailType: 'transaction', Detail: JSON.stringify({ n }) },
      ]);
    await publish('expires');
    await bus.advanceClock(12 * 3_600_000);
    await publish('kept');
    await bus.advanceClock(13 * 3_600_000);
    const queue = await createQueue(aws.sqs, aws.uniqueName('horizon'));

    const described = await call('describe_event_bus', { EventBusArn: busArn });
    await call('create_subscriber', {
      Name: aws.uniqueName('horizon'),
      EventBusArn: busArn,
      InvokeConfiguration: { RoleArn: ROLE_ARN, TargetArn: queue.arn },
      StartingPosition: 'POINT_IN_TIME',
      PointInTimeConfiguration: { PointType: 'HORIZON' },
    });
    await bus.settled();

    expect(
      (described.StorageConfiguration as { RetentionWindowStartTime: unknown }).RetentionWindowStartTime,
    ).toEqual({
      $timestamp: (bus.now() - 86_400_000) / 1000,
    });
    expect(await drainDetails(aws.sqs, queue.url)).toEqual(['kept']);
  });

  it('lists and deletes: a bus with a subscriber is in use until the subscriber is deleted', async () => {
    const busArn = await activeBus();
    const queue = await createQueue(aws.sqs, aws.uniqueName('listed'));
    const name = aws.uniqueName('listed');
    const created = await call('create_subscriber', {
      Name: name,
      EventBusArn: busArn,
      InvokeConfiguration: { RoleArn: ROLE_ARN, TargetArn: queue.arn },
    });

    const listed = await call('list_subscribers', { EventBusArn: busArn });
    const inUse = await boto3.call('delete_event_bus', { EventBusArn: busArn });
    await call('delete_subscriber', { SubscriberArn: created.SubscriberArn });
    await call('delete_event_bus', { EventBusArn: busArn });
    const gone = await boto3.wait('event_bus_deleted', { EventBusArn: busArn, WaiterConfig: { Delay: 0 } });

    expect(listed.Subscribers).toEqual([
      expect.objectContaining({
        SubscriberArn: created.SubscriberArn,
        Name: name,
        TargetArn: queue.arn,
        State: 'RUNNING',
      }),
    ]);
    expect(inUse.error).toMatchObject({ code: 'ResourceInUseException', status: 409 });
    expect(gone.error).toBeUndefined();
  });

  it('refuses a starting point before the retention window or in the future', async () => {
    const busArn = await activeBus();
    const queue = await createQueue(aws.sqs, aws.uniqueName('refused'));
    const subscriber = (startingPoint: number) =>
      boto3.call('create_subscriber', {
        Name: aws.uniqueName('refused'),
        EventBusArn: busArn,
        InvokeConfiguration: { RoleArn: ROLE_ARN, TargetArn: queue.arn },
        StartingPosition: 'POINT_IN_TIME',
        PointInTimeConfiguration: {
          PointType: 'TIMESTAMP',
          StartingPoint: { $timestamp: startingPoint / 1000 },
        },
      });

    expect((await subscriber(bus.now() - 3_600_000)).error).toMatchObject({
      code: 'InvalidInputException',
      status: 400,
    });
    expect((await subscriber(bus.now() + 3_600_000)).error).toMatchObject({
      code: 'InvalidInputException',
      status: 400,
    });
  });

  it('retries a failing delivery under the retry policy, then writes the dead-letter record', async () => {
    const busArn = await activeBus();
    const deadLetters = await createQueue(aws.sqs, aws.uniqueName('dlq'));
    const missing = `arn:aws:sqs:us-east-1:123456789012:${aws.uniqueName('no-such-queue')}`;
    const subscriber = await call('create_subscriber', {
      Name: aws.uniqueName('failing'),
      EventBusArn: busArn,
      InvokeConfiguration: { RoleArn: ROLE_ARN, TargetArn: missing },
      RetryPolicy: { MaxRetryAttempts: 2, MaxEventAgeInSeconds: 3_600 },
      OnFailureConfiguration: { Arn: deadLetters.arn },
    });
    const put = await putEvents(busArn, [
      {
        Source: 'banking.events',
        DetailType: 'transaction',
        Detail: '{}',
        SystemMetadata: { EventGroupId: 'program-a', DeduplicationId: 'evt-dlq' },
      },
    ]);
    await bus.settled(); // attempt 1 fails
    await bus.advanceClock(1_000); // retry 1 fails
    expect(await drainBodies(aws.sqs, deadLetters.url)).toEqual([]);

    await bus.advanceClock(2_000); // retry 2 fails: retries exhausted
    const records = (await drainBodies(aws.sqs, deadLetters.url)).map((body) => JSON.parse(body));

    expect(records).toEqual([
      {
        version: '1.0',
        busArn,
        subscriberArn: subscriber.SubscriberArn,
        targetArn: missing,
        errorCode: 'RESOURCE_NOT_FOUND',
        errorMessage: expect.any(String),
        exhaustedRetryCondition: 'MaximumRetryAttempts',
        retryAttempts: 2,
        failedMessages: [
          {
            eventId: put.Entries[0]!.EventId,
            eventGroupId: 'program-a',
            deduplicationId: 'evt-dlq',
            timestamp: expect.any(String),
            targetRequestId: null,
          },
        ],
      },
    ]);
    expect(bus.backlog(subscriber.SubscriberArn as string)).toBe(0);
  });

  it('answers injected partial failures per entry and injected throttling for the whole request', async () => {
    const busArn = await activeBus();
    const remove = bus.faults.rejectEntries((entry) =>
      entry.deduplicationId === 'evt-2'
        ? { errorCode: 'InternalFailure', errorMessage: 'injected' }
        : undefined,
    );
    const entries = ['evt-1', 'evt-2', 'evt-3'].map((id) => ({
      Source: 'banking.events',
      DetailType: 'transaction',
      Detail: '{}',
      SystemMetadata: { EventGroupId: 'g', DeduplicationId: id },
    }));

    const partial = await putEvents(busArn, entries);
    remove();
    bus.faults.throttlePutEvents(1);
    const throttled = await boto3.call('put_events', { EventBusArn: busArn, Entries: entries });

    expect(partial.FailedEntryCount).toBe(1);
    expect(partial.Entries.map((entry) => entry.SuccessCode ?? entry.ErrorCode)).toEqual([
      'PUBLISHED',
      'InternalFailure',
      'PUBLISHED',
    ]);
    expect(throttled.error).toMatchObject({ code: 'ThrottlingException', status: 429 });
  });

  it('refuses entries the API does not accept, one by one', async () => {
    const busArn = await activeBus();
    const result = await putEvents(busArn, [
      { Source: 'aws.s3', DetailType: 'x', Detail: '{}' },
      { Source: 'banking.events', DetailType: 'x', Detail: '{not json' },
      { Source: 'banking.events', DetailType: 'x', Detail: '{}' },
    ]);

    expect(result.FailedEntryCount).toBe(2);
    expect(result.Entries.map((entry) => entry.ErrorCode ?? entry.SuccessCode)).toEqual([
      'InvalidArgument',
      'MalformedDetail',
      'PUBLISHED',
    ]);
  });

  it("checks requests against the installed botocore's model of their input", () => {
    const service = JSON.parse(
      gunzipSync(
        readFileSync(`${pythonPath}/botocore/data/eventbridgev2/2025-05-15/service-2.json.gz`),
      ).toString('utf8'),
    );
    const vendored = loadRequestModel();

    expect(extractRequestModel(service, Object.keys(vendored.operations))).toEqual(vendored);
  });

  it('refuses, whole, a request that does not fit the model (as botocore would have stopped it)', async () => {
    const busArn = await activeBus();

    const refused = await boto3.call(
      'put_events',
      {
        EventBusArn: busArn,
        Entries: [{ Source: 'banking.events', DetailType: 'x'.repeat(129), Detail: '{}' }],
      },
      'unvalidated',
    );

    expect(refused.error).toMatchObject({ code: 'InvalidInputException', status: 400 });
    expect(refused.error?.message).toContain('Entries[0].DetailType');
  });

  it('refuses a request whose signature does not match, and does not act on it', async () => {
    const name = aws.uniqueName('unsigned');

    const refused = await boto3.call('create_event_bus', { Name: name }, 'wrong-secret');
    const listed = await call('list_event_buses', { NamePrefix: name });

    expect(refused.error).toMatchObject({ code: 'SignatureDoesNotMatch', status: 403 });
    expect(listed.EventBuses).toEqual([]);
  });

  it("matches the golden CBOR captures of boto3's requests and the stand-in's answers", async () => {
    const golden = await startCustomBus({
      motoEndpoint: inject('motoEndpoint'),
      startTime: Date.UTC(2026, 10, 26, 12, 0, 0),
      seed: 27,
    });
    const driver = await startBoto3Driver({ endpoint: golden.endpoint, region: golden.region, pythonPath });
    try {
      const created = await driver.call('create_event_bus', {
        Name: 'golden',
        ClientToken: 'standin-golden-client-token',
        StorageConfiguration: { RetentionPeriodInDays: 14 },
      });
      const busArn = created.ok!.EventBusArn as string;
      await driver.call('describe_event_bus', { EventBusArn: busArn });
      await driver.call('describe_event_bus', { EventBusArn: busArn });
      await driver.call('put_events', {
        EventBusArn: busArn,
        Entries: [
          {
            Source: 'banking.events',
            DetailType: 'account_status',
            Detail: '{"id":"evt-1","account_id":"acc-1","status":"OPEN"}',
            Time: { $timestamp: Date.UTC(2026, 10, 26, 11, 59, 0) / 1000 },
            SystemMetadata: { EventGroupId: 'program-a', DeduplicationId: 'evt-1' },
          },
          {
            Source: 'banking.events',
            DetailType: 'account_status',
            Detail: '{"id":"evt-1","account_id":"acc-1","status":"OPEN"}',
            SystemMetadata: { EventGroupId: 'program-a', DeduplicationId: 'evt-1' },
          },
        ],
      });
      expect(await modelReports(driver, golden.exchanges)).toEqual([]);
      const names = [
        'create-event-bus',
        'describe-event-bus-creating',
        'describe-event-bus-active',
        'put-events',
      ];
      golden.exchanges.forEach((exchange, index) => {
        expectGolden(`standin-${names[index]}-request.cbor`, exchange.requestBody);
        expectGolden(`standin-${names[index]}-response.cbor`, exchange.responseBody);
      });
      expect(golden.exchanges).toHaveLength(names.length);
    } finally {
      await driver.close();
      await golden.close();
    }
  });
});

type Output = Record<string, unknown>;
interface PutEventsOutput {
  FailedEntryCount: number;
  Entries: Record<string, unknown>[];
}

async function call(operation: string, args: Record<string, unknown>): Promise<Output> {
  const answer = await boto3.call(operation, args);
  if (answer.error) throw new Error(`${operation} failed: ${answer.error.code}: ${answer.error.message}`);
  return answer.ok;
}

async function putEvents(busArn: string, entries: Record<string, unknown>[]): Promise<PutEventsOutput> {
  return (await call('put_events', { EventBusArn: busArn, Entries: entries })) as unknown as PutEventsOutput;
}

async function activeBus(): Promise<string> {
  const created = await call('create_event_bus', { Name: aws.uniqueName('bus') });
  const waited = await boto3.wait('event_bus_active', {
    EventBusArn: created.EventBusArn,
    WaiterConfig: { Delay: 0 },
  });
  if (waited.error) throw new Error(waited.error.message);
  return created.EventBusArn as string;
}

/** Receives and deletes until empty: the message bodies. */
async function drainBodies(sqs: SQSClient, queueUrl: string): Promise<string[]> {
  return (await drainMessages(sqs, queueUrl)).map((message) => message.body);
}

async function drainDetails(sqs: SQSClient, queueUrl: string): Promise<string[]> {
  return (await drainBodies(sqs, queueUrl)).map(
    (body) => (JSON.parse(body) as { detail: { n: string } }).detail.n,
  );
}

/** botocore's ParamValidator over each decoded request (input shape) and successful answer (output shape). */
async function modelReports(driver: Boto3Driver, exchanges: readonly RecordedExchange[]): Promise<string[]> {
  const items = exchanges.flatMap((exchange) => [
    ...(exchange.input === undefined
      ? []
      : [{ operation: exchange.operation, kind: 'input' as const, value: toWire(exchange.input) }]),
    ...(exchange.status === 200
      ? [
          {
            operation: exchange.operation,
            kind: 'output' as const,
            value: toWire(cbor.deserialize(exchange.responseBody)),
          },
        ]
      : []),
  ]);
  const reports = await driver.validate(items);
  return reports.flatMap((report, index) =>
    report === '' ? [] : [`${items[index]!.operation} ${items[index]!.kind}: ${report}`],
  );
}

/** Decoded CBOR as the driver's JSON: tag-1 timestamps as `{ $timestamp }`. */
function toWire(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toWire);
  if (value === null || typeof value !== 'object') return typeof value === 'bigint' ? Number(value) : value;
  const record = value as Record<string, unknown>;
  if (record.tag === 1 && 'value' in record) return { $timestamp: Number(record.value) };
  return Object.fromEntries(Object.entries(record).map(([name, member]) => [name, toWire(member)]));
}

function expectGolden(name: string, bytes: Uint8Array): void {
  const path = `${GOLDEN_DIR}${name}`;
  if (process.env.UPDATE_EVENTBRIDGEV2_GOLDENS === '1') {
    mkdirSync(GOLDEN_DIR, { recursive: true });
    writeFileSync(path, bytes);
  }
  if (!existsSync(path)) {
    throw new Error(
      `Golden ${name} is missing: run this test with UPDATE_EVENTBRIDGEV2_GOLDENS=1 to write it`,
    );
  }
  expect(Buffer.from(bytes).toString('hex'), name).toBe(readFileSync(path).toString('hex'));
}
