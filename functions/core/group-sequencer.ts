/**
 * Keeps each event group in order while the publish pipeline sends batches concurrently and
 * resends rejected entries: the bookkeeping behind `EventPublisher.eventGroup`.
 *
 * The rule: an entry is sent only once every entry of its group registered before it has been
 * accepted by the bus, or goes in the same request ahead of it (the bus keeps a request's entries
 * in order). Entries are registered in the order the pipeline is given them: pages in the order
 * they are published, batches of a page in order, entries of a batch in order. (So a late event,
 * found by gap repair below numbers already registered, goes after them: it came late.) A batch
 * waits until that holds for each of its groups, then goes out whole; requests of different
 * groups still overlap. A resend never waits: whatever of its groups came before it was accepted
 * before its first send, or is in the resend with it. With a single group for the whole feed this
 * means one request in flight at a time, by design.
 *
 * An entry that ends without being accepted (rejected for good, cut short by the deadline, not
 * sent because publishing was halted or its first send came too late) blocks its group: later
 * entries of it are never sent, so the checkpoint, which only moves over a contiguous accepted
 * prefix, stays before the first of them and the next run sends them again in order. Other groups
 * go on. Behind an entry that was sent and not accepted, the pipeline reports them failed with
 * `EARLIER_ENTRY_FAILED`; behind one never sent (the start deadline, a halt), unsent like it: the
 * bus has none of them, and a run that stops at its deadline is not a failure.
 *
 * The one break this cannot prevent: within one request, the bus rejected an entry of a group
 * and accepted a later entry of the same group. The API does not say in which order a FIFO
 * subscriber then gets them; we take the harsher reading: the later one is delivered at once, the
 * earlier one only once resent, after it. If it is rejected for good, the next run sends it again
 * from the checkpoint, followed by the later ones the subscriber already had (the bus drops them
 * as duplicates within its de-duplication window; after it they are delivered twice). Either way
 * a FIFO subscriber sees the group's sequence numbers go backwards there. Each such group of each
 * request counts 1 in the `OrderBroken` metric (per group rather than per pair of events: one
 * rejection in a request of 100 entries would count up to 99 pairs), and is logged as an error
 * naming the first rejected entry and the first later one accepted (id and sequence number).
 */
import type { BankingEvent } from './banking-event.ts';
import type { CycleLogger, EntryOutcome, EventPublisher, MetricsSink } from './ports.ts';

/** `FailedEvent.errorCode` of an entry not sent because an earlier entry of its group was not accepted. */
export const EARLIER_ENTRY_FAILED = 'EARLIER_ENTRY_FAILED';

/** One entry of an event group, from registration until it is accepted or given up. */
interface Ticket {
  readonly event: BankingEvent;
  /** Registration order, across groups. */
  readonly order: number;
  readonly group: GroupState;
  accepted: boolean;
  /** How its batch ended without it accepted: never sent, or sent and not accepted. */
  givenUp?: GivenUp;
}

/** How a batch ended for its entries not accepted (`BatchTurn.settle`). */
export type GivenUp = 'unsent' | 'failed';

/** The entries of one group not accepted yet, in registration order, and who waits on them. */
class GroupState {
  constructor(readonly name: string) {}

  /** Registered tickets from `head` on; those before `head` are all accepted. */
  readonly queue: Ticket[] = [];
  head = 0;
  /** The first entry given up: nothing of the group after it may be sent. */
  blockedBy: Ticket | undefined;
  /** The batches waiting for their turn in this group, by their first entry of it. */
  readonly waiters = new Map<Ticket, () => void>();

  /** The first entry of the group not yet accepted. */
  get first(): Ticket | undefined {
    return this.queue[this.head];
  }

  advance(): void {
    while (this.head < this.queue.length && this.queue[this.head]!.accepted) this.head += 1;
    // Drop the accepted prefix now and then: one group may carry a whole run's events.
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }

  /** Wakes every waiting batch (a block, a halt); each checks again. */
  wakeAll(): void {
    for (const waiter of [...this.waiters.values()]) waiter();
  }
}

