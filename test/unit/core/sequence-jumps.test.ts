import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { BankingEvent } from '../../../functions/core/banking-event.ts';
import type { HeldJump } from '../../../functions/core/checkpoint/store.ts';
import { parsePollResponse } from '../../../functions/core/event-model.ts';
import {
  awaitsCorroboration,
  HeldJumps,
  heldJumpQuarantine,
  isJumpGap,
  type JumpRule,
  SEQUENCE_JUMP_DEFAULTS,
  splitAtJump,
} from '../../../functions/core/sequence-jumps.ts';
import { makeEvent } from '../../support/in-memory-ports.ts';

const MAX = Number.MAX_SAFE_INTEGER;
const numbers = (events: readonly BankingEvent[]) => events.map((event) => event.sequence_number);

/** The rule with a bound and the decisions on some events (by id); `held`: numbers held already. */
function rule(
  maxJump: number,
  decisions: Record<string, HeldJump['decision']> = {},
  held: readonly number[] = [],
): JumpRule {
  return {
    maxJump,
    decisionOf: (event) => decisions[event.id],
    heldBelow: (sequenceNumber) => held.some((number) => number < sequenceNumber),
  };
}

describe('splitAtJump', () => {
  it('with no number before them, takes the first event as the baseline and holds 2^53 − 1 after 1, 2, 3', () => {
    const events = [1, 2, 3, MAX].map((n) => makeEvent(n));

    const { trusted, held } = splitAtJump(events, null, rule(100_000));

    expect(numbers(trusted)).toEqual([1, 2, 3]);
    expect(numbers(held)).toEqual([MAX]);
  });

  it('trusts 4 and 5 created after the held event, judged against the cursor', () => {
    const events = [4, 5, MAX].map((n) => makeEvent(n));

    const { trusted, held } = splitAtJump(events, 3, rule(100_000));

    expect(numbers(trusted)).toEqual([4, 5]);
    expect(numbers(held)).toEqual([MAX]);
  });

  it('takes exactly the bound as plausible and one more as a jump', () => {
    expect(numbers(splitAtJump([makeEvent(103)], 3, rule(100)).trusted)).toEqual([103]);
    expect(numbers(splitAtJump([makeEvent(104)], 3, rule(100)).held)).toEqual([104]);
  });

  it('judges each step from the number before it, so a page may climb far in plausible steps', () => {
    const events = [90_000, 180_000, 270_000].map((n) => makeEvent(n));

    const { trusted, held } = splitAtJump(events, 3, rule(100_000));

    expect(numbers(trusted)).toEqual([90_000, 180_000, 270_000]);
    expect(held).toEqual([]);
  });

  it('holds everything above a jump, even what lies within the bound of the jump', () => {
    const events = [4, 1_000_000, 1_000_001, 1_000_002].map((n) => makeEvent(n));

    const { trusted, held } = splitAtJump(events, 3, rule(100_000));

    expect(numbers(trusted)).toEqual([4]);
    expect(numbers(held)).toEqual([1_000_000, 1_000_001, 1_000_002]);
  });

  it('trusts an accepted jump and the events after it', () => {
    const jump = makeEvent(1_000_000);
    const events = [makeEvent(4), jump, makeEvent(1_000_001)];

    const { trusted, held } = splitAtJump(events, 3, rule(100_000, { [jump.id]: 'accepted' }));

    expect(numbers(trusted)).toEqual([4, 1_000_000, 1_000_001]);
    expect(held).toEqual([]);
  });

  it('passes over a rejected jump, holding nothing back for it; an event above it is judged again', () => {
    const rejected = makeEvent(MAX - 10);
    const events = [makeEvent(4), rejected, makeEvent(MAX)];

    const { trusted, held } = splitAtJump(events, 3, rule(100_000, { [rejected.id]: 'rejected' }));

    expect(numbers(trusted)).toEqual([4]);
    expect(numbers(held)).toEqual([MAX]);
  });

  it('holds an accepted event that lies behind an undecided jump: it may not pass it', () => {
    const accepted = makeEvent(MAX);
    const events = [makeEvent(5_000_000), accepted];

    const { trusted, held } = splitAtJump(events, 3, rule(100_000, { [accepted.id]: 'accepted' }));

    expect(trusted).toEqual([]);
    expect(numbers(held)).toEqual([5_000_000, MAX]);
  });

  it('trusts a held or rejected number once the cursor comes within the bound of it', () => {
    const rejected = makeEvent(200_000);

    const { trusted } = splitAtJump([rejected], 150_000, rule(100_000, { [rejected.id]: 'rejected' }));

    expect(numbers(trusted)).toEqual([200_000]);
  });
});

