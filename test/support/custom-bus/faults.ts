/**
 * Fault injection for tests that drive a publisher or a subscriber through the stand-in: throttle
 * whole PutEvents requests, reject chosen entries with an error code (a partial failure), or make
 * chosen deliveries fail at the target. Rules stay until removed (the function each returns) or,
 * with `times`, until they have fired that many times.
 */

/** What a rule sees of one PutEvents entry. */
export interface EntryView {
  /** Position in its request. */
  readonly index: number;
  readonly source: string;
  readonly detailType: string;
  readonly detail: string | undefined;
  readonly eventGroupId: string | undefined;
  readonly deduplicationId: string | undefined;
}

export interface EntryRejection {
  readonly errorCode: string;
  readonly errorMessage: string;
}

/** What a rule sees of one delivery attempt. */
export interface DeliveryView {
  readonly subscriberArn: string;
  readonly targetArn: string;
  readonly eventId: string;
  readonly eventGroupId: string | undefined;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** The event as published (`Data`): the classic-shaped envelope. */
  readonly data: Record<string, unknown>;
}

export interface DeliveryFailure {
  /** The dead-letter record's `errorCode`, e.g. `ACCESS_DENIED`. */
  readonly errorCode: string;
  readonly errorMessage: string;
}

interface Rule<V, R> {
  readonly decide: (view: V) => R | undefined;
  remaining: number;
}

export class StandInFaults {
  #throttledRequests = 0;
  #putEventsDelayMs = 0;
  readonly #entryRules: Rule<EntryView, EntryRejection>[] = [];
  readonly #deliveryRules: Rule<DeliveryView, DeliveryFailure>[] = [];

  /** The next `count` PutEvents requests fail whole with `ThrottlingException` (HTTP 429). */
  throttlePutEvents(count = 1): void {
    this.#throttledRequests += count;
  }

  /**
   * Every PutEvents from now on takes effect at once and is answered `ms` later (a slow bus); 0
   * answers at once again.
   */
  delayPutEvents(ms: number): void {
    this.#putEventsDelayMs = ms;
  }

  /** @internal read by the server: how long a PutEvents answer is held. */
  get putEventsDelayMs(): number {
    return this.#putEventsDelayMs;
  }

  /** Throttles no further request: the throttles still pending are dropped. */
  stopThrottling(): void {
    this.#throttledRequests = 0;
  }

  /** Entries for which `decide` returns a rejection come back with that `ErrorCode`; the rest publish. */
  rejectEntries(
    decide: (entry: EntryView) => EntryRejection | undefined,
    options: { times?: number } = {},
  ): () => void {
    return add(this.#entryRules, decide, options.times);
  }

  /** Delivery attempts for which `decide` returns a failure fail at the target (and are retried). */
  failDeliveries(
    decide: (delivery: DeliveryView) => DeliveryFailure | undefined,
    options: { times?: number } = {},
  ): () => void {
    return add(this.#deliveryRules, decide, options.times);
  }

  /** @internal consumed by the bus: whether this request is throttled. */
  takeThrottle(): boolean {
    if (this.#throttledRequests === 0) return false;
    this.#throttledRequests--;
    return true;
  }

  /** @internal */
  entryRejection(view: EntryView): EntryRejection | undefined {
    return fire(this.#entryRules, view);
  }

  /** @internal */
  deliveryFailure(view: DeliveryView): DeliveryFailure | undefined {
    return fire(this.#deliveryRules, view);
  }
}

function add<V, R>(rules: Rule<V, R>[], decide: (view: V) => R | undefined, times?: number): () => void {
  const rule: Rule<V, R> = { decide, remaining: times ?? Number.POSITIVE_INFINITY };
  rules.push(rule);
  return () => {
    const index = rules.indexOf(rule);
    if (index >= 0) rules.splice(index, 1);
  };
}

function fire<V, R>(rules: Rule<V, R>[], view: V): R | undefined {
  for (const rule of rules) {
    if (rule.remaining <= 0) continue;
    const result = rule.decide(view);
    if (result !== undefined) {
      rule.remaining--;
      return result;
    }
  }
  return undefined;
}
