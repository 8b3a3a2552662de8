/**
 * Implausible sequence numbers are held, not trusted. The feed is read by cursor: once the
 * checkpoint passes a number, nothing below it is asked for again. Trusted, one event numbered
 * 9007199254740991 among 1, 2 and 3 would move the checkpoint there at once, and every event the
 * bank creates afterwards (4, 5, …) would be lost for good. The bank's numbers may skip (a gap is
 * ordinary, see `gap-repair.ts`), but not by more than a bound, `maxJump` (`MAX_SEQUENCE_JUMP`).
 *
 * **What a jump is.** The events after the cursor (the highest number registered: the checkpoint
 * when a run starts, then each event admitted; never the page's `last_sequence_number` nor a stream
 * message's `id:`) are taken in ascending order, each compared with the number before it that was
 * trusted: the cursor, or the read's previous trusted event. More than `maxJump` above it is a
 * jump. That event is held, and so is every event above it in the read; the events below it are
 * trusted as usual, so 4 and 5, created after a held 9007199254740991, are published.
 *
 * **A row's first read** (no cursor: a row reading from the beginning of the feed, or the `latest`
 * start position's walk) has no number before its first event. Numbers count from 1, so it is
 * judged against `SEQUENCE_ORIGIN`, 0, unless the read corroborates it (`firstReadBaseline`): the
 * next event of the same read lies within `maxJump` of it. A corroborated first event is the
 * baseline, trusted however far above 0 it lies: a program whose numbering began long before the
 * feed's retention (its oldest event at 48,000,000, say) starts without an operator. A lone first
 * event is not corroborated, and neither is one whose next lies beyond the bound: a lone
 * 2^53 − 1, taken as a baseline, would pass every event created after it (the issue this module
 * exists for), so it is held as before; so is 1,000,000 before 2^53 − 1, which holds both. Nor is
 * a first event above one held already (`JumpRule.heldBelow`): trusting it would pass the held one
 * by. Corroboration is bounded by the read: a poll's page, or a stream's micro-batch, which waits
 * for a second event no longer than its linger (`StreamReader`, 100 ms by default) while the row
 * has no cursor. An event that only a later read corroborates was held (and quarantined) first;
 * once a read with it first and its next within the bound comes (a poll asks from the beginning
 * again, since a held event is never registered), it is trusted, and its record goes with the
 * checkpoint. What stays held on a first run is an operator's: accept it (`beginning`), pass the
 * backlog over with `rewind --to latest` (`latest`), start the program at a sequence number, or
 * raise the bound.
 *
 * **What holding does.** A held event is never registered: the cursor, the checkpoint, gap
 * detection and gap repair do not see it, so the next poll's cursor does not move past it, nor
 * does a stream's resume point (`StreamBuffer.advanceResume` applies the same bound to the numbers
 * it is given). The jump, the lowest held event, is quarantined once: an `invalid_event` whose
 * `error.code` is `SEQUENCE_JUMP_HELD`, published without being tracked, and recorded (`HeldJump`)
 * once the bus accepted it, in the checkpoint item with the next checkpoint write (`held_jumps`),
 * so later reads and runs do not quarantine it again (a crash in between may: a duplicate the
 * quarantine's de-duplication on `fingerprint` absorbs). The events above it wait behind it
 * without a quarantine of their own: one decision covers them. `SequenceJumpsHeld` counts the jumps
 * awaiting a decision, in every run while they do. The feed keeps serving a held event, so a poll
 * after the cursor answers at once: an answer holding nothing else counts as one without events
 * for the reader's pacing (at most about one poll a second, `minEmptyPollIntervalMs`).
 *
 * **What an operator decides** (`banking-events-poller jumps accept|reject`, written only while
 * no run holds the lease, since a run writes the records back with its checkpoint):
 * - *accept*: the bank's numbers did jump. The event is trusted however far it lies and published
 *   like any other; the checkpoint passes the numbers below it, which are neither counted as
 *   skipped nor looked up (`GapWatch`). Events the bank creates below it afterwards are not read.
 * - *reject*: the number is not one to follow. The event is passed over (it stays in quarantine)
 *   and holds nothing back; an event above it is judged by the bound like any other.
 *
 * A decision only matters while the number is beyond the bound: should the cursor ever come
 * within `maxJump` of a held or rejected number, its event is an ordinary one and is published. A
 * record goes once the checkpoint passes its number. There are at most `maxHeld` records; beyond,
 * the highest numbers go first (they wait behind lower ones anyway).
 *
 * Numbers beyond 2^53 − 1, negative or not whole are not numbers at all: `parseSequenceNumber`
 * refuses them and the event is quarantined as invalid (`PAYLOAD_INVALID`) at a position of its own.
 */
