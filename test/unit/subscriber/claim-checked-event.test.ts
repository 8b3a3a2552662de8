import { describe, expect, it } from 'vitest';
import { claimCheckedEvent } from '../../../functions/subscriber/claim-check-resolver.ts';
import {
  type ClaimCheckedEvent,
  ClaimCheckMismatchError,
  EventValidationError,
  parseEvent,
} from '../../../functions/subscriber/index.ts';
import { deliveredText, pointerOf, published, rawEvent } from '../../support/published-events.ts';

const [transaction, other] = published([
  rawEvent(1, 'transaction', { transaction_id: 'tx-1', amount: 990, note: 'é'.repeat(40) }),
  rawEvent(2, 'transaction', { transaction_id: 'tx-2', amount: 10 }),
]);
const [quarantined] = published([{ ...rawEvent(3, 'account_status', {}), created_dt: 'soon' }]);

function pointer(event = transaction!): ClaimCheckedEvent {
  const received = parseEvent(deliveredText(pointerOf(event)));
  if (received.kind !== 'claim_check') throw new Error('expected a pointer');
  return received;
}

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('claimCheckedEvent: the body stored for a pointer', () => {
  it('becomes the full event when it is exactly the bytes the pointer names', () => {
    const event = claimCheckedEvent(pointer(), bytes(transaction!.detail));

    expect(event).toMatchObject({
      kind: 'transaction',
      detail: { id: 'evt-1', data: { transaction_id: 'tx-1', note: 'é'.repeat(40) } },
      claimCheck: { bucket: 'claim-checks', key: expect.stringContaining('1-evt-1.json') },
    });
  });

  it('becomes a quarantined event for the pointer of an invalid_event', () => {
    const event = claimCheckedEvent(pointer(quarantined!), bytes(quarantined!.detail));

    expect(event).toMatchObject({
      kind: 'invalid_event',
      detail: { error: { field: 'data[0].created_dt' } },
    });
  });

  it('is refused when one byte changed (same size, another SHA-256)', () => {
    const tampered = transaction!.detail.replace('"amount":990', '"amount":999');

    expect(() => claimCheckedEvent(pointer(), bytes(tampered))).toThrow(ClaimCheckMismatchError);
    expect(() => claimCheckedEvent(pointer(), bytes(tampered))).toThrow(
      /is not the body its pointer names: \d+ bytes with SHA-256 [0-9a-f]{64}, expected/,
    );
  });

  it('is refused when it is the same text in another encoding of é (size differs)', () => {
    const escaped = transaction!.detail.replaceAll('é', '\\u00e9');

    expect(() => claimCheckedEvent(pointer(), bytes(escaped))).toThrow(ClaimCheckMismatchError);
  });

  it("is refused when it is another event's body, even with a matching hash in its pointer", () => {
    // A pointer whose claim_check describes the other event's body: the identity check catches it.
    const forged = pointer();
    const otherPointer = pointer(other!);
    const swapped: ClaimCheckedEvent = {
      ...forged,
      detail: { ...forged.detail, claim_check: otherPointer.detail.claim_check },
    };

    expect(() => claimCheckedEvent(swapped, bytes(other!.detail))).toThrow(
      /holds another event: detail.id is "evt-2", the pointer says "evt-1"/,
    );
  });

  it('is refused, naming the field, when the stored detail fails the schema', () => {
    const text = transaction!.detail.replace('"amount":990', '"amount":"990"');
    const base = pointer();
    const matching = parseEvent(
      deliveredText({ ...pointerOf({ ...transaction!, detail: text }) }),
    ) as ClaimCheckedEvent;

    expect(base.detail.claim_check.sha256).not.toBe(matching.detail.claim_check.sha256);
    expect(() => claimCheckedEvent(matching, bytes(text))).toThrow(EventValidationError);
    expect(() => claimCheckedEvent(matching, bytes(text))).toThrow(/detail.data.amount must be a number/);
  });
});
