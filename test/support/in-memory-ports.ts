import { CLASSIC_BUS_ENTRY_RULES } from '../../functions/adapters/aws/eventbridge-entry-rules.ts';
import type { BankingEvent, FeedPage } from '../../functions/core/banking-event.ts';
import type {
  CycleLogger,
  EntryOutcome,
  EventFeed,
  EventLookup,
  EventPublisher,
  EventStream,
  MetricName,
  MetricsSink,
  PollRequest,
  PublishFailure,
  PublishLimits,
  StreamMessage,
  StreamRequest,
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

  /** Adds events; an event below the highest one (created after a jump, say) goes to its place. */
  append(...events: BankingEvent[]): void {
    const highest = this.#events.at(-1)?.sequence_number;
    this.#events.push(...events);
    if (highest !== undefined && events.some((event) => event.sequence_number < highest)) {
      this.#events.sort((a, b) => a.sequence_number - b.sequence_number);
    }
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
  readonly entryRules = CLASSIC_BUS_ENTRY_RULES;
  readonly accepted: BankingEvent[] = [];
  readonly batches: number[][] = [];
  readonly #rejections = new Map<number, { times: number; failure: PublishFailure }>();
  #requestFailures: unknown[] = [];

  constructor(
    limits: PublishLimits = { maxEntriesPerBatch: 10, maxBatchBytes: 256 * 1024, maxEntryBytes: 256 * 1024 },
  ) {
    this.limits = limits;
  }

  /** The event with this sequence number is rejected the next `times` times it is sent, for `failure`. */
  rejectSequence(
    sequence: number,
    times = Number.POSITIVE_INFINITY,
    failure: PublishFailure = 'transient',
  ): void {
    this.#rejections.set(sequence, { times, failure });
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
    return batch.map((event): EntryOutcome => {
      const rejection = this.#rejections.get(event.sequence_number);
      if (rejection !== undefined && rejection.times > 0) {
        rejection.times -= 1;
        return {
          ok: false,
          failure: rejection.failure,
          errorCode: 'InternalFailure',
          errorMessage: 'scripted rejection',
        };
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

/** One step of a scripted stream connection, `afterMs` of virtual time after the previous one. */
export type StreamStep =
  | { readonly afterMs?: number; readonly message: StreamMessage }
  | { readonly afterMs?: number; readonly end: true }
  | { readonly afterMs?: number; readonly error: unknown };

/**
 * A stream whose connections follow a script: each `open` takes the next entry (an error to throw,
 * or the steps of a connection). A connection whose steps run out stays open until its signal
 * aborts; with no script left, `open` gives such a quiet connection.
 */
export class ScriptedStream implements EventStream {
  /** The `after` of every open, in order. */
  readonly opens: Array<number | null> = [];
  /** Messages handed to the reader so far. */
  pulled = 0;
  /** Connections that ended because the reader left or aborted them, not by their script. */
  closedByReader = 0;
  readonly #script: Array<{ readonly error: unknown } | { readonly steps: readonly StreamStep[] }> = [];

  constructor(private readonly clock: FakeClock) {}

  connection(...steps: StreamStep[]): this {
    this.#script.push({ steps });
    return this;
  }

  refuse(error: unknown): this {
    this.#script.push({ error });
    return this;
  }

  async open(request: StreamRequest): Promise<AsyncIterable<StreamMessage>> {
    request.signal.throwIfAborted();
    this.opens.push(request.after);
    const next = this.#script.shift() ?? { steps: [] };
    if ('error' in next) throw next.error;
    return this.#run(next.steps, request.signal);
  }

  async *#run(steps: readonly StreamStep[], signal: AbortSignal): AsyncGenerator<StreamMessage> {
    let finished = false;
    try {
      for (const step of steps) {
        if (step.afterMs) await this.clock.sleep(step.afterMs, signal);
        if ('end' in step) {
          finished = true;
          return;
        }
        if ('error' in step) {
          finished = true;
          throw step.error;
        }
        this.pulled += 1;
        yield step.message;
      }
      // Open until the reader aborts it: the abort surfaces as an error, as from a real connection.
      await this.clock.sleep(Number.MAX_SAFE_INTEGER / 2, signal);
    } finally {
      if (!finished) this.closedByReader += 1;
    }
  }
}

/** Lookups over a set of events, each answer `delayMs` of virtual time late; scripted errors go first. */
export class InMemoryLookup implements EventLookup {
  readonly byId: string[] = [];
  readonly bySequence: number[] = [];
  readonly #errors: unknown[] = [];

  constructor(
    private readonly clock: FakeClock,
    private readonly events: BankingEvent[] = [],
    private readonly delayMs = 0,
  ) {}

  add(...events: BankingEvent[]): void {
    this.events.push(...events);
  }

  failNext(...errors: unknown[]): void {
    this.#errors.push(...errors);
  }

  async fetchEventById(id: string, signal: AbortSignal): Promise<BankingEvent | null> {
    this.byId.push(id);
    return this.#answer(signal, (event) => event.id === id);
  }

  async fetchEventBySequence(sequenceNumber: number, signal: AbortSignal): Promise<BankingEvent | null> {
    this.bySequence.push(sequenceNumber);
    return this.#answer(signal, (event) => event.sequence_number === sequenceNumber);
  }

  async #answer(signal: AbortSignal, match: (event: BankingEvent) => boolean): Promise<BankingEvent | null> {
    if (this.delayMs > 0) await this.clock.sleep(this.delayMs, signal);
    const error = this.#errors.shift();
    if (error !== undefined) throw error;
    return this.events.find(match) ?? null;
  }
}