import type { BankingEvent, EventText } from './banking-event.ts';
import type { HeldJump } from './checkpoint/store.ts';
import { SequenceJumpError } from './errors.ts';
import { invalidEvent } from './invalid-event.ts';

export const SEQUENCE_JUMP_DEFAULTS = {
  /**
   * The most a sequence number may lie above the one before it. Far above what skipped numbers
   * look like (a rolled-back transaction, a sequence cache lost on a restart: tens to thousands),
   * far below what a broken number looks like (2^31, 2^53 − 1, a time in milliseconds).
   */
  maxJump: 100_000,
  /** Held jumps recorded at most: each is a couple of hundred bytes of the checkpoint item. */
  maxHeld: 20,
} as const;

/** The number before a feed's first: a read without a cursor judges its first event against it. */
export const SEQUENCE_ORIGIN = 0;

/** What tells a trusted event from a held one. */
export interface JumpRule {
  /** The most a sequence number may lie above the one before it. */
  readonly maxJump: number;
  /** The operator's decision on this event, when it is a held one they decided on. */
  decisionOf(event: BankingEvent): HeldJump['decision'] | undefined;
  /**
   * Whether an event held (recorded, and not rejected, or being quarantined) lies below this
   * number: a row's first read may then not take an event at it as its baseline. Absent: none is.
   */
  heldBelow?(sequenceNumber: number): boolean;
}

/** A read's events after the cursor, split at the first jump. */
export interface JumpSplit {
  /** Within the bound of the number before them (or accepted), in order: to register and publish. */
  readonly trusted: readonly BankingEvent[];
  /** From the jump on, ascending: the first is the jump, the others wait behind it. */
  readonly held: readonly BankingEvent[];
}

/**
 * Splits `events` (ascending, all after `cursor`) at the first jump: everything before it is
 * trusted, it and everything after it held. Rejected events are left out of both. With no cursor
 * (a row's first read), the first event is judged against `firstReadBaseline`.
 *
 * @example
 * splitAtJump([e(4), e(5), e(9007199254740991)], 3, rule); // trusted 4, 5; held 9007199254740991
 * splitAtJump([e(1_000_000), e(1_000_001)], null, rule); // trusted both: corroborated
 * splitAtJump([e(9007199254740991)], null, rule); // held: alone, judged against 0
 */
export function splitAtJump(read: readonly BankingEvent[], cursor: number | null, rule: JumpRule): JumpSplit {
  // A first read leaves rejected events out before its baseline is chosen: one below the baseline
  // would otherwise pass as within the bound of it.
  const events = cursor === null ? read.filter((event) => rule.decisionOf(event) !== 'rejected') : read;
  const from = cursor ?? firstReadBaseline(events, rule);
  const last = events.at(-1)?.sequence_number;
  // Nearly every read: its highest number is within the bound of the cursor, so every step is.
  if (last === undefined || last - from <= rule.maxJump) return { trusted: events, held: [] };
  const trusted: BankingEvent[] = [];
  const held: BankingEvent[] = [];
  let previous = from;
  for (const event of events) {
    const beyond = event.sequence_number - previous > rule.maxJump;
    const decision = beyond || held.length > 0 ? rule.decisionOf(event) : undefined;
    if (decision === 'rejected') continue;
    if (held.length > 0 || (beyond && decision !== 'accepted')) {
      held.push(event);
      continue;
    }
    trusted.push(event);
    previous = event.sequence_number;
  }
  return { trusted, held };
}