describe("splitAtJump on a row's first read (no cursor): a first event beyond the bound is the baseline only when corroborated", () => {
  const first = (...sequences: number[]) =>
    splitAtJump(
      sequences.map((n) => makeEvent(n)),
      null,
      rule(100_000),
    );

  it('still holds a lone first event numbered 2^53 − 1', () => {
    expect(numbers(first(MAX).held)).toEqual([MAX]);
    expect(first(MAX).trusted).toEqual([]);
  });

  it('trusts 1,000,000 and 1,000,001: the next event corroborates the first', () => {
    expect(numbers(first(1_000_000, 1_000_001).trusted)).toEqual([1_000_000, 1_000_001]);
    expect(first(1_000_000, 1_000_001).held).toEqual([]);
  });

  it('holds 2^53 − 1 after 1,000,000 (and 1,000,000 with it: nothing corroborates it)', () => {
    const { trusted, held } = first(1_000_000, MAX);

    expect(trusted).toEqual([]);
    expect(numbers(held)).toEqual([1_000_000, MAX]);
  });

  it('holds 2^53 − 1 after a corroborated 1,000,000 and 1,000,001', () => {
    const { trusted, held } = first(1_000_000, 1_000_001, MAX);

    expect(numbers(trusted)).toEqual([1_000_000, 1_000_001]);
    expect(numbers(held)).toEqual([MAX]);
  });

  it('takes exactly the bound between the first two as corroboration, and one more as none', () => {
    expect(numbers(first(1_000_000, 1_100_000).trusted)).toEqual([1_000_000, 1_100_000]);
    expect(numbers(first(1_000_000, 1_100_001).held)).toEqual([1_000_000, 1_100_001]);
  });

  it('needs no corroboration for a first event within the bound of 0', () => {
    expect(numbers(first(100_000).trusted)).toEqual([100_000]);
    expect(numbers(first(100_001).held)).toEqual([100_001]);
  });

  it('takes no baseline above an event held already: trusting it would pass the held one by', () => {
    const events = [1_000_001, 1_000_002].map((n) => makeEvent(n));

    const { trusted, held } = splitAtJump(events, null, rule(100_000, {}, [1_000_000]));

    expect(trusted).toEqual([]);
    expect(numbers(held)).toEqual([1_000_001, 1_000_002]);
    // A held event is no obstacle to itself: a poll from the beginning brings it first again.
    const again = [1_000_000, 1_000_001].map((n) => makeEvent(n));
    expect(numbers(splitAtJump(again, null, rule(100_000, {}, [1_000_000])).trusted)).toEqual([
      1_000_000, 1_000_001,
    ]);
  });

  it('leaves a rejected event out, below the baseline too, and looks for corroboration among the others', () => {
    const rejected = makeEvent(1_000_000);
    const events = [rejected, makeEvent(1_000_005), makeEvent(1_000_006)];

    const { trusted, held } = splitAtJump(events, null, rule(100_000, { [rejected.id]: 'rejected' }));

    expect(numbers(trusted)).toEqual([1_000_005, 1_000_006]);
    expect(held).toEqual([]);
  });

  it('with a cursor, judges as before: no baseline of its own', () => {
    const { trusted, held } = splitAtJump(
      [1_000_000, 1_000_001].map((n) => makeEvent(n)),
      3,
      rule(100_000),
    );

    expect(trusted).toEqual([]);
    expect(numbers(held)).toEqual([1_000_000, 1_000_001]);
  });
});

describe('awaitsCorroboration', () => {
  it('is a lone first event beyond the bound, undecided, above nothing held', () => {
    const lone = [makeEvent(1_000_000)];

    expect(awaitsCorroboration(lone, rule(100_000))).toBe(true);
    expect(awaitsCorroboration([makeEvent(5)], rule(100_000))).toBe(false);
    expect(awaitsCorroboration([...lone, makeEvent(1_000_001)], rule(100_000))).toBe(false);
    expect(awaitsCorroboration(lone, rule(100_000, { [lone[0]!.id]: 'accepted' }))).toBe(false);
    expect(awaitsCorroboration(lone, rule(100_000, {}, [999_999]))).toBe(false);
  });
});

describe('isJumpGap', () => {
  it('is a gap whose neighbours lie more than the bound apart', () => {
    // 3 and 103 are 100 apart: an ordinary gap; 3 and 104, a jump's.
    expect(isJumpGap({ from: 4, to: 102 }, 100)).toBe(false);
    expect(isJumpGap({ from: 4, to: 103 }, 100)).toBe(true);
    expect(isJumpGap({ from: 4, to: MAX - 1 }, SEQUENCE_JUMP_DEFAULTS.maxJump)).toBe(true);
  });
});

