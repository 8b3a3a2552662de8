/**
 * What the kit hands a subscriber: the event as a discriminated union on `kind`, its detail typed
 * by the types generated from the event JSON Schema, and the EventBridge envelope it came in.
 * A type the interface does not document (yet) is `kind: 'unknown'`, never an error: the list of
 * types grows.
 */
import type {
  AccountStatusDetail,
  ClaimCheck,
  ClaimCheckPointerDetail,
  EventEnvelope,
  InvalidEventDetail,
  TransactionDetail,
  UnknownEventDetail,
} from '../event-schema/event-types.generated.ts';
import type { BusDelivery } from './bus-delivery.ts';

/**
 * One event. Delivered by a Custom Event Bus subscriber `WITH_METADATA`, it also carries the
 * bus's metadata (`BusDelivery`: `busEventGroup`, `busSequenceNumber`, `busEventId`,
 * `busDeliveryType`); delivered `RAW` or by a classic bus, none of them.
 */
interface EventOf<Kind extends string, DetailType extends string, Detail> extends BusDelivery {
  /** What the event is; switch on it. */
  readonly kind: Kind;
  /** The EventBridge detail-type, lower case. */
  readonly detailType: DetailType;
  readonly detail: Detail;
  /** The EventBridge event around it, as received (its `detail` untyped). */
  readonly envelope: EventEnvelope;
  /** Where the detail was read from when the event arrived as a claim-check pointer. */
  readonly claimCheck?: ClaimCheck;
}

export type AccountStatusEvent = EventOf<'account_status', 'account_status', AccountStatusDetail>;
export type TransactionEvent = EventOf<'transaction', 'transaction', TransactionDetail>;
/** An event of the feed that failed the poller's validation, quarantined: its `detail.raw` is the bank's text. */
export type InvalidEvent = EventOf<'invalid_event', 'invalid_event', InvalidEventDetail>;
/** An event of a type the interface does not document: passed on as it came. */
export type UnknownEvent = EventOf<'unknown', string, UnknownEventDetail>;

/** A complete event: what a subscriber's handler receives. */
export type SubscriberEvent = AccountStatusEvent | TransactionEvent | InvalidEvent | UnknownEvent;

/** A pointer event, published in place of an event too large for the bus; resolve it for the event itself. */
export type ClaimCheckedEvent = EventOf<'claim_check', string, ClaimCheckPointerDetail>;

/** What `parseEvent` returns: a complete event, or a pointer still to resolve. */
export type ReceivedEvent = SubscriberEvent | ClaimCheckedEvent;
