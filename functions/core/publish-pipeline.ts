import { type BackoffOptions, fullJitterDelay } from './backoff.ts';
import { planBatches } from './batch-planner.ts';
import { ConfigurationError, PollerError } from './errors.ts';
import type { BankingEvent } from './event-model.ts';
import type { Clock, CycleLogger, EventPublisher, MetricsSink } from './ports.ts';

export interface PublishPipelineOptions {
  /** Attempts per entry, the first included. @default 5 */
  readonly maxAttempts?: number;
  /** Waits between attempts for rejected entries. @default { baseMs: 100, capMs: 5000 } */
  readonly backoff?: BackoffOptions;
}

export interface PublishPipelineDeps {
  readonly publisher: EventPublisher;
  readonly clock: Clock;
  readonly metrics: MetricsSink;
  readonly logger: CycleLogger;
  readonly random?: () => number;
}

export interface FailedEvent {
  readonly event: BankingEvent;
  readonly errorCode: string;
  readonly errorMessage: string;
}

export interface PublishReport {
  readonly accepted: number;
  /** Events still rejected when attempts or the budget ran out. Publishing stopped at their batch. */
  readonly failed: readonly FailedEvent[];
  /** An event too large to publish; nothing at or after it was sent. */
  readonly oversize?: { readonly event: BankingEvent; readonly sizeBytes: number };
}

export interface PublishRequest {
  /** Epoch ms; no wait is started that would end after it. */
  readonly deadline: number;
  readonly signal: AbortSignal;
  /** Called once per event the bus accepted, as soon as it is known. */
  readonly onAccepted: (event: BankingEvent) => void;
}

/**
 * Sends events in batches that respect the publisher's limits and resends only the rejected
 * entries, with full-jitter backoff, while attempts and the budget allow. Batches go one at a
 * time for now; acceptance is reported per event so a caller can checkpoint the contiguous prefix
 * however batches are scheduled.
 */
export class PublishPipeline {
  readonly #deps: PublishPipelineDeps;
  readonly #maxAttempts: number;
  readonly #backoff: BackoffOptions;

  constructor(deps: PublishPipelineDeps, options: PublishPipelineOptions = {}) {
    this.#deps = deps;
    this.#maxAttempts = options.maxAttempts ?? 5;
    this.#backoff = options.backoff ?? { baseMs: 100, capMs: 5000 };
  }

  async publish(events: readonly BankingEvent[], request: PublishRequest): Promise<PublishReport> {
    const { publisher } = this.#deps;
    const plan = planBatches(events, publisher.limits, (event) => publisher.entrySize(event));
    let accepted = 0;
    for (const batch of plan.batches) {
      const result = await this.#sendWithRetries(batch, request);
      accepted += result.accepted;
      // Later batches wait for the next invocation: publishing past a stuck one would only add duplicates.
      if (result.failed.length > 0) return { accepted, failed: result.failed };
    }
    return plan.oversize === undefined
      ? { accepted, failed: [] }
      : { accepted, failed: [], oversize: plan.oversize };
  }

  async #sendWithRetries(
    batch: readonly BankingEvent[],
    request: PublishRequest,
  ): Promise<{ accepted: number; failed: FailedEvent[] }> {
    const { publisher, clock, metrics, logger } = this.#deps;
    let pending = batch;
    let accepted = 0;
    for (let attempt = 1; ; attempt += 1) {
      const failed: FailedEvent[] = [];
      let retryable = true;
      try {
        const outcomes = await publisher.send(pending, request.signal);
        pending.forEach((event, index) => {
          const outcome = outcomes[index];
          if (outcome?.ok) {
            accepted += 1;
            request.onAccepted(event);
          } else {
            failed.push({
              event,
              errorCode: outcome?.errorCode ?? 'MissingOutcome',
              errorMessage: outcome?.errorMessage ?? 'The publisher returned no outcome for this entry',
            });
          }
        });
      } catch (error) {
        if (request.signal.aborted) return { accepted, failed: asFailed(pending, 'DeadlineExceeded', error) };
        // A missing bus or a denied role will not fix itself within this invocation.
        retryable = !(
          error instanceof ConfigurationError ||
          (error instanceof PollerError && error.context.retryable === false)
        );
        failed.push(...asFailed(pending, errorCode(error), error));
      }
      if (failed.length === 0) return { accepted, failed };

      metrics.add('FailedEntries', 'Count', failed.length);
      const wait = fullJitterDelay(attempt - 1, this.#backoff, this.#deps.random);
      const outOfBudget = clock.now() + wait >= request.deadline;
      if (!retryable || attempt >= this.#maxAttempts || outOfBudget) {
        logger.error('Entries still rejected by the bus; the checkpoint stays before them', {
          attempts: attempt,
          reason: !retryable ? 'not retryable' : outOfBudget ? 'budget exhausted' : 'attempts exhausted',
          failed: failed.slice(0, 5).map((f) => ({
            id: f.event.id,
            sequence_number: f.event.sequence_number,
            errorCode: f.errorCode,
            errorMessage: f.errorMessage,
          })),
        });
        return { accepted, failed };
      }
      logger.warn('Resending rejected entries', { attempt, count: failed.length, waitMs: wait });
      metrics.add('PublishRetries', 'Count', failed.length);
      try {
        await clock.sleep(wait, request.signal);
      } catch (error) {
        // Only the entries still rejected: the rest of `pending` was accepted in this attempt.
        return {
          accepted,
          failed: asFailed(
            failed.map((f) => f.event),
            'DeadlineExceeded',
            error,
          ),
        };
      }
      pending = failed.map((f) => f.event);
    }
  }
}

function errorCode(error: unknown): string {
  if (error instanceof PollerError) return error.code;
  if (error instanceof Error) return error.name;
  return 'UnknownError';
}

function asFailed(events: readonly BankingEvent[], code: string, error: unknown): FailedEvent[] {
  const message = error instanceof Error ? error.message : String(error);
  return events.map((event) => ({ event, errorCode: code, errorMessage: message }));
}
