/**
 * `Retry-After` (RFC 9110 §10.2.3) as milliseconds to wait: either delta-seconds (`120`) or an
 * HTTP-date (`Wed, 21 Oct 2015 07:28:00 GMT`). Pure, so it is tested without a server.
 */

const DELTA_SECONDS = /^\d+$/;
/**
 * Every HTTP-date form (IMF-fixdate, and the obsolete RFC 850 and asctime ones) names a weekday
 * and, except asctime, ends in GMT; requiring a weekday keeps `Date.parse` from guessing at junk.
 */
const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? .*\d{2}:\d{2}:\d{2}( GMT| \d{4})$/;

/**
 * Returns the wait in milliseconds, `0` for a date already past, and `undefined` when the header
 * is absent, repeated with different values, or malformed (the caller then uses its own backoff).
 *
 * @example
 * parseRetryAfter('3', Date.now()); // 3000
 * parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:00 GMT')); // 60000
 */
export function parseRetryAfter(
  header: string | readonly string[] | undefined,
  nowMs: number,
): number | undefined {
  const value = Array.isArray(header) ? (header.length === 1 ? header[0] : undefined) : header;
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  if (DELTA_SECONDS.test(trimmed)) {
    const ms = Number(trimmed) * 1000;
    return Number.isSafeInteger(ms) ? ms : undefined;
  }
  if (!HTTP_DATE.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
