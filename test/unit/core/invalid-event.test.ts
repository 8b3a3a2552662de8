import { describe, expect, it } from 'vitest';
import { CLASSIC_BUS_ENTRY_RULES } from '../../../functions/adapters/aws/eventbridge-entry-rules.ts';
import { parsePollResponse, selectLateEvents, selectNewEvents } from '../../../functions/core/event-model.ts';
import { INVALID_EVENT_TYPE } from '../../../functions/core/invalid-event.ts';

const origin = { source: 'GET /events', status: 200, receivedAt: Date.parse('2026-11-23T10:00:00.000Z') };

/** A poll answer as text, so the raw payload can be checked token for token. */
function page(eventsText: readonly string[], tail = '') {
  const text = `{"data":[${eventsText.join(',')}]${tail}}`;
  return parsePollResponse({ text, value: JSON.parse(text) }, origin, CLASSIC_BUS_ENTRY_RULES);
}

function event(sequence: number | string | null, overrides: Record<string, string> = {}): string {
  const fields: Record<string, string> = {
    id: `"e-${sequence}"`,
    program_id: '"p-1"',
    sequence_number: sequence === null ? '' : JSON.stringify(sequence),
    created_dt: '"2026-11-22T01:02:03.456+00:00"',
    type: '"TRANSACTION"',
    data: '{"amount":12.50}',
    ...overrides,
  };
  const members = Object.entries(fields)
    .filter(([, value]) => value !== '')
    .map(([key, value]) => `"${key}":${value}`);
  return `{${members.join(',')}}`;
}

describe('a bad event inside a well-formed answer', () => {
  it.each([
    ['missing id', event(7, { id: '' }), 'data[1].id', 7],
    ['missing type', event(7, { type: '' }), 'data[1].type', 7],
    ['type of the wrong type', event(7, { type: '42' }), 'data[1].type', 7],
    ['data not an object', event(7, { data: '"text"' }), 'data[1].data', 7],
    ['sequence_number of the wrong type', event('seven'), 'data[1].sequence_number', null],
    ['missing sequence_number', event(null), 'data[1].sequence_number', null],
  ])('%s: becomes an invalid_event carrying the raw text and the error', (_, bad, field, own) => {
    const { events } = page([event(6), bad, event(8)]);

    const quarantined = events.find((e) => e.type === INVALID_EVENT_TYPE)!;
    const detail = JSON.parse(quarantined.detail) as Record<string, unknown>;
    expect(quarantined.invalid).toMatchObject({ field, sequenceNumber: own });
    expect(detail).toMatchObject({
      sequence_number: own,
      received_at: '2026-11-23T10:00:00.000Z',
      error: { code: 'PAYLOAD_INVALID', field, message: expect.stringContaining(field) },
    });
    // The bank's text exactly, decimals and all.
    expect(quarantined.detail).toContain(`"raw":${bad}`);
    expect(events.filter((e) => e.type !== INVALID_EVENT_TYPE).map((e) => e.sequence_number)).toEqual([6, 8]);
  });

  it('sits at its own sequence number when that is usable', () => {
    const { events } = page([event(6), event(7, { id: '' }), event(8)]);

    expect(events.map((e) => [e.sequence_number, e.type])).toEqual([
      [6, 'transaction'],
      [7, INVALID_EVENT_TYPE],
      [8, 'transaction'],
    ]);
  });

  it('without a usable number, sits just after the cursor, whatever the order of the page', () => {
    const { events } = page([event(6), event(null), event(8)]);

    // Never above the bad event's true place: the checkpoint cannot pass 5 until it is accepted.
    expect(selectNewEvents(events, 5).map((e) => [e.sequence_number, e.type])).toEqual([
      [6, INVALID_EVENT_TYPE],
      [6, 'transaction'],
      [8, 'transaction'],
    ]);
    expect(JSON.parse(selectNewEvents(events, 5)[0]!.detail)).toMatchObject({
      sequence_number: null,
      position: 6,
    });
    expect(selectNewEvents(events, null)[0]).toMatchObject({ sequence_number: 0, type: INVALID_EVENT_TYPE });
  });

  it('is never taken for an event at or below the cursor, even alone in its answer', () => {
    const { events } = page([event(null)]);

    expect(selectNewEvents(events, 40).map((e) => e.sequence_number)).toEqual([41]);
    expect(selectLateEvents(events, 40)).toEqual([]);
  });

  it('quarantines an element that is not an object at all', () => {
    const events = selectNewEvents(page([event(6), 'null', '17']).events, 5);

    expect(events.map((e) => e.type)).toEqual([INVALID_EVENT_TYPE, INVALID_EVENT_TYPE, 'transaction']);
    expect(events[0]!.detail).toContain('"raw":null');
    expect(events[1]!.detail).toContain('"raw":17');
  });

  it('has an id of its own derived from its text, so a broken copy never displaces the valid event', () => {
    const { events } = page([event(6), event(7, { type: '1' }), event(7, { type: '1' })]);
    const [first, second] = events.filter((e) => e.type === INVALID_EVENT_TYPE);

    expect(first!.id).toMatch(/^invalid-[0-9a-f]{32}$/);
    expect(first!.id).toBe(second!.id);
    expect(JSON.parse(first!.detail)).toMatchObject({ id: 'e-7', program_id: 'p-1' });
  });

  it("uses the event's created_dt when it is a time, else the time the answer arrived", () => {
    const { events } = page([event(6, { type: '1' }), event(7, { type: '1', created_dt: '"soon"' })]);

    expect(events.map((e) => e.created_dt)).toEqual([
      '2026-11-22T01:02:03.456+00:00',
      '2026-11-23T10:00:00.000Z',
    ]);
  });
});
