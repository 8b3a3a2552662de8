/**
 * The order check the custom-bus fault runs end with (`test/support/group-order.ts`): what it
 * lets through (a split the function reported) and what it refuses (any other inversion, a log
 * line of nothing, a split left unreported).
 */
import { describe, expect, it } from 'vitest';
import { checkGroupOrder, type GroupOrderInput, type WireEntry } from '../../support/group-order.ts';

const accepted = (sequence: number, group = 'g'): WireEntry => ({ group, sequence, accepted: true });
const rejected = (sequence: number, group = 'g'): WireEntry => ({ group, sequence, accepted: false });
const arrivals = (group: string, ...sequences: number[]) =>
  sequences.map((sequence) => ({ group, sequence }));

function input(overrides: Partial<GroupOrderInput>): GroupOrderInput {
  return {
    arrivals: [],
    requests: [],
    orderBrokenLogs: [],
    orderBrokenMetric: 0,
    everyAnswerRead: true,
    ...overrides,
  };
}

describe('checkGroupOrder', () => {
  it('passes groups that arrive in sequence order, interleaved', () => {
    const report = checkGroupOrder(
      input({
        arrivals: [...arrivals('a', 1), ...arrivals('b', 2), ...arrivals('a', 3), ...arrivals('b', 4)],
        requests: [{ answerDelivered: true, entries: [1, 3].map((n) => accepted(n, 'a')) }],
      }),
    );

    expect(report).toEqual({ inversions: 0, splits: 0, violations: [] });
  });

  it('refuses an inversion no request split', () => {
    const report = checkGroupOrder(
      input({
        arrivals: arrivals('g', 1, 3, 2),
        requests: [{ answerDelivered: true, entries: [accepted(1), accepted(2), accepted(3)] }],
      }),
    );

    expect(report.violations).toEqual(['group g: event 3 arrived before event 2, and no request split them']);
  });

  it('lets through the inversions of a reported split: 2 rejected, 3 and 5 accepted, 4 rejected', () => {
    const report = checkGroupOrder(
      input({
        arrivals: arrivals('g', 1, 3, 5, 2, 4),
        requests: [
          { answerDelivered: true, entries: [accepted(1)] },
          { answerDelivered: true, entries: [rejected(2), accepted(3), rejected(4), accepted(5)] },
          { answerDelivered: true, entries: [accepted(2), accepted(4)] },
        ],
        orderBrokenLogs: [{ earlier: 2, later: 3 }],
        orderBrokenMetric: 1,
      }),
    );

    expect(report).toEqual({ inversions: 3, splits: 1, violations: [] });
  });

  it('refuses a split the function did not report, when it read every answer', () => {
    const split = {
      arrivals: arrivals('g', 2, 1),
      requests: [{ answerDelivered: true, entries: [rejected(1), accepted(2)] }],
    };

    expect(checkGroupOrder(input(split)).violations).toEqual([
      '1 answered requests split a group (1<2) but OrderBroken logged 0',
    ]);
    // A killed invocation cannot have logged it; a request it gave up on neither.
    expect(checkGroupOrder(input({ ...split, everyAnswerRead: false })).violations).toEqual([]);
    expect(
      checkGroupOrder(input({ ...split, requests: [{ ...split.requests[0]!, answerDelivered: false }] }))
        .violations,
    ).toEqual([]);
  });

  it('refuses a log line of a pair that no request split first, and a metric that disagrees with the logs', () => {
    const report = checkGroupOrder(
      input({
        requests: [{ answerDelivered: true, entries: [rejected(1), accepted(2), accepted(3)] }],
        orderBrokenLogs: [
          { earlier: 1, later: 2 },
          { earlier: 1, later: 3 },
        ],
        orderBrokenMetric: 1,
      }),
    );

    expect(report.violations).toEqual([
      'OrderBroken logged 1<3, which no request answered as its first split',
      'OrderBroken counted 1 but logged 2 times',
      '1 answered requests split a group (1<2) but OrderBroken logged 2',
    ]);
  });

  it('keeps groups apart: a split in one group does not excuse an inversion in another', () => {
    const report = checkGroupOrder(
      input({
        arrivals: [...arrivals('a', 2, 1), ...arrivals('b', 4, 3)],
        requests: [
          {
            answerDelivered: true,
            entries: [rejected(1, 'a'), accepted(2, 'a'), accepted(3, 'b'), accepted(4, 'b')],
          },
        ],
        orderBrokenLogs: [{ earlier: 1, later: 2 }],
        orderBrokenMetric: 1,
      }),
    );

    expect(report.violations).toEqual(['group b: event 4 arrived before event 3, and no request split them']);
  });
});
