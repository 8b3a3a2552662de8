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
  // Ascending sequence numbers not yet folded into `safe`, with their accepted flag.
  readonly #pending: Array<{ sequence: number; accepted: boolean }> = [];
  // Per sequence number, its entries: normally one, several if the feed numbered distinct events alike.
  readonly #index = new Map<number, Array<{ sequence: number; accepted: boolean }>>();
  #safe: number | null;

  constructor(committed: number | null) {
    this.#safe = committed;
  }

  /** Highest sequence number tracked so far (or the committed one): the cursor for the next fetch. */
  get highestTracked(): number | null {
    return this.#pending.at(-1)?.sequence ?? this.#safe;
  }

  /** Sequence numbers tracked but not yet safe to commit. */
  get pendingCount(): number {
    return this.#pending.length;
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
      const last = this.#pending.at(-1)?.sequence ?? this.#safe;
      const outOfOrder =
        last !== null && (sequence < last || (sequence === last && this.#pending.length === 0));
      if (outOfOrder) {
        throw new RangeError(`sequence ${sequence} tracked out of order (highest tracked is ${last})`);
      }
      const entry = { sequence, accepted: false };
      this.#pending.push(entry);
      const entries = this.#index.get(sequence);
      if (entries === undefined) this.#index.set(sequence, [entry]);
      else entries.push(entry);
    }
  }

  /** Marks an event as accepted by the bus and advances the safe checkpoint over the prefix. */
  accept(sequence: number): void {
    const entry = this.#index.get(sequence)?.find((candidate) => !candidate.accepted);
    if (entry === undefined) throw new RangeError(`sequence ${sequence} was never tracked`);
    entry.accepted = true;
    let folded = 0;
    for (let head = this.#pending[0]; head?.accepted; head = this.#pending[folded]) {
      folded += 1;
      // A twin with the same number still in flight keeps the checkpoint below that number.
      if (this.#pending[folded]?.sequence !== head.sequence) this.#safe = head.sequence;
    }
    if (folded === 0) return;
    for (const done of this.#pending.splice(0, folded)) {
      const remaining = this.#index.get(done.sequence)?.filter((candidate) => candidate !== done) ?? [];
      if (remaining.length === 0) this.#index.delete(done.sequence);
      else this.#index.set(done.sequence, remaining);
    }
  }
}
