/**
 * What `tail` prints for a delivered message: a classic bus's event as it came, a Custom Event Bus
 * subscriber's `WITH_METADATA` payload as its event plus the bus's group and sequence number, and
 * a body it cannot read as it came rather than an error that would end the tail.
 */
import { describe, expect, it } from 'vitest';
import { readDelivered, renderBusEvent } from '../../../functions/cli/bus-event-view.ts';
import type { Terminal } from '../../../functions/cli/terminal.ts';

function terminal(stdoutIsTerminal: boolean): Terminal {
  return {
    interactive: stdoutIsTerminal,
    stdoutIsTerminal,
    stdinIsTerminal: false,
    color: false,
    out: () => {},
    err: () => {},
  };
}

const ENVELOPE = {
  version: '0',
  id: 'bus-id-1',
  'detail-type': 'transaction',
  source: 'banking.events',
  time: '2026-11-26T10:00:00Z',
  detail: { id: 'evt-7', sequence_number: 7, type: 'transaction', data: { amount: 1659 } },
};
const WITH_METADATA = {
  Data: ENVELOPE,
  Metadata: {},
  SystemMetadata: {
    'aws:EventId': 'e-1',
    'aws:SequenceNumber': '18446744073709551615',
    'aws:DeliveryType': 'LIVE',
    EventGroupId: 'program-1',
  },
};

describe('tail reading a delivered message', () => {
  it('shows a classic event as it came, with no bus member', () => {
    const delivered = readDelivered(JSON.stringify(ENVELOPE));

    expect(JSON.parse(renderBusEvent(delivered, terminal(false)))).toEqual(ENVELOPE);
  });

  it('shows a WITH_METADATA delivery as its event, with the group and the bus sequence number beside it', () => {
    const delivered = readDelivered(JSON.stringify(WITH_METADATA));

    expect(JSON.parse(renderBusEvent(delivered, terminal(false)))).toEqual({
      ...ENVELOPE,
      bus: {
        eventGroup: 'program-1',
        sequenceNumber: '18446744073709551615',
        eventId: 'e-1',
        deliveryType: 'LIVE',
      },
    });
    expect(renderBusEvent(delivered, terminal(true))).toBe(
      '2026-11-26T10:00:00Z transaction #7 evt-7 [group program-1 · bus #18446744073709551615]\n  {"amount":1659}\n',
    );
  });

  it('still shows the event when the bus metadata is malformed, and a body that is not JSON as text', () => {
    const badMetadata = readDelivered(
      JSON.stringify({ ...WITH_METADATA, SystemMetadata: { 'aws:SequenceNumber': 'seven' } }),
    );
    const notJson = readDelivered('not json');

    expect(badMetadata).toEqual({ event: ENVELOPE });
    expect(notJson).toEqual({ event: { detail: 'not json' } });
  });
});
