import { type BackoffOptions, fullJitterDelay } from './backoff.ts';
import type { BankingEvent } from './banking-event.ts';
import { planBatches } from './batch-planner.ts';
import { ConfigurationError, PollerError, PublishError } from './errors.ts';
import { type BatchTurn, type GivenUp, GroupSequencer, type TurnOutcome } from './group-sequencer.ts';
import type {
  Clock,
  CpuTurns,
  CycleLogger,
  EntryOutcome,
  EventPublisher,
  MetricsSink,
  PublishFailure,
} from './ports.ts';
import { PublishGate } from './publish-gate.ts';

export interface PublishPipelineOptions {
  /**
   * Attempts per entry, the first included, for failures that may pass on their own (`transient`).
   * Attempts the bus throttled do not count: they go on, with backoff, while the budget allows.
   * @default 5
   */
  readonly maxAttempts?: number;
  /** Waits between attempts for rejected entries. @default { baseMs: 100, capMs: 5000 } */
  readonly backoff?: BackoffOptions;
  /** PutEvents requests in flight at once, across pages. @default 8 */
  readonly concurrency?: number;
  /** Cap on PutEvents requests started per second. @default no cap */
  readonly maxRequestsPerSecond?: number;
}

export interface PublishPipelineDeps {
  readonly publisher: EventPublisher;
  readonly clock: Clock;
  readonly metrics: MetricsSink;
  readonly logger: CycleLogger;
  readonly random?: () => number;
  /** Turns on a shared thread: each request to the bus is built and sent in its program's turn. @default none */
  readonly cpuTurns?: CpuTurns;
}

export interface FailedEvent {
  readonly event: BankingEvent;
  readonly errorCode: string;
  readonly errorMessage: string;
}

export interface PublishReport {
  readonly accepted: number;
  /** Events still rejected when attempts or the budget ran out, or held back by their group (`EARLIER_ENTRY_FAILED`). */
  readonly failed: readonly FailedEvent[];
  /** Events never sent because the pipeline was halted (another batch failed first). */
  readonly unsent: number;
  /** An event too large to publish; nothing at or after it was sent. */
  readonly oversize?: { readonly event: BankingEvent; readonly sizeBytes: number };
}

export interface PublishRequest {
  /** Epoch ms; no resend wait is started that would end after it. */
  readonly deadline: number;
  readonly signal: AbortSignal;
  /**
   * Aborts when no batch may be sent for the first time any more, shortly before `signal`, so that
   * those sent are answered in time: a batch not sent by then is `unsent` (the bus has none of it),
   * not failed. A batch of event groups still waiting for its turn then is unsent too, and so is
   * what of its groups comes after it. @default `signal`
   */
  readonly startSignal?: AbortSignal;
  /** Called once per event the bus accepted, as soon as it is known. */
  readonly onAccepted: (event: BankingEvent) => void;
}

interface BatchResult {
  accepted: number;
  failed: FailedEvent[];
  unsent: number;
}

/**
 * How the failures of an attempt may be retried, the least hopeful of them deciding:
 * - `budget`: the bus only throttled: again, with backoff, while the budget allows;
 * - `attempts`: again, with backoff, up to `maxAttempts` such attempts (and within the budget);
 * - `never`: refused for good (`rejected`, `too-large`): another try cannot help.
 */
type RetryRule = 'budget' | 'attempts' | 'never';

/** What one request to the bus did: entries accepted, entries rejected, and whether to try again. */
interface Attempt {
  readonly accepted: number;
  readonly failed: FailedEvent[];
  readonly retry: RetryRule;
  /** The invocation's end came while the request was out. */
  readonly aborted: boolean;
}

export const PUBLISH_DEFAULTS = {
  maxAttempts: 5,
  backoff: { baseMs: 100, capMs: 5000 },
  concurrency: 8,
} as const;

/**
 * Sends events in batches that respect the publisher's limits, several batches at once (across
 * pages too) through a `PublishGate`, and resends only the rejected entries, with full-jitter
 * backoff, by what the publisher says of each failure (`PublishFailure`): throttled, for as long
 * as the budget allows; transient, while attempts and the budget allow; refused for good, never.
 * Acceptance is reported per event, so the caller can checkpoint the contiguous prefix however
 * batches interleave.
 *
 * After a batch fails for good the caller halts the pipeline: batches not started yet are not
 * sent (they would only become duplicates once the run is retried from the checkpoint).
 *
 * With event groups (`EventPublisher.eventGroup`) a `GroupSequencer` keeps each in order: a batch
 * waits for the earlier entries of its groups to be accepted (`group-sequencer.ts`).
 */
export class PublishPipeline {
  readonly #deps: PublishPipelineDeps;
  readonly #maxAttempts: number;
  readonly #backoff: BackoffOptions;
  readonly #gate: PublishGate;
  readonly #sequencer: GroupSequencer | undefined;
  #halted = false;

