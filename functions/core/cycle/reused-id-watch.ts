/**
 * Ids the feed gives to more than one sequence number. Each such event is a position of the feed
 * and is published (dropping one would leave a skipped number that gap repair cannot fill); the
 * reuse is counted (`DuplicateEventIds`) and logged with both numbers, because a consumer that
 * de-duplicates on the id alone (the subscriber kit's `handledOnce`) handles only the first.
 */
import type { BankingEvent } from '../banking-event.ts';
import type { CycleLogger, MetricsSink } from '../ports.ts';

/**
 * Ids remembered, at most: the newest are kept. A cycle publishes a few thousand events a minute,
 * so this covers far more than one page or micro-batch, in a few hundred KB at most.
 */
export const REMEMBERED_IDS = 10_000;

export class ReusedIdWatch {
  readonly #deps: { readonly metrics: MetricsSink; readonly logger: CycleLogger };
  readonly #capacity: number;
  /** Id → the first number it had; in insertion order, so the oldest goes first. */
  readonly #firstNumbers = new Map<string, number>();

  constructor(
    deps: { readonly metrics: MetricsSink; readonly logger: CycleLogger },
    capacity = REMEMBERED_IDS,
  ) {
    this.#deps = deps;
    this.#capacity = capacity;
  }

  /**
   * Looks at events about to be published (ascending, the same event never twice): reports each
   * whose id came before with another number. Quarantined events are left out: their ids are ours.
   */
  observe(events: readonly BankingEvent[]): void {
    let reused = 0;
    for (const event of events) {
      if (event.invalid !== undefined) continue;
      const first = this.#firstNumbers.get(event.id);
      if (first === undefined) {
        this.#remember(event);
        continue;
      }
      if (first === event.sequence_number) continue;
      reused += 1;
      this.#deps.logger.warn('The feed gave one event id to two sequence numbers; publishing both', {
        eventId: event.id,
        firstSequenceNumber: first,
        sequenceNumber: event.sequence_number,
      });
    }
    if (reused > 0) this.#deps.metrics.add('DuplicateEventIds', 'Count', reused);
  }

  #remember(event: BankingEvent): void {
    if (this.#firstNumbers.size >= this.#capacity) {
      const oldest = this.#firstNumbers.keys().next();
      if (oldest.done !== true) this.#firstNumbers.delete(oldest.value);
    }
    this.#firstNumbers.set(event.id, event.sequence_number);
  }
}
