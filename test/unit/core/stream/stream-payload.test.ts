import { describe, expect, it } from 'vitest';
import { CLASSIC_BUS_ENTRY_RULES } from '../../../../functions/adapters/aws/eventbridge-entry-rules.ts';
import { parsePollResponse } from '../../../../functions/core/event-model.ts';
import type { StreamMessage } from '../../../../functions/core/ports.ts';
import { parseStreamMessage } from '../../../../functions/core/stream/stream-payload.ts';
import { EventGenerator } from '../../../../functions/simulator/event-generator.ts';
import { type RawEvent, setDataText, wireText } from '../../../../functions/simulator/raw-event.ts';
import { createRandom } from '../../../../functions/simulator/seeded-random.ts';
import { streamEventText } from '../../../../functions/simulator/sse.ts';

const ORIGIN = { source: 'GET /events/stream', status: 200 };

/** Seeded events of every kind the simulator makes, unknown types included. */
function generatedEvents(count: number): RawEvent[] {
  const generator = new EventGenerator({ random: createRandom(9), unknownTypeRatio: 0.2, now: () => 0 });
  return Array.from({ length: count }, (_, index) => {
    const draft = generator.next();
    // The field order of the service's answers.
    return {
      id: draft.id,
      program_id: 'program-1',
      sequence_number: index + 1,
      created_dt: draft.created_dt,
      type: draft.type,
      data: draft.data,
    };
  });
}

/** The detail a poll of the same event gives. */
function pollDetail(event: RawEvent): string {
  const text = `{"data":[${wireText(event)}],"last_sequence_number":${event.sequence_number},"limit":100}`;
  return parsePollResponse(
    { text, value: JSON.parse(text) },
    { source: 'GET /events' },
    CLASSIC_BUS_ENTRY_RULES,
  ).events[0]!.detail;
}

function eventsOf(message: StreamMessage) {
  if (message.kind !== 'events') throw new Error(`expected events, got ${JSON.stringify(message)}`);
  return message.events;
}

