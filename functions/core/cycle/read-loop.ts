/**
 * The heart of a cycle: read a page, admit it, hand it to the publisher without waiting, read
 * the next. The next read needs only the highest sequence number registered, so it overlaps the
 * publishing of the pages before it, within three bounds: pages in flight, the bytes their events
 * take (`memory-budget.ts`), and accepted numbers waiting for a checkpoint write (what a run cut
 * short would send again). The events in flight are bounded too, so a bank that ignores `limit`
 * is read no further ahead than an honest one.
 */

import type { BankingEvent } from '../banking-event.ts';
import type { CheckpointProgress } from '../checkpoint/progress.ts';
import type { FeedSource } from '../feed-reader.ts';
import { footprintOf } from '../memory-budget.ts';
import type { CycleHalt } from './cycle-halt.ts';
import type { StopReason } from './cycle-summary.ts';
import type { GapWatch } from './gap-watch.ts';
import type { InFlight } from './in-flight.ts';
import type { JumpWatch } from './jump-watch.ts';
import type { LagGauge } from './lag-gauge.ts';
import type { PagePublisher } from './page-publisher.ts';
import type { ReusedIdWatch } from './reused-id-watch.ts';

/**
 * Pages being published while the next is polled. Publishing a page takes longer than polling
 * one (ten PutEvents round trips in waves of the gate's concurrency), so a few must overlap for
 * the poll loop never to wait; the benchmark measured 2 → 4 raising the drain rate by about 8 %.
 * More would only hold more events in memory (and in doubt after a crash).
 */
export const MAX_PAGES_IN_FLIGHT = 4;

/**
 * Events in flight at most, whatever the pages hold: four pages of the largest size a poll asks
 * for (`POLL_LIMIT` is at most 1,000). A bank that ignores `limit` is not read further ahead than
 * an honest one: what a run has read but cannot publish before its end is read again by the next.
 */
export const MAX_EVENTS_IN_FLIGHT = 4_000;

/**
 * Accepted sequence numbers past the last checkpoint written, at most, before the next page is
 * read: what a run cut short sends again. A write goes out once 500 numbers wait (at most every
 * 100 ms, see `CheckpointCommitter`), so a healthy catch-up stays below it; a write that hangs (DynamoDB slow, the lease being taken over)
 * stops the reading instead of letting duplicates grow with its duration. Large pages raise it
 * to twice the pages in flight, so that it never throttles a healthy catch-up.
 */
export const MAX_UNCOMMITTED = 1_000;

export interface ReadLoopParts {
  readonly reader: FeedSource;
  /**
   * Bytes the events being published may take (`eventFootprint`): a page is read only while those
   * in flight take at most half of it (and are at most half of `MAX_EVENTS_IN_FLIGHT`), and is cut
   * to half of it at most (the rest is read again), so that pages overlap.
   */
  readonly inFlightBytes: number;
  readonly progress: CheckpointProgress;
  readonly publisher: PagePublisher;
  readonly gapWatch: GapWatch;
  readonly jumpWatch: JumpWatch;
  readonly lag: LagGauge;
  readonly inFlight: InFlight;
  readonly halt: CycleHalt;
  readonly reusedIds: ReusedIdWatch;
  /** Called each time the feed says nothing is new. */
  readonly onCaughtUp: (() => void) | undefined;
}

/**
 * Reads and publishes until the deadline, Ctrl-C or the first failure, then waits for the pages
 * still being published. Numbers a page skipped are looked up first; young gaps are looked up
 * again beside the reads; events held past a sequence jump are never registered, their jump
 * quarantined once. A failure that cannot be retried (authentication, payload, another
 * program's events) is recorded in `halt`: what is in flight still finishes and is checkpointed.
 */
export async function readAndPublish(parts: ReadLoopParts): Promise<StopReason> {
  const { reader, publisher, gapWatch, inFlight, halt } = parts;
  let stopReason: StopReason = 'deadline';
  gapWatch.start({
    onFound: (found) => {
      publisher.admit([], found);
      inFlight.add(publisher.publish([], found), held(found));
    },
    onGivenUp: () => publisher.offerCheckpoint(),
    onFailure: (error) => halt.fail(error),
    failed: () => halt.failed,
  });
  try {
    while (!halt.failed) {
      if (await mustWait(parts)) continue;
      // Half of what may be in flight at most, so that the next page is read while this one publishes.
      const read = await reader.next(parts.progress.cursor, {
        bytes: Math.min(parts.inFlightBytes / 2, parts.inFlightBytes - inFlight.bytes),
        events: Math.min(MAX_EVENTS_IN_FLIGHT / 2, MAX_EVENTS_IN_FLIGHT - inFlight.events),
      });
      if (read.kind === 'closed') {
        if (read.upstreamUnavailable) stopReason = 'upstream-unavailable';
        break;
      }
      if (read.kind === 'events' && read.held !== undefined) holdJump(parts, read.held, read.events);
      if (read.kind === 'caught-up' || (read.events.length === 0 && read.late.length === 0)) {
        // Held events alone are nothing new to publish either.
        parts.lag.caughtUp(parts.progress.cursor, parts.progress.safe);
        parts.onCaughtUp?.();
        continue;
      }
      const fresh = await gapWatch.withSkippedEvents(
        parts.progress.cursor,
        read.events,
        parts.progress.committed,
      );
      parts.reusedIds.observe(fresh);
      publisher.admit(fresh, read.late);
      inFlight.add(publisher.publish(fresh, read.late), held([...fresh, ...read.late]));
    }
  } catch (error) {
    halt.fail(error);
  }
  await gapWatch.stop();
  await reader.close?.();
  await inFlight.allSettled();
  return stopReason;
}

/** Quarantines the jump among `heldEvents` once (`cycle/jump-watch.ts`); none of them is registered. */
function holdJump(
  parts: ReadLoopParts,
  heldEvents: readonly BankingEvent[],
  trusted: readonly BankingEvent[],
): void {
  const previous = trusted.at(-1)?.sequence_number ?? parts.progress.cursor;
  const quarantine = parts.jumpWatch.quarantineOnce(heldEvents, previous);
  if (quarantine === undefined) return;
  parts.inFlight.add(
    parts.publisher.publishHeld(quarantine.copy, quarantine.onAccepted),
    held([quarantine.copy]),
  );
}

/**
 * Waits (and says so) when a bound is reached: pages in flight, the bytes they hold, or numbers
 * awaiting a write. A page is read only while what is in flight leaves half the bytes free: a read
 * into less room would keep a sliver of a long page and read the rest again.
 */
async function mustWait({ progress, inFlight, inFlightBytes }: ReadLoopParts): Promise<boolean> {
  const full =
    inFlight.size >= MAX_PAGES_IN_FLIGHT ||
    (inFlight.size > 0 && (inFlight.bytes > inFlightBytes / 2 || inFlight.events > MAX_EVENTS_IN_FLIGHT / 2));
  if (full) {
    await inFlight.oneSettled();
    return true;
  }
  const uncommittedLimit = Math.max(MAX_UNCOMMITTED, 2 * MAX_PAGES_IN_FLIGHT * progress.largestPage);
  if (progress.uncommitted() > uncommittedLimit && progress.writing) {
    await progress.writesSettled();
    return true;
  }
  return false;
}

/** What `events` hold while they are published. */
function held(events: readonly BankingEvent[]): { events: number; bytes: number } {
  return { events: events.length, bytes: footprintOf(events) };
}
