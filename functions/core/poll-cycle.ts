import { type BackoffOptions, fullJitterDelay } from './backoff.ts';
import { CheckpointTracker } from './checkpoint-tracker.ts';
import { EventTooLargeError, FeedCursorError, PublishError, UpstreamHttpError } from './errors.ts';
import { type BankingEvent, findSequenceGaps, selectNewEvents } from './event-model.ts';
import type { CheckpointStore, Clock, CycleLogger, EventFeed, EventPublisher, MetricsSink } from './ports.ts';
import { PublishPipeline, type PublishPipelineOptions } from './publish-pipeline.ts';

export interface PollCycleDeps {
  readonly feed: EventFeed;
  readonly publisher: EventPublisher;
  readonly checkpoints: CheckpointStore;
  readonly clock: Clock;
  readonly metrics: MetricsSink;
  readonly logger: CycleLogger;
  /** Source of jitter; injectable for deterministic tests. @default Math.random */
  readonly random?: () => number;
}

export interface PollCycleOptions {
  /** Names the checkpoint row and the metrics dimension. */
  readonly program: string;
  /** Lease owner: the invocation's request id. */
  readonly owner: string;
  /** Time left in the invocation at start (`context.getRemainingTimeInMillis()`). */
  readonly remainingMs: number;
  /** Time kept back at the end; never more than a quarter of `remainingMs`. @default 10_000 */
  readonly safetyMarginMs?: number;
  /** No new poll starts with less than this left. @default 2_000 */
  readonly minPollWindowMs?: number;
  /** Added to the lease expiry for clock skew between invocations; capped at 5 s. @default 5_000 */
  readonly leaseSkewMs?: number;
  /** Waits after a failed poll that gave no `Retry-After`. @default { baseMs: 200, capMs: 20_000 } */
  readonly pollBackoff?: BackoffOptions;
  /** An empty answer faster than this is followed by a pause, capping the request rate. @default 1_000 */
  readonly minEmptyPollIntervalMs?: number;
  readonly publish?: PublishPipelineOptions;
  /** Stops polling (not publishing) when aborted: Ctrl-C in local mode. */
  readonly stopSignal?: AbortSignal;
}

export type StopReason = 'deadline' | 'stopped' | 'upstream-unavailable' | 'lease-busy';

export interface CycleSummary {
  readonly program: string;
  readonly status: 'completed' | 'lease-busy';
  /** Events this invocation published (accepted by the bus). */
  readonly published: number;
  /** Events the feed returned, duplicates included. */
  readonly received: number;
  readonly polls: number;
  readonly pollErrors: number;
  /** Last committed sequence number, or `null` when none exists (or the lease was busy). */
  readonly checkpoint: number | null;
  readonly startCheckpoint: number | null;
  /** Seconds between now and the newest published event; 0 when caught up; null when unknown. */
  readonly lagSeconds: number | null;
  readonly durationMs: number;
  readonly stopReason: StopReason;
}

/** The lease release must be answered this long before Lambda ends the invocation. */
const RELEASE_RESERVE_MS = 250;

/** The shortest wait between a failed poll and the next one. */
const MIN_RETRY_WAIT_MS = 100;

const DEFAULTS = {
  safetyMarginMs: 10_000,
  minPollWindowMs: 2_000,
  leaseSkewMs: 5_000,
  pollBackoff: { baseMs: 200, capMs: 20_000 },
  minEmptyPollIntervalMs: 1_000,
} as const;

/**
 * The end of useful work: the configured margin, but never more than a quarter of the time
 * left, so short invocations (tests, tight timeouts) still poll.
 */
export function computeDeadline(startedAt: number, remainingMs: number, safetyMarginMs: number): number {
  return startedAt + remainingMs - Math.min(safetyMarginMs, Math.floor(remainingMs / 4));
}

/** When work in flight must be abandoned: a second (or a tenth of short budgets) before Lambda's end. */
export function computeHardDeadline(startedAt: number, remainingMs: number): number {
  return startedAt + remainingMs - Math.min(1_000, Math.floor(remainingMs / 10));
}

/**
 * One invocation: take the lease, then poll → publish → checkpoint until the budget runs out.
 * The checkpoint only ever moves to the contiguous prefix of accepted events, so a failure at
 * any point loses nothing: the next invocation starts from the last committed number.
 */
