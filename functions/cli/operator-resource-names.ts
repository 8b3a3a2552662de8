/**
 * Names of what operator commands create or read, shared with the construct's operator grants
 * (`infra/constructs/operator-grants.ts`), which scope the operators' permissions to them.
 */

/** `tail`'s temporary rule and queue carry this prefix, so a leftover one (after `kill -9`) is easy to find. */
export const TAIL_RESOURCE_PREFIX = 'bep-tail-';

/** `archive-replay`'s point-in-time copies of a Custom Event Bus's subscribers carry this prefix. */
export const REPLAY_SUBSCRIBER_PREFIX = 'bep-replay-';

/** The stack output naming the role a Custom Event Bus delivers `tail`'s events through. */
export const TAIL_DELIVERY_ROLE_OUTPUT = 'TailDeliveryRoleArn';

/**
 * Where the poller function leaves an operator answer too large to return, in the claim-check
 * bucket (`functions/poller/operator-answer.ts`); the recovery grant reads only these objects.
 */
export const OPERATOR_ANSWER_PREFIX = 'operator-answers/';

/**
 * A replay's name when `--name` gives none: `<prefix>`, the time to the second, and a random part,
 * so two replays started within a second keep apart.
 */
export function defaultReplayName(prefix: string): string {
  const time = new Date()
    .toISOString()
    .replace(/[^0-9]/g, '')
    .slice(0, 14);
  return `${prefix}${time}-${globalThis.crypto.randomUUID().slice(0, 4)}`;
}