/**
 * Whether only a jump beyond `maxJump` opens `gap` (its numbers inclusive): the numbers around it
 * lie further apart. Such a gap is an accepted jump's (or was recorded before the bound existed):
 * looking up its first numbers one by one would only spend the lookups (`gap-repair.ts`).
 */
export function isJumpGap(gap: { readonly from: number; readonly to: number }, maxJump: number): boolean {
  return gap.to + 1 - (gap.from - 1) > maxJump;
}

/**
 * The number a row's first read (no cursor) judges its first event against: just below that event
 * when the read corroborates it (the next event lies within `maxJump` of it, and no held event
 * lies below it), else `SEQUENCE_ORIGIN`. See "A row's first read" above. `events` ascending,
 * without rejected ones.
 */
export function firstReadBaseline(events: readonly BankingEvent[], rule: JumpRule): number {
  const [first, next] = events;
  if (first === undefined || first.sequence_number - SEQUENCE_ORIGIN <= rule.maxJump) return SEQUENCE_ORIGIN;
  if (next === undefined || next.sequence_number - first.sequence_number > rule.maxJump)
    return SEQUENCE_ORIGIN;
  if (rule.heldBelow?.(first.sequence_number) === true) return SEQUENCE_ORIGIN;
  return first.sequence_number - 1;
}

/**
 * Whether a row's first read of `events` (ascending) would judge its first event against
 * `SEQUENCE_ORIGIN` for want of a next one: it lies beyond the bound and nothing follows it. A
 * stream's micro-batch then waits a little for one (`StreamReader`).
 */
export function awaitsCorroboration(events: readonly BankingEvent[], rule: JumpRule): boolean {
  const first = events[0];
  return (
    events.length === 1 &&
    first !== undefined &&
    first.sequence_number - SEQUENCE_ORIGIN > rule.maxJump &&
    rule.decisionOf(first) === undefined &&
    rule.heldBelow?.(first.sequence_number) !== true
  );
}

/**
 * The `invalid_event` a held jump is quarantined as: the event's text as `raw`, `error.code`
 * `SEQUENCE_JUMP_HELD`, its own number as `sequence_number` and `position`. An event that failed
 * validation too is an `invalid_event` already and goes as it is.
 */
export function heldJumpQuarantine(
  event: BankingEvent,
  previous: number,
  maxJump: number,
  receivedAt: number,
): BankingEvent {
  if (event.invalid !== undefined) return event;
  const source: EventText = {
    value: { id: event.id, program_id: event.program_id, created_dt: event.created_dt },
    text: event.detail,
    span: { start: 0, end: event.detail.length },
  };
  const error = new SequenceJumpError(event.sequence_number, previous, maxJump, event.id);
  return invalidEvent(source, error, { sequenceNumber: event.sequence_number, receivedAt });
}

function keyOf(sequenceNumber: number, eventId: string): string {
  return `${sequenceNumber}:${eventId}`;
}

/**
 * A row's held jumps during a cycle, from the lease on: what was recorded, what is being
 * quarantined now, and whether the records changed since they were last written (they are written
 * with the checkpoint, as the gap ledger is).
 */
export class HeldJumps implements JumpRule {
  readonly maxJump: number;
  readonly #maxHeld: number;
  /** Ascending by sequence number. */
  #records: HeldJump[];
  readonly #byKey: Map<string, HeldJump>;
  /** Jumps handed out for quarantine in this run whose copy the bus has not accepted yet: key → number. */
  readonly #quarantining = new Map<string, number>();
  #changed = false;