export async function runPollCycle(deps: PollCycleDeps, options: PollCycleOptions): Promise<CycleSummary> {
  const { clock, checkpoints, feed, metrics, logger } = deps;
  const safetyMarginMs = options.safetyMarginMs ?? DEFAULTS.safetyMarginMs;
  const minPollWindowMs = options.minPollWindowMs ?? DEFAULTS.minPollWindowMs;
  const leaseSkewMs = Math.min(options.leaseSkewMs ?? DEFAULTS.leaseSkewMs, 5_000);
  const pollBackoff = options.pollBackoff ?? DEFAULTS.pollBackoff;
  const minEmptyPollIntervalMs = options.minEmptyPollIntervalMs ?? DEFAULTS.minEmptyPollIntervalMs;

  const startedAt = clock.now();
  const deadline = computeDeadline(startedAt, options.remainingMs, safetyMarginMs);
  // The lease lasts until Lambda would end this invocation, plus skew: a crashed run frees it soon.
  const lease = await checkpoints.acquireLease({
    owner: options.owner,
    expiresAt: startedAt + options.remainingMs + leaseSkewMs,
    now: startedAt,
  });
  if (!lease.acquired) {
    metrics.add('LeaseBusy', 'Count', 1);
    logger.info('Another invocation holds the lease; not polling', {
      leaseHolder: lease.holder,
      leaseExpiresAt: new Date(lease.expiresAt).toISOString(),
    });
    return {
      program: options.program,
      status: 'lease-busy',
      published: 0,
      received: 0,
      polls: 0,
      pollErrors: 0,
      checkpoint: null,
      startCheckpoint: null,
      lagSeconds: null,
      durationMs: clock.now() - startedAt,
      stopReason: 'lease-busy',
    };
  }

  const pipeline = new PublishPipeline(
    { publisher: deps.publisher, clock, metrics, logger, random: deps.random },
    options.publish,
  );
  const deadlineSignal = clock.signalAt(deadline);
  // Ctrl-C stops the next poll, never a publish in progress: its events would only come again.
  const pollSignal =
    options.stopSignal === undefined ? deadlineSignal : AbortSignal.any([deadlineSignal, options.stopSignal]);
  // A PutEvents or commit in flight at the deadline may finish inside the safety margin; only the
  // end of the invocation itself cuts it off.
  const publishSignal = clock.signalAt(
    Math.max(deadline, computeHardDeadline(startedAt, options.remainingMs)),
  );

  let committed = lease.checkpoint;
  let published = 0;
  let received = 0;
  let polls = 0;
  let pollErrors = 0;
  let consecutiveErrors = 0;
  let lastPollError: unknown;
  let lagSeconds: number | null = null;
  let stopReason: StopReason = 'deadline';
  let stalePolls = 0;
  logger.info('Lease taken; polling', { checkpoint: committed, deadline: new Date(deadline).toISOString() });

  // Full jitter may draw 0; the floor keeps a run of failures from becoming back-to-back requests.
  const nextBackoff = (): number =>
    Math.max(MIN_RETRY_WAIT_MS, fullJitterDelay(consecutiveErrors, pollBackoff, deps.random));
  /**
   * Counts a failed poll and waits before the next one; false when the wait would not leave a
   * poll window before the deadline (or the wait was cut short), meaning: stop polling.
   */
  const backOff = async (
    reason: string,
    waitMs: number,
    attributes: Record<string, unknown>,
  ): Promise<boolean> => {
    pollErrors += 1;
    consecutiveErrors += 1;
    metrics.add('PollErrors', 'Count', 1);
    if (clock.now() + waitMs + minPollWindowMs > deadline) {
      logger.warn(`${reason}; no retry fits in the budget`, { ...attributes, cursor: committed, waitMs });
      stopReason = 'upstream-unavailable';
      return false;
    }
    logger.warn(`${reason}; retrying`, {
      ...attributes,
      cursor: committed,
      attempt: consecutiveErrors,
      waitMs,
    });
    try {
      await clock.sleep(waitMs, pollSignal);
      return true;
    } catch {
      return false;
    }
  };

  /**
   * Publishes one page's new events and commits the contiguous prefix the bus accepted; throws
   * when an event stayed unpublished (the checkpoint is then just below it).
   */
  const publishPage = async (fresh: readonly BankingEvent[]): Promise<void> => {
    const gaps = findSequenceGaps(committed, fresh);
    if (gaps.length > 0) {
      metrics.add(
        'SequenceGaps',
        'Count',
        gaps.reduce((missing, gap) => missing + gap.to - gap.from + 1, 0),
      );
      logger.warn('The feed skipped sequence numbers; publishing what it returned', {
        gaps: gaps.slice(0, 10),
        checkpoint: committed,
      });
    }

    const tracker = new CheckpointTracker(committed);
    tracker.track(fresh.map((event) => event.sequence_number));
    let newest: BankingEvent | undefined;
    const report = await pipeline.publish(fresh, {
      deadline,
      signal: publishSignal,
      onAccepted: (event) => {
        tracker.accept(event.sequence_number);
        if (newest === undefined || event.sequence_number > newest.sequence_number) newest = event;
      },
    });
    published += report.accepted;
    metrics.add('EventsPublished', 'Count', report.accepted);

    const safe = tracker.safeCheckpoint;
    if (safe !== null && (committed === null || safe > committed)) {
      await checkpoints.commit(options.owner, safe, publishSignal);
      committed = safe;
      metrics.add('CheckpointSequence', 'None', safe);
      logger.debug('Checkpoint committed', { checkpoint: safe, published: report.accepted });
    }
    if (newest !== undefined) {
      lagSeconds = Math.max(0, (clock.now() - Date.parse(newest.created_dt)) / 1000);
      metrics.add('LagSeconds', 'Seconds', lagSeconds);
    }

    const firstFailure = report.failed[0];
    if (firstFailure !== undefined) {
      throw new PublishError(
        `${report.failed.length} event(s) were not accepted by the bus (first: ${firstFailure.event.id}, sequence ${firstFailure.event.sequence_number}: ${firstFailure.errorCode}: ${firstFailure.errorMessage}); the checkpoint stays at ${committed ?? 'none'}`,
        {
          failedCount: report.failed.length,
          eventId: firstFailure.event.id,
          sequenceNumber: firstFailure.event.sequence_number,
          errorCode: firstFailure.errorCode,
          checkpoint: committed,
        },
      );
    }
    if (report.oversize !== undefined) {
      const { event, sizeBytes } = report.oversize;
      throw new EventTooLargeError(
        event.id,
        event.sequence_number,
        sizeBytes,
        deps.publisher.limits.maxBatchBytes,
      );
    }
  };

  try {
    while (!pollSignal.aborted && deadline - clock.now() >= minPollWindowMs) {
      metrics.add('PollRequests', 'Count', 1);
      const pollStartedAt = clock.now();
      let events: readonly BankingEvent[];
      try {
        ({ events } = await feed.poll({ after: committed, signal: pollSignal }));
      } catch (error) {
        if (pollSignal.aborted) break;
        if (!(error instanceof UpstreamHttpError && error.retryable)) throw error;
        lastPollError = error;
        // Retry-After is a floor, not a licence: "0" or a past date must not turn into a hot loop.
        const waitMs = Math.max(error.retryAfterMs ?? 0, nextBackoff());
        if (!(await backOff('Poll failed', waitMs, { status: error.status }))) break;
        continue;
      }
      polls += 1;
      received += events.length;
      metrics.add('EventsReceived', 'Count', events.length);

      const fresh = selectNewEvents(events, committed);
      if (fresh.length === 0 && events.length > 0) {
        // Only events we already have: the upstream ignored the cursor (wrong POLL_CURSOR_PARAM?)
        // or treats it as inclusive. Not "caught up", and not worth a hot loop.
        stalePolls += 1;
        const highest = events.at(-1)!.sequence_number;
        if (
          !(await backOff('The feed returned only events at or below the cursor', nextBackoff(), { highest }))
        )
          break;
        continue;
      }
      consecutiveErrors = 0;
      if (fresh.length === 0) {
        // Caught up. Emitted once per change, not once per empty long-poll.
        if (lagSeconds !== 0) metrics.add('LagSeconds', 'Seconds', 0);
        lagSeconds = 0;
        // An empty answer that did not hold (a proxy's instant 504, say) must not become a hot loop.
        const early = minEmptyPollIntervalMs - (clock.now() - pollStartedAt);
        if (early > 0) await clock.sleep(early, pollSignal).catch(() => {});
        continue;
      }

      await publishPage(fresh);
    }
    if (options.stopSignal?.aborted) stopReason = 'stopped';
    if (polls === 0 && lastPollError !== undefined) {
      // The feed never answered in this whole invocation: fail loudly so the errors alarm sees it.
      throw lastPollError;
    }
    if (stalePolls > 0 && stalePolls === polls) {
      throw new FeedCursorError(committed, stalePolls);
    }
  } finally {
    try {
      // Its own bound, so it is tried even when the publish signal has fired, yet returns before Lambda's end.
      await checkpoints.releaseLease(
        options.owner,
        clock.signalAt(startedAt + options.remainingMs - RELEASE_RESERVE_MS),
      );
    } catch (error) {
      logger.warn('Could not release the lease; it expires on its own', { error });
    }
  }

  const durationMs = clock.now() - startedAt;
  metrics.add('CycleDurationMs', 'Milliseconds', durationMs);
  const summary: CycleSummary = {
    program: options.program,
    status: 'completed',
    published,
    received,
    polls,
    pollErrors,
    checkpoint: committed,
    startCheckpoint: lease.checkpoint,
    lagSeconds,
    durationMs,
    stopReason,
  };
  logger.info('Cycle finished', { ...summary });
  return summary;
}
