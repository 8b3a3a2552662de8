import type { BankingEvent, FeedPage } from '../../functions/core/event-model.ts';
import type {
  CycleLogger,
  EntryOutcome,
  EventFeed,
  EventPublisher,
  MetricName,
  MetricsSink,
  PollRequest,
  PublishLimits,
} from '../../functions/core/ports.ts';
import type { FakeClock } from './fake-clock.ts';

let counter = 0;

/** A valid normalized event; created a second before `now` unless told otherwise. Its detail is its JSON. */
export function makeEvent(
  sequence: number,
  overrides: Partial<Omit<BankingEvent, 'detail'>> = {},
): BankingEvent {
  counter += 1;
  const fields = {
    id: `evt-${sequence}-${counter}`,
    program_id: 'program-1',
    sequence_number: sequence,
    created_dt: '2026-11-21T23:59:59.000+00:00',
    type: 'transaction',
    data: { transaction_id: `tx-${sequence}`, amount: 100 * sequence },
    ...overrides,
  };
  return { ...fields, detail: JSON.stringify(fields) };
}

type FeedStep = { readonly error: unknown } | { readonly page: FeedPage };

/**
 * A feed over a list of events, honouring the cursor and a page limit like the real one; an
 * empty answer holds for `holdMs` of virtual time (events appended meanwhile wait for the next
 * poll). Scripted steps (errors, odd pages) go first.
 */
export class InMemoryFeed implements EventFeed {
  readonly requests: Array<number | null> = [];
  readonly #events: BankingEvent[];
  readonly #script: FeedStep[] = [];

  constructor(
    private readonly clock: FakeClock,
    events: readonly BankingEvent[] = [],
    private readonly options: { limit?: number; holdMs?: number; ignoreCursor?: boolean } = {},
  ) {
    this.#events = [...events];
  }

  append(...events: BankingEvent[]): void {
    this.#events.push(...events);
  }

  script(step: FeedStep): this {
    this.#script.push(step);
    return this;
  }

  /** Binary search: events are appended in sequence order, and the benchmark feeds tens of thousands. */
  #firstAfter(after: number): number {
    let low = 0;
    let high = this.#events.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.#events[middle]!.sequence_number <= after) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  async poll(request: PollRequest): Promise<FeedPage> {
    request.signal.throwIfAborted();
    this.requests.push(request.after);
    const step = this.#script.shift();
    if (step !== undefined) {
      if ('error' in step) throw step.error;
      return step.page;
    }
    const after = this.options.ignoreCursor ? 0 : (request.after ?? 0);
    const start = this.#firstAfter(after);
    const events = this.#events.slice(start, start + (this.options.limit ?? 100));
    if (events.length === 0) {
      // A long poll: holds until its time is up, or ends early when the signal aborts.
      await this.clock.sleep(this.options.holdMs ?? 20_000, request.signal);
    }
    return { events, lastSequenceNumber: events.at(-1)?.sequence_number ?? after };
  }
}

/** A publisher that records accepted events and can reject chosen entries a number of times. */
export class InMemoryPublisher implements EventPublisher {
  readonly limits: PublishLimits;
  readonly accepted: BankingEvent[] = [];
  readonly batches: number[][] = [];
  readonly #rejections = new Map<number, number>();
  #requestFailures: unknown[] = [];

  constructor(limits: PublishLimits = { maxEntriesPerBatch: 10, maxBatchBytes: 256 * 1024 }) {
    this.limits = limits;
  }

  /** The event with this sequence number is rejected the next `times` times it is sent. */
  rejectSequence(sequence: number, times = Number.POSITIVE_INFINITY): void {
    this.#rejections.set(sequence, times);
  }

  failNextRequests(...errors: unknown[]): void {
    this.#requestFailures = errors;
  }

  entrySize(event: BankingEvent): number {
    return Buffer.byteLength(event.detail);
  }

  async send(batch: readonly BankingEvent[], signal: AbortSignal): Promise<readonly EntryOutcome[]> {
    signal.throwIfAborted();
    this.batches.push(batch.map((e) => e.sequence_number));
    const failure = this.#requestFailures.shift();
    if (failure !== undefined) throw failure;
    return batch.map((event) => {
      const left = this.#rejections.get(event.sequence_number) ?? 0;
      if (left > 0) {
        this.#rejections.set(event.sequence_number, left - 1);
        return { ok: false, errorCode: 'InternalFailure', errorMessage: 'scripted rejection' };
      }
      this.accepted.push(event);
      return { ok: true };
    });
  }
}

export class RecordingMetrics implements MetricsSink {
  readonly values: Array<{ name: MetricName; value: number }> = [];

  add(name: MetricName, _unit: string, value: number): void {
    this.values.push({ name, value });
  }

  sum(name: MetricName): number {
    return this.values.filter((m) => m.name === name).reduce((total, m) => total + m.value, 0);
  }

  last(name: MetricName): number | undefined {
    return this.values.filter((m) => m.name === name).at(-1)?.value;
  }
}

export class RecordingLogger implements CycleLogger {
  readonly lines: Array<{ level: string; message: string; attributes?: Record<string, unknown> }> = [];
  debug(message: string, attributes?: Record<string, unknown>): void {
    this.lines.push({ level: 'debug', message, attributes });
  }
  info(message: string, attributes?: Record<string, unknown>): void {
    this.lines.push({ level: 'info', message, attributes });
  }
  warn(message: string, attributes?: Record<string, unknown>): void {
    this.lines.push({ level: 'warn', message, attributes });
  }
  error(message: string, attributes?: Record<string, unknown>): void {
    this.lines.push({ level: 'error', message, attributes });
  }
}
