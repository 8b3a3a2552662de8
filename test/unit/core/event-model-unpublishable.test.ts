/**
 * No single event stops the feed: an event nested deeper than the bus processes (or than the
 * stack allows a recursive walk), one whose type the bus would refuse, and one whose shape throws
 * a `RangeError` are quarantined with their reason; the events around them are kept.
 */
import { describe, expect, it } from 'vitest';
import {
  CLASSIC_BUS_ENTRY_RULES,
  CUSTOM_BUS_ENTRY_RULES,
  MAX_DETAIL_DEPTH,
  MAX_DETAIL_TYPE_LENGTH,
} from '../../../functions/adapters/aws/eventbridge-entry-rules.ts';
import type { BusEntryRules } from '../../../functions/core/bus-entry-rules.ts';
import { EventUnpublishableError } from '../../../functions/core/errors.ts';
import {
  eventFailure,
  normalizeEvent,
  parsePollResponse,
  selectNewEvents,
} from '../../../functions/core/event-model.ts';
import { nestingDepth } from '../../../functions/core/json-text.ts';
import { makeEvent } from '../../support/in-memory-ports.ts';

const origin = { source: 'GET /events', status: 200, receivedAt: Date.parse('2026-11-26T10:00:00Z') };

function eventText(
  sequence: number,
  overrides: { type?: string; dataText?: string; id?: string } = {},
): string {
  const type = JSON.stringify(overrides.type ?? 'TRANSACTION');
  const id = JSON.stringify(overrides.id ?? `evt-${sequence}`);
  const data = overrides.dataText ?? `{"amount":${sequence}}`;
  return `{"id":${id},"program_id":"p-1","sequence_number":${sequence},"created_dt":"2026-11-26T09:00:00Z","type":${type},"data":${data}}`;
}

/** A page as the bank sends it: parsed by `JSON.parse` (which does not recurse), text kept. */
function page(...events: string[]) {
  const text = `{"data":[${events.join(',')}],"last_sequence_number":null}`;
  return parsePollResponse({ text, value: JSON.parse(text) as unknown }, origin, CLASSIC_BUS_ENTRY_RULES);
}

function nested(open: string, close: string, depth: number, inner = ''): string {
  return `${open.repeat(depth)}${inner}${close.repeat(depth)}`;
}

describe('an event nested deeper than the bus processes', () => {
  it.each([
    ['arrays 100,000 deep in data', `{"deep":${nested('[', ']', 100_000)}}`],
    ['arrays 5,000 deep in data', `{"deep":${nested('[', ']', 5_000)}}`],
    ['objects 100,000 deep in data', nested('{"a":', '}', 100_000, '1')],
    ['data itself an array 100,000 deep (the preview path)', nested('[', ']', 100_000)],
  ])('%s is quarantined between two valid events, which are kept', (_label, dataText) => {
    const { events } = page(eventText(1), eventText(2, { dataText }), eventText(3));

    expect(events.map((event) => [event.sequence_number, event.type])).toEqual([
      [1, 'transaction'],
      [2, 'invalid_event'],
      [3, 'transaction'],
    ]);
    const quarantined = JSON.parse(events[1]!.detail) as Record<string, unknown>;
    expect(quarantined.error).toMatchObject({ code: 'EVENT_UNPUBLISHABLE', field: 'data[1]' });
    expect((quarantined.error as { message: string }).message).toMatch(
      new RegExp(`levels deep; EventBridge PutEvents processes at most ${MAX_DETAIL_DEPTH}`),
    );
  });

  it("quarantines it with its text as a string, so the invalid_event's own detail is not too deep", () => {
    const dataText = `{"deep":${nested('[', ']', 100_000)}}`;
    const original = eventText(2, { dataText });

    const [quarantined] = page(original).events;

    const detail = quarantined!.detail;
    expect(nestingDepth(detail, { start: 0, end: detail.length })).toBe(2);
    expect(JSON.parse(detail)).toMatchObject({
      raw_is_text: true,
      raw: original,
      sequence_number: 2,
      id: 'evt-2',
    });
  });

  it('keeps an event exactly at the limit, and splices a broken one just below it as JSON', () => {
    // The event's object is level 1, data level 2: data holds MAX - 2 more levels.
    const atLimit = `{"deep":${nested('[', ']', MAX_DETAIL_DEPTH - 2)}}`;
    const { events } = page(eventText(1, { dataText: atLimit }));
    expect(events[0]!.type).toBe('transaction');
    expect(nestingDepth(events[0]!.detail, { start: 0, end: events[0]!.detail.length })).toBe(
      MAX_DETAIL_DEPTH,
    );

    const broken = page(
      eventText(1, { dataText: `{"deep":${nested('[', ']', MAX_DETAIL_DEPTH - 3)}}`, type: '' }),
    ).events[0]!;
    expect(broken.type).toBe('invalid_event');
    expect(JSON.parse(broken.detail)).not.toHaveProperty('raw_is_text');
    expect(nestingDepth(broken.detail, { start: 0, end: broken.detail.length })).toBe(MAX_DETAIL_DEPTH);
  });
});

