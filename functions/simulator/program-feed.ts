/**
 * The event log of one program: assigns sequence numbers, answers cursor reads in O(1), and tells
 * waiting requests (held polls, open streams) that something was appended.
 */
import { deepFreeze, formatTimestamp, type RawEvent } from './raw-event.ts';

/** What `append` accepts; the feed assigns `sequence_number` and `program_id`. */
export interface EventInput {
  readonly id: string;
  readonly created_dt?: string;
  readonly type: string;
  readonly data: Record<string, unknown>;
}

export class ProgramFeed {
  /** `log[i]` has sequence number `i + 1`, which makes `after(cursor)` a slice. */
  private readonly log: RawEvent[] = [];
  private readonly byId = new Map<string, RawEvent>();
  private readonly listeners = new Set<() => void>();
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

  append(input: EventInput): RawEvent {
    const event: RawEvent = deepFreeze({
      id: input.id,
      program_id: this.programId,
      sequence_number: this.log.length + 1,
      created_dt: input.created_dt ?? formatTimestamp(this.now()),
      type: input.type,
      data: input.data,
    });
    this.log.push(event);
    // The first event with an id wins lookups, as a duplicated delivery would not replace it.
    if (!this.byId.has(event.id)) this.byId.set(event.id, event);
    this.scheduleNotify();
    return event;
  }

  /** Events with a sequence number above `cursor`, at most `limit` of them, in order. */
  after(cursor: number, limit: number): RawEvent[] {
    if (cursor >= this.log.length) return [];
    return this.log.slice(cursor, cursor + limit);
  }

  bySequence(sequenceNumber: number): RawEvent | undefined {
    return sequenceNumber >= 1 ? this.log[sequenceNumber - 1] : undefined;
  }

  byEventId(id: string): RawEvent | undefined {
    return this.byId.get(id);
  }

  all(): readonly RawEvent[] {
    return this.log.slice();
  }

  /** Calls `listener` after appends; returns the function that unsubscribes it. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
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
