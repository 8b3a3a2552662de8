/**
 * Keeps each event group in order while the publish pipeline sends batches concurrently and
 * resends rejected entries: the bookkeeping behind `EventPublisher.eventGroup`.
 *
 * The rule: an entry is sent only once every entry of its group registered before it has been
 * accepted by the bus, or goes in the same request ahead of it (the bus keeps a request's entries
 * in order). Entries are registered in the order the pipeline is given them: pages in the order
 * they are published, batches of a page in order, entries of a batch in order. A batch waits
 * until that holds for each of its groups, then goes out whole; requests of different groups
 * still overlap. A resend never waits: whatever of its groups came before it was accepted before
 * its first send, or is in the resend with it. With a single group for the whole feed this means
 * one request in flight at a time, by design.
 *
 * An entry that ends without being accepted (rejected for good, cut short by the deadline, not
 * sent because publishing was halted) blocks its group: later entries of it are never sent (the
 * pipeline reports them failed with `EARLIER_ENTRY_FAILED`), so the checkpoint, which only moves
 * over a contiguous accepted prefix, stays before the first of them and the next run sends them
 * again in order. Other groups go on.
 *
 * The one break this cannot prevent: within one request, the bus rejected an entry of a group
 * and accepted a later entry of the same group. The API does not say in which order a FIFO
 * subscriber then gets them; we take the harsher reading. The later one is delivered at once;
 * the earlier one is resent and delivered after it (or, rejected for good, is delivered after it
 * on the next run, sent again from the checkpoint with what follows, which the bus drops as
 * duplicates within its de-duplication window). So a FIFO subscriber sees the sequence number
 * of that group go backwards once. Each such group of each request counts 1 in the
 * `OrderBroken` metric and is logged as an error naming the earlier rejected and the first later
 * accepted event (id and sequence number), so that subscribers can be told which events came
 * out of order.
 */
import type { BankingEvent } from './banking-event.ts';
import type { CycleLogger, EntryOutcome, MetricsSink } from './ports.ts';

/** `FailedEvent.errorCode` of an entry not sent because an earlier entry of its group was not accepted. */
export const EARLIER_ENTRY_FAILED = 'EARLIER_ENTRY_FAILED';

/** One entry of an event group, from registration until it is accepted or given up. */
export interface GroupTicket {
  readonly event: BankingEvent;
  /** Registration order, across groups. */
  readonly order: number;
  /** Set once the bus accepted the entry. */
  readonly accepted: boolean;
}

interface Ticket extends GroupTicket {
  readonly group: GroupState;
  accepted: boolean;
}

/** The entries of one group not accepted yet, in registration order, and who waits on them. */
class GroupState {
  /** Registered tickets from `head` on; those before `head` are all accepted. */
  readonly queue: Ticket[] = [];
  head = 0;
  /** The first entry given up: nothing of the group after it may be sent. */
  blockedBy: Ticket | undefined;
  /** Wakes the batches waiting for their turn in this group; each checks again. */
  readonly waiters = new Set<() => void>();

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

  wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

/** What a batch may do once its turn came. */
export type Turn =
  | { readonly kind: 'halted' }
  | {
      readonly kind: 'go';
      /**
       * Positions in the batch that must not be sent, each with the entry of its group that was
       * given up before it.
       */
      readonly blocked: ReadonlyMap<number, BankingEvent>;
    };

export interface GroupSequencerDeps {
  /** The publisher's `eventGroup`. */
  readonly eventGroup: (event: BankingEvent) => string | undefined;
  readonly metrics: MetricsSink;
  readonly logger: CycleLogger;
}

export class GroupSequencer {
  readonly #deps: GroupSequencerDeps;
  readonly #groups = new Map<string, GroupState>();
  #registered = 0;
  #halted = false;

  constructor(deps: GroupSequencerDeps) {
    this.#deps = deps;
  }

