/**
 * One page of the cycle: admitted (checked and registered before anything of it is published),
 * then published, the checkpoint offered as events are accepted. Late events (below the
 * checkpoint, filling a recorded gap) go out with it and only leave the gap ledger.
 */
import type { BankingEvent } from '../banking-event.ts';
import type { CheckpointProgress } from '../checkpoint/progress.ts';
import type { CycleBudget } from '../cycle-budget.ts';
import { DeadlineExceededError, EventTooLargeError, PublishError } from '../errors.ts';
import type { GapLedger } from '../gap-ledger.ts';
import { PublishPipeline, type PublishReport } from '../publish-pipeline.ts';
import type { CycleDeps } from './cycle-deps.ts';
import type { CycleSettings } from './cycle-options.ts';
import type { FeedIdentity } from './feed-identity.ts';
import type { GapWatch } from './gap-watch.ts';
import type { LagGauge } from './lag-gauge.ts';

export interface PagePublisherParts {
  readonly budget: CycleBudget;
  readonly gaps: GapLedger;
  readonly gapWatch: GapWatch;
  readonly identity: FeedIdentity;
  readonly lag: LagGauge;
  readonly progress: CheckpointProgress;
}

export class PagePublisher {
  readonly #deps: CycleDeps;
  readonly #parts: PagePublisherParts;
  readonly #pipeline: PublishPipeline;
  #published = 0;

  constructor(deps: CycleDeps, settings: CycleSettings, parts: PagePublisherParts) {
    this.#deps = deps;
    this.#parts = parts;
    this.#pipeline = new PublishPipeline(
      {
        publisher: deps.publisher,
        clock: deps.clock,
        metrics: deps.metrics,
        logger: deps.logger,
        random: deps.random,
        cpuTurns: deps.cpuTurns,
      },
      settings.publish,
    );
  }

  /** Events the bus accepted in this cycle. */
  get published(): number {
    return this.#published;
  }

  /** Sends no batch not yet started: after a failure they would only become duplicates. */
  halt(): void {
    this.#pipeline.halt();
  }

  /**
   * Checks a page and registers its new events before anything of it is published.
   *
   * @throws FeedProgramMismatchError when the page holds another program's events
   */
  admit(fresh: readonly BankingEvent[], late: readonly BankingEvent[]): void {
    const { identity, gapWatch, progress } = this.#parts;
    identity.check([...late, ...fresh]);
    gapWatch.record(progress.cursor, fresh);
    progress.register(fresh);
    this.#reportInvalidEvents([...late, ...fresh]);
  }

  /**
   * Asks for the safe checkpoint to be written, with the row's feed and the newest event. The feed
   * is unknown only while every event of a new row so far was quarantined: it is then recorded by
   * the first commit that has a valid event (the quarantined ones still move the checkpoint, so
   * they are not published again at every run).
   */
  offerCheckpoint(): void {
    this.#parts.progress.offer(this.#parts.identity.programId, this.#parts.lag.newestCreatedDt);
  }

  /**
   * Publishes an admitted page, offering the checkpoint to the committer as events are accepted;
   * throws when an event stayed unpublished or a checkpoint write failed.
   */
  async publish(fresh: readonly BankingEvent[], late: readonly BankingEvent[]): Promise<void> {
    const { budget, gaps, lag, progress } = this.#parts;
    const lateOnes = new Set(late);
    const report = await this.#pipeline.publish([...late, ...fresh], {
      deadline: budget.deadline,
      signal: budget.workSignal,
      startSignal: budget.startSignal,
      onAccepted: (event) => {
        gaps.fill(event.sequence_number);
        if (!lateOnes.has(event)) {
          progress.accept(event.sequence_number);
          lag.accepted(event);
        }
        this.offerCheckpoint();
      },
    });
    this.#published += report.accepted;
    this.#deps.metrics.add('EventsPublished', 'Count', report.accepted);
    if (report.unsent > 0 && budget.startSignal.aborted) {
      // Read but not sent in time: the checkpoint stays before them, the next run reads them again.
      this.#deps.logger.info(
        'Events read were not sent before the end of the invocation; the next run reads them again',
        {
          unsent: report.unsent,
          checkpoint: progress.safe,
        },
      );
    }
    lag.measure(progress.safe);
    const failure = progress.writeFailure;
    if (failure !== undefined) throw failure.error;
    this.#throwIfIncomplete(report);
  }

  /**
   * Publishes the quarantined copy of a held jump (`sequence-jumps.ts`). It is never registered,
   * so the checkpoint does not move for it; `onAccepted` records the jump, which is then written
   * with the next checkpoint. Throws as `publish` does.
   */
  async publishHeld(copy: BankingEvent, onAccepted: () => void): Promise<void> {
    const { budget, progress } = this.#parts;
    const report = await this.#pipeline.publish([copy], {
      deadline: budget.deadline,
      signal: budget.workSignal,
      onAccepted: () => {
        onAccepted();
        this.offerCheckpoint();
      },
    });
    this.#published += report.accepted;
    this.#deps.metrics.add('EventsPublished', 'Count', report.accepted);
    const failure = progress.writeFailure;
    if (failure !== undefined) throw failure.error;
    this.#throwIfIncomplete(report);
  }

  #throwIfIncomplete(report: PublishReport): void {
    const { budget, progress } = this.#parts;
    const firstFailure = report.failed[0];
    const checkpoint = progress.safe;
    if (firstFailure !== undefined) {
      const { event } = firstFailure;
      const context = {
        failedCount: report.failed.length,
        eventId: event.id,
        sequenceNumber: event.sequence_number,
        errorCode: firstFailure.errorCode,
        checkpoint,
      };
      if (budget.workSignal.aborted) {
        // Whether the bus got them is unknown; they are sent again next time, the checkpoint did not move.
        throw new DeadlineExceededError(
          `The invocation ended while ${report.failed.length} event(s) were being published (first: ${event.id}, sequence ${event.sequence_number}); the checkpoint stays at ${checkpoint ?? 'none'}`,
          context,
        );
      }
      throw new PublishError(
        `${report.failed.length} event(s) were not accepted by the bus (first: ${event.id}, sequence ${event.sequence_number}: ${firstFailure.errorCode}: ${firstFailure.errorMessage}); the checkpoint stays at ${checkpoint ?? 'none'}`,
        context,
      );
    }
    if (report.oversize !== undefined) {
      const { event, sizeBytes } = report.oversize;
      throw new EventTooLargeError(
        event.id,
        event.sequence_number,
        sizeBytes,
        this.#deps.publisher.limits.maxEntryBytes,
      );
    }
  }

  /** Counts and logs the quarantined events of a page (their text goes to the bus, never to a log). */
  #reportInvalidEvents(events: readonly BankingEvent[]): void {
    const invalid = events.filter((event) => event.invalid !== undefined);
    if (invalid.length === 0) return;
    this.#deps.metrics.add('InvalidEvents', 'Count', invalid.length);
    for (const event of invalid) {
      this.#deps.logger.warn(
        'An event failed validation; publishing it as invalid_event for the quarantine queue',
        {
          position: event.sequence_number,
          sequenceNumber: event.invalid!.sequenceNumber,
          field: event.invalid!.field,
          error: event.invalid!.message,
          fingerprint: event.invalid!.fingerprint,
        },
      );
    }
  }
}
