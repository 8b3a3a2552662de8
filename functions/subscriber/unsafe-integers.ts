/**
 * Where a parsed event holds an integer a JavaScript number cannot represent exactly. The bank's
 * values reach the bus token for token (an `amount` of 9007199254740993 included), but `JSON.parse`
 * (and the Lambda runtime, for a Lambda target) turns such a token into the nearest double, a
 * different number. Any integer beyond ±(2^53 − 1) may have been rounded that way, so the kit
 * refuses the event instead of handing a consumer a wrong amount (see `UnsafeIntegerError`).
 */

/** The path of the first integer beyond ±(2^53 − 1) in `value`, found at `field`; `undefined` when none. */
export function findUnsafeInteger(value: unknown, field: string): string | undefined {
  if (typeof value === 'number') {
    return Number.isInteger(value) && !Number.isSafeInteger(value) ? field : undefined;
  }
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = findUnsafeInteger(item, `${field}[${index}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const found = findUnsafeInteger(item, `${field}.${key}`);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}
