/**
 * The no-loss invariant, checked after every fault scenario against what really happened: the
 * events the bank holds, what reached the recording sink (a queue behind a catch-all rule), and the
 * proxy's timeline of entries the bus accepted, checkpoint writes and fault marks.
 *
 * 1. Every event at or below the final checkpoint was delivered at least once (an event the proxy
 *    broke on the way, as its `invalid_event`), but those the start position passes over by design.
 * 2. The checkpoint never moved backwards (applied writes, in order).
 * 3. No checkpoint write was ever asked for past an event the bus had not accepted yet.
 * 4. Every duplicate delivery is of an event that was in flight at a fault: accepted by the bus
 *    but above the checkpoint last written when the fault happened, or accepted in a request
 *    whose client had already given up on it (the fault came before the acceptance).
 *
 * Pure: the property test checks the same rules against in-memory ports.
 */
import type { TimelineEntry } from './aws-fault-proxy.ts';

/** An event the bank holds. */
export interface BankEvent {
  readonly id: string;
  readonly sequenceNumber: number;
  /** Set when the event reaches the poller broken: it is expected as an `invalid_event` with this fingerprint. */
  readonly quarantineFingerprint?: string;
}

/** A delivered event as the sink received it. */
export interface Delivery {
  readonly detailType: string;
  readonly detail: Record<string, unknown>;
}

export interface InvariantInput {
  readonly feed: readonly BankEvent[];
  /** Events of `feed` the start position passes over by design (`latest`, a number): never expected. */
  readonly passedOver?: readonly BankEvent[];
  readonly delivered: readonly Delivery[];
  readonly timeline: readonly TimelineEntry[];
  readonly finalCheckpoint: number | null;
}

export interface InvariantReport {
  /** Events the bank holds at or below the final checkpoint. */
  readonly events: number;
  /** Those never delivered (must be empty). */
  readonly lost: readonly string[];
  /** Deliveries beyond the first of an event. */
  readonly duplicates: number;
  /** Events accepted but not yet checkpointed at some fault: what may be delivered twice. */
  readonly inFlightAtFaults: number;
  /** Broken rules, each a sentence (must be empty). */
  readonly violations: readonly string[];
}

/**
 * How an event is recognised in a delivery or an accepted entry: by its id at its number (a feed
 * may give one id to two numbers: two events, both owed), a quarantined one by its fingerprint.
 */
export function deliveryKey(detailType: string, detail: Record<string, unknown>): string {
  if (detailType === 'invalid_event' && typeof detail.fingerprint === 'string') {
    return `q:${detail.fingerprint}`;
  }
  return `e:${String(detail.id)}@${String(detail.sequence_number)}`;
}

function bankKey(event: BankEvent): string {
  return event.quarantineFingerprint === undefined
    ? `e:${event.id}@${event.sequenceNumber}`
    : `q:${event.quarantineFingerprint}`;
}

export function checkDeliveryInvariant(input: InvariantInput): InvariantReport {
  const violations: string[] = [];
  const counts = new Map<string, number>();
  for (const { detailType, detail } of input.delivered) {
    const key = deliveryKey(detailType, detail);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const passedOver = new Set((input.passedOver ?? []).map(bankKey));
  const expected = input.feed.filter((event) => !passedOver.has(bankKey(event)));
  const bySequence = new Map(expected.map((event) => [event.sequenceNumber, event]));
  const byAscendingSequence = [...bySequence].sort(([a], [b]) => a - b);
  const covered =
    input.finalCheckpoint === null
      ? []
      : expected.filter((event) => event.sequenceNumber <= input.finalCheckpoint!);
  const lost = covered.filter((event) => !counts.has(bankKey(event))).map(bankKey);

  // Walk the timeline once: acceptance times, commits in order, what was in flight at each fault.
  const acceptedAt = new Map<string, number>();
  const sequenceOfKey = new Map(input.feed.map((event) => [bankKey(event), event.sequenceNumber]));
  let applied: number | null = null;
  const mayRepeat = new Set<string>();
  for (const entry of input.timeline) {
    if (entry.kind === 'accepted') {
      const key = deliveryKey(entry.detailType, parse(entry.detail));
      if (!acceptedAt.has(key)) acceptedAt.set(key, entry.at);
      // The client gave up on this request (its answer timeout on a slow bus, a kill) before the
      // bus accepted it: the `client-gave-up` mark came first, when the event was on its way and
      // not yet accepted, so the mark alone misses it. It was in flight at that fault all the same,
      // and its sender, never told, rightly sends it again. Only events of such a request are
      // excused: an answered event sent again still breaks the rule.
      if (entry.unanswered === true) {
        const sequence = sequenceOfKey.get(key);
        if (sequence !== undefined && (applied === null || sequence > applied)) mayRepeat.add(key);
      }
    } else if (entry.kind === 'commit-applied') {
      if (applied !== null && entry.checkpoint < applied) {
        violations.push(`the checkpoint moved backwards: ${applied} → ${entry.checkpoint}`);
      }
      applied = entry.checkpoint;
    } else if (entry.kind === 'commit-requested') {
      // By event, not by number: a checkpoint asked for at 2^53 − 1 must not mean 2^53 steps.
      for (const [sequence, event] of byAscendingSequence) {
        if (sequence > entry.checkpoint) break;
        const at = acceptedAt.get(bankKey(event));
        if (at === undefined || at > entry.at) {
          violations.push(
            `checkpoint ${entry.checkpoint} was asked for before event ${sequence} (${bankKey(event)}) was accepted`,
          );
          break;
        }
      }
    } else if (entry.kind === 'mark') {
      for (const [key] of acceptedAt) {
        const sequence = sequenceOfKey.get(key);
        if (sequence !== undefined && (applied === null || sequence > applied)) mayRepeat.add(key);
      }
    }
  }
  let duplicates = 0;
  for (const [key, count] of counts) {
    if (count < 2) continue;
    duplicates += count - 1;
    if (!mayRepeat.has(key)) {
      violations.push(`${key} was delivered ${count} times although no fault caught it in flight`);
    }
  }
  return { events: covered.length, lost, duplicates, inFlightAtFaults: mayRepeat.size, violations };
}

function parse(detail: string): Record<string, unknown> {
  try {
    return JSON.parse(detail) as Record<string, unknown>;
  } catch {
    return {};
  }
}
