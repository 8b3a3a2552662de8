/**
 * The event log of one program: assigns sequence numbers, answers cursor reads, and tells waiting
 * requests (held polls, open streams) that something was appended. Sequence numbers can be left
 * unused (`skip`) and filled in later (`fill`), and events can be sent again (`resend`), as an
 * upstream may: such events ride along with the next poll answer.
 */
import { deepFreeze, formatTimestamp, type RawEvent, setDataText } from './raw-event.ts';

/** What `append` accepts; the feed assigns `sequence_number` and `program_id`. */
export interface EventInput {
  readonly id: string;
  readonly created_dt?: string;
  readonly type: string;
  readonly data: Record<string, unknown>;
  /** `data` exactly as it goes on the wire, when a JSON round trip of `data` would change it. */
  readonly dataText?: string;
}

export class ProgramFeed {
  /** `log[i]` holds sequence number `i + 1`, or nothing when that number is unused so far. */
  private readonly log: Array<RawEvent | undefined> = [];
  private readonly byId = new Map<string, RawEvent>();
  /** Sequence numbers whose event only the lookups find: polls and streams pass over them. */
  private readonly unlisted = new Set<number>();
  private readonly listeners = new Set<() => void>();
  /** Events to add to the next poll answer whatever its cursor: late fills and re-sends. */
  private extras: RawEvent[] = [];
  private notifyScheduled = false;

  constructor(
    readonly programId: string,
    private readonly now: () => number,
  ) {}

  get lastSequenceNumber(): number {
    return this.log.length;
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  /**
   * Appends an event. An `unlisted` one is left out of polls and streams (the feed skips its
   * number) while the lookups find it: a feed index that lags behind the service's records.
   */
  append(input: EventInput, options: { unlisted?: boolean } = {}): RawEvent {
    const event = this.create(this.log.length + 1, input);
    this.log.push(event);
    if (options.unlisted) this.unlisted.add(event.sequence_number);
    this.scheduleNotify();
    return event;
  }

  /** Leaves the next `count` sequence numbers unused: a gap in the feed. Returns the range. */
  skip(count: number): { from: number; to: number } {
    const from = this.log.length + 1;
    for (let i = 0; i < count; i += 1) this.log.push(undefined);
    return { from, to: this.log.length };
  }

  /**
   * Puts an event at an unused sequence number below the end of the log (filled late). With
   * `announce`, the next poll answer carries it too, whatever its cursor.
   */
  fill(sequenceNumber: number, input: EventInput, announce: boolean): RawEvent {
    if (!(sequenceNumber >= 1 && sequenceNumber <= this.log.length) || this.log[sequenceNumber - 1]) {
      throw new RangeError(`fill: sequence number ${sequenceNumber} is not an unused number of this feed`);
    }
    const event = this.create(sequenceNumber, input);
    this.log[sequenceNumber - 1] = event;
    if (announce) this.announce(event);
    return event;
  }

  /** The next poll answer carries this already delivered event again. */
  resend(sequenceNumber: number): RawEvent {
    const event = this.bySequence(sequenceNumber);
    if (event === undefined) throw new RangeError(`resend: no event has sequence number ${sequenceNumber}`);
    this.announce(event);
    return event;
  }

  get hasExtras(): boolean {
    return this.extras.length > 0;
  }

  /** The late and re-sent events waiting for a poll answer; they are handed out once. */
  takeExtras(): RawEvent[] {
    const taken = this.extras;
    this.extras = [];
    return taken;
  }

  /** Events with a sequence number above `cursor`, at most `limit` of them, in order. */
  after(cursor: number, limit: number): RawEvent[] {
    const page: RawEvent[] = [];
    for (let index = Math.max(0, cursor); index < this.log.length && page.length < limit; index += 1) {
      const event = this.log[index];
      if (event !== undefined && !this.unlisted.has(event.sequence_number)) page.push(event);
    }
    return page;
  }

  bySequence(sequenceNumber: number): RawEvent | undefined {
    return sequenceNumber >= 1 ? this.log[sequenceNumber - 1] : undefined;
  }

  byEventId(id: string): RawEvent | undefined {
    return this.byId.get(id);
  }

  all(): readonly RawEvent[] {
    return this.log.filter((event): event is RawEvent => event !== undefined);
  }

  /** Calls `listener` after appends; returns the function that unsubscribes it. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private create(sequenceNumber: number, input: EventInput): RawEvent {
    const event: RawEvent = deepFreeze({
      id: input.id,
      program_id: this.programId,
      sequence_number: sequenceNumber,
      created_dt: input.created_dt ?? formatTimestamp(this.now()),
      type: input.type,
      data: input.data,
    });
    if (input.dataText !== undefined) setDataText(event, input.dataText);
    // The first event with an id wins lookups, as a duplicated delivery would not replace it.
    if (!this.byId.has(event.id)) this.byId.set(event.id, event);
    return event;
  }

  private announce(event: RawEvent): void {
    this.extras.push(event);
    this.scheduleNotify();
  }

  /**
   * Listeners run once per microtask, not once per event: a burst of appends made in one
   * synchronous step (`generate(500)`, or several `append` calls) reaches a held poll as one
   * page, as it would from a real service that answers with everything available.
   */
  private scheduleNotify(): void {
    if (this.notifyScheduled) return;
    this.notifyScheduled = true;
    queueMicrotask(() => {
      this.notifyScheduled = false;
      for (const listener of [...this.listeners]) listener();
    });
  }
}
