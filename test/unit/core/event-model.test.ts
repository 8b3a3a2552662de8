import { describe, expect, it } from 'vitest';
import { CLASSIC_BUS_ENTRY_RULES } from '../../../functions/adapters/aws/eventbridge-entry-rules.ts';
import { PayloadValidationError } from '../../../functions/core/errors.ts';
import {
  eventTextOf,
  findSequenceGaps,
  normalizeEvent as normalizeEventText,
  parsePollResponse as parsePollDocument,
  selectNewEvents,
} from '../../../functions/core/event-model.ts';
import { makeEvent } from '../../support/in-memory-ports.ts';

const origin = { source: 'GET /events', status: 200 };
/** The validation behaviour does not depend on the text: these take values, as JSON.stringify writes them. */
const normalizeEvent = (value: unknown, from = origin, path?: string) =>
  normalizeEventText(eventTextOf(value), from, CLASSIC_BUS_ENTRY_RULES, path);
const parsePollResponse = (value: unknown, from = origin) =>
  parsePollDocument({ text: JSON.stringify(value), value }, from, CLASSIC_BUS_ENTRY_RULES);
const raw = {
  id: '5a1c8c1e-0000-4000-8000-000000000001',
  program_id: 'f0e1d2c3-0000-4000-8000-000000000002',
  sequence_number: 42,
  created_dt: '2026-11-22T01:02:03.456+00:00',
  type: 'ACCOUNT_STATUS',
  data: { account_id: 'a', blockchain_address: '0xabc', status: 'OPEN' },
};

describe('normalizeEvent', () => {
  it('lower-cases the type and keeps everything else', () => {
    expect(normalizeEvent(raw, origin)).toEqual({
      ...raw,
      type: 'account_status',
      detail: JSON.stringify({ ...raw, type: 'account_status' }),
    });
  });

  it('accepts a numeric string sequence number (stream payloads) as a number', () => {
    expect(normalizeEvent({ ...raw, sequence_number: '1234' }, origin).sequence_number).toBe(1234);
  });

  it('accepts 2^53 − 1 exactly, as a number and as a string (held later as a jump, not refused)', () => {
    for (const value of [9007199254740991, '9007199254740991']) {
      expect(normalizeEvent({ ...raw, sequence_number: value }, origin).sequence_number).toBe(
        Number.MAX_SAFE_INTEGER,
      );
    }
  });

  it.each([
    [12.5, 'a fractional number'],
    ['12a', 'a non-numeric string'],
    [-1, 'a negative number'],
    [null, 'null'],
    [2 ** 60, 'an unsafe integer'],
    [2 ** 53, 'the first integer past 2^53 − 1'],
    ['9007199254740993', 'a numeric string past 2^53 − 1'],
  ])('rejects %s (%s) naming the status and the field', (value: unknown, _label: string) => {
    const act = () => normalizeEvent({ ...raw, sequence_number: value }, origin, 'data[3]');
    expect(act).toThrow(PayloadValidationError);
    expect(act).toThrow(/GET \/events \(HTTP 200\): data\[3\]\.sequence_number must be/);
  });

  it('keeps unknown types, lower-cased, rather than dropping them', () => {
    expect(normalizeEvent({ ...raw, type: 'CARD_STATUS' }, origin).type).toBe('card_status');
  });

  it.each(['id', 'program_id', 'created_dt', 'type'])('rejects a missing %s', (field) => {
    const broken: Record<string, unknown> = { ...raw };
    delete broken[field];
    expect(() => normalizeEvent(broken, origin)).toThrow(
      new RegExp(`event\\.${field} must be a non-empty string`),
    );
  });

  it('rejects a created_dt that is not a timestamp and a data that is not an object', () => {
    expect(() => normalizeEvent({ ...raw, created_dt: 'yesterday' }, origin)).toThrow(
      /created_dt must be an ISO 8601/,
    );
    expect(() => normalizeEvent({ ...raw, data: [1] }, origin)).toThrow(/event\.data must be an object/);
  });
});

describe('parsePollResponse', () => {
  it('parses and sorts events by sequence number', () => {
    const page = parsePollResponse(
      {
        data: [
          { ...raw, sequence_number: 9 },
          { ...raw, id: 'x', sequence_number: 8 },
        ],
        last_sequence_number: 9,
        limit: 100,
      },
      origin,
    );
    expect(page.events.map((e) => e.sequence_number)).toEqual([8, 9]);
    expect(page.lastSequenceNumber).toBe(9);
  });

  it('treats an empty data array as no events and a missing cursor as null', () => {
    expect(parsePollResponse({ data: [] }, origin)).toEqual({ events: [], lastSequenceNumber: null });
  });

  it('refuses a body without data rather than reading it as caught up', () => {
    expect(() => parsePollResponse({ message: 'Service Unavailable' }, origin)).toThrow(
      'GET /events (HTTP 200): data must be an array of events, got undefined',
    );
  });

  it('refuses a body that is not the documented shape', () => {
    expect(() => parsePollResponse({ data: 'nope' }, origin)).toThrow(/data must be an array/);
    expect(() => parsePollResponse([], origin)).toThrow(/body must be a JSON object/);
    expect(() => parsePollResponse({ data: [], last_sequence_number: 'x' }, origin)).toThrow(
      /last_sequence_number must be/,
    );
  });

  it('quarantines a bad event inside the page, naming its field, instead of refusing the page', () => {
    const page = parsePollResponse(
      { data: [raw, { ...raw, id: 'b', sequence_number: 43, type: 7 }] },
      origin,
    );

    expect(page.events.map((e) => [e.sequence_number, e.type])).toEqual([
      [42, 'account_status'],
      [43, 'invalid_event'],
    ]);
    expect(page.events[1]!.invalid).toMatchObject({ field: 'data[1].type', sequenceNumber: 43 });
  });
});

