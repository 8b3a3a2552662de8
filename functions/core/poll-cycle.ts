import type { BackoffOptions } from './backoff.ts';
import { CheckpointTracker } from './checkpoint-tracker.ts';
import { CycleBudget } from './cycle-budget.ts';
import { recordingOutcome } from './cycle-record.ts';
import {
  DeadlineExceededError,
  EventTooLargeError,
  FeedCursorError,
  FeedProgramMismatchError,
  PublishError,
  StartPositionIncompleteError,
} from './errors.ts';
import { type BankingEvent, findSequenceGaps } from './event-model.ts';
import { FeedReader } from './feed-reader.ts';
import type {
  CheckpointStore,
  Clock,
  CycleLogger,
  EventFeed,
  EventPublisher,
  LeaseGrant,
  MetricsSink,
} from './ports.ts';
import { PublishPipeline, type PublishPipelineOptions, type PublishReport } from './publish-pipeline.ts';
import { fastForward, initialCursor, type StartPositionOptions } from './start-position.ts';

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
  /** An answer without events faster than this is followed by a pause, capping the request rate. @default 1_000 */
  readonly minEmptyPollIntervalMs?: number;
  readonly publish?: PublishPipelineOptions;
  /** Stops polling (not publishing) when aborted: Ctrl-C in local mode. */
  readonly stopSignal?: AbortSignal;
  /** Where a program without a checkpoint starts. @default the beginning of the feed */
  readonly startPosition?: StartPositionOptions;
}

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

/** The lease release must be answered this long before Lambda ends the invocation. */
const RELEASE_RESERVE_MS = 250;

const DEFAULTS = {
  safetyMarginMs: 10_000,
  minPollWindowMs: 2_000,
  leaseSkewMs: 5_000,
  pollBackoff: { baseMs: 200, capMs: 20_000 },
  minEmptyPollIntervalMs: 1_000,
} as const;

/**
 * One invocation: take the lease, then poll → publish → checkpoint until the budget runs out.
 * The checkpoint only ever moves to the contiguous prefix of accepted events, so a failure at
 * any point loses nothing: the next invocation starts from the last committed number. Every timer
 * the cycle starts is cleared before it returns.
 */
export async function runPollCycle(deps: PollCycleDeps, options: PollCycleOptions): Promise<CycleSummary> {
  const budget = new CycleBudget(
    deps.clock,
    options.remainingMs,
    options.safetyMarginMs ?? DEFAULTS.safetyMarginMs,
  );
  try {
    const leaseSkewMs = Math.min(options.leaseSkewMs ?? DEFAULTS.leaseSkewMs, 5_000);
    // The lease lasts until Lambda would end this invocation, plus skew: a crashed run frees it soon.
    const lease = await deps.checkpoints.acquireLease({
      owner: options.owner,
      expiresAt: budget.end + leaseSkewMs,
      now: budget.startedAt,
    });
    if (!lease.acquired) return leaseBusy(deps, options, budget, lease);
    const cycle = new PollCycle(deps, options, budget, lease);
    return await recordingOutcome(
      deps,
      () => budget.signalBeforeEnd(RELEASE_RESERVE_MS),
      () => cycle.run(),
    );
  } finally {
    budget.dispose();
  }
}

function leaseBusy(
  { metrics, logger }: PollCycleDeps,
  options: PollCycleOptions,
  budget: CycleBudget,
  lease: Extract<LeaseGrant, { acquired: false }>,
): CycleSummary {
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
    pollTimeouts: 0,
    checkpoint: null,
    startCheckpoint: null,
    lagSeconds: null,
    durationMs: budget.elapsed(),
    stopReason: 'lease-busy',
  };
}

/** The cycle once the lease is held: its state, and the steps that change it. */
class PollCycle {
  readonly #deps: PollCycleDeps;
  readonly #options: PollCycleOptions;
  readonly #budget: CycleBudget;
  readonly #reader: FeedReader;
  readonly #pipeline: PublishPipeline;
  readonly #startCheckpoint: number | null;
  /** The last committed sequence number: the cursor of the next poll. */
  #committed: number | null;
  /** The `program_id` this row's feed serves, once known. */
  #feedProgramId: string | null;
  #published = 0;
  #lagSeconds: number | null = null;

