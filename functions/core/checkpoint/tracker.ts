/**
 * Computes the checkpoint that is safe to commit: the highest sequence number below which every
 * tracked event has been accepted by the bus (the contiguous prefix). It does not care how
 * events were fetched or how many batches are in flight, so pipelined fetching and concurrent
 * PutEvents can share it.
 *
 * Timeline, with events 5..8 tracked and the checkpoint at 4:
 *   accept 6, 8   → safe stays 4 (5 is still in flight)
 *   accept 5      → safe 6        (7 is still in flight)
 *   accept 7      → safe 8
 */
export class CheckpointTracker {
  /**
   * Sequence numbers not yet folded into `safe`, ascending, with their accepted flag: a queue whose
   * head is `#head` (folded entries are dropped in bulk, not one `shift` at a time).
   */
  #pending: Entry[] = [];
  #head = 0;
  /** Per sequence number, its entry, or its entries when the feed numbered distinct events alike. */
  readonly #index = new Map<number, Entry | Entry[]>();
  #safe: number | null;

  constructor(committed: number | null) {
    this.#safe = committed;
  }

  /** Highest sequence number tracked so far (or the committed one): the cursor for the next fetch. */
  get highestTracked(): number | null {
    return this.#head < this.#pending.length ? this.#pending.at(-1)!.sequence : this.#safe;
  }

  /** Sequence numbers tracked but not yet safe to commit. */
  get pendingCount(): number {
    return this.#pending.length - this.#head;
  }

  /** The checkpoint that may be committed now. */
  get safeCheckpoint(): number | null {
    return this.#safe;
  }

  /**
   * Registers events about to be published, in feed order: ascending, beyond the committed
   * checkpoint. Equal neighbours are allowed (two distinct events with one number are both
   * published; the checkpoint passes the number once both are accepted).
   */
  track(sequences: readonly number[]): void {
    for (const sequence of sequences) {
      const last = this.highestTracked;
      const outOfOrder = last !== null && (sequence < last || (sequence === last && this.pendingCount === 0));
      if (outOfOrder) {
        throw new RangeError(`sequence ${sequence} tracked out of order (highest tracked is ${last})`);
      }
      const entry: Entry = { sequence, accepted: false };
      this.#pending.push(entry);
      const known = this.#index.get(sequence);
      if (known === undefined) this.#index.set(sequence, entry);
      else if (Array.isArray(known)) known.push(entry);
      else this.#index.set(sequence, [known, entry]);
    }
  }

  /** Marks an event as accepted by the bus and advances the safe checkpoint over the prefix. */
  accept(sequence: number): void {
    const known = this.#index.get(sequence);
    const entry = Array.isArray(known) ? known.find((candidate) => !candidate.accepted) : known;
    if (entry === undefined || entry.accepted) throw new RangeError(`sequence ${sequence} was never tracked`);
    entry.accepted = true;
    this.#fold();
  }

  /** Moves `safe` over the accepted entries at the head of the queue. */
  #fold(): void {
    const pending = this.#pending;
    let head = this.#head;
    while (head < pending.length && pending[head]!.accepted) {
      const done = pending[head]!;
      head += 1;
      // A twin with the same number still in flight keeps the checkpoint below that number.
      if (pending[head]?.sequence !== done.sequence) this.#safe = done.sequence;
      this.#forget(done);
    }
    if (head === this.#head) return;
    if (head === pending.length) {
      this.#pending = [];
      this.#head = 0;
    } else if (head > 1_024 && head * 2 > pending.length) {
      this.#pending = pending.slice(head);
      this.#head = 0;
    } else {
      this.#head = head;
    }
  }

  #forget(done: Entry): void {
    const known = this.#index.get(done.sequence);
    if (!Array.isArray(known)) {
      this.#index.delete(done.sequence);
      return;
    }
    const remaining = known.filter((candidate) => candidate !== done);
    if (remaining.length === 0) this.#index.delete(done.sequence);
    else this.#index.set(done.sequence, remaining.length === 1 ? remaining[0]! : remaining);
  }
}

interface Entry {
  readonly sequence: number;
  accepted: boolean;
}