describe('selectNewEvents', () => {
  it('drops events at or below the checkpoint and repeated ids, keeping order', () => {
    const a = makeEvent(3);
    const events = [makeEvent(1), makeEvent(2), a, { ...a }, makeEvent(4)];
    expect(selectNewEvents(events, 2).map((e) => e.sequence_number)).toEqual([3, 4]);
    expect(selectNewEvents(events, null)).toHaveLength(4);
  });
});

describe('validation messages', () => {
  it('show a short preview of the offending value, not the whole payload', () => {
    const big = { data: { events: Array.from({ length: 50 }, (_, i) => ({ id: `event-${i}` })) } };
    let message = '';
    try {
      parsePollResponse(big, origin);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^GET \/events \(HTTP 200\): data must be an array of events, got \{"events"/);
    expect(message.length).toBeLessThan(200);
  });
});

describe('findSequenceGaps', () => {
  it('reports runs missing after the checkpoint and between events', () => {
    const events = [makeEvent(5), makeEvent(6), makeEvent(9), makeEvent(10), makeEvent(12)];
    expect(findSequenceGaps(2, events)).toEqual([
      { from: 3, to: 4 },
      { from: 7, to: 8 },
      { from: 11, to: 11 },
    ]);
  });

  it('reports nothing for a contiguous page, or before the first event when there is no checkpoint', () => {
    expect(findSequenceGaps(4, [makeEvent(5), makeEvent(6)])).toEqual([]);
    expect(findSequenceGaps(null, [makeEvent(40), makeEvent(41)])).toEqual([]);
  });
});

describe('the published detail', () => {
  // What a bank may send: integers past 2^53, decimals with trailing zeros, exponents, escapes,
  // non-ASCII text, nulls, empty objects, fields the interface does not name, spaces between tokens.
  const body = `{ "data": [
    { "id": "e-1", "program_id": "p-1", "sequence_number": 7 , "created_dt": "2026-11-22T00:00:00.000+00:00",
      "type": "TRANSACTION",
      "data": { "amount": 9007199254740993, "max": 9223372036854775807, "fee": 12.50, "tiny": 1.0E-7,
                "share": 0.00040000, "note": "caf\\u00e9 \\"quoted\\" [not, an] {array}", "emoji": "😀 a b",
                "nothing": null, "empty": {}, "list": [1, 2.0 , -0.0], "undocumented": true } }
  ], "last_sequence_number": 7, "limit": 100 }`;

  it("is the bank's own text, token for token, with only sequence_number and type normalized", () => {
    const [event] = parsePollDocument(
      { text: body, value: JSON.parse(body) },
      origin,
      CLASSIC_BUS_ENTRY_RULES,
    ).events;

    expect(event!.detail).toBe(
      '{"id":"e-1","program_id":"p-1","sequence_number":7,"created_dt":"2026-11-22T00:00:00.000+00:00",' +
        '"type":"transaction",' +
        '"data":{"amount":9007199254740993,"max":9223372036854775807,"fee":12.50,"tiny":1.0E-7,' +
        '"share":0.00040000,"note":"caf\\u00e9 \\"quoted\\" [not, an] {array}","emoji":"😀 a b",' +
        '"nothing":null,"empty":{},"list":[1,2.0,-0.0],"undocumented":true}}',
    );
    // The parsed view is lossy; it is never what gets published.
    expect(event!.data.amount).toBe(9007199254740992);
  });

  it('turns a numeric string sequence number (stream payloads) into a number in the text too', () => {
    const text =
      '{"id":"e-2","program_id":"p","sequence_number":"0042","created_dt":"2026-11-22T00:00:00Z","type":"account_status","data":{"a":1.10}}';

    const event = normalizeEventText(
      { value: JSON.parse(text), text, span: { start: 0, end: text.length } },
      origin,
      CLASSIC_BUS_ENTRY_RULES,
    );

    expect(event.detail).toBe(
      '{"id":"e-2","program_id":"p","sequence_number":42,"created_dt":"2026-11-22T00:00:00Z","type":"account_status","data":{"a":1.10}}',
    );
  });

  it("takes each event's own text when events come out of sequence order", () => {
    const text = `{"data":[${['b', 'a']
      .map(
        (id, index) =>
          `{"id":"${id}","program_id":"p","sequence_number":${9 - index},"created_dt":"2026-11-22T00:00:00Z","type":"T","data":{"v":${index}.50}}`,
      )
      .join(',')}]}`;

    const { events } = parsePollDocument({ text, value: JSON.parse(text) }, origin, CLASSIC_BUS_ENTRY_RULES);

    expect(events.map((e) => [e.id, e.sequence_number])).toEqual([
      ['a', 8],
      ['b', 9],
    ]);
    expect(events[0]!.detail).toContain('"data":{"v":1.50}');
    expect(events[1]!.detail).toContain('"data":{"v":0.50}');
  });

  it("refuses to publish text that is not the event's own", () => {
    const text =
      '{"id":"other","program_id":"p","sequence_number":1,"created_dt":"2026-11-22T00:00:00Z","type":"t","data":{}}';
    const value = { ...JSON.parse(text), id: 'mine' };

    expect(() =>
      normalizeEventText(
        { value, text, span: { start: 0, end: text.length } },
        origin,
        CLASSIC_BUS_ENTRY_RULES,
      ),
    ).toThrow(/text located for event mine is another event's/);
  });
});
