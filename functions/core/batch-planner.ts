import type { BankingEvent } from './banking-event.ts';
import type { PublishLimits } from './ports.ts';

export interface BatchPlan {
  /** Batches in event order, each within the entry and byte limits. */
  readonly batches: readonly (readonly BankingEvent[])[];
  /** The first event larger than an entry may be; nothing at or after it is planned. */
  readonly oversize?: { readonly event: BankingEvent; readonly sizeBytes: number };
}

/**
 * Greedy packing in event order. An event too large for any batch stops the plan there, so the
 * events before it are still published and the checkpoint can move up to (not past) it.
 */
export function planBatches(
  events: readonly BankingEvent[],
  limits: PublishLimits,
  entrySize: (event: BankingEvent) => number,
): BatchPlan {
  const batches: BankingEvent[][] = [];
  let current: BankingEvent[] = [];
  let currentBytes = 0;
  for (const event of events) {
    const size = entrySize(event);
    if (size > limits.maxEntryBytes || size > limits.maxBatchBytes) {
      if (current.length > 0) batches.push(current);
      return { batches, oversize: { event, sizeBytes: size } };
    }
    if (current.length === limits.maxEntriesPerBatch || currentBytes + size > limits.maxBatchBytes) {
      batches.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push(event);
    currentBytes += size;
  }
  if (current.length > 0) batches.push(current);
  return { batches };
}
