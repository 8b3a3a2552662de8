/**
 * What a Custom Event Bus subscriber delivers, in the shapes its user guide documents: `RAW` (the
 * `PutEvents` envelope, a classic event), `WITH_METADATA` (`Data` + `SystemMetadata`), the array a
 * Lambda target receives, and an SQS target's message body. Fixtures are made by the handler's own
 * publishing code (test/support/published-events.ts).
 */
import { describe, expect, it } from 'vitest';
import { claimCheckedEvent } from '../../../functions/subscriber/claim-check-resolver.ts';
import {
  EventValidationError,
  parseEvent,
  parseEvents,
  type ReceivedEvent,
  UnsafeIntegerError,
} from '../../../functions/subscriber/index.ts';
import {
  busSystemMetadata,
  delivered,
  deliveredText,
  deliveredWithMetadata,
  deliveredWithMetadataText,
  PROGRAM_ID,
  pointerOf,
  published,
  publishedFromText,
  rawEvent,
} from '../../support/published-events.ts';

const [pending, complete, frozen] = published([
  rawEvent(1, 'transaction', { transaction_id: 'tx-1', amount: 1250, type: 'card', status: 'PENDING' }),
  rawEvent(2, 'transaction', { transaction_id: 'tx-1', amount: 1250, type: 'card', status: 'COMPLETE' }),
  rawEvent(3, 'account_status', { account_id: 'acc-1', status: 'FROZEN' }),
]);

function sqsRecord(body: string): Record<string, unknown> {
  return {
    messageId: '059f36b4-87a3-44ab-83d2-661975830a7d',
    receiptHandle: 'AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a',
    body,
    attributes: { ApproximateReceiveCount: '1', MessageGroupId: PROGRAM_ID },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:transactions.fifo',
    awsRegion: 'eu-west-1',
  };
}

function refusal(input: unknown): EventValidationError | UnsafeIntegerError {
  try {
    parseEvents(input);
  } catch (error) {
    if (error instanceof EventValidationError || error instanceof UnsafeIntegerError) return error;
    throw error;
  }
  throw new Error('parseEvents accepted the input');
}

const BUS_FIELDS = ['busEventGroup', 'busSequenceNumber', 'busEventId', 'busDeliveryType'] as const;

