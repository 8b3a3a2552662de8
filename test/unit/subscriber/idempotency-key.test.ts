import { describe, expect, it } from 'vitest';
import { idempotencyKey, parseEvent } from '../../../functions/subscriber/index.ts';
import { deliveredText, pointerOf, published, rawEvent } from '../../support/published-events.ts';

describe('idempotencyKey', () => {
  const [first, again] = published([rawEvent(5, 'transaction', { amount: 1 })]).flatMap((event) => [
    event,
    event,
  ]);
  const [broken] = published([{ ...rawEvent(6, 'transaction', {}), id: 'evt-5', created_dt: 'soon' }]);

  it('is the bank event id: every copy of an event, and its claim-check pointer, share it', () => {
    const key = idempotencyKey(parseEvent(deliveredText(first!)));

    expect(key).toBe('event:evt-5');
    expect(idempotencyKey(parseEvent(deliveredText(again!)))).toBe(key);
    expect(idempotencyKey(parseEvent(deliveredText(pointerOf(first!))))).toBe(key);
  });

  it("is the fingerprint for a quarantined event and its pointer, never the valid event's id it carries", () => {
    const event = parseEvent(deliveredText(broken!));
    const key = idempotencyKey(event);

    expect(event.kind === 'invalid_event' && event.detail.id).toBe('evt-5');
    expect(key).toMatch(/^invalid_event:[0-9a-f]{64}$/);
    expect(idempotencyKey(parseEvent(deliveredText(pointerOf(broken!))))).toBe(key);
  });
});
