/**
 * Operator requests as Lambda delivers them to the shipped bundle: a malformed or unknown one is
 * refused with an error naming the field and touches nothing (no token asked for, nothing
 * published, no checkpoint row, no lease); a valid replay publishes without moving the
 * checkpoint; and the schedule's `{ program }` still runs a poll cycle.
 */
import { describe, expect, it } from 'vitest';
import { summaryOf, usePollerScenarios } from '../../support/poller-lambda.ts';

const scenarios = usePollerScenarios(2600);

describe('operator requests, run as Lambda runs the function', () => {
  it('refuses a malformed or unknown request naming the field, and touches nothing', async () => {
    const s = await scenarios.start();
    s.simulator.generate(5);
    const valid = { version: 1, kind: 'event', program: s.program, sequence: 1 };
    const cases: Array<[unknown, string]> = [
      [
        {
          operatorRequest: {
            version: 1,
            kind: 'replay',
            program: s.program,
            from: 1,
            holdMs: 1000,
            dryRun: false,
          },
        },
        'operatorRequest.to',
      ],
      [{ operatorRequest: { ...valid, kind: 'delete-everything' } }, 'operatorRequest.kind'],
      [{ operatorRequest: { ...valid, version: 2 } }, 'operatorRequest.version'],
      [
        { operatorRequest: { ...valid, checkpoint: 0 } },
        'operatorRequest.<key "checkp…" of 10 character(s)>',
      ],
      [{ operatorRequest: { ...valid, program: 'not-polled' } }, 'operatorRequest.program'],
      [{ operatorRequest: 'replay' }, 'operatorRequest'],
      [{ program: s.program, operatorRequest: valid }, 'event.program'],
    ];

    const outcomes = [];
    for (const [event] of cases) outcomes.push((await s.invoke(event)).outcome);

    outcomes.forEach((outcome, index) => {
      expect(outcome, JSON.stringify(cases[index]![0])).toMatchObject({
        kind: 'error',
        errorType: 'OperatorRequestError',
        errorMessage: expect.stringContaining(cases[index]![1]),
      });
    });
    expect(s.simulator.issuedTokens()).toEqual([]);
    expect(await s.deliveredIds()).toEqual([]);
    expect(await s.item()).toBeUndefined();
  });

  it('publishes a replayed range without moving the checkpoint; the schedule still polls', async () => {
    const s = await scenarios.start();
    const events = s.simulator.generate(6);

    const replay = await s.invoke({
      operatorRequest: {
        version: 1,
        kind: 'replay',
        program: s.program,
        from: 2,
        to: 4,
        holdMs: 1000,
        dryRun: false,
      },
    });
    const replayed = await s.deliveredIds();
    const afterReplay = await s.item();
    const scheduled = await s.invoke({ program: s.program });

    expect(replay.outcome).toMatchObject({
      kind: 'response',
      result: {
        kind: 'replay',
        published: 3,
        through: 4,
        missing: [],
        endOfFeed: false,
        eventBus: s.busName,
      },
    });
    expect(replayed.sort()).toEqual(
      events
        .slice(1, 4)
        .map((event) => event.id)
        .sort(),
    );
    expect(afterReplay).toBeUndefined();
    expect(summaryOf(scheduled)).toMatchObject({ published: 6 });
    expect(await s.checkpoint()).toBe(events.at(-1)!.sequence_number);
  });
});
