import { describe, expect, it } from 'vitest';
import { CLASSIC_BUS_ENTRY_RULES } from '../../../functions/adapters/aws/eventbridge-entry-rules.ts';
import { parsePollResponse } from '../../../functions/core/event-model.ts';
import { recoverPage } from '../../../functions/core/page-recovery.ts';

const origin = { source: 'GET /events', status: 200, receivedAt: Date.parse('2026-11-26T10:00:00Z') };

function eventText(sequence: number, dataText = `{"amount":${sequence}}`): string {
  return `{"id":"evt-${sequence}","program_id":"p-1","sequence_number":${sequence},"created_dt":"2026-11-26T09:00:00Z","type":"TRANSACTION","data":${dataText}}`;
}

describe('recoverPage', () => {
  it.each([
    ['a NaN', eventText(2, '{"amount":NaN}')],
    ['a trailing comma', eventText(2, '{"amount":1,}')],
    ['a bare word', eventText(2, '{"status":OPEN}')],
  ])('sets aside an event holding %s and reads the rest of the page', (_label, broken) => {
    const text = `{"data":[${eventText(1)}, ${broken},${eventText(3)}],"last_sequence_number":3}`;
    expect(() => JSON.parse(text)).toThrow();

    const recovered = recoverPage(text);

    expect(recovered?.unreadableEvents).toEqual(new Map([[1, broken]]));
    const page = parsePollResponse(recovered!, origin, CLASSIC_BUS_ENTRY_RULES);
    expect(page.lastSequenceNumber).toBe(3);
    // The unreadable event has no number the poller could read: it comes first, placed later.
    expect(page.events.map((event) => [event.sequence_number, event.type])).toEqual([
      [-1, 'invalid_event'],
      [1, 'transaction'],
      [3, 'transaction'],
    ]);
    expect(JSON.parse(page.events[0]!.detail)).toMatchObject({
      id: null,
      sequence_number: null,
      raw_is_text: true,
      raw: broken,
      error: {
        code: 'PAYLOAD_INVALID',
        field: 'data[1]',
        message: 'GET /events (HTTP 200): data[1] is not JSON',
      },
    });
  });

  it.each([
    ['a page cut in half', `{"data":[${eventText(1)},${eventText(2)}`.slice(0, 200)],
    ['an unclosed string in an event', `{"data":[${eventText(1, '{"note":"open}')},${eventText(2)}]}`],
    ['a broken envelope', `{"data":[${eventText(1)}],"last_sequence_number":}`],
    ['no data array', '{"data":{"a":NaN}}'],
    ['not an object', '<html>maintenance</html>'],
    ['nothing broken in data (the fault is elsewhere)', `{"data":[${eventText(1)}],}`],
  ])('gives up on %s: it cannot be parsed at all', (_label, text) => {
    expect(recoverPage(text)).toBeUndefined();
  });
});
