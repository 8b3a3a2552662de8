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
  readonly #index = new Map<number, { sequence: number; accepted: boolean }>();
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

  /** Registers events about to be published. They must be ascending and beyond everything tracked. */
  track(sequences: readonly number[]): void {
    for (const sequence of sequences) {
      const last = this.highestTracked;
      if (last !== null && sequence <= last) {
        throw new RangeError(`sequence ${sequence} tracked out of order (highest tracked is ${last})`);
      }
      const entry = { sequence, accepted: false };
      this.#pending.push(entry);
      this.#index.set(sequence, entry);
    }
  }

  /** Marks an event as accepted by the bus and advances the safe checkpoint over the prefix. */
  accept(sequence: number): void {
    const entry = this.#index.get(sequence);
    if (entry === undefined) throw new RangeError(`sequence ${sequence} was never tracked`);
    entry.accepted = true;
    let head = this.#pending[0];
    let folded = 0;
    while (head?.accepted) {
      this.#safe = head.sequence;
      this.#index.delete(head.sequence);
      folded += 1;
      head = this.#pending[folded];
    }
    if (folded > 0) this.#pending.splice(0, folded);
  }
}