describe('a type the bus would refuse as detail-type', () => {
  it.each([
    ['longer than 128 characters', 'x'.repeat(MAX_DETAIL_TYPE_LENGTH + 1), /is 129 characters long/],
    ['with a control character', 'card\u0007status', /control character/],
    ['with a lone surrogate', 'card\ud800', /lone surrogate/],
  ])('%s is quarantined, naming the field and the reason', (_label, type, reason) => {
    const { events } = page(eventText(1), eventText(2, { type }), eventText(3));

    expect(events.map((event) => event.type)).toEqual(['transaction', 'invalid_event', 'transaction']);
    const error = (
      JSON.parse(events[1]!.detail) as { error: { code: string; field: string; message: string } }
    ).error;
    expect(error).toMatchObject({ code: 'EVENT_UNPUBLISHABLE', field: 'data[1].type' });
    expect(error.message).toMatch(reason);
  });

  it('accepts a type of exactly 128 characters', () => {
    const type = 'y'.repeat(MAX_DETAIL_TYPE_LENGTH);
    expect(page(eventText(1, { type })).events[0]!.type).toBe(type);
  });
});

describe('eventFailure', () => {
  it('names a RangeError of one event for what it is, never a network failure', () => {
    const failure = eventFailure(new RangeError('Maximum call stack size exceeded'), origin, 'data[4]');

    expect(failure).toMatchObject({
      code: 'EVENT_UNPROCESSABLE',
      context: { field: 'data[4]', errorName: 'RangeError' },
    });
    expect(failure.message).toBe(
      'GET /events (HTTP 200): data[4] could not be processed: RangeError: Maximum call stack size exceeded',
    );
  });

  it('passes validation and bus refusals through, and rethrows what is not about one event', () => {
    const refusal = new EventUnpublishableError('x');
    expect(eventFailure(refusal, origin, 'data[0]')).toBe(refusal);
    expect(() => eventFailure(new Error('Internal error'), origin, 'data[0]')).toThrow('Internal error');
  });

  it('is what normalizeEvent throws for a too-deep event read on its own (a lookup)', () => {
    const text = eventText(9, { dataText: nested('[', ']', 100_000) });
    const act = () =>
      normalizeEvent(
        { value: JSON.parse(text), text, span: { start: 0, end: text.length } },
        origin,
        CLASSIC_BUS_ENTRY_RULES,
      );
    expect(act).toThrow(EventUnpublishableError);
  });
});

describe('one id at two sequence numbers', () => {
  it('keeps both (two positions of the feed) and drops only the same event sent twice', () => {
    const first = makeEvent(5, { id: 'shared' });
    const second = makeEvent(6, { id: 'shared' });

    const fresh = selectNewEvents([first, second, { ...second }, makeEvent(7)], 4);

    expect(fresh.map((event) => [event.id, event.sequence_number])).toEqual([
      ['shared', 5],
      ['shared', 6],
      [fresh[2]!.id, 7],
    ]);
  });
});

describe('the rules the edge states for its bus', () => {
  /** Rules no bus has: 4 levels, and one type refused; any length of type accepted. */
  const RULES: BusEntryRules = {
    busName: 'Test Bus',
    maxDetailDepth: 4,
    detailTypeProblem: (type) => (type === 'forbidden' ? 'is refused by the test bus' : undefined),
  };

  function pageUnder(rules: BusEntryRules, ...events: string[]) {
    const text = `{"data":[${events.join(',')}],"last_sequence_number":null}`;
    return parsePollResponse({ text, value: JSON.parse(text) as unknown }, origin, rules).events;
  }

  it('are what the core refuses by, worded with the name it is given', () => {
    // The event's object is level 1, data level 2, each array one more.
    const events = pageUnder(
      RULES,
      eventText(1, { dataText: '{"deep":[[]]}' }),
      eventText(2, { dataText: '{"deep":[[[]]]}' }),
      eventText(3, { type: 'forbidden' }),
      eventText(4, { type: 'z'.repeat(MAX_DETAIL_TYPE_LENGTH + 1) }),
    );

    expect(events.map((event) => event.type)).toEqual([
      'transaction',
      'invalid_event',
      'invalid_event',
      'z'.repeat(MAX_DETAIL_TYPE_LENGTH + 1),
    ]);
    const errors = events.slice(1, 3).map((event) => (JSON.parse(event.detail) as { error: unknown }).error);
    expect(errors).toEqual([
      {
        code: 'EVENT_UNPUBLISHABLE',
        field: 'data[1]',
        message:
          'GET /events (HTTP 200): data[1] nests arrays and objects 5 levels deep; Test Bus processes at most 4',
      },
      {
        code: 'EVENT_UNPUBLISHABLE',
        field: 'data[2].type',
        message: 'GET /events (HTTP 200): data[2].type is refused by the test bus',
      },
    ]);
  });

  it('decide whether a quarantined event goes as JSON or as text', () => {
    // Depth 3 as received: within `raw` it is 4, which the rules allow; depth 4 would be 5.
    const [asJson] = pageUnder(RULES, eventText(1, { dataText: '{"deep":[]}', type: 'forbidden' }));
    const [asText] = pageUnder(RULES, eventText(1, { dataText: '{"deep":[[]]}', type: 'forbidden' }));

    expect(JSON.parse(asJson!.detail)).not.toHaveProperty('raw_is_text');
    expect(JSON.parse(asText!.detail)).toMatchObject({ raw_is_text: true });
  });

  it('are the same for both kinds of bus, none other being documented for the Custom Event Bus', () => {
    expect(CUSTOM_BUS_ENTRY_RULES).toBe(CLASSIC_BUS_ENTRY_RULES);
    expect(CLASSIC_BUS_ENTRY_RULES.busName).toBe('EventBridge PutEvents');
  });
});
