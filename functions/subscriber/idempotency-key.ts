/**
 * The key an event is handled once by. Delivery is at least once (a run cut short publishes its
 * last events again, a rewind or an archive replay publishes a range again, SQS redelivers), and
 * every copy of a banking event carries the bank's `id`: that is the key, for the event and for
 * its claim-check pointer alike. A quarantined event is keyed by its `fingerprint` (SHA-256 of
 * the bank's text) instead: its `id` may be missing, and a broken copy must never take the key of
 * the valid event with the same id.
 *
 * A bank that gives one id to two events (two sequence numbers: the poller publishes both, counts
 * them in `DuplicateEventIds` and logs both numbers) gives them one key: the first delivered is
 * handled, the other is a duplicate. docs/subscribers.md ("Each event handled once") says what to do.
 */
import type { ReceivedEvent } from './subscriber-events.ts';

/** `event:<id>` for a banking event or its pointer; `invalid_event:<fingerprint>` for a quarantined one. */
export function idempotencyKey(event: ReceivedEvent): string {
  if (event.kind === 'invalid_event') return `invalid_event:${event.detail.fingerprint}`;
  if (event.kind === 'claim_check' && event.detailType === 'invalid_event' && event.detail.fingerprint) {
    return `invalid_event:${event.detail.fingerprint}`;
  }
  return `event:${event.detail.id}`;
}