/** An entry left out of its batch because an earlier entry of its group was given up; a `FailedEvent`. */
export interface HeldBackEntry {
  readonly event: BankingEvent;
  readonly errorCode: typeof EARLIER_ENTRY_FAILED;
  readonly errorMessage: string;
}

/**
 * What a batch may do once its turn came: nothing (publishing halted), or send what is not held
 * back. `heldBack`: behind an entry of its group sent and not accepted (failed); `unsent`: behind
 * one never sent.
 */
export type TurnOutcome =
  | { readonly kind: 'halted' }
  | {
      readonly kind: 'go';
      readonly send: readonly BankingEvent[];
      readonly heldBack: readonly HeldBackEntry[];
      readonly unsent: readonly BankingEvent[];
    };

export interface GroupSequencerDeps {
  /** Names the groups (`eventGroup`). */
  readonly publisher: EventPublisher;
  readonly metrics: MetricsSink;
  readonly logger: CycleLogger;
}

/** What the batches of one sequencer share. */
interface Shared {
  readonly deps: GroupSequencerDeps;
  readonly groups: Map<string, GroupState>;
  registered: number;
  halted: boolean;
}

export class GroupSequencer {
  readonly #shared: Shared;

  constructor(deps: GroupSequencerDeps) {
    this.#shared = { deps, groups: new Map(), registered: 0, halted: false };
  }

  /**
   * Registers batches in the order they will be sent, before any of them is. Per batch its turn,
   * or `undefined` when no entry of it has a group: such a batch never waits.
   */
  register(batches: readonly (readonly BankingEvent[])[]): Array<BatchTurn | undefined> {
    const shared = this.#shared;
    return batches.map((batch) => {
      const tickets = new Map<BankingEvent, Ticket>();
      for (const event of batch) {
        const name = shared.deps.publisher.eventGroup?.(event);
        // One ticket per distinct event: the same event twice in one request needs no order.
        if (name === undefined || tickets.has(event)) continue;
        let group = shared.groups.get(name);
        if (group === undefined) {
          group = new GroupState(name);
          shared.groups.set(name, group);
        }
        shared.registered += 1;
        const ticket: Ticket = { event, order: shared.registered, group, accepted: false };
        group.queue.push(ticket);
        tickets.set(event, ticket);
      }
      return tickets.size === 0 ? undefined : new BatchTurn(shared, batch, tickets);
    });
  }

