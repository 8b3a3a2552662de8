/**
 * What EventBridge `PutEvents` refuses in an entry, stated to the core (`BusEntryRules`) so that
 * an event the bus would refuse is quarantined while it is read. `Source` is a setting, checked
 * once with the configuration (`settings.ts`, `eventSource`); size is `put-events-limits.ts`'s.
 *
 * From the PutEvents API reference: `DetailType` is 1 to 128 characters; PutEvents "will only
 * process nested JSON up to 1000 levels deep" (earlier revisions said 1100: the lower is kept).
 * The Custom Event Bus documents no detail-type or depth rules of its own that we could find
 * (its ids have theirs: `eventbridgev2/bus-ids.ts`): the classic bus's are kept for it too.
 */
import type { BusEntryRules } from '../../core/bus-entry-rules.ts';

/** Longest detail-type PutEvents accepts, in characters (counted as UTF-16 units: never fewer). */
export const MAX_DETAIL_TYPE_LENGTH = 128;

/** Deepest nesting of arrays and objects PutEvents processes in a `Detail`, the detail's own object included. */
export const MAX_DETAIL_DEPTH = 1000;

/**
 * Why EventBridge would refuse `detailType`, or `undefined` when it would not: longer than 128
 * characters, or holding a control character or a lone surrogate (which UTF-8 cannot carry; the
 * request would hold a replacement character, not the type that rules match on).
 */
function detailTypeProblem(detailType: string): string | undefined {
  if (detailType.length > MAX_DETAIL_TYPE_LENGTH) {
    return `is ${detailType.length} characters long; an EventBridge detail-type has at most ${MAX_DETAIL_TYPE_LENGTH}`;
  }
  if (/\p{Cc}/u.test(detailType))
    return 'holds a control character, which an EventBridge detail-type must not';
  if (/\p{Cs}/u.test(detailType))
    return 'holds a lone surrogate, which UTF-8 (and so EventBridge) cannot carry';
  return undefined;
}

/** The classic bus's entry rules (`EVENT_BUS_KIND` classic). */
export const CLASSIC_BUS_ENTRY_RULES: BusEntryRules = Object.freeze({
  busName: 'EventBridge PutEvents',
  maxDetailDepth: MAX_DETAIL_DEPTH,
  detailTypeProblem,
});

/** The Custom Event Bus's entry rules (`EVENT_BUS_KIND` custom): the classic bus's, none of its own being documented. */
export const CUSTOM_BUS_ENTRY_RULES: BusEntryRules = CLASSIC_BUS_ENTRY_RULES;
