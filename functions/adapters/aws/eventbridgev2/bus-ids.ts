/**
 * The Custom Event Bus's ids (`SystemMetadata.EventGroupId`, `DeduplicationId`): 1 to 128
 * characters (the API's limit). A longer one is replaced by a hash of it, so that an event group
 * or a key of any length can be sent.
 */
import { createHash } from 'node:crypto';

/** Longest group (and de-duplication) id the bus takes, in characters. */
export const MAX_BUS_ID_LENGTH = 128;

/**
 * `value` when it is 1 to 128 characters; a longer one as its kind (the text up to the first
 * `:`, if short) and the SHA-256 of the whole, hex: the same value always gives the same id, and
 * two values the same id only if SHA-256 collides.
 *
 * @example
 * boundedBusId(`account:${'a'.repeat(200)}`) // 'account:sha256:…'
 */
export function boundedBusId(value: string): string {
  if (value.length <= MAX_BUS_ID_LENGTH) return value;
  const colon = value.indexOf(':');
  const kind = colon > 0 && colon <= 32 ? value.slice(0, colon + 1) : '';
  return `${kind}sha256:${createHash('sha256').update(value, 'utf8').digest('hex')}`;
}
