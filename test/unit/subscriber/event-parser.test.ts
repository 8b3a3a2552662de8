import { describe, expect, it } from 'vitest';
import {
  EventValidationError,
  parseEvent,
  type ReceivedEvent,
  UnsafeIntegerError,
} from '../../../functions/subscriber/index.ts';
import {
  delivered,
  deliveredText,
  pointerOf,
  published,
  publishedFromText,
  rawEvent,
} from '../../support/published-events.ts';

const [transaction, accountStatus, cardLimit] = published([
  rawEvent(1, 'transaction', {
    transaction_id: 'tx-1',
    amount: 1250,
    type: 'card',
    status: 'COMPLETE',
    network_fee: 0.01,
    merchant_category: '5814',
  }),
  rawEvent(2, 'account_status', { account_id: 'acc-1', status: 'FROZEN' }),
  rawEvent(3, 'card_limit_changed', { card_id: 'card-9', limit: 50_000 }),
]);
const [quarantined] = published([{ ...rawEvent(4, 'transaction', {}), id: undefined }]);

/** An SQS record as Lambda's event source mapping hands it over. */
function sqsRecord(body: string): Record<string, unknown> {
  return {
    messageId: '059f36b4-87a3-44ab-83d2-661975830a7d',
    receiptHandle: 'AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a',
    body,
    attributes: { ApproximateReceiveCount: '1' },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:transactions',
    awsRegion: 'eu-west-1',
  };
}

/** The error `parseEvent` throws for `input`. */
function refusal(input: unknown, options = {}): EventValidationError | UnsafeIntegerError {
  try {
    parseEvent(input, options);
  } catch (error) {
    if (error instanceof EventValidationError || error instanceof UnsafeIntegerError) return error;
    throw error;
  }
  throw new Error('parseEvent accepted the input');
}

/** A delivered transaction with its detail changed by `change`. */
function transactionWith(change: (detail: Record<string, unknown>) => Record<string, unknown>): unknown {
  const event = delivered(transaction!);
  return { ...event, detail: change(event.detail as Record<string, unknown>) };
}

describe('parseEvent: every way an event arrives', () => {
  it('reads the same event from a Lambda target (object), an SQS message body (text) and an SQS record', () => {
    const fromObject = parseEvent(delivered(transaction!));
    const fromBody = parseEvent(deliveredText(transaction!));
    const fromRecord = parseEvent(sqsRecord(deliveredText(transaction!)));

    expect(fromObject).toMatchObject({
      kind: 'transaction',
      detailType: 'transaction',
      detail: { id: 'evt-1', sequence_number: 1, data: { amount: 1250, type: 'card', status: 'COMPLETE' } },
      envelope: { source: 'banking.events', account: '123456789012' },
    });
    expect(fromBody).toEqual(fromObject);
    expect(fromRecord).toEqual(fromObject);
  });

  it('reads a Step Functions input: the event as the execution got it', () => {
    const stateInput = JSON.parse(JSON.stringify(delivered(accountStatus!)));

    expect(parseEvent(stateInput)).toMatchObject({
      kind: 'account_status',
      detail: { data: { account_id: 'acc-1', status: 'FROZEN' } },
    });
  });

  it('keeps fields the interface does not name, in data and in the envelope', () => {
    const event = parseEvent(delivered(transaction!));

    expect(event.kind === 'transaction' && event.detail.data.merchant_category).toBe('5814');
    expect(event.envelope.resources).toEqual([]);
  });
});

