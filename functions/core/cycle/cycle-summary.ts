/**
 * How a cycle ended: the summary the handler returns (and the CLI prints), the metric the stall
 * alarm counts, and the failures a cycle must report although nothing threw.
 */

import type { LeaseGrant } from '../checkpoint/store.ts';
import { FeedCursorError } from '../errors.ts';
import type { FeedSource } from '../feed-reader.ts';
import type { CycleLogger, MetricsSink } from '../ports.ts';

export type StopReason = 'deadline' | 'stopped' | 'upstream-unavailable' | 'lease-busy';

export interface CycleSummary {
  readonly program: string;
  readonly status: 'completed' | 'lease-busy';
  /** Events this invocation published (accepted by the bus). */
  readonly published: number;
  /** Events the feed returned, duplicates included. */
  readonly received: number;
  /** Polls the feed answered (gateway timeouts included). */
  readonly polls: number;
  readonly pollErrors: number;
  /** Polls that ended with 408 or 504. */
  readonly pollTimeouts: number;
  /** Last committed sequence number, or `null` when none exists (or the lease was busy). */
  readonly checkpoint: number | null;
  readonly startCheckpoint: number | null;
  /** Seconds between now and the newest published event; 0 when caught up; null when unknown. */
  readonly lagSeconds: number | null;
  readonly durationMs: number;
  readonly stopReason: StopReason;
}

interface Reporting {
  readonly metrics: MetricsSink;
  readonly logger: CycleLogger;
}

/** Another invocation kept the lease: nothing was polled. */
export function leaseBusySummary(
  { metrics, logger }: Reporting,
  program: string,
  durationMs: number,
  lease: Extract<LeaseGrant, { acquired: false }>,
): CycleSummary {
  metrics.add('LeaseBusy', 'Count', 1);
  logger.info('Another invocation holds the lease and did not hand it over; not polling', {
    leaseHolder: lease.holder,
    leaseExpiresAt: new Date(lease.expiresAt).toISOString(),
  });
  return {
    program,
    status: 'lease-busy',
    published: 0,
    received: 0,
    polls: 0,
    pollErrors: 0,
    pollTimeouts: 0,
    checkpoint: null,
    startCheckpoint: null,
    lagSeconds: null,
    durationMs,
    stopReason: 'lease-busy',
  };
}

/** What the cycle itself knows when it ends; the reader's counts are added here. */
export interface CycleOutcome {
  readonly program: string;
  readonly published: number;
  readonly checkpoint: number | null;
  readonly startCheckpoint: number | null;
  readonly lagSeconds: number | null;
  readonly durationMs: number;
  readonly stopReason: StopReason;
}

/**
 * A whole invocation without an answer must fail loudly, so the errors alarm sees it: the feed
 * never answered (the last retryable error), or answered only with events at or below the cursor.
 */
export function failIfTheFeedNeverAnswered(reader: FeedSource, checkpoint: number | null): void {
  const { polls, pollTimeouts, stalePolls } = reader.stats;
  if (polls === 0 && reader.lastError !== undefined) throw reader.lastError;
  if (stalePolls > 0 && stalePolls === polls - pollTimeouts)
    throw new FeedCursorError(checkpoint, stalePolls);
}

/**
 * The summary of a cycle that held the lease to its end. Only a cycle in which the feed really
 * answered counts as healthy (`CycleDurationMs`, which the stall alarm counts).
 */
export function completedSummary(
  { metrics, logger }: Reporting,
  reader: FeedSource,
  outcome: CycleOutcome,
): CycleSummary {
  const { polls, received, pollErrors, pollTimeouts, stalePolls } = reader.stats;
  if (polls - pollTimeouts - stalePolls > 0) {
    metrics.add('CycleDurationMs', 'Milliseconds', outcome.durationMs);
  } else if (pollTimeouts > 0) {
    logger.warn(
      'Every poll of this cycle ended in a gateway timeout (408/504): the banking service did not answer. ' +
        'Not counted as a healthy cycle; the stall alarm fires if this goes on',
      { pollTimeouts, checkpoint: outcome.checkpoint },
    );
  }
  const summary: CycleSummary = {
    program: outcome.program,
    status: 'completed',
    published: outcome.published,
    received,
    polls,
    pollErrors,
    pollTimeouts,
    checkpoint: outcome.checkpoint,
    startCheckpoint: outcome.startCheckpoint,
    lagSeconds: outcome.lagSeconds,
    durationMs: outcome.durationMs,
    stopReason: outcome.stopReason,
  };
  logger.info('Cycle finished', { ...summary });
  return summary;
}
