/**
 * The order rule of a FIFO subscriber on the Custom Event Bus, checked after a fault run against
 * what really happened: the messages of each group in the order the FIFO queue gave them out, the
 * PutEvents requests the bus answered (entry by entry), and the `OrderBroken` the function
 * reported (its log lines and metric).
 *
 * 1. Each group arrives in sequence order, except an event that arrives after a later event of its
 *    group that one request split: the bus rejected the earlier and accepted the later (the one
 *    break the pipeline cannot prevent, see `functions/core/group-sequencer.ts`).
 * 2. Every `OrderBroken` log line names such a split, as the first rejected entry of its group in
 *    its request and the first later one accepted; the metric counts the lines.
 * 3. When no invocation was killed or timed out, every split (one per request and group) of a
 *    request whose answer reached the function was reported: the metric is exactly those.
 *
 * Pure: events are named by their bank sequence number, groups by their `EventGroupId`.
 */

/** One message at the queue. */
export interface GroupArrival {
  readonly group: string | undefined;
  readonly sequence: number;
}

/** One entry of a PutEvents request, with the bus's answer. */
export interface WireEntry {
  readonly group: string | undefined;
  readonly sequence: number;
  readonly accepted: boolean;
}

/** One PutEvents request the bus answered entry by entry. */
export interface WireRequest {
  readonly entries: readonly WireEntry[];
  /** Whether the answer reached the client (it did not give up on the request first). */
  readonly answerDelivered: boolean;
}

/** An `OrderBroken` log line: the earlier (rejected) and the later (accepted) event. */
export interface OrderBrokenRecord {
  readonly earlier: number;
  readonly later: number;
}

export interface GroupOrderInput {
  /** In the order the queue gave them out. */
  readonly arrivals: readonly GroupArrival[];
  /** The requests the bus answered entry by entry, in arrival order (refused ones left out). */
  readonly requests: readonly WireRequest[];
  readonly orderBrokenLogs: readonly OrderBrokenRecord[];
  /** The `OrderBroken` metric summed over every invocation. */
  readonly orderBrokenMetric: number;
  /** Whether every invocation ended alive (response or error), so it read every answer it was sent. */
  readonly everyAnswerRead: boolean;
}

export interface GroupOrderReport {
  /** Pairs of one group that arrived out of sequence order. */
  readonly inversions: number;
  /** Requests × groups in which the bus rejected an entry and accepted a later one. */
  readonly splits: number;
  /** Broken rules, each a sentence (must be empty). */
  readonly violations: readonly string[];
}

export function checkGroupOrder(input: GroupOrderInput): GroupOrderReport {
  const violations: string[] = [];
  // Every pair one request split, and the pair the function should log per request and group.
  const splitPairs = new Set<string>();
  const firstSplits: string[] = [];
  /** Those of requests whose answer reached the function: what it can have logged. */
  const reportable: string[] = [];
  for (const request of input.requests) {
    const byGroup = new Map<string | undefined, WireEntry[]>();
    for (const entry of request.entries)
      byGroup.set(entry.group, [...(byGroup.get(entry.group) ?? []), entry]);
    for (const [group, entries] of byGroup) {
      if (group === undefined) continue;
      let first: string | undefined;
      entries.forEach((earlier, i) => {
        if (earlier.accepted) return;
        for (const later of entries.slice(i + 1)) {
          if (!later.accepted) continue;
          splitPairs.add(pairKey(group, earlier.sequence, later.sequence));
          first ??= `${earlier.sequence}<${later.sequence}`;
        }
      });
      if (first === undefined) continue;
      firstSplits.push(first);
      if (request.answerDelivered) reportable.push(first);
    }
  }

  let inversions = 0;
  const arrivalsByGroup = new Map<string, number[]>();
  for (const { group, sequence } of input.arrivals) {
    if (group === undefined) continue;
    arrivalsByGroup.set(group, [...(arrivalsByGroup.get(group) ?? []), sequence]);
  }
  for (const [group, sequences] of arrivalsByGroup) {
    sequences.forEach((later, i) => {
      for (const earlier of sequences.slice(i + 1)) {
        if (earlier >= later) continue;
        inversions += 1;
        if (!splitPairs.has(pairKey(group, earlier, later))) {
          violations.push(
            `group ${group}: event ${later} arrived before event ${earlier}, and no request split them`,
          );
        }
      }
    });
  }

  const expected = new Map<string, number>();
  for (const split of firstSplits) expected.set(split, (expected.get(split) ?? 0) + 1);
  for (const { earlier, later } of input.orderBrokenLogs) {
    const key = `${earlier}<${later}`;
    const left = expected.get(key) ?? 0;
    if (left === 0) {
      violations.push(`OrderBroken logged ${key}, which no request answered as its first split`);
    } else expected.set(key, left - 1);
  }
  if (input.orderBrokenMetric !== input.orderBrokenLogs.length) {
    violations.push(
      `OrderBroken counted ${input.orderBrokenMetric} but logged ${input.orderBrokenLogs.length} times`,
    );
  }
  if (input.everyAnswerRead && input.orderBrokenLogs.length !== reportable.length) {
    violations.push(
      `${reportable.length} answered requests split a group (${reportable.join(', ')}) but OrderBroken logged ${input.orderBrokenLogs.length}`,
    );
  }
  return { inversions, splits: firstSplits.length, violations };
}

function pairKey(group: string, earlier: number, later: number): string {
  return `${group}\u0000${earlier}<${later}`;
}
