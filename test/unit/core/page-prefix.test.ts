import { describe, expect, it } from 'vitest';
import { CLASSIC_BUS_ENTRY_RULES } from '../../../functions/adapters/aws/eventbridge-entry-rules.ts';
import { PageUnreadableError } from '../../../functions/core/errors.ts';
import { parsePollResponse } from '../../../functions/core/event-model.ts';
import { parsePagePrefix } from '../../../functions/core/page-prefix.ts';

const origin = { source: 'GET /events', status: 200, receivedAt: Date.parse('2026-11-26T10:00:00Z') };

/** Data that holds what a scan must not take for structure: brackets, commas and quotes in strings. */
function eventText(
  sequence: number,
  dataText = `{"note":"a ] b } c , d \\" e [ {","amount":${sequence}}`,
): string {
  return `{"id":"evt-${sequence}","program_id":"p-1","sequence_number":${sequence},"created_dt":"2026-11-26T09:00:00Z","type":"TRANSACTION","data":${dataText}}`;
}

const PAGE = `{"limit":3,\r\n "data": [ ${eventText(1)} ,\n${eventText(2)},${eventText(3)} ] ,"last_sequence_number":3}`;

/** The sequence numbers of the events of `text` cut after `length` characters; the error's code if refused. */
function read(text: string, length: number): number[] | string {
  try {
    return parsePagePrefix(text.slice(0, length), origin, length, CLASSIC_BUS_ENTRY_RULES).events.map(
      (event) => event.sequence_number,
    );
  } catch (error) {
    return (error as { code: string }).code;
  }
}

describe('parsePagePrefix', () => {
  it('reads, at every cut, exactly the events that end before it, published as a whole read would publish them', () => {
    const whole = parsePollResponse(
      { text: PAGE, value: JSON.parse(PAGE) },
      origin,
      CLASSIC_BUS_ENTRY_RULES,
    ).events;
    const ends = [1, 2, 3].map((n) => PAGE.indexOf(eventText(n)) + eventText(n).length);

    for (let length = 1; length <= PAGE.length; length += 1) {
      // An event is complete once the "," or "]" after it was read.
      const complete = ends.filter((end) => PAGE.slice(end, length).trim().length > 0).length;
      if (complete === 0) {
        expect(read(PAGE, length), `cut at ${length}`).toBe('PAGE_TOO_LARGE');
        continue;
      }
      const page = parsePagePrefix(PAGE.slice(0, length), origin, length, CLASSIC_BUS_ENTRY_RULES);
      expect(page.events, `cut at ${length}`).toEqual(whole.slice(0, complete));
      expect(page.cut).toEqual({ bytesRead: length });
    }
  });

  it('reads a page whose data array is complete before the cut (the envelope after it is not needed)', () => {
    const text = `{"data":[${eventText(1)}],"last_sequence_number":1,"limit":100}`;

    expect(read(text, text.indexOf('"limit"') + 3)).toEqual([1]);
  });

  it('reads the last "data" of the page, as JSON.parse of the whole page would', () => {
    const text = `{"data":[${eventText(7)}],"data":[${eventText(1)},${eventText(2)},`;

    expect(read(text, text.length)).toEqual([1, 2]);
  });

  it('quarantines an event that is not JSON among complete ones, as a page read whole does', () => {
    const broken = eventText(2, '{"amount":NaN}');
    const text = `{"data":[${eventText(1)},${broken},${eventText(3)},${eventText(4)}`;

    const page = parsePagePrefix(text, origin, text.length, CLASSIC_BUS_ENTRY_RULES);

    expect(page.events.map((event) => [event.sequence_number, event.type])).toEqual([
      [-1, 'invalid_event'],
      [1, 'transaction'],
      [3, 'transaction'],
    ]);
  });

  it.each([
    ['not an object', '<html>maintenance, please come back later</html>'],
    ['members not separated', `{"limit":3 "data":[${eventText(1)},`],
    ['events not separated', `{"data":[${eventText(1)} ${eventText(2)},`],
  ])('refuses what is not the start of a page (%s) as unreadable', (_label, text) => {
    expect(() => parsePagePrefix(text, origin, text.length, CLASSIC_BUS_ENTRY_RULES)).toThrow(
      PageUnreadableError,
    );
  });

  it.each([2, 3])(
    'reads no event of a cut page an unclosed string misleads the scan of (%i events after it)',
    (after) => {
      // Read whole, this page is unreadable. Cut, its first event seems to go on past the cut (too
      // large), or what follows it is no separator (unreadable), as the quotes fall.
      const rest = Array.from({ length: after }, (_, index) => eventText(index + 2)).join(',');
      const text = `{"data":[${eventText(1, '{"note":"open}')},${rest},`;

      expect(read(text, text.length)).toMatch(/^(PAGE_TOO_LARGE|PAGE_UNREADABLE)$/);
    },
  );

  it('refuses a page cut before its data began, naming the bytes read', () => {
    const text = `{"last_sequence_number":3,"limit":100,"da`;

    expect(() => parsePagePrefix(text, origin, 4096, CLASSIC_BUS_ENTRY_RULES)).toThrow(
      expect.objectContaining({
        code: 'PAGE_TOO_LARGE',
        context: expect.objectContaining({ bytesRead: 4096 }),
      }),
    );
  });
});
