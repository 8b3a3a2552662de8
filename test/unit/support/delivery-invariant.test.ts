/**
 * The no-loss invariant the fault runs end with (`test/support/delivery-invariant.ts`), rule 4:
 * a duplicate is excused only for an event a fault caught in flight. The timelines below replay
 * what the AWS fault proxy records, among them the one of `upstream.5xx-storm` on loaded cores
 * (seed 20002 there, 20001 in CI): PutEvents answers slower than the function's answer timeout,
 * the client gives up (mark) before the bus accepts, and sends again.
 */
import { describe, expect, it } from 'vitest';
import type { TimelineEntry } from '../../support/aws-fault-proxy.ts';
import { type BankEvent, checkDeliveryInvariant, type Delivery } from '../../support/delivery-invariant.ts';

const feed: BankEvent[] = [1, 2, 3, 4].map((n) => ({ id: `id-${n}`, sequenceNumber: n }));
const detail = (n: number) => JSON.stringify({ id: `id-${n}`, sequence_number: n });
const delivery = (n: number): Delivery => ({
  detailType: 'transaction.created',
  detail: { id: `id-${n}`, sequence_number: n },
});

/** A timeline entry before its tick (`Omit` over each member of the union). */
type Step<E = TimelineEntry> = E extends unknown ? Omit<E, 'at'> : never;

/** A timeline written in order; `at` is its position, as the proxy's tick. */
function timeline(...entries: Step[]): TimelineEntry[] {
  return entries.map((entry, index) => ({ ...entry, at: index + 1 }) as TimelineEntry);
}
const accepted = (n: number, unanswered?: true): Step => ({
  kind: 'accepted',
  detailType: 'transaction.created',
  detail: detail(n),
  ...(unanswered ? { unanswered } : {}),
});
const requested = (checkpoint: number): Step => ({
  kind: 'commit-requested',
  checkpoint,
});
const applied = (checkpoint: number): Step => ({ kind: 'commit-applied', checkpoint });
const mark = (label: string): Step => ({ kind: 'mark', label });

describe('checkDeliveryInvariant: duplicates', () => {
  it('excuses the re-send of events the bus accepted after their client had given up on the request', () => {
    const report = checkDeliveryInvariant({
      feed,
      delivered: [1, 2, 3, 4, 3, 4].map(delivery),
      timeline: timeline(
        accepted(1),
        accepted(2),
        requested(2),
        applied(2),
        // The answer of the request with 3 and 4 comes after the client's answer timeout.
        mark('client-gave-up'),
        accepted(3, true),
        accepted(4, true),
        // The re-send, answered.
        accepted(3),
        accepted(4),
        requested(4),
        applied(4),
      ),
      finalCheckpoint: 4,
    });
    expect(report.violations).toEqual([]);
    expect(report.duplicates).toBe(2);
    expect(report.inFlightAtFaults).toBe(2);
  });

  it('still refuses the same re-send when every request was answered (a run sending again what the bus confirmed)', () => {
    const report = checkDeliveryInvariant({
      feed,
      delivered: [1, 2, 3, 4, 3, 4].map(delivery),
      timeline: timeline(
        accepted(1),
        accepted(2),
        requested(2),
        applied(2),
        mark('client-gave-up'),
        accepted(3),
        accepted(4),
        accepted(3),
        accepted(4),
        requested(4),
        applied(4),
      ),
      finalCheckpoint: 4,
    });
    expect(report.violations).toEqual([
      'e:id-3@3 was delivered 2 times although no fault caught it in flight',
      'e:id-4@4 was delivered 2 times although no fault caught it in flight',
    ]);
  });

  it('excuses only the events of the unanswered request, not an answered one re-sent beside them', () => {
    const report = checkDeliveryInvariant({
      feed,
      delivered: [1, 2, 3, 4, 3, 2].map(delivery),
      timeline: timeline(
        accepted(1),
        accepted(2),
        mark('client-gave-up'),
        accepted(3, true),
        accepted(4),
        accepted(3),
        accepted(2),
        requested(4),
        applied(4),
      ),
      finalCheckpoint: 4,
    });
    // 2 was accepted before the mark above the checkpoint (none was written): in flight, excused.
    expect(report.violations).toEqual([]);
    const answeredTwice = checkDeliveryInvariant({
      feed,
      delivered: [1, 2, 3, 4, 3, 4].map(delivery),
      timeline: timeline(
        accepted(1),
        accepted(2),
        requested(2),
        applied(2),
        mark('client-gave-up'),
        accepted(3, true),
        accepted(4),
        accepted(3),
        accepted(4),
        requested(4),
        applied(4),
      ),
      finalCheckpoint: 4,
    });
    expect(answeredTwice.violations).toEqual([
      'e:id-4@4 was delivered 2 times although no fault caught it in flight',
    ]);
  });

  it('does not excuse an unanswered acceptance at or below the checkpoint already applied', () => {
    const report = checkDeliveryInvariant({
      feed,
      delivered: [1, 2, 3, 4, 2].map(delivery),
      timeline: timeline(
        accepted(1),
        accepted(2),
        accepted(3),
        requested(3),
        applied(3),
        mark('client-gave-up'),
        accepted(2, true),
        accepted(4),
        requested(4),
        applied(4),
      ),
      finalCheckpoint: 4,
    });
    expect(report.violations).toEqual([
      'e:id-2@2 was delivered 2 times although no fault caught it in flight',
    ]);
  });
});