  constructor(
    deps: PollCycleDeps,
    options: PollCycleOptions,
    budget: CycleBudget,
    lease: Extract<LeaseGrant, { acquired: true }>,
  ) {
    this.#deps = deps;
    this.#options = options;
    this.#budget = budget;
    this.#startCheckpoint = lease.checkpoint;
    this.#committed = lease.checkpoint;
    this.#feedProgramId = lease.feedProgramId;
    // Ctrl-C stops the next poll, never a publish in progress: its events would only come again.
    const pollSignal =
      options.stopSignal === undefined
        ? budget.deadlineSignal
        : AbortSignal.any([budget.deadlineSignal, options.stopSignal]);
    this.#reader = new FeedReader(
      {
        feed: deps.feed,
        clock: deps.clock,
        metrics: deps.metrics,
        logger: deps.logger,
        random: deps.random,
      },
      {
        minPollWindowMs: options.minPollWindowMs ?? DEFAULTS.minPollWindowMs,
        pollBackoff: options.pollBackoff ?? DEFAULTS.pollBackoff,
        minEmptyPollIntervalMs: options.minEmptyPollIntervalMs ?? DEFAULTS.minEmptyPollIntervalMs,
      },
      { deadline: budget.deadline, signal: pollSignal },
    );
    this.#pipeline = new PublishPipeline(
      {
        publisher: deps.publisher,
        clock: deps.clock,
        metrics: deps.metrics,
        logger: deps.logger,
        random: deps.random,
      },
      options.publish,
    );
  }

  async run(): Promise<CycleSummary> {
    this.#deps.logger.info('Lease taken; polling', {
      checkpoint: this.#committed,
      deadline: new Date(this.#budget.deadline).toISOString(),
    });
    let stopReason: StopReason = 'deadline';
    try {
      const { startPosition } = this.#options;
      if (this.#committed === null && startPosition !== undefined) await this.#startAt(startPosition);
      for (;;) {
        const read = await this.#reader.next(this.#committed);
        if (read.kind === 'closed') {
          if (read.upstreamUnavailable) stopReason = 'upstream-unavailable';
          break;
        }
        if (read.kind === 'caught-up') this.#caughtUp();
        else await this.#publishPage(read.events);
      }
      if (this.#options.stopSignal?.aborted) stopReason = 'stopped';
      this.#failIfTheFeedNeverAnswered();
    } finally {
      await this.#releaseLease();
    }
    return this.#finish(stopReason);
  }

  #caughtUp(): void {
    // Emitted once per change, not once per empty long-poll.
    if (this.#lagSeconds !== 0) this.#deps.metrics.add('LagSeconds', 'Seconds', 0);
    this.#lagSeconds = 0;
  }

  /**
   * Publishes one page's new events and commits the contiguous prefix the bus accepted; throws
   * when an event stayed unpublished (the checkpoint is then just below it).
   */
  async #publishPage(fresh: readonly BankingEvent[]): Promise<void> {
    const { metrics } = this.#deps;
    this.#checkFeedIdentity(fresh);
    this.#reportGaps(fresh);

    const tracker = new CheckpointTracker(this.#committed);
    tracker.track(fresh.map((event) => event.sequence_number));
    let newest: BankingEvent | undefined;
    const report = await this.#pipeline.publish(fresh, {
      deadline: this.#budget.deadline,
      signal: this.#budget.workSignal,
      onAccepted: (event) => {
        tracker.accept(event.sequence_number);
        if (newest === undefined || event.sequence_number > newest.sequence_number) newest = event;
      },
    });
    this.#published += report.accepted;
    metrics.add('EventsPublished', 'Count', report.accepted);

    await this.#commit(tracker.safeCheckpoint, newest?.created_dt);
    if (newest !== undefined) {
      this.#lagSeconds = Math.max(0, (this.#deps.clock.now() - Date.parse(newest.created_dt)) / 1000);
      metrics.add('LagSeconds', 'Seconds', this.#lagSeconds);
    }
    this.#throwIfIncomplete(report);
  }

  /**
   * Every event of a feed carries its program's id. One that differs from the row's (or from the
   * rest of the page, before the row has one) means the secret holds another program's credentials:
   * publish nothing and keep the checkpoint.
   */
  #checkFeedIdentity(events: readonly BankingEvent[]): void {
    const expected = this.#feedProgramId ?? events[0]!.program_id;
    const stranger = events.find((event) => event.program_id !== expected);
    if (stranger !== undefined) {
      throw new FeedProgramMismatchError(
        this.#options.program,
        expected,
        stranger.program_id,
        stranger.sequence_number,
      );
    }
    this.#feedProgramId = expected;
  }

  #reportGaps(fresh: readonly BankingEvent[]): void {
    const gaps = findSequenceGaps(this.#committed, fresh);
    if (gaps.length === 0) return;
    this.#deps.metrics.add(
      'SequenceGaps',
      'Count',
      gaps.reduce((missing, gap) => missing + gap.to - gap.from + 1, 0),
    );
    this.#deps.logger.warn('The feed skipped sequence numbers; publishing what it returned', {
      gaps: gaps.slice(0, 10),
      checkpoint: this.#committed,
    });
  }

  /**
   * A program without a checkpoint starts at its start position: a number sets the cursor; `latest`
   * walks past the existing events without publishing and commits where it landed.
   */
  async #startAt({ position, pageLimit }: StartPositionOptions): Promise<void> {
    if (position.kind !== 'latest') {
      this.#committed = initialCursor(position);
      return;
    }
    // An earlier run already passed over the feed and found nothing to record (it was empty): every
    // event since is new. Without this, events created between two runs would be passed over too.
    if ((await this.#deps.checkpoints.read()).lastCycle?.outcome === 'completed') return;
    const landing = await fastForward(this.#reader, {
      from: null,
      startedAt: this.#budget.startedAt,
      pageLimit,
    });
    if (landing.kind === 'interrupted') {
      if (this.#options.stopSignal?.aborted) return;
      throw new StartPositionIncompleteError(this.#options.program, landing.reached, landing.pages);
    }
    this.#deps.logger.info(
      'Start position "latest": passed over the existing events without publishing them',
      {
        checkpoint: landing.reached,
        skipped: landing.skipped,
        pages: landing.pages,
      },
    );
    if (landing.reached === null) return;
    this.#feedProgramId = landing.feedProgramId;
    await this.#commit(landing.reached);
  }

  async #commit(safe: number | null, newestCreatedDt?: string): Promise<void> {
    if (safe === null || (this.#committed !== null && safe <= this.#committed)) return;
    await this.#deps.checkpoints.commit({
      owner: this.#options.owner,
      sequenceNumber: safe,
      // Set by #checkFeedIdentity before anything was published.
      feedProgramId: this.#feedProgramId!,
      newestCreatedDt,
      signal: this.#budget.workSignal,
    });
    this.#committed = safe;
    this.#deps.metrics.add('CheckpointSequence', 'None', safe);
    this.#deps.logger.debug('Checkpoint committed', { checkpoint: safe });
  }

  #throwIfIncomplete(report: PublishReport): void {
    const firstFailure = report.failed[0];
    if (firstFailure !== undefined) {
      const { event } = firstFailure;
      const context = {
        failedCount: report.failed.length,
        eventId: event.id,
        sequenceNumber: event.sequence_number,
        errorCode: firstFailure.errorCode,
        checkpoint: this.#committed,
      };
      if (this.#budget.workSignal.aborted) {
        // Whether the bus got them is unknown; they are sent again next time, the checkpoint did not move.
        throw new DeadlineExceededError(
          `The invocation ended while ${report.failed.length} event(s) were being published (first: ${event.id}, sequence ${event.sequence_number}); the checkpoint stays at ${this.#committed ?? 'none'}`,
          context,
        );
      }
      throw new PublishError(
        `${report.failed.length} event(s) were not accepted by the bus (first: ${event.id}, sequence ${event.sequence_number}: ${firstFailure.errorCode}: ${firstFailure.errorMessage}); the checkpoint stays at ${this.#committed ?? 'none'}`,
        context,
      );
    }
    if (report.oversize !== undefined) {
      const { event, sizeBytes } = report.oversize;
      throw new EventTooLargeError(
        event.id,
        event.sequence_number,
        sizeBytes,
        this.#deps.publisher.limits.maxBatchBytes,
      );
    }
  }

  /** A whole invocation without an answer must fail loudly, so the errors alarm sees it. */
  #failIfTheFeedNeverAnswered(): void {
    const { polls, pollTimeouts, stalePolls } = this.#reader.stats;
    if (polls === 0 && this.#reader.lastError !== undefined) throw this.#reader.lastError;
    if (stalePolls > 0 && stalePolls === polls - pollTimeouts) {
      throw new FeedCursorError(this.#committed, stalePolls);
    }
  }

  async #releaseLease(): Promise<void> {
    try {
      // Its own bound, so it is tried even when the work signal has fired, yet returns before Lambda's end.
      await this.#deps.checkpoints.releaseLease(
        this.#options.owner,
        this.#budget.signalBeforeEnd(RELEASE_RESERVE_MS),
      );
    } catch (error) {
      this.#deps.logger.warn('Could not release the lease; it expires on its own', { error });
    }
  }

  #finish(stopReason: StopReason): CycleSummary {
    const { metrics, logger } = this.#deps;
    const { polls, received, pollErrors, pollTimeouts, stalePolls } = this.#reader.stats;
    const durationMs = this.#budget.elapsed();
    // The stall alarm counts these: only a cycle in which the feed really answered is healthy.
    if (polls - pollTimeouts - stalePolls > 0) {
      metrics.add('CycleDurationMs', 'Milliseconds', durationMs);
    } else if (pollTimeouts > 0) {
      logger.warn(
        'Every poll of this cycle ended in a gateway timeout (408/504): the banking service did not answer. ' +
          'Not counted as a healthy cycle; the stall alarm fires if this goes on',
        { pollTimeouts, checkpoint: this.#committed },
      );
    }
    const summary: CycleSummary = {
      program: this.#options.program,
      status: 'completed',
      published: this.#published,
      received,
      polls,
      pollErrors,
      pollTimeouts,
      checkpoint: this.#committed,
      startCheckpoint: this.#startCheckpoint,
      lagSeconds: this.#lagSeconds,
      durationMs,
      stopReason,
    };
    logger.info('Cycle finished', { ...summary });
    return summary;
  }
}
