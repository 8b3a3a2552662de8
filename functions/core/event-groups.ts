/**
 * Which events must reach a subscriber in order: the event group of the Custom Event Bus
 * (`SystemMetadata.EventGroupId`). A FIFO subscriber delivers each group in publish order, and
 * an event it cannot deliver holds up only its own group; so a group is the unit of order, and
 * the smaller the group, the less one stuck event holds up.
 *
 * - `program`: the program's whole feed, in sequence order (the default; the feed's own order).
 * - `account`: each account's status changes in order (`account:<data.account_id>`). A
 *   transaction names two blockchain addresses and no `account_id`, so it cannot be put in one
 *   account's group; its own lifecycle (PENDING → COMPLETE) is kept in order instead, in
 *   `transaction:<data.transaction_id>`. An event of another type, or without the id, goes to the
 *   program's group.
 * - `none`: no group, no order.
 *
 * The bus bounds the length of a group's id: its publisher shortens a long one
 * (`eventbridgev2/bus-ids.ts`), the same way every time.
 */
import type { BankingEvent } from './banking-event.ts';

export const EVENT_GROUP_BYS = ['program', 'account', 'none'] as const;
export type EventGroupBy = (typeof EVENT_GROUP_BYS)[number];

/**
 * The event group of `event`, or `undefined` when its order does not matter (`none`).
 *
 * @example
 * eventGroupOf(event, 'account', 'retail') // 'account:6c1f…' for an account_status event
 */
export function eventGroupOf(
  event: BankingEvent,
  groupBy: EventGroupBy,
  program: string,
): string | undefined {
  if (groupBy === 'none') return undefined;
  if (groupBy === 'account' && event.invalid === undefined) {
    if (event.type === 'account_status') {
      const account = nonEmptyString(event.data.account_id);
      if (account !== undefined) return `account:${account}`;
    } else if (event.type === 'transaction') {
      const transaction = nonEmptyString(event.data.transaction_id);
      if (transaction !== undefined) return `transaction:${transaction}`;
    }
  }
  return program;
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}