describe('a Custom Event Bus delivery WITH_METADATA', () => {
  it('is the event its Data holds, with the group, sequence number, id and delivery type of the bus', () => {
    const event = parseEvent(deliveredWithMetadata(pending!));

    expect(event).toMatchObject({
      kind: 'transaction',
      detail: { id: 'evt-1', sequence_number: 1, data: { status: 'PENDING' } },
      envelope: { source: 'banking.events', 'detail-type': 'transaction' },
      busEventGroup: PROGRAM_ID,
      busSequenceNumber: '10000000000000003000',
      busEventId: 'a1b2c3d4-5678-90ab-cdef-EXAMPLE11111',
      busDeliveryType: 'LIVE',
    });
  });

  it('reads the same from an SQS target: the message body, and the record holding it', () => {
    const fromObject = parseEvent(deliveredWithMetadata(frozen!));

    expect(parseEvent(deliveredWithMetadataText(frozen!))).toEqual(fromObject);
    expect(parseEvent(sqsRecord(deliveredWithMetadataText(frozen!)))).toEqual(fromObject);
  });

  it('differs from the RAW delivery of the event only by the bus fields', () => {
    const withMetadata = parseEvent(deliveredWithMetadata(pending!)) as unknown as Record<string, unknown>;
    const raw = parseEvent(delivered(pending!)) as unknown as Record<string, unknown>;

    for (const field of BUS_FIELDS) expect(raw).not.toHaveProperty(field);
    const withoutBus = Object.fromEntries(
      Object.entries(withMetadata).filter(([key]) => !(BUS_FIELDS as readonly string[]).includes(key)),
    );
    expect(withoutBus).toEqual(raw);
  });

  it('keeps a sequence number beyond 2^53 digit for digit, and a replay says REPLAY', () => {
    const metadata = busSystemMetadata(pending!, {
      'aws:SequenceNumber': '900719925474099301',
      'aws:DeliveryType': 'REPLAY',
    });

    expect(parseEvent(deliveredWithMetadata(pending!, metadata))).toMatchObject({
      busSequenceNumber: '900719925474099301',
      busDeliveryType: 'REPLAY',
    });
  });

  it('reads only what is there: an event published without a group has none', () => {
    const metadata = { 'aws:DeliveryType': 'LIVE' };

    const event = parseEvent(deliveredWithMetadata(pending!, metadata));

    expect(event.busDeliveryType).toBe('LIVE');
    expect(event).not.toHaveProperty('busEventGroup');
    expect(event).not.toHaveProperty('busSequenceNumber');
  });

  it('carries the bus fields of a claim-check pointer over to the event it stands for', () => {
    const pointer = parseEvent(deliveredWithMetadata(pointerOf(complete!)));
    const body = new TextEncoder().encode(complete!.detail);

    expect(pointer).toMatchObject({ kind: 'claim_check', busEventGroup: PROGRAM_ID });
    expect(claimCheckedEvent(pointer as Extract<ReceivedEvent, { kind: 'claim_check' }>, body)).toMatchObject(
      {
        kind: 'transaction',
        detail: { id: 'evt-2', data: { status: 'COMPLETE' } },
        busEventGroup: PROGRAM_ID,
        busSequenceNumber: '10000000000000003000',
      },
    );
  });

  it.each<[string, Record<string, unknown>, string, RegExp]>([
    [
      'a sequence number as a number',
      { 'aws:SequenceNumber': 12 },
      'SystemMetadata.aws:SequenceNumber',
      /non-empty string/,
    ],
    [
      'a sequence number that is no number',
      { 'aws:SequenceNumber': 'x1' },
      'SystemMetadata.aws:SequenceNumber',
      /decimal number/,
    ],
    ['an empty group', { EventGroupId: '' }, 'SystemMetadata.EventGroupId', /non-empty string/],
    [
      'an undocumented delivery type',
      { 'aws:DeliveryType': 'RETRY' },
      'SystemMetadata.aws:DeliveryType',
      /one of LIVE, REPLAY/,
    ],
  ])('refuses %s, naming the field', (_case, overrides, field, message) => {
    const error = refusal(deliveredWithMetadata(pending!, busSystemMetadata(pending!, overrides)));

    expect(error).toMatchObject({ code: 'EVENT_INVALID', field });
    expect(error.message).toMatch(message);
  });

  it('refuses SystemMetadata that is no object, and Data that is no event', () => {
    expect(refusal({ Data: delivered(pending!), SystemMetadata: 'LIVE' })).toMatchObject({
      field: 'SystemMetadata',
    });
    expect(refusal({ Data: 'evt-1', SystemMetadata: {} })).toMatchObject({ field: 'event' });
    expect(refusal({ Data: { orderId: '1' }, SystemMetadata: {} })).toMatchObject({ field: 'version' });
  });

  it('refuses an amount beyond 2^53 inside Data, as it does in a classic event', () => {
    const text = JSON.stringify({ data: [{ ...rawEvent(7, 'transaction', {}), data: null }] }).replace(
      '"data":null',
      '"data":{"transaction_id":"tx-big","amount":9007199254740993}',
    );
    const [big] = publishedFromText(text);

    expect(refusal(deliveredWithMetadataText(big!))).toMatchObject({
      code: 'EVENT_UNSAFE_INTEGER',
      field: 'detail.data.amount',
    });
  });
});

describe('a Custom Event Bus delivery RAW', () => {
  it('is the PutEvents envelope: parsed as a classic event, with no bus fields', () => {
    const event = parseEvent(deliveredText(frozen!));

    expect(event).toMatchObject({ kind: 'account_status', detail: { data: { status: 'FROZEN' } } });
    for (const field of BUS_FIELDS) expect(event).not.toHaveProperty(field);
  });
});

describe("a Custom Event Bus Lambda target's batch", () => {
  it('is parsed element by element, in delivery order, RAW and WITH_METADATA alike', () => {
    const batch = [deliveredWithMetadata(pending!), deliveredWithMetadata(complete!), delivered(frozen!)];

    const events = parseEvents(batch);

    expect(events.map((event) => [event.detail.id, event.busEventGroup])).toEqual([
      ['evt-1', PROGRAM_ID],
      ['evt-2', PROGRAM_ID],
      ['evt-3', undefined],
    ]);
  });

  it('of one event is still an array; with MaxBatchSize 1 the event comes alone', () => {
    expect(parseEvents([deliveredWithMetadata(pending!)])).toHaveLength(1);
    expect(parseEvents(deliveredWithMetadata(pending!))).toEqual(
      parseEvents([deliveredWithMetadata(pending!)]),
    );
  });

  it('is refused by parseEvent, which takes one event, with a pointer to parseEvents', () => {
    let error: unknown;
    try {
      parseEvent([deliveredWithMetadata(pending!)]);
    } catch (caught) {
      error = caught;
    }

    expect(error).toBeInstanceOf(EventValidationError);
    expect((error as Error).message).toMatch(/is a batch \(an array.*parseEvents/);
  });

  it('fails on its first bad element', () => {
    const bad = { ...delivered(complete!), detail: { ...(delivered(complete!).detail as object), id: '' } };

    expect(refusal([deliveredWithMetadata(pending!), bad])).toMatchObject({ field: 'detail.id' });
  });
});