  constructor(deps: PublishPipelineDeps, options: PublishPipelineOptions = {}) {
    this.#deps = deps;
    this.#maxAttempts = options.maxAttempts ?? PUBLISH_DEFAULTS.maxAttempts;
    this.#backoff = options.backoff ?? PUBLISH_DEFAULTS.backoff;
    this.#gate = new PublishGate(deps.clock, {
      concurrency: options.concurrency ?? PUBLISH_DEFAULTS.concurrency,
      maxRequestsPerSecond: options.maxRequestsPerSecond,
    });
    this.#sequencer = deps.publisher.eventGroup === undefined ? undefined : new GroupSequencer(deps);
  }

  /** Stops sending: batches waiting for the gate, and resends, give up. Idempotent. */
  halt(): void {
    this.#halted = true;
    this.#sequencer?.halt();
  }

  /** Publishes one page's events; resolves once every batch of it has settled. */
  async publish(events: readonly BankingEvent[], request: PublishRequest): Promise<PublishReport> {
    const { publisher } = this.#deps;
    const plan = planBatches(events, publisher.limits, (event) => publisher.entrySize(event));
    // Registered before anything is sent, so that pages keep the order they were given in.
    const turns = this.#sequencer?.register(plan.batches);
    const results = await Promise.all(
      plan.batches.map((batch, index) => {
        const turn = turns?.[index];
        return turn === undefined
          ? this.#sendWithRetries(batch, undefined, request)
          : this.#sendInTurn(batch, turn, request);
      }),
    );
    const report: PublishReport = {
      accepted: results.reduce((sum, result) => sum + result.accepted, 0),
      failed: results.flatMap((result) => result.failed),
      unsent: results.reduce((sum, result) => sum + result.unsent, 0),
    };
    return plan.oversize === undefined ? report : { ...report, oversize: plan.oversize };
  }

  /**
   * A batch with event groups: waits for its turn, sends what no earlier entry given up holds
   * back, and then gives up what it did not get accepted, so that its groups go no further.
   */
  async #sendInTurn(
    batch: readonly BankingEvent[],
    turn: BatchTurn,
    request: PublishRequest,
  ): Promise<BatchResult> {
    // How what the batch did not get accepted ends: never sent (so what follows in its groups is
    // unsent too), or sent and not accepted (what follows is held back, failed).
    let givenUp: GivenUp = 'failed';
    const unsent = (count: number, failed: FailedEvent[] = []): BatchResult => {
      givenUp = 'unsent';
      return { accepted: 0, failed, unsent: count };
    };
    // A turn that comes too late to be answered is not taken, as a first send is not started then.
    const { startSignal = request.signal } = request;
    const tooLate = () => startSignal !== request.signal && startSignal.aborted;
    try {
      let outcome: TurnOutcome;
      try {
        outcome = await turn.wait(startSignal);
      } catch (error) {
        if (tooLate()) return unsent(batch.length);
        return { accepted: 0, failed: asFailed(batch, 'DeadlineExceeded', error), unsent: 0 };
      }
      if (outcome.kind === 'halted' || this.#halted) return unsent(batch.length);
      const { send, heldBack } = outcome;
      const behindUnsent = outcome.unsent.length;
      if (send.length === 0 || tooLate()) return unsent(send.length + behindUnsent, [...heldBack]);
      const sent = await this.#sendWithRetries(send, turn, request);
      if (sent.accepted === 0 && sent.failed.length === 0) givenUp = 'unsent';
      return { ...sent, failed: [...sent.failed, ...heldBack], unsent: sent.unsent + behindUnsent };
    } finally {
      turn.settle(givenUp);
    }
  }

  async #sendWithRetries(
    batch: readonly BankingEvent[],
    turn: BatchTurn | undefined,
    request: PublishRequest,
  ): Promise<BatchResult> {
    let pending = batch;
    let accepted = 0;
    // Attempts that count against `maxAttempts`: throttled ones are bounded by the budget alone.
    let counted = 0;
    // A first send too late to be answered is not started at all.
    const firstSend = request.startSignal ?? request.signal;
    for (let attempt = 1; ; attempt += 1) {
      if (this.#halted) return { accepted, failed: [], unsent: pending.length };
      try {
        await this.#gate.acquire(attempt === 1 ? firstSend : request.signal);
      } catch (error) {
        if (attempt === 1 && firstSend !== request.signal)
          return { accepted, failed: [], unsent: pending.length };
        return { accepted, failed: asFailed(pending, 'DeadlineExceeded', error), unsent: 0 };
      }
      const sent = await this.#sendOnce(pending, turn, request);
      accepted += sent.accepted;
      if (sent.aborted || sent.failed.length === 0) return { accepted, failed: sent.failed, unsent: 0 };
      if (sent.retry !== 'budget') counted += 1;
      const resend = await this.#waitToResend(attempt, counted, sent, request);
      if (resend !== 'resend') return { accepted, failed: resend, unsent: 0 };
      pending = sent.failed.map((f) => f.event);
    }
  }

  /** One request for `pending`, holding a slot of the gate it releases. */
  async #sendOnce(
    pending: readonly BankingEvent[],
    turn: BatchTurn | undefined,
    request: PublishRequest,
  ): Promise<Attempt> {
    const failed: FailedEvent[] = [];
    const failures = new Set<PublishFailure>();
    let accepted = 0;
    try {
      // Its entries are built and signed in this program's turn, when the thread is shared.
      if (this.#deps.cpuTurns !== undefined) await this.#deps.cpuTurns.take();
      const outcomes = await this.#deps.publisher.send(pending, request.signal);
      pending.forEach((event, index) => {
        const result: EntryOutcome | undefined = outcomes[index];
        if (result?.ok) {
          accepted += 1;
          turn?.accepted(event);
          request.onAccepted(event);
        } else {
          // No outcome at all is an answer we do not understand: worth another try.
          failures.add(result?.failure ?? 'transient');
          failed.push({
            event,
            errorCode: result?.errorCode ?? 'MissingOutcome',
            errorMessage: result?.errorMessage ?? 'The publisher returned no outcome for this entry',
          });
        }
      });
      if (turn !== undefined && accepted > 0 && failed.length > 0) turn.checkOrder(pending, outcomes);
    } catch (error) {
      if (request.signal.aborted) {
        this.#gate.release('failed');
        return {
          accepted,
          failed: asFailed(pending, 'DeadlineExceeded', error),
          retry: 'never',
          aborted: true,
        };
      }
      const failure = requestFailureOf(error);
      this.#gate.release(failure === 'throttled' ? 'throttled' : 'failed');
      return {
        accepted,
        failed: asFailed(pending, errorCode(error), error),
        retry: retryRule([failure]),
        aborted: false,
      };
    }
    this.#gate.release(failures.has('throttled') ? 'throttled' : 'ok');
    return { accepted, failed, retry: retryRule(failures), aborted: false };
  }

  /**
   * After an attempt left entries rejected: waits the backoff and says `resend`, or gives up
   * (refused for good, attempts or budget exhausted, publishing halted) and returns what failed.
   * `counted` is the attempts that count against `maxAttempts` (see `RetryRule`).
   */
  async #waitToResend(
    attempt: number,
    counted: number,
    sent: Attempt,
    request: PublishRequest,
  ): Promise<'resend' | FailedEvent[]> {
    const { clock, metrics, logger } = this.#deps;
    const { failed } = sent;
    metrics.add('FailedEntries', 'Count', failed.length);
    const wait = fullJitterDelay(attempt - 1, this.#backoff, this.#deps.random);
    const outOfBudget = clock.now() + wait >= request.deadline;
    const exhausted = sent.retry === 'attempts' && counted >= this.#maxAttempts;
    if (sent.retry === 'never' || exhausted || outOfBudget || this.#halted) {
      logger.error('Entries still rejected by the bus; the checkpoint stays before them', {
        attempts: attempt,
        reason:
          sent.retry === 'never'
            ? 'not retryable'
            : exhausted
              ? 'attempts exhausted'
              : this.#halted
                ? 'publishing halted'
                : sent.retry === 'budget'
                  ? 'throttled until the budget ran out'
                  : 'budget exhausted',
        failed: failed.slice(0, 5).map((f) => ({
          id: f.event.id,
          sequence_number: f.event.sequence_number,
          errorCode: f.errorCode,
          errorMessage: f.errorMessage,
        })),
      });
      return failed;
    }
    logger.warn('Resending rejected entries', { attempt, count: failed.length, waitMs: wait });
    metrics.add('PublishRetries', 'Count', failed.length);
    try {
      await clock.sleep(wait, request.signal);
      return 'resend';
    } catch (error) {
      // Only the entries still rejected: the rest of the batch was accepted in this attempt.
      return asFailed(
        failed.map((f) => f.event),
        'DeadlineExceeded',
        error,
      );
    }
  }
}

/**
 * How a request that failed as a whole failed: as its publisher classified it (`PublishError`),
 * `rejected` for what the deployment must fix (`ConfigurationError`), else `transient` (an error
 * the publisher did not classify: worth the bounded attempts).
 */
function requestFailureOf(error: unknown): PublishFailure {
  if (error instanceof ConfigurationError) return 'rejected';
  if (error instanceof PublishError && error.failure !== undefined) return error.failure;
  return 'transient';
}

function retryRule(failures: Iterable<PublishFailure>): RetryRule {
  let rule: RetryRule = 'budget';
  for (const failure of failures) {
    if (failure === 'rejected' || failure === 'too-large') return 'never';
    if (failure === 'transient') rule = 'attempts';
  }
  return rule;
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
