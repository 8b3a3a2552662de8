/**
 * The event group an event is published in: the program's, an account's, a transaction's, or none.
 */

import { describe, expect, it } from 'vitest';
import { CLASSIC_BUS_ENTRY_RULES } from '../../../functions/adapters/aws/eventbridge-entry-rules.ts';
import { PayloadValidationError } from '../../../functions/core/errors.ts';
import { eventGroupOf } from '../../../functions/core/event-groups.ts';
import { invalidEvent } from '../../../functions/core/invalid-event.ts';
import { makeEvent } from '../../support/in-memory-ports.ts';

const ACCOUNT = '6c1f2a9e-6d0b-4c1e-9a55-0f5d0e3b2a11';
const account = makeEvent(1, { type: 'account_status', data: { account_id: ACCOUNT, status: 'OPEN' } });
const transaction = makeEvent(2, {
  type: 'transaction',
  data: { transaction_id: 'tx-42', status: 'PENDING' },
});

describe('eventGroupOf', () => {
  it("puts every event in the program's group by program", () => {
    expect(eventGroupOf(account, 'program', 'retail')).toBe('retail');
    expect(eventGroupOf(transaction, 'program', 'retail')).toBe('retail');
  });

  it("puts an account's status changes in its account's group, a transaction in its own", () => {
    expect(eventGroupOf(account, 'account', 'retail')).toBe(`account:${ACCOUNT}`);
    expect(eventGroupOf(transaction, 'account', 'retail')).toBe('transaction:tx-42');
  });

  it("puts an event of another type, or without its id, in the program's group", () => {
    const card = makeEvent(3, { type: 'card_issued', data: { account_id: ACCOUNT } });
    const noAccount = makeEvent(4, { type: 'account_status', data: { status: 'OPEN' } });
    const numericAccount = makeEvent(5, { type: 'account_status', data: { account_id: 17 } });
    const blankTransaction = makeEvent(6, { type: 'transaction', data: { transaction_id: '  ' } });

    for (const event of [card, noAccount, numericAccount, blankTransaction]) {
      expect(eventGroupOf(event, 'account', 'retail'), event.type).toBe('retail');
    }
  });

  it("puts a quarantined event in the program's group, whatever its raw data says", () => {
    const raw = { id: 'x', type: 'account_status', data: { account_id: ACCOUNT } };
    const text = JSON.stringify(raw);
    const quarantined = invalidEvent(
      { value: raw, text, span: { start: 0, end: text.length } },
      new PayloadValidationError('GET /events (HTTP 200): data[0].sequence_number is missing', {
        field: 'data[0].sequence_number',
      }),
      {
        sequenceNumber: null,
        receivedAt: Date.parse('2026-11-26T10:00:00Z'),
        rules: CLASSIC_BUS_ENTRY_RULES,
      },
    );

    expect(eventGroupOf(quarantined, 'account', 'retail')).toBe('retail');
  });

  it('names no group with none', () => {
    expect(eventGroupOf(account, 'none', 'retail')).toBeUndefined();
    expect(eventGroupOf(transaction, 'none', 'retail')).toBeUndefined();
  });

  it("names a long id in full: shortening it is the bus's business", () => {
    const longId = 'a'.repeat(200);
    const event = makeEvent(7, { type: 'account_status', data: { account_id: longId } });

    expect(eventGroupOf(event, 'account', 'retail')).toBe(`account:${longId}`);
  });
});