describe('parseStreamMessage', () => {
  const events = generatedEvents(300);

  it('gives the poll Detail for every event it does not mark for recovery (documented shape)', () => {
    const message = parseStreamMessage(
      {
        id: String(events.length),
        data: `[${events.map((event) => streamEventText(event, 'documented')).join(',')}]`,
      },
      ORIGIN,
      CLASSIC_BUS_ENTRY_RULES,
    );

    const streamed = eventsOf(message);
    expect(message).toMatchObject({ kind: 'events', lastEventId: events.length });
    expect(streamed.map(({ event }) => event.sequence_number)).toEqual(events.map((e) => e.sequence_number));
    streamed.forEach(({ event, needsRecovery }, index) => {
      const original = events[index]!;
      // A transaction's own data.type was replaced by the event type: it must be fetched.
      const shadowed = Object.hasOwn(original.data, 'type') || original.type !== 'ACCOUNT_STATUS';
      expect(needsRecovery).toBe(shadowed);
      if (!needsRecovery) expect(event.detail).toBe(pollDetail(original));
    });
    expect(streamed.some(({ needsRecovery }) => !needsRecovery)).toBe(true);
    expect(streamed.some(({ needsRecovery }) => needsRecovery)).toBe(true);
  });

  it('needs no recovery where the stream kept data.type, and gives the poll Detail for all', () => {
    const message = parseStreamMessage(
      { id: '300', data: `[${events.map((event) => streamEventText(event, 'type-preserved')).join(',')}]` },
      ORIGIN,
      CLASSIC_BUS_ENTRY_RULES,
    );

    const streamed = eventsOf(message);
    const recovered = streamed.filter(({ needsRecovery }) => needsRecovery).map(({ event }) => event.type);
    // Only types whose data has no type of its own can still be ambiguous: their injected type equals the event type.
    expect(recovered.every((type) => type !== 'transaction' && type !== 'account_status')).toBe(true);
    streamed.forEach(({ event, needsRecovery }, index) => {
      if (!needsRecovery) expect(event.detail).toBe(pollDetail(events[index]!));
    });
  });

  it('keeps every token of an account_status data as sent when it drops the injected type', () => {
    const event: RawEvent = {
      id: 'evt-1',
      program_id: 'program-1',
      sequence_number: 12,
      created_dt: '2026-11-22T00:00:00.000+00:00',
      type: 'ACCOUNT_STATUS',
      data: {},
    };
    setDataText(event, '{ "account_id" : "acc-1", "limit": 9223372036854775807, "ratio": 1.50 }');

    const [streamed] = eventsOf(
      parseStreamMessage(
        { id: '12', data: `[${streamEventText(event, 'documented')}]` },
        ORIGIN,
        CLASSIC_BUS_ENTRY_RULES,
      ),
    );

    expect(streamed!.needsRecovery).toBe(false);
    expect(streamed!.event.detail).toBe(
      '{"id":"evt-1","program_id":"program-1","sequence_number":12,"created_dt":"2026-11-22T00:00:00.000+00:00",' +
        '"type":"account_status","data":{"account_id":"acc-1","limit":9223372036854775807,"ratio":1.50}}',
    );
    expect(streamed!.event.data).not.toHaveProperty('type');
  });

  it('reads a single event sent without an array, and sorts a message by sequence number', () => {
    const [a, b] = events;
    const single = eventsOf(
      parseStreamMessage({ data: streamEventText(a!, 'type-preserved') }, ORIGIN, CLASSIC_BUS_ENTRY_RULES),
    );
    const swapped = eventsOf(
      parseStreamMessage(
        {
          id: '2',
          data: `[${streamEventText(b!, 'type-preserved')},${streamEventText(a!, 'type-preserved')}]`,
        },
        ORIGIN,
        CLASSIC_BUS_ENTRY_RULES,
      ),
    );

    expect(single.map(({ event }) => event.id)).toEqual([a!.id]);
    expect(swapped.map(({ event }) => event.sequence_number)).toEqual([1, 2]);
  });

  it.each([
    ['not JSON', { id: '5', data: '[{"id":' }, /not JSON/],
    ['a number', { id: '5', data: '42' }, /neither an array of events nor an event/],
    [
      'an invalid event',
      { id: '5', data: '[{"id":"x"}]' },
      /data\[0\]\.program_id must be a non-empty string/,
    ],
    [
      'an event nested 100,000 arrays deep (read again by a poll, which quarantines it)',
      { id: '5', data: `[{"id":"x","data":${'['.repeat(100_000)}${']'.repeat(100_000)}}]` },
      /data\[0\] nests arrays and objects 100001 levels deep/,
    ],
    [
      'an event whose type is too long for a detail-type',
      {
        id: '5',
        data: `[{"id":"x","program_id":"p","sequence_number":"5","created_dt":"2026-11-26T09:00:00Z","type":"${'t'.repeat(129)}","data":{}}]`,
      },
      /data\[0\]\.type is 129 characters long/,
    ],
  ])('calls a message that is %s unreadable, keeping its id', (_name, message, reason) => {
    const parsed = parseStreamMessage(message, ORIGIN, CLASSIC_BUS_ENTRY_RULES);

    expect(parsed).toMatchObject({ kind: 'unreadable', lastEventId: 5 });
    expect(parsed.kind === 'unreadable' && parsed.reason).toMatch(reason);
  });

  it.each([undefined, '', 'abc', '-1', '1.5', '99999999999999999999'])('reads id %j as no id', (id) => {
    expect(parseStreamMessage({ id, data: '[]' }, ORIGIN, CLASSIC_BUS_ENTRY_RULES)).toEqual({
      kind: 'events',
      lastEventId: null,
      events: [],
    });
  });
});
