import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../functions/core/errors.ts';
import type { FeedRead } from '../../../functions/core/feed-reader.ts';
import {
  fastForward,
  formatStartPosition,
  initialCursor,
  type PageSource,
  parseStartPosition,
} from '../../../functions/core/start-position.ts';
import { makeEvent } from '../../support/in-memory-ports.ts';

const STARTED_AT = Date.parse('2026-11-22T00:00:00.000Z');
const OLD = '2026-11-21T23:00:00.000Z';
const NEW = '2026-11-22T00:00:01.000Z';

/** Answers `next(after)` from a scripted list of reads and records the cursors asked for. */
class ScriptedPages implements PageSource {
  readonly cursors: Array<number | null> = [];
  constructor(private readonly reads: FeedRead[]) {}
  async next(after: number | null): Promise<FeedRead> {
    this.cursors.push(after);
    return this.reads.shift() ?? { kind: 'closed', upstreamUnavailable: false };
  }
}

const page = (from: number, to: number, createdDt = OLD): FeedRead => ({
  kind: 'events',
  events: Array.from({ length: to - from + 1 }, (_, i) => makeEvent(from + i, { created_dt: createdDt })),
  late: [],
});

describe('parseStartPosition', () => {
  it.each([
    ['beginning', { kind: 'beginning' }],
    ['latest', { kind: 'latest' }],
    [' 42 ', { kind: 'sequence', sequenceNumber: 42 }],
    [7, { kind: 'sequence', sequenceNumber: 7 }],
  ])('reads %j', (raw, expected) => {
    expect(parseStartPosition(raw, 'START_POSITION')).toEqual(expected);
  });

  it.each(['', 'earliest', '0', '-3', '1.5', '99999999999999999999'])(
    'refuses %j, naming where it came from and what is expected',
    (raw) => {
      const error = (() => {
        try {
          return parseStartPosition(raw, 'context "startPosition"');
        } catch (caught) {
          return caught;
        }
      })();
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as Error).message).toMatch(
        /^context "startPosition" must be "beginning", "latest", or a sequence number/,
      );
    },
  );

  it('formats a position as it is written', () => {
    expect(formatStartPosition({ kind: 'sequence', sequenceNumber: 9 })).toBe('9');
    expect(formatStartPosition({ kind: 'latest' })).toBe('latest');
  });

  it('turns a number into the cursor just below it, and 1 into the beginning', () => {
    expect(initialCursor({ kind: 'sequence', sequenceNumber: 10 })).toBe(9);
    expect(initialCursor({ kind: 'sequence', sequenceNumber: 1 })).toBeNull();
    expect(initialCursor({ kind: 'beginning' })).toBeNull();
  });
});

describe('fastForward', () => {
  it('walks full pages and lands at the end of a short one, without one more long poll', async () => {
    const pages = new ScriptedPages([page(1, 3), page(4, 6), page(7, 8)]);
    const seen: number[] = [];

    const result = await fastForward(pages, {
      from: null,
      startedAt: STARTED_AT,
      pageLimit: 3,
      onPage: (progress) => seen.push(progress.reached!),
    });

    expect(result).toEqual({
      kind: 'landed',
      reached: 8,
      pages: 3,
      skipped: 8,
      feedProgramId: 'program-1',
      highestSeen: 8,
    });
    expect(pages.cursors).toEqual([null, 3, 6]);
    expect(seen).toEqual([3, 6, 8]);
  });

  it('lands where the feed says nothing is new', async () => {
    const pages = new ScriptedPages([page(1, 3), { kind: 'caught-up' }]);

    const result = await fastForward(pages, { from: null, startedAt: STARTED_AT, pageLimit: 3 });

    expect(result).toMatchObject({ kind: 'landed', reached: 3, skipped: 3 });
  });

  it('lands just before the first event created after the walk began, so that one is still published', async () => {
    const mixed: FeedRead = {
      kind: 'events',
      late: [],
      events: [
        makeEvent(4, { created_dt: OLD }),
        makeEvent(5, { created_dt: NEW }),
        makeEvent(6, { created_dt: NEW }),
      ],
    };
    const pages = new ScriptedPages([page(1, 3), mixed]);

    const result = await fastForward(pages, { from: null, startedAt: STARTED_AT, pageLimit: 3 });

    expect(result).toMatchObject({ kind: 'landed', reached: 4, skipped: 4, highestSeen: 6 });
  });

  it('takes an event above the highest number a run saw for new, however early its created_dt', async () => {
    const pages = new ScriptedPages([page(1, 3), page(4, 6)]);

    const result = await fastForward(pages, { from: null, startedAt: STARTED_AT, newAbove: 4, pageLimit: 3 });

    expect(result).toMatchObject({ kind: 'landed', reached: 4, skipped: 4, highestSeen: 6 });
  });

  it('on an empty feed lands nowhere: nothing to pass over, no feed known', async () => {
    const result = await fastForward(new ScriptedPages([{ kind: 'caught-up' }]), {
      from: null,
      startedAt: STARTED_AT,
      pageLimit: 100,
    });

    expect(result).toEqual({
      kind: 'landed',
      reached: null,
      pages: 0,
      skipped: 0,
      feedProgramId: null,
      highestSeen: 0,
    });
  });

  it('reports an interrupted walk with how far it got, starting from the given cursor', async () => {
    const pages = new ScriptedPages([page(11, 13)]);

    const result = await fastForward(pages, { from: 10, startedAt: STARTED_AT, pageLimit: 3 });

    expect(result).toEqual({ kind: 'interrupted', reached: 13, pages: 1, skipped: 3 });
    expect(pages.cursors).toEqual([10, 13]);
  });
});