  constructor(records: readonly HeldJump[], options: { maxJump?: number; maxHeld?: number } = {}) {
    this.maxJump = options.maxJump ?? SEQUENCE_JUMP_DEFAULTS.maxJump;
    this.#maxHeld = options.maxHeld ?? SEQUENCE_JUMP_DEFAULTS.maxHeld;
    this.#records = [...records].sort((a, b) => a.sequenceNumber - b.sequenceNumber);
    this.#byKey = new Map(
      this.#records.map((record) => [keyOf(record.sequenceNumber, record.eventId), record]),
    );
  }

  /** The records, ascending. */
  get records(): readonly HeldJump[] {
    return this.#records;
  }

  /** Whether the records differ from what was last written. */
  get changed(): boolean {
    return this.#changed;
  }

  /** Notes that the records as they are now were written with the checkpoint. */
  written(): void {
    this.#changed = false;
  }

  /** Jumps awaiting an operator's decision: recorded without one, or being quarantined now. */
  get awaitingDecision(): number {
    const undecided = this.#records.filter((record) => record.decision === undefined).length;
    return undecided + this.#quarantining.size;
  }

  decisionOf(event: BankingEvent): HeldJump['decision'] | undefined {
    return this.#byKey.get(keyOf(event.sequence_number, event.id))?.decision;
  }

  heldBelow(sequenceNumber: number): boolean {
    for (const record of this.#records) {
      if (record.sequenceNumber >= sequenceNumber) break;
      if (record.decision !== 'rejected') return true;
    }
    for (const number of this.#quarantining.values()) if (number < sequenceNumber) return true;
    return false;
  }

  /**
   * The jump of `held` (its first event) when it is still to be quarantined: neither recorded nor
   * being quarantined. It is then noted as being quarantined, so no other read hands it out again.
   */
  takeJump(held: readonly BankingEvent[]): BankingEvent | undefined {
    const jump = held[0];
    if (jump === undefined) return undefined;
    const key = keyOf(jump.sequence_number, jump.id);
    if (this.#byKey.has(key) || this.#quarantining.has(key)) return undefined;
    this.#quarantining.set(key, jump.sequence_number);
    return jump;
  }

  /**
   * The jump's quarantined copy was accepted by the bus: it is recorded (and written with the next
   * checkpoint). Returns the records let go beyond the bound, if any.
   */
  recordHeld(jump: BankingEvent, fingerprint: string, now: number): HeldJump[] {
    const key = keyOf(jump.sequence_number, jump.id);
    this.#quarantining.delete(key);
    if (this.#byKey.has(key)) return [];
    const record: HeldJump = {
      sequenceNumber: jump.sequence_number,
      eventId: jump.id,
      fingerprint,
      heldAt: now,
    };
    const index = this.#records.findIndex((other) => other.sequenceNumber > record.sequenceNumber);
    this.#records.splice(index === -1 ? this.#records.length : index, 0, record);
    this.#byKey.set(key, record);
    this.#changed = true;
    const dropped = this.#records.splice(this.#maxHeld);
    for (const gone of dropped) this.#byKey.delete(keyOf(gone.sequenceNumber, gone.eventId));
    return dropped;
  }

  /** Forgets the records at or below `checkpoint`: the checkpoint has passed them. */
  passedThrough(checkpoint: number | null): void {
    if (checkpoint === null || this.#records[0] === undefined) return;
    if (this.#records[0].sequenceNumber > checkpoint) return;
    for (const gone of this.#records.filter((record) => record.sequenceNumber <= checkpoint)) {
      this.#byKey.delete(keyOf(gone.sequenceNumber, gone.eventId));
    }
    this.#records = this.#records.filter((record) => record.sequenceNumber > checkpoint);
    this.#changed = true;
  }
}
