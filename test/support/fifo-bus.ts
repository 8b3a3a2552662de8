import { CLASSIC_BUS_ENTRY_RULES } from '../../functions/adapters/aws/eventbridge-entry-rules.ts';
import type { BankingEvent } from '../../functions/core/banking-event.ts';
import { PublishError } from '../../functions/core/errors.ts';
import type { EntryOutcome, EventPublisher, PublishLimits } from '../../functions/core/ports.ts';
import type { FakeClock } from './fake-clock.ts';

/** One request as the bus saw it. */
export interface BusRequest {
  readonly sequences: readonly number[];
  readonly startedAt: number;
  /** Position of the start among the bus's starts and ends: orders what the clock shows as simultaneous. */
  readonly startStep: number;
  /** Position of the answer (or abort) among the bus's starts and ends. */
  endStep?: number;
  /** Requests in flight when this one started, itself included. */
  readonly inFlightAtStart: number;
  endedAt?: number;
  /** Per entry, accepted or rejected; `throttled` when the whole request was refused. */
  result?: readonly boolean[] | 'throttled';
}

export interface FifoBusOptions {
  readonly limits?: PublishLimits;
  /**
   * The event group of an event, as the bus's publisher names it; absent for a bus that names
   * none (the classic bus: the publisher then has no `eventGroup` at all).
   */
  readonly group?: (event: BankingEvent) => string | undefined;
  /** Virtual milliseconds the request takes; 10 unless told. */
  readonly delayMs?: (request: number) => number;
  /** The whole request is refused with a throttling error. */
  readonly throttle?: (request: number) => boolean;
  /** The entry is rejected in this request (`InternalFailure`); besides `rejectSequence`. */
  readonly reject?: (event: BankingEvent, request: number) => boolean;
  /** Entries larger than this are refused for their size, as EventBridge refuses them. */
  readonly refuseOverBytes?: number;
}

/**
 * A bus for the pipeline's order tests, on the virtual clock: each request takes virtual time, so
 * requests overlap as they would on the network; the bus records every request and the order in
 * which it accepted entries, which is the order a FIFO subscriber of a group would receive them.
 */
export class FifoBus implements EventPublisher {
  readonly limits: PublishLimits;
  readonly entryRules = CLASSIC_BUS_ENTRY_RULES;
  readonly requests: BusRequest[] = [];
  /** Every accepted entry, in acceptance order. */
  readonly accepted: BankingEvent[] = [];
  readonly eventGroup?: (event: BankingEvent) => string | undefined;
  inFlight = 0;
  maxInFlight = 0;
  readonly #clock: FakeClock;
  readonly #options: FifoBusOptions;
  readonly #rejections = new Map<number, number>();
  #steps = 0;

  constructor(clock: FakeClock, options: FifoBusOptions = {}) {
    this.#clock = clock;
    this.#options = options;
    this.limits = options.limits ?? {
      maxEntriesPerBatch: 10,
      maxBatchBytes: 256 * 1024,
      maxEntryBytes: 256 * 1024,
    };
    if (options.group !== undefined) this.eventGroup = options.group;
  }

  /** The event with this sequence number is rejected the next `times` times it is sent. */
  rejectSequence(sequence: number, times = Number.POSITIVE_INFINITY): void {
    this.#rejections.set(sequence, times);
  }

  entrySize(event: BankingEvent): number {
    return Buffer.byteLength(event.detail);
  }

  async send(batch: readonly BankingEvent[], signal: AbortSignal): Promise<readonly EntryOutcome[]> {
    signal.throwIfAborted();
    const index = this.requests.length;
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    const request: BusRequest = {
      sequences: batch.map((event) => event.sequence_number),
      startedAt: this.#clock.now(),
      startStep: ++this.#steps,
      inFlightAtStart: this.inFlight,
    };
    this.requests.push(request);
    try {
      await this.#clock.sleep(this.#options.delayMs?.(index) ?? 10, signal);
    } finally {
      this.inFlight -= 1;
      request.endedAt = this.#clock.now();
      request.endStep = ++this.#steps;
    }
    if (this.#options.throttle?.(index)) {
      request.result = 'throttled';
      throw new PublishError('Rate exceeded', {}, undefined, 'throttled');
    }
    const outcomes = batch.map((event): EntryOutcome => {
      if (this.entrySize(event) > (this.#options.refuseOverBytes ?? Number.POSITIVE_INFINITY)) {
        return {
          ok: false,
          failure: 'too-large',
          errorCode: 'ValidationException',
          errorMessage: 'Event size exceeds the limit',
        };
      }
      const left = this.#rejections.get(event.sequence_number) ?? 0;
      if (left > 0) this.#rejections.set(event.sequence_number, left - 1);
      if (left > 0 || this.#options.reject?.(event, index)) {
        return {
          ok: false,
          failure: 'transient',
          errorCode: 'InternalFailure',
          errorMessage: 'rejected by the test bus',
        };
      }
      this.accepted.push(event);
      return { ok: true };
    });
    request.result = outcomes.map((outcome) => outcome.ok);
    return outcomes;
  }
}

/** An event of a group, for the order tests: the group is in its data. */
export function groupOf(event: BankingEvent): string | undefined {
  const group = event.data.group;
  return typeof group === 'string' ? group : undefined;
}
