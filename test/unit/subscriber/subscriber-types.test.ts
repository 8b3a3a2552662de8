/**
 * The kit's types as a consumer's code meets them. `npm run typecheck` compiles this file: each
 * `@ts-expect-error` must meet an error (an unused one fails the compile), and `expectTypeOf`
 * pins a type exactly. At run time it checks that typed fixtures pass the parser, so the types
 * and the schema the parser validates against agree in both directions.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type AccountStatus,
  type ClaimCheckPointerDetail,
  type InvalidEventDetail,
  parseEvent,
  type SubscriberEvent,
  type TransactionDetail,
  type TransactionStatus,
  type TransactionType,
  type UnknownEventDetail,
} from '../../../functions/subscriber/index.ts';

const detail: TransactionDetail = {
  id: 'evt-1',
  program_id: 'program-1',
  sequence_number: 1,
  created_dt: '2026-11-23T10:00:00.000+00:00',
  type: 'transaction',
  data: { transaction_id: 'tx-1', amount: 1250, type: 'card', status: 'PENDING', merchant: 'Shell' },
};

const envelope = {
  version: '0',
  id: 'eb-1',
  'detail-type': 'transaction',
  source: 'banking.events',
  account: '123456789012',
  time: '2026-11-23T10:00:00Z',
  region: 'eu-west-1',
  resources: [],
};

/** What a subscriber writes: a switch that narrows the detail by kind. */
function describeEvent(event: SubscriberEvent): string {
  switch (event.kind) {
    case 'transaction':
      expectTypeOf(event.detail).toEqualTypeOf<TransactionDetail>();
      expectTypeOf(event.detail.data.amount).toEqualTypeOf<number | undefined>();
      expectTypeOf(event.detail.data.status).toEqualTypeOf<TransactionStatus | undefined>();
      return `${event.detail.data.type ?? 'unknown'} ${event.detail.data.amount ?? 0}`;
    case 'account_status':
      expectTypeOf(event.detail.data.status).toEqualTypeOf<AccountStatus | undefined>();
      // @ts-expect-error an account_status event has no amount of its own: unknown, not number
      return (event.detail.data.amount satisfies number).toString();
    case 'invalid_event':
      expectTypeOf(event.detail).toEqualTypeOf<InvalidEventDetail>();
      expectTypeOf(event.detail.id).toEqualTypeOf<string | null>();
      return event.detail.error.field;
    case 'unknown':
      expectTypeOf(event.detail).toEqualTypeOf<UnknownEventDetail>();
      expectTypeOf(event.detailType).toEqualTypeOf<string>();
      return event.detailType;
  }
}

describe('subscriber types', () => {
  it('are the schema: a typed transaction detail passes the parser', () => {
    const event = parseEvent({ ...envelope, detail });

    expect(event.kind).toBe('transaction');
    expect(describeEvent(event as SubscriberEvent)).toBe('card 1250');
  });

  it('refuse at compile time what the schema refuses at run time', () => {
    // @ts-expect-error 'LOST' is not a TransactionStatus
    const lost: TransactionStatus = 'LOST';
    const wrongStatus: TransactionDetail = { ...detail, data: { ...detail.data, status: lost } };
    // @ts-expect-error sequence_number is a number in detail, never a string
    const stringSequence: TransactionDetail = { ...detail, sequence_number: '1' };
    // @ts-expect-error a transaction detail's type is 'transaction'
    const otherType: TransactionDetail = { ...detail, type: 'account_status' };
    // @ts-expect-error a pointer must say where the body is
    const noLocation: ClaimCheckPointerDetail = { ...detail };

    expect(noLocation.claim_check).toBeUndefined();
    for (const bad of [wrongStatus, stringSequence, otherType]) {
      expect(() => parseEvent({ ...envelope, detail: bad })).toThrow();
    }
  });

  it('name the known enums, the same values the parser accepts', () => {
    const types: TransactionType[] = ['card', 'fee', 'inbound', 'intra', 'outbound', 'system'];

    for (const type of types) {
      expect(parseEvent({ ...envelope, detail: { ...detail, data: { type } } }).kind).toBe('transaction');
    }
  });
});