describe('heldJumpQuarantine', () => {
  it('is an invalid_event with the code SEQUENCE_JUMP_HELD, the event as raw and its own number', () => {
    const event = makeEvent(MAX, { id: 'evt-max' });

    const copy = heldJumpQuarantine(event, 3, 100_000, Date.parse('2026-11-26T00:00:00Z'));

    const detail = JSON.parse(copy.detail) as Record<string, unknown>;
    const fingerprint = createHash('sha256').update(event.detail).digest('hex');
    expect(copy).toMatchObject({
      type: 'invalid_event',
      sequence_number: MAX,
      id: `invalid-${fingerprint.slice(0, 32)}`,
    });
    expect(detail).toMatchObject({
      id: 'evt-max',
      sequence_number: MAX,
      position: MAX,
      error: { code: 'SEQUENCE_JUMP_HELD', field: 'sequence_number' },
      fingerprint,
      raw: JSON.parse(event.detail),
    });
    expect((detail.error as { message: string }).message).toContain(`${MAX - 3} past 3`);
    expect(copy.invalid).toMatchObject({ sequenceNumber: MAX, fingerprint });
  });

  it('sends an event that failed validation too as the invalid_event it already is', () => {
    const value = { data: [{ id: 'e-j', program_id: 'p', sequence_number: MAX, type: 'T' }] };
    const [broken] = parsePollResponse(
      { text: JSON.stringify(value), value },
      { source: 'GET /events' },
    ).events;

    expect(heldJumpQuarantine(broken!, 3, 100_000, 0)).toBe(broken);
  });
});

describe('HeldJumps', () => {
  const record = (sequenceNumber: number, eventId: string, decision?: HeldJump['decision']): HeldJump => ({
    sequenceNumber,
    eventId,
    fingerprint: 'f'.repeat(64),
    heldAt: 1,
    ...(decision === undefined ? {} : { decision, decidedAt: 2 }),
  });

  it('hands a jump out for quarantine once, and records it once its copy was accepted', () => {
    const jumps = new HeldJumps([]);
    const jump = makeEvent(MAX);

    const first = jumps.takeJump([jump]);
    const again = jumps.takeJump([jump]);
    const awaitingWhileQuarantined = jumps.awaitingDecision;
    jumps.recordHeld(jump, 'fp', 1_000);

    expect(first).toBe(jump);
    expect(again).toBeUndefined();
    expect(awaitingWhileQuarantined).toBe(1);
    expect(jumps.takeJump([jump])).toBeUndefined();
    expect(jumps.records).toEqual([
      { sequenceNumber: MAX, eventId: jump.id, fingerprint: 'fp', heldAt: 1_000 },
    ]);
    expect(jumps.changed).toBe(true);
    expect(jumps.awaitingDecision).toBe(1);
  });

  it('does not quarantine the events held behind a recorded jump', () => {
    const jump = makeEvent(5_000_000);
    const jumps = new HeldJumps([record(5_000_000, jump.id)]);

    expect(jumps.takeJump([jump, makeEvent(5_000_001)])).toBeUndefined();
    expect(jumps.changed).toBe(false);
  });

  it('quarantines a lower jump that comes after a recorded one', () => {
    const lower = makeEvent(1_000_000);
    const jumps = new HeldJumps([record(MAX, 'evt-max')]);

    expect(jumps.takeJump([lower, makeEvent(MAX, { id: 'evt-max' })])).toBe(lower);
  });

  it('answers the decisions by number and id, and counts only the undecided as awaiting one', () => {
    const jumps = new HeldJumps([record(10, 'a', 'accepted'), record(20, 'b', 'rejected'), record(30, 'c')]);

    expect(jumps.decisionOf(makeEvent(10, { id: 'a' }))).toBe('accepted');
    expect(jumps.decisionOf(makeEvent(10, { id: 'other' }))).toBeUndefined();
    expect(jumps.decisionOf(makeEvent(20, { id: 'b' }))).toBe('rejected');
    expect(jumps.awaitingDecision).toBe(1);
  });

  it('lets the records go that the checkpoint passed', () => {
    const jumps = new HeldJumps([record(10, 'a', 'accepted'), record(MAX, 'b')]);

    jumps.passedThrough(9);
    const unchanged = jumps.changed;
    jumps.passedThrough(10);

    expect(unchanged).toBe(false);
    expect(jumps.records.map((held) => held.sequenceNumber)).toEqual([MAX]);
    expect(jumps.changed).toBe(true);
  });

  it('says whether a held event, recorded and not rejected or being quarantined, lies below a number', () => {
    const jumps = new HeldJumps([record(20, 'b', 'rejected'), record(30, 'c'), record(40, 'd', 'accepted')]);

    expect(jumps.heldBelow(30)).toBe(false);
    expect(jumps.heldBelow(31)).toBe(true);
    const rejectedOnly = new HeldJumps([record(20, 'b', 'rejected')]);
    expect(rejectedOnly.heldBelow(1_000)).toBe(false);
    rejectedOnly.takeJump([makeEvent(500)]);
    expect(rejectedOnly.heldBelow(500)).toBe(false);
    expect(rejectedOnly.heldBelow(501)).toBe(true);
  });

  it('keeps at most maxHeld records, letting the highest go', () => {
    const jumps = new HeldJumps([record(300, 'c', 'rejected'), record(200, 'b', 'rejected')], { maxHeld: 2 });
    const lowest = makeEvent(100);

    const dropped = jumps.recordHeld(lowest, 'fp', 5);

    expect(dropped.map((held) => held.sequenceNumber)).toEqual([300]);
    expect(jumps.records.map((held) => held.sequenceNumber)).toEqual([100, 200]);
  });
});
