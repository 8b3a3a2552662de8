import { describe, expect, it } from 'vitest';
import { compareBySequence, parseEvent } from '../../../functions/subscriber/index.ts';
import { deliveredText, published, rawEvent } from '../../support/published-events.ts';

describe('compareBySequence', () => {
  it('orders a batch by program, then sequence number; a quarantined event by its position', () => {
    const events = published([
      rawEvent(9, 'transaction', {}),
      { ...rawEvent(8, 'transaction', {}), program_id: '0-program' },
      rawEvent(3, 'account_status', {}),
      { ...rawEvent(7, 'transaction', {}), created_dt: 'soon' },
    ]).map((event) => parseEvent(deliveredText(event)));

    const ordered = [...events]
      .sort(compareBySequence)
      .map((event) => `${event.kind}@${event.detail.sequence_number}`);

    expect(ordered).toEqual(['transaction@8', 'account_status@3', 'invalid_event@7', 'transaction@9']);
  });
});