  /**
   * Registers batches in the order they will be sent, before any of them is. Per batch, a ticket
   * per entry (`undefined` for an entry in no group), or `undefined` when no entry of the batch
   * has a group: such a batch never waits.
   */
  register(
    batches: readonly (readonly BankingEvent[])[],
  ): Array<readonly (GroupTicket | undefined)[] | undefined> {
    return batches.map((batch) => {
      let grouped = false;
      const tickets = batch.map((event) => {
        const name = this.#deps.eventGroup(event);
        if (name === undefined) return undefined;
        grouped = true;
        let group = this.#groups.get(name);
        if (group === undefined) {
          group = new GroupState();
          this.#groups.set(name, group);
        }
        this.#registered += 1;
        const ticket: Ticket = { event, order: this.#registered, group, accepted: false };
        group.queue.push(ticket);
        return ticket;
      });
      return grouped ? tickets : undefined;
    });
  }

  /**
   * Resolves once every group of the batch has reached it (each entry's group has nothing
   * earlier outstanding outside the batch) or is blocked by an entry given up, or once publishing
   * is halted. Rejects with the signal's reason if it aborts first.
   */
  async waitTurn(tickets: readonly (GroupTicket | undefined)[], signal: AbortSignal): Promise<Turn> {
    const firsts = new Map<GroupState, Ticket>();
    for (const ticket of tickets as readonly (Ticket | undefined)[]) {
      if (ticket !== undefined && !firsts.has(ticket.group)) firsts.set(ticket.group, ticket);
    }
    for (const [group, first] of firsts) {
      if (this.#halted) break;
      if (!this.#ready(group, first)) await this.#waitFor(group, first, signal);
    }
    if (this.#halted) return { kind: 'halted' };
    const blocked = new Map<number, BankingEvent>();
    tickets.forEach((ticket, position) => {
      const blocker = ticket === undefined ? undefined : this.#blockerOf(ticket as Ticket);
      if (blocker !== undefined) blocked.set(position, blocker.event);
    });
    return { kind: 'go', blocked };
  }

  /** The bus accepted the entry. */
  accepted(ticket: GroupTicket): void {
    const own = ticket as Ticket;
    own.accepted = true;
    const { group } = own;
    if (group.first !== own) return;
    group.advance();
    group.wake();
  }

  /**
   * After one request: counts and logs each group in which an entry was rejected and a later
   * one accepted (see the module comment). Call once the accepted entries were marked.
   */
  checkOrder(tickets: readonly (GroupTicket | undefined)[], outcomes: readonly EntryOutcome[]): void {
    /** Per group: the position of its first rejected entry, or -1 once the break was reported. */
    let rejected: Map<GroupState, number> | undefined;
    tickets.forEach((ticket, position) => {
      if (ticket === undefined) return;
      const own = ticket as Ticket;
      if (!own.accepted) {
        rejected ??= new Map();
        if (!rejected.has(own.group)) rejected.set(own.group, position);
        return;
      }
      const earlierAt = rejected?.get(own.group);
      if (earlierAt === undefined || earlierAt === -1) return;
      // Once per group and request: the first rejected entry and the first later one accepted.
      rejected!.set(own.group, -1);
      const earlier = tickets[earlierAt]!.event;
      const outcome = outcomes[earlierAt];
      this.#deps.metrics.add('OrderBroken', 'Count', 1);
      this.#deps.logger.error(
        'The bus rejected an event and accepted a later one of its event group in the same request: a FIFO subscriber gets the later one first',
        {
          earlier: {
            id: earlier.id,
            sequence_number: earlier.sequence_number,
            errorCode: outcome !== undefined && !outcome.ok ? outcome.errorCode : 'MissingOutcome',
          },
          later: { id: own.event.id, sequence_number: own.event.sequence_number },
        },
      );
    });
  }

  /** The entry will not be accepted in this run: nothing of its group after it may be sent. */
  giveUp(ticket: GroupTicket): void {
    const own = ticket as Ticket;
    if (own.accepted) return;
    const { group } = own;
    if (group.blockedBy === undefined || own.order < group.blockedBy.order) {
      group.blockedBy = own;
      group.wake();
    }
  }

  /** Publishing stops: every batch waiting for its turn gives up. Idempotent. */
  halt(): void {
    if (this.#halted) return;
    this.#halted = true;
    for (const group of this.#groups.values()) group.wake();
  }

  #ready(group: GroupState, first: Ticket): boolean {
    return group.first === first || this.#blockerOf(first) !== undefined;
  }

  #blockerOf(ticket: Ticket): Ticket | undefined {
    const { blockedBy } = ticket.group;
    return blockedBy !== undefined && blockedBy.order < ticket.order ? blockedBy : undefined;
  }

  #waitFor(group: GroupState, first: Ticket, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const done = () => {
        group.waiters.delete(check);
        signal.removeEventListener('abort', onAbort);
      };
      const check = () => {
        if (!this.#halted && !this.#ready(group, first)) return;
        done();
        resolve();
      };
      const onAbort = () => {
        done();
        reject(signal.reason);
      };
      group.waiters.add(check);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
