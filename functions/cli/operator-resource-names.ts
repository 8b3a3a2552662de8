/**
 * Names of what operator commands create, shared with the construct's operator grants
 * (`infra/constructs/operator-grants.ts`), which scope `tail`'s permissions to them.
 */

/** `tail`'s temporary rule and queue carry this prefix, so a leftover one (after `kill -9`) is easy to find. */
export const TAIL_RESOURCE_PREFIX = 'bep-tail-';
