import { type BackoffOptions, fullJitterDelay } from './backoff.ts';
import type { BankingEvent } from './banking-event.ts';
import { planBatches } from './batch-planner.ts';
import { ConfigurationError, PollerError } from './errors.ts';
import { EARLIER_ENTRY_FAILED, GroupSequencer, type GroupTicket, type Turn } from './group-sequencer.ts';
import type { Clock, CycleLogger, EntryOutcome, EventPublisher, MetricsSink } from './ports.ts';
import { PublishGate, type RequestOutcome } from './publish-gate.ts';

export interface PublishPipelineOptions {
  /** Attempts per entry, the first included. @default 5 */
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
}

export interface FailedEvent {
  readonly event: BankingEvent;
  readonly errorCode: string;
  readonly errorMessage: string;
}

export interface PublishReport {
  readonly accepted: number;
  /** Events still rejected when attempts or the budget ran out. */
  readonly failed: readonly FailedEvent[];
  /**
   * Events never sent because the pipeline was halted (another batch failed first). Events held
   * back because an earlier event of their group failed are in `failed` instead
   * (`EARLIER_ENTRY_FAILED`).
   */
  readonly unsent: number;
  /** An event too large to publish; nothing at or after it was sent. */
  readonly oversize?: { readonly event: BankingEvent; readonly sizeBytes: number };
}

export interface PublishRequest {
  /** Epoch ms; no resend wait is started that would end after it. */
  readonly deadline: number;
  readonly signal: AbortSignal;
  /** Called once per event the bus accepted, as soon as it is known. */
  readonly onAccepted: (event: BankingEvent) => void;
}

interface BatchResult {
  accepted: number;
  failed: FailedEvent[];
  unsent: number;
}

/** What one PutEvents request did: entries accepted, entries rejected, and whether to try again. */
interface Attempt {
  readonly accepted: number;
  readonly failed: FailedEvent[];
  /** False for what will not fix itself within the invocation (a missing bus, a denied role). */
  readonly retryable: boolean;
  /** The invocation's end came while the request was out. */
  readonly aborted: boolean;
  /** The group tickets of `failed`, in the same order; only when the batch has groups. */
  readonly failedTickets?: readonly (GroupTicket | undefined)[];
}

/** A batch's group tickets, one per entry (see `GroupSequencer.register`); `undefined` when it has no group. */
type Tickets = readonly (GroupTicket | undefined)[] | undefined;

export const PUBLISH_DEFAULTS = {
  maxAttempts: 5,
  backoff: { baseMs: 100, capMs: 5000 },
  concurrency: 8,
} as const;

/** Error codes with which EventBridge says "slow down" (whole request or one entry). */
const THROTTLE_CODES = new Set(['ThrottlingException', 'Throttling', 'TooManyRequestsException']);