describe('parseEvent: kinds', () => {
  it('passes an event of an undocumented type on as unknown, not as an error', () => {
    const event = parseEvent(deliveredText(cardLimit!));

    expect(event).toMatchObject({
      kind: 'unknown',
      detailType: 'card_limit_changed',
      detail: { id: 'evt-3', type: 'card_limit_changed', data: { card_id: 'card-9', limit: 50_000 } },
    });
  });

  it('tells a quarantined event (invalid_event) from the events it stands beside', () => {
    const event = parseEvent(deliveredText(quarantined!));

    expect(event).toMatchObject({
      kind: 'invalid_event',
      detail: {
        id: null,
        sequence_number: 4,
        error: { code: 'PAYLOAD_INVALID', field: 'data[0].id' },
        raw: { sequence_number: 4, type: 'TRANSACTION' },
        fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
    });
  });

  it('reads a quarantined event whose raw is its text (nested deeper than the bus takes)', () => {
    const deep = `${'['.repeat(1_500)}${']'.repeat(1_500)}`;
    const text = `{"data":[{"id":"evt-5","program_id":"p-1","sequence_number":5,"created_dt":"2026-11-23T09:59:00Z","type":"TRANSACTION","data":${deep}}],"last_sequence_number":null}`;
    const [tooDeep] = publishedFromText(text);

    const event = parseEvent(deliveredText(tooDeep!));

    expect(event).toMatchObject({
      kind: 'invalid_event',
      detail: { sequence_number: 5, error: { code: 'EVENT_UNPUBLISHABLE' }, raw_is_text: true },
    });
    expect(event.kind === 'invalid_event' && typeof event.detail.raw).toBe('string');
  });

  it.each([
    ['transaction', transaction],
    ['card_limit_changed', cardLimit],
    ['invalid_event', quarantined],
  ])('tells a claim-check pointer of a %s event from the event itself', (detailType, event) => {
    const received = parseEvent(deliveredText(pointerOf(event!)));

    expect(received).toMatchObject({
      kind: 'claim_check',
      detailType,
      detail: {
        id: event!.id,
        type: detailType,
        claim_check: { bucket: 'claim-checks', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
      },
    });
  });
});

describe('parseEvent: bad input names the field', () => {
  it.each<[string, unknown, string, RegExp]>([
    ['a body that is not JSON', '{"version":"0",', 'body', /^body is not JSON/],
    ['a whole SQS batch', { Records: [] }, 'Records', /is a batch/],
    ['a number', 42, 'event', /must be an EventBridge event/],
    [
      'no detail-type',
      (({ 'detail-type': _type, ...rest }) => rest)(delivered(transaction!)),
      'detail-type',
      /^detail-type is required$/,
    ],
    ['no detail id', transactionWith(({ id: _id, ...rest }) => rest), 'detail.id', /^detail.id is required$/],
    [
      'an empty id',
      transactionWith((detail) => ({ ...detail, id: '' })),
      'detail.id',
      /must be a non-empty string/,
    ],
    [
      'a sequence number as a string',
      transactionWith((detail) => ({ ...detail, sequence_number: '12' })),
      'detail.sequence_number',
      /must be an integer, got "12"/,
    ],
    [
      'a negative sequence number',
      transactionWith((detail) => ({ ...detail, sequence_number: -1 })),
      'detail.sequence_number',
      /must be at least 0, got -1/,
    ],
    [
      'a created_dt that is no timestamp',
      transactionWith((detail) => ({ ...detail, created_dt: 'yesterday' })),
      'detail.created_dt',
      /must be an ISO 8601 timestamp/,
    ],
    [
      'an amount as a string',
      transactionWith((detail) => ({ ...detail, data: { ...(detail.data as object), amount: '12.50' } })),
      'detail.data.amount',
      /must be a number, got "12.50"/,
    ],
    [
      'a status the interface does not document',
      transactionWith((detail) => ({ ...detail, data: { ...(detail.data as object), status: 'LOST' } })),
      'detail.data.status',
      /must be one of PENDING, COMPLETE, ERROR, got "LOST"/,
    ],
    [
      'a detail.type that is not its detail-type',
      transactionWith((detail) => ({ ...detail, type: 'account_status' })),
      'detail.type',
      /must be one of transaction/,
    ],
  ])('%s', (_case, input, field, message) => {
    const error = refusal(input);

    expect(error).toBeInstanceOf(EventValidationError);
    expect(error).toMatchObject({ code: 'EVENT_INVALID', field, context: { field } });
    expect(error.message).toMatch(message);
  });

  it('an unknown type whose detail.type is another type', () => {
    const event = delivered(cardLimit!);
    const error = refusal({ ...event, detail: { ...(event.detail as object), type: 'card_status' } });

    expect(error).toMatchObject({ field: 'detail.type' });
    expect(error.message).toMatch(/must be the detail-type "card_limit_changed"/);
  });

  it('a pointer whose sha256 is not a SHA-256, and one standing for another type', () => {
    const pointer = delivered(pointerOf(transaction!));
    const detail = pointer.detail as { claim_check: object };
    const badHash = {
      ...pointer,
      detail: { ...detail, claim_check: { ...detail.claim_check, sha256: 'abc' } },
    };
    const otherType = { ...pointer, 'detail-type': 'account_status' };

    expect(refusal(badHash)).toMatchObject({ field: 'detail.claim_check.sha256' });
    expect(refusal(otherType)).toMatchObject({ field: 'detail.type' });
  });

  it('an event of another source, when the subscriber names its source', () => {
    const foreign = delivered(transaction!, { source: 'payments.other' });

    expect(refusal(foreign, { source: 'banking.events' })).toMatchObject({ field: 'source' });
    expect(parseEvent(foreign).kind).toBe('transaction');
  });
});

describe('parseEvent: numbers JavaScript cannot hold exactly', () => {
  const text = JSON.stringify({ data: [{ ...rawEvent(7, 'transaction', {}), data: null }] }).replace(
    '"data":null',
    '"data":{"transaction_id":"tx-big","amount":9007199254740993,"network_fee":1.0E-7,"fee":12.50}',
  );
  const [big] = publishedFromText(text);

  it('refuses an amount beyond 2^53 from an SQS body, naming the field, rather than round it', () => {
    expect(deliveredText(big!)).toContain('"amount":9007199254740993');

    const error = refusal(deliveredText(big!));

    expect(error).toBeInstanceOf(UnsafeIntegerError);
    expect(error).toMatchObject({
      code: 'EVENT_UNSAFE_INTEGER',
      field: 'detail.data.amount',
      context: { eventId: 'evt-7', detailType: 'transaction' },
    });
  });

  it('refuses it from an object too, where the runtime has already rounded it', () => {
    const rounded = delivered(big!);

    expect((rounded.detail as { data: { amount: number } }).data.amount).toBe(9007199254740992);
    expect(refusal(rounded)).toMatchObject({ code: 'EVENT_UNSAFE_INTEGER', field: 'detail.data.amount' });
  });

  it('refuses a sequence number beyond 2^53 even on a pointer', () => {
    const pointer = delivered(pointerOf(transaction!));
    const detail = { ...(pointer.detail as object), sequence_number: 2 ** 60 };

    expect(refusal({ ...pointer, detail })).toMatchObject({
      code: 'EVENT_UNSAFE_INTEGER',
      field: 'detail.sequence_number',
    });
  });

  it('accepts decimals and safe integers as the nearest numbers, as JSON.parse reads them', () => {
    const fine = text.replace('9007199254740993', '9007199254740991');
    const [event] = publishedFromText(fine);

    const parsed: ReceivedEvent = parseEvent(deliveredText(event!));

    expect(parsed.kind === 'transaction' && parsed.detail.data).toMatchObject({
      amount: 9007199254740991,
      network_fee: 1e-7,
      fee: 12.5,
    });
  });
});
