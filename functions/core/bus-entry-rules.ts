/**
 * What the bus (EventBridge `PutEvents`) refuses in an entry, checked while an event is read so a
 * refused event is quarantined (`invalid-event.ts`) instead of stopping the feed at the bus, run
 * after run. Size is not here: an entry too large goes through the claim check (`claim-check.ts`).
 *
 * From the PutEvents API reference: `DetailType` is 1 to 128 characters; PutEvents "will only
 * process nested JSON up to 1000 levels deep" (earlier revisions said 1100: the lower is kept).
 * `Source` is a setting, checked once with the configuration (`settings.ts`, `eventSource`).
 */

/** Longest detail-type PutEvents accepts, in characters (counted as UTF-16 units: never fewer). */
export const MAX_DETAIL_TYPE_LENGTH = 128;

/** Deepest nesting of arrays and objects PutEvents processes in a `Detail`, the detail's own object included. */
export const MAX_DETAIL_DEPTH = 1000;

/**
 * Why the bus would refuse `detailType`, or `undefined` when it would not: longer than 128
 * characters, or holding a control character or a lone surrogate (which UTF-8 cannot carry; the
 * request would hold a replacement character, not the type that rules match on).
 */
export function detailTypeProblem(detailType: string): string | undefined {
  if (detailType.length > MAX_DETAIL_TYPE_LENGTH) {
    return `is ${detailType.length} characters long; an EventBridge detail-type has at most ${MAX_DETAIL_TYPE_LENGTH}`;
  }
  if (/\p{Cc}/u.test(detailType))
    return 'holds a control character, which an EventBridge detail-type must not';
  if (/\p{Cs}/u.test(detailType))
    return 'holds a lone surrogate, which UTF-8 (and so EventBridge) cannot carry';
  return undefined;
}