  /** Publishing stops: every batch waiting for its turn gives up. Idempotent. */
  halt(): void {
    if (this.#shared.halted) return;
    this.#shared.halted = true;
    for (const group of this.#shared.groups.values()) group.wakeAll();
  }
}

/** One registered batch with event groups: its wait for its turn, and what its requests did. */
export class BatchTurn {
  readonly #shared: Shared;
  readonly #batch: readonly BankingEvent[];
  readonly #tickets: ReadonlyMap<BankingEvent, Ticket>;

  constructor(shared: Shared, batch: readonly BankingEvent[], tickets: ReadonlyMap<BankingEvent, Ticket>) {
    this.#shared = shared;
    this.#batch = batch;
    this.#tickets = tickets;
  }

  /**
   * Resolves once every group of the batch has reached it (nothing earlier of the group is
   * outstanding outside the batch) or is blocked by an entry given up, or once publishing is
   * halted. Rejects with the signal's reason if it aborts first.
   */
  async wait(signal: AbortSignal): Promise<TurnOutcome> {
    const firsts = new Map<GroupState, Ticket>();
    for (const ticket of this.#tickets.values())
      if (!firsts.has(ticket.group)) firsts.set(ticket.group, ticket);
    for (const first of firsts.values()) {
      if (this.#shared.halted) break;
      if (!this.#ready(first)) await this.#waitFor(first, signal);
    }
    if (this.#shared.halted) return { kind: 'halted' };
    const send: BankingEvent[] = [];
    const heldBack: HeldBackEntry[] = [];
    const unsent: BankingEvent[] = [];
    for (const event of this.#batch) {
      const ticket = this.#tickets.get(event);
      const blocker = ticket === undefined ? undefined : blockerOf(ticket);
      if (blocker === undefined) send.push(event);
      else if (blocker.givenUp === 'unsent') unsent.push(event);
      else {
        const { id, sequence_number } = blocker.event;
        heldBack.push({
          event,
          errorCode: EARLIER_ENTRY_FAILED,
          errorMessage: `Not sent: event ${id} (sequence ${sequence_number}), earlier in the same event group, was not accepted`,
        });
      }
    }
    return { kind: 'go', send, heldBack, unsent };
  }

  /** The bus accepted this event of the batch. */
  accepted(event: BankingEvent): void {
    const ticket = this.#tickets.get(event);
    if (ticket === undefined) return;
    ticket.accepted = true;
    const { group } = ticket;
    if (group.first !== ticket) return;
    group.advance();
    const next = group.first;
    // Only the batch whose turn it now is: a group of a whole feed may have dozens waiting.
    if (next !== undefined) group.waiters.get(next)?.();
    // Nothing outstanding (so nothing given up either): the group starts afresh if it comes back.
    // `account` makes many groups, each short.
    else this.#shared.groups.delete(group.name);
  }

  /**
   * After one request of the batch: counts and logs each group in which an entry was rejected and
   * a later one accepted (see the module comment).
   */
  checkOrder(sent: readonly BankingEvent[], outcomes: readonly EntryOutcome[]): void {
    /** Per group: the position of its first rejected entry, or -1 once the break was reported. */
    const rejected = new Map<GroupState, number>();
    sent.forEach((event, position) => {
      const group = this.#tickets.get(event)?.group;
      if (group === undefined) return;
      const earlierAt = rejected.get(group);
      if (outcomes[position]?.ok !== true) {
        if (earlierAt === undefined) rejected.set(group, position);
        return;
      }
      if (earlierAt === undefined || earlierAt === -1) return;
      // Once per group and request: the first rejected entry and the first later one accepted.
      rejected.set(group, -1);
      const earlier = sent[earlierAt]!;
      const outcome = outcomes[earlierAt];
      this.#shared.deps.metrics.add('OrderBroken', 'Count', 1);
      this.#shared.deps.logger.error(
        'The bus rejected an event and accepted a later one of its event group in the same request: a FIFO subscriber gets the later one first',
        {
          earlier: {
            id: earlier.id,
            sequence_number: earlier.sequence_number,
            errorCode: outcome !== undefined && !outcome.ok ? outcome.errorCode : 'MissingOutcome',
          },
          later: { id: event.id, sequence_number: event.sequence_number },
        },
      );
    });
  }

  /**
   * The batch is done: what it did not get accepted blocks the rest of its group, as `givenUp`
   * says (`unsent`: nothing of the batch was sent).
   */
  settle(givenUp: GivenUp = 'failed'): void {
    for (const ticket of this.#tickets.values()) {
      const { group } = ticket;
      if (ticket.accepted) continue;
      ticket.givenUp = givenUp;
      if (group.blockedBy !== undefined && group.blockedBy.order < ticket.order) continue;
      group.blockedBy = ticket;
      group.wakeAll();
    }
  }

  #ready(first: Ticket): boolean {
    return first.group.first === first || blockerOf(first) !== undefined;
  }

  #waitFor(first: Ticket, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    const { waiters } = first.group;
    return new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!this.#shared.halted && !this.#ready(first)) return;
        waiters.delete(first);
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        waiters.delete(first);
        reject(signal.reason);
      };
      waiters.set(first, check);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** The entry given up before this one in its group, if any: this one must not be sent. */
function blockerOf(ticket: Ticket): Ticket | undefined {
  const { blockedBy } = ticket.group;
  return blockedBy !== undefined && blockedBy.order < ticket.order ? blockedBy : undefined;
}
