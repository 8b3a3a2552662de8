import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { EventBridgePublisher } from '../../../../functions/adapters/aws/eventbridge-publisher.ts';
import type { BankingEvent } from '../../../../functions/core/banking-event.ts';
import {
  ConfigurationError,
  DeadlineExceededError,
  PublishError,
} from '../../../../functions/core/errors.ts';
import { type MotoEnvironment, type RoutedBus, useMotoEnvironment } from '../../../support/aws-test-env.ts';

const SOURCE = 'com.example.banking';

function withDetail(fields: Omit<BankingEvent, 'detail'>): BankingEvent {
  return { ...fields, detail: JSON.stringify(fields) };
}

function bankingEvent(sequence: number, type: string, data: Record<string, unknown> = {}): BankingEvent {
  return withDetail({
    id: `evt-${sequence}`,
    program_id: 'program-1',
    sequence_number: sequence,
    created_dt: `2024-05-01T12:34:${String(sequence % 60).padStart(2, '0')}.789Z`,
    type,
    data,
  });
}

describe('EventBridgePublisher against moto', () => {
  let aws: MotoEnvironment;
  let bus: RoutedBus;
  let publisher: EventBridgePublisher;

  beforeAll(async () => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
    bus = await aws.createRoutedBus(['transaction', 'account_status']);
    publisher = new EventBridgePublisher({
      client: aws.eventBridge,
      eventBusName: bus.busName,
      source: SOURCE,
    });
  });

  afterAll(() => aws.restore());

  async function drain(detailType: string) {
    return aws.drainQueue(bus.queueUrls.get(detailType)!);
  }

  it('publishes a full batch that rules on detail-type route to their queues', async () => {
    const batch = Array.from({ length: 10 }, (_, index) =>
      bankingEvent(index + 1, index % 3 === 0 ? 'account_status' : 'transaction', {
        note: `Zürich € ${index}`,
      }),
    );

    const outcomes = await publisher.send(batch, new AbortController().signal);

    expect(outcomes).toEqual(batch.map(() => ({ ok: true })));
    const delivered = [...(await drain('transaction')), ...(await drain('account_status'))];
    expect(delivered).toHaveLength(10);
    for (const event of batch) {
      const message = delivered.find((candidate) => (candidate.detail as BankingEvent).id === event.id);
      expect(message).toMatchObject({
        source: SOURCE,
        'detail-type': event.type,
        detail: JSON.parse(event.detail),
        // EventBridge keeps whole seconds of `Time`.
        time: event.created_dt.replace(/\.\d+Z$/, 'Z'),
      });
    }
  });

  it('reports one rejected entry by its index and delivers the others', async () => {
    // An empty DetailType is the one per-entry rejection moto models that we can provoke.
    const batch = [bankingEvent(101, 'transaction'), bankingEvent(102, ''), bankingEvent(103, 'transaction')];

    const outcomes = await publisher.send(batch, new AbortController().signal);

    expect(outcomes[0]).toEqual({ ok: true });
    expect(outcomes[1]).toMatchObject({ ok: false, errorCode: 'InvalidArgument' });
    expect(outcomes[2]).toEqual({ ok: true });
    const delivered = await drain('transaction');
    expect(delivered.map((message) => (message.detail as BankingEvent).sequence_number)).toEqual([101, 103]);
  });

  it('computes entry size the way AWS documents it', () => {
    const event = withDetail({
      id: 'evt-1',
      program_id: 'p1',
      sequence_number: 42,
      created_dt: '2024-05-01T12:34:56.789Z',
      type: 'transaction',
      data: { amount: '€5' },
    });
    // Time 14 + Source "com.example.banking" 19 + DetailType "transaction" 11 + Detail 139, where
    // Detail = {"id":"evt-1","program_id":"p1","sequence_number":42,"created_dt":"2024-05-01T12:34:56.789Z","type":"transaction","data":{"amount":"€5"}}
    //        = 1 + 12 + 1 + 17 + 1 + 20 + 1 + 39 + 1 + 20 + 1 + 24 + 1 bytes (137 characters; "€" is 3 bytes in UTF-8).
    const expected = 14 + 19 + 11 + 139;

    expect(publisher.entrySize(event)).toBe(expected);
    expect(publisher.entrySize(event)).toBe(expected);
  });

  it('declares the PutEvents limits: 10 entries, and 1,000,000 bytes unless told otherwise', () => {
    const smaller = new EventBridgePublisher({
      client: aws.eventBridge,
      eventBusName: bus.busName,
      source: SOURCE,
      maxRequestBytes: 262_144,
    });

    expect(publisher.limits).toEqual({
      maxEntriesPerBatch: 10,
      maxBatchBytes: 1_000_000,
      maxEntryBytes: 1_000_000,
    });
    expect(smaller.limits).toEqual({
      maxEntriesPerBatch: 10,
      maxBatchBytes: 262_144,
      maxEntryBytes: 262_144,
    });
  });

  it('turns a missing bus into a ConfigurationError naming it', async () => {
    const busName = aws.uniqueName('no-such-bus');
    const lost = new EventBridgePublisher({ client: aws.eventBridge, eventBusName: busName, source: SOURCE });

    const error = await lost
      .send([bankingEvent(1, 'transaction')], new AbortController().signal)
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).message).toContain(busName);
  });

  it('wraps a network failure of the whole request in a PublishError the pipeline retries (transient)', async () => {
    // Port 1 on loopback refuses connections; one attempt keeps the SDK from retrying it first.
    const unreachable = new EventBridgeClient({ endpoint: 'http://127.0.0.1:1', maxAttempts: 1 });
    const offline = new EventBridgePublisher({
      client: unreachable,
      eventBusName: bus.busName,
      source: SOURCE,
    });

    const error = await offline
      .send(
        [bankingEvent(301, 'transaction'), bankingEvent(302, 'transaction')],
        new AbortController().signal,
      )
      .catch((caught: unknown) => caught);
    unreachable.destroy();

    expect(error).toBeInstanceOf(PublishError);
    expect((error as PublishError).failure).toBe('transient');
    expect((error as PublishError).context).toMatchObject({
      entries: 2,
      firstSequenceNumber: 301,
      lastSequenceNumber: 302,
    });
  });

  it("rejects with the signal's reason when the deadline has already come", async () => {
    const controller = new AbortController();
    controller.abort(new DeadlineExceededError());

    const sending = publisher.send([bankingEvent(201, 'transaction')], controller.signal);

    await expect(sending).rejects.toBeInstanceOf(DeadlineExceededError);
  });
});
