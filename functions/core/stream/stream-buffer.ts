import type { BankingEvent } from '../banking-event.ts';
import { eventFootprint, footprintOf } from '../memory-budget.ts';
import type { StreamedEvent } from '../ports.ts';
import { SEQUENCE_ORIGIN } from '../sequence-jumps.ts';

/** An event taken off the stream, waiting to be handed to the cycle. */
export interface BufferedEvent {
  event: BankingEvent;
  readonly arrivedAt: number;
  /** `unrecoverable`: to be read with a page (page recovery, or a lookup that found nothing). */
  state: 'ready' | 'queued' | 'recovering' | 'unrecoverable';
}

/**
 * What the stream delivered and the cycle has not read yet: events above the cursor, ascending,
 * one per sequence number; late events (below it, filling a recorded gap); and the events of
 * messages that could not be read (`unread`), which are read with pages. Also where a new
 * connection resumes: after what was received, never past events not read, and never past a number
 * implausibly far beyond the one before it (`sequence-jumps.ts`).
 */
export class StreamBuffer {
  /** A received number more than this above the resume point does not move it. @default no bound */
  readonly #maxJump: number;
  #events: BufferedEvent[] = [];
  #late: BankingEvent[] = [];
  /**
   * Messages that could not be read announced the events after `after` up to `through`: they are
   * read with pages until a page returns them or the window closes, and nothing of the stream
   * beyond them is handed out meanwhile (the cursor never passes an event that was not read).
   */
  #unread: { readonly after: number | null; readonly through: number } | undefined;
  /** The highest sequence number received. */
  #resumeAfter: number | null = null;
  /** The highest sequence number the cycle last asked to read after. */
  #cursor: number | null = null;

  constructor(options: { readonly maxJump?: number } = {}) {
    this.#maxJump = options.maxJump ?? Number.POSITIVE_INFINITY;
  }

  get size(): number {
    return this.#events.length;
  }

  /** The late events waiting to be taken. */
  get late(): readonly BankingEvent[] {
    return this.#late;
  }

  /** Bytes the buffered events take (`eventFootprint`), late ones included. */
  get heldBytes(): number {
    let bytes = footprintOf(this.#late);
    for (const entry of this.#events) bytes += eventFootprint(entry.event);
    return bytes;
  }

  get head(): BufferedEvent | undefined {
    return this.#events[0];
  }

  get hasLate(): boolean {
    return this.#late.length > 0;
  }

  /** Events of unreadable messages wait to be read with pages. */
  get hasUnread(): boolean {
    return this.#unread !== undefined;
  }

  /** The highest number announced by an unreadable message; `undefined` when none waits. */
  get unreadThrough(): number | undefined {
    return this.#unread?.through;
  }

  contains(entry: BufferedEvent): boolean {
    return this.#events.includes(entry);
  }

  /** The cycle reads after `cursor` now: what it has read is no longer unread. */
  setCursor(cursor: number | null): void {
    this.#cursor = cursor;
    if (this.#unread !== undefined && cursor !== null && this.#unread.through <= cursor)
      this.#unread = undefined;
  }

  /** Where a new connection starts: after what was received, but never past events not read. */
  resumePoint(): number | null {
    if (this.#unread !== undefined) return this.#unread.after;
    const points = [this.#resumeAfter, this.#cursor].filter((point): point is number => point !== null);
    return points.length === 0 ? null : Math.max(...points);
  }

  /**
   * Moves the resume point up to `sequence`, a number received (an event's, or a message's `id:`),
   * unless it lies more than the jump bound above the resume point: a held event's number, or an
   * `id:` the bank got wrong, must not make a new connection skip the events below it. Numbers the
   * cycle reads past (an accepted jump) reach the resume point through the cursor.
   */
  advanceResume(sequence: number): void {
    if (sequence - (this.resumePoint() ?? SEQUENCE_ORIGIN) > this.#maxJump) return;
    if (this.#resumeAfter === null || sequence > this.#resumeAfter) this.#resumeAfter = sequence;
  }

  /**
   * Notes that the events after what was received so far, up to `through`, came in a message that
   * could not be read. The resume point stays below them: a new connection asks for them again.
   */
  markUnread(through: number): void {
    const after = this.#unread?.after ?? this.resumePoint();
    if (after !== null && through <= after) return;
    this.#unread = { after, through: Math.max(this.#unread?.through ?? through, through) };
  }

  /** Puts a streamed event in, in sequence order, once per number; `undefined` when it is there already. */
  admit({ event }: StreamedEvent, state: BufferedEvent['state'], now: number): BufferedEvent | undefined {
    const sequence = event.sequence_number;
    let index = this.#events.length;
    while (index > 0 && this.#events[index - 1]!.event.sequence_number >= sequence) index -= 1;
    if (this.#events[index]?.event.sequence_number === sequence) return undefined;
    const entry: BufferedEvent = { event, arrivedAt: now, state };
    this.#events.splice(index, 0, entry);
    return entry;
  }

  /**
   * Drops what the cursor has passed. An event at or below it that fills a recorded gap arrived
   * late and was never published: it is kept to be returned as late (and returned here, to be
   * reported). Anything else there was read already (by a page, or on an earlier connection).
   */
  dropThrough(after: number | null, recordedGaps?: { includes(sequence: number): boolean }): BankingEvent[] {
    if (after === null || this.#events.length === 0 || this.#events[0]!.event.sequence_number > after)
      return [];
    const late: BankingEvent[] = [];
    const kept: BufferedEvent[] = [];
    for (const entry of this.#events) {
      const sequence = entry.event.sequence_number;
      if (sequence > after) kept.push(entry);
      else if (entry.state === 'ready' && recordedGaps?.includes(sequence) === true) late.push(entry.event);
    }
    this.#events = kept;
    this.#late.push(...late);
    return late;
  }

  /** A page returned the events up to `highest`: the stream's copies of them are not needed. */
  readByPage(highest: number): void {
    this.#events = this.#events.filter((entry) => entry.event.sequence_number > highest);
    if (this.#unread !== undefined) {
      this.#unread = highest >= this.#unread.through ? undefined : { ...this.#unread, after: highest };
    }
    this.advanceResume(highest);
  }

  /** The ready events at the head, at most `max`. */
  readyPrefix(max: number): BufferedEvent[] {
    const ready: BufferedEvent[] = [];
    for (const entry of this.#events) {
      if (entry.state !== 'ready' || ready.length >= max) break;
      ready.push(entry);
    }
    return ready;
  }

  /** Removes `ready` (the head) and the late events waiting; returns both. */
  take(ready: readonly BufferedEvent[]): { events: BankingEvent[]; late: BankingEvent[] } {
    const late = this.#late;
    this.#late = [];
    this.#events = this.#events.slice(ready.length);
    return { events: ready.map((entry) => entry.event), late };
  }
}