/**
 * Sends events in batches that respect the publisher's limits, several batches at once (across
 * pages too) through a `PublishGate`, and resends only the rejected entries, with full-jitter
 * backoff, while attempts and the budget allow. Acceptance is reported per event, so the caller
 * can checkpoint the contiguous prefix however batches interleave.
 *
 * After a batch fails for good the caller halts the pipeline: batches not started yet are not
 * sent (they would only become duplicates once the run is retried from the checkpoint).
 *
 * When the publisher names event groups (`EventPublisher.eventGroup`), each group is kept in
 * order through a `GroupSequencer`: a batch waits until the earlier entries of its groups were
 * accepted (see `group-sequencer.ts`). Without groups nothing of that runs.
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
    const { publisher } = deps;
    this.#sequencer =
      publisher.eventGroup === undefined
        ? undefined
        : new GroupSequencer({
            eventGroup: (event) => publisher.eventGroup?.(event),
            metrics: deps.metrics,
            logger: deps.logger,
          });
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
    const tickets = this.#sequencer?.register(plan.batches);
    const results = await Promise.all(
      plan.batches.map((batch, index) =>
        tickets?.[index] === undefined
          ? this.#sendWithRetries(batch, undefined, request)
          : this.#sendInTurn(batch, tickets[index], request),
      ),
    );
    const report: PublishReport = {
      accepted: results.reduce((sum, result) => sum + result.accepted, 0),
      failed: results.flatMap((result) => result.failed),
      unsent: results.reduce((sum, result) => sum + result.unsent, 0),
    };
    return plan.oversize === undefined ? report : { ...report, oversize: plan.oversize };
  }

  /**
   * A batch with event groups: waits for its turn, leaves out the entries whose group is blocked
   * by an earlier entry given up, sends the rest, and gives up on whatever it did not get
   * accepted, so that later entries of those groups are not sent either.
   */
  async #sendInTurn(
    batch: readonly BankingEvent[],
    tickets: readonly (GroupTicket | undefined)[],
    request: PublishRequest,
  ): Promise<BatchResult> {
    try {
      return await this.#sendWhenReady(batch, tickets, request);
    } finally {
      for (const ticket of tickets)
        if (ticket !== undefined && !ticket.accepted) this.#sequencer!.giveUp(ticket);
    }
  }

  async #sendWhenReady(
    batch: readonly BankingEvent[],
    tickets: readonly (GroupTicket | undefined)[],
    request: PublishRequest,
  ): Promise<BatchResult> {
    let turn: Turn;
    try {
      turn = await this.#sequencer!.waitTurn(tickets, request.signal);
    } catch (error) {
      return { accepted: 0, failed: asFailed(batch, 'DeadlineExceeded', error), unsent: 0 };
    }
    if (turn.kind === 'halted' || this.#halted) return { accepted: 0, failed: [], unsent: batch.length };
    if (turn.blocked.size === 0) return this.#sendWithRetries(batch, tickets, request);
    const blocked: FailedEvent[] = [];
    const sendable: BankingEvent[] = [];
    const sendableTickets: (GroupTicket | undefined)[] = [];
    batch.forEach((event, position) => {
      const blocker = turn.blocked.get(position);
      if (blocker === undefined) {
        sendable.push(event);
        sendableTickets.push(tickets[position]);
      } else {
        blocked.push({
          event,
          errorCode: EARLIER_ENTRY_FAILED,
          errorMessage: `Not sent: event ${blocker.id} (sequence ${blocker.sequence_number}), earlier in the same event group, was not accepted`,
        });
      }
    });
    const sent =
      sendable.length === 0
        ? { accepted: 0, failed: [], unsent: 0 }
        : await this.#sendWithRetries(sendable, sendableTickets, request);
    return { ...sent, failed: [...sent.failed, ...blocked] };
  }

  async #sendWithRetries(
    batch: readonly BankingEvent[],
    tickets: Tickets,
    request: PublishRequest,
  ): Promise<BatchResult> {
    let pending = batch;
    let pendingTickets = tickets;
    let accepted = 0;
    for (let attempt = 1; ; attempt += 1) {
      if (this.#halted) return { accepted, failed: [], unsent: pending.length };
      try {
        await this.#gate.acquire(request.signal);
      } catch (error) {
        return { accepted, failed: asFailed(pending, 'DeadlineExceeded', error), unsent: 0 };
      }
      const sent = await this.#sendOnce(pending, pendingTickets, request);
      accepted += sent.accepted;
      if (sent.aborted || sent.failed.length === 0) return { accepted, failed: sent.failed, unsent: 0 };
      const resend = await this.#waitToResend(attempt, sent, request);
      if (resend !== 'resend') return { accepted, failed: resend, unsent: 0 };
      pending = sent.failed.map((f) => f.event);
      // A resend never waits for its turn: what came before it in its groups was accepted before
      // its first send, or is in the resend with it, ahead of it.
      pendingTickets = sent.failedTickets;
    }
  }

  /** One PutEvents request for `pending`, holding a slot of the gate it releases. */
  async #sendOnce(
    pending: readonly BankingEvent[],
    tickets: Tickets,
    request: PublishRequest,
  ): Promise<Attempt> {
    const failed: FailedEvent[] = [];
    const failedTickets: (GroupTicket | undefined)[] | undefined = tickets === undefined ? undefined : [];
    let accepted = 0;
    let outcome: RequestOutcome = 'ok';
    try {
      const outcomes = await this.#deps.publisher.send(pending, request.signal);
      pending.forEach((event, index) => {
        const result: EntryOutcome | undefined = outcomes[index];
        if (result?.ok) {
          accepted += 1;
          const ticket = tickets?.[index];
          if (ticket !== undefined) this.#sequencer!.accepted(ticket);
          request.onAccepted(event);
        } else {
          failed.push({
            event,
            errorCode: result?.errorCode ?? 'MissingOutcome',
            errorMessage: result?.errorMessage ?? 'The publisher returned no outcome for this entry',
          });
          failedTickets?.push(tickets?.[index]);
        }
      });
      if (tickets !== undefined && accepted > 0 && failed.length > 0) {
        this.#sequencer!.checkOrder(tickets, outcomes);
      }
      if (failed.some((entry) => THROTTLE_CODES.has(entry.errorCode))) outcome = 'throttled';
    } catch (error) {
      if (request.signal.aborted) {
        this.#gate.release('failed');
        return {
          accepted,
          failed: asFailed(pending, 'DeadlineExceeded', error),
          retryable: false,
          aborted: true,
          failedTickets: tickets,
        };
      }
      this.#gate.release(isThrottle(error) ? 'throttled' : 'failed');
      // A missing bus or a denied role will not fix itself within this invocation.
      const retryable = !(
        error instanceof ConfigurationError ||
        (error instanceof PollerError && error.context.retryable === false)
      );
      return {
        accepted,
        failed: asFailed(pending, errorCode(error), error),
        retryable,
        aborted: false,
        failedTickets: tickets,
      };
    }
    this.#gate.release(outcome);
    return { accepted, failed, retryable: true, aborted: false, failedTickets };
  }

  /**
   * After an attempt left entries rejected: waits the backoff and says `resend`, or gives up
   * (not retryable, attempts or budget exhausted, publishing halted) and returns what failed.
   */
  async #waitToResend(
    attempt: number,
    sent: Attempt,
    request: PublishRequest,
  ): Promise<'resend' | FailedEvent[]> {
    const { clock, metrics, logger } = this.#deps;
    const { failed } = sent;
    metrics.add('FailedEntries', 'Count', failed.length);
    const wait = fullJitterDelay(attempt - 1, this.#backoff, this.#deps.random);
    const outOfBudget = clock.now() + wait >= request.deadline;
    if (!sent.retryable || attempt >= this.#maxAttempts || outOfBudget || this.#halted) {
      logger.error('Entries still rejected by the bus; the checkpoint stays before them', {
        attempts: attempt,
        reason: !sent.retryable
          ? 'not retryable'
          : outOfBudget
            ? 'budget exhausted'
            : this.#halted
              ? 'publishing halted'
              : 'attempts exhausted',
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

function isThrottle(error: unknown): boolean {
  const awsError = error instanceof PollerError ? error.context.awsError : undefined;
  return typeof awsError === 'string' && THROTTLE_CODES.has(awsError);
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
