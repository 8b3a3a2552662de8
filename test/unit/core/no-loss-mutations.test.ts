/**
 * Mutation tests of the no-loss property: each mutant undoes one fix (of the first runs, of the
 * bank's clock, of the stream, of a single event stopping the feed, of a trusted sequence jump) in
 * a copy of the code, and the
 * property must find a schedule that loses an event on it. A property
 * that passed on a mutant could not see the hole the fix closed.
 */
import { describe, expect, it } from 'vitest';
import { loadMutant, type Mutant } from '../../support/cycle-mutants.ts';
import { checkNoLossProperty } from '../../support/no-loss-property.ts';

const MUTANTS: readonly Mutant[] = [
  {
    // A page larger than the cycle's room (a bank that ignores `limit`) cut at the wrong end: the
    // events it keeps are the last ones, and the cursor passes the first without reading them.
    name: 'a page cut to the room keeps its last events',
    edits: [
      {
        file: 'core/memory-budget.ts',
        find: 'return count === events.length ? events : events.slice(0, count);',
        replace: 'return count === events.length ? events : events.slice(events.length - count);',
      },
    ],
  },
  {
    // As before the fix: a row without a checkpoint is new unless its last cycle completed, and
    // `latest` counts from the run's own start rather than the row's first run.
    name: 'start position applied again after a failed first run',
    edits: [
      {
        file: 'core/cycle/start-landing.ts',
        find: '  if (lease.startApplied) return { checkpoint: lease.checkpoint, feedProgramId: null };',
        replace:
          '  if (lease.checkpoint !== null) return { checkpoint: lease.checkpoint, feedProgramId: null };\n' +
          "  if ((await deps.checkpoints.read()).lastCycle?.outcome === 'completed') return { checkpoint: null, feedProgramId: null };",
      },
      {
        file: 'core/cycle/start-landing.ts',
        find: '      startedAt: lease.firstLeasedAt - allowanceMs,',
        replace: '      startedAt: deps.clock.now(),',
      },
    ],
  },
  {
    // As before issue 24: `latest` takes the bank's created_dt for our clock, with no allowance.
    name: "no allowance for the bank's clock",
    edits: [
      {
        file: 'core/cycle/start-landing.ts',
        find: '      startedAt: lease.firstLeasedAt - allowanceMs,',
        replace: '      startedAt: lease.firstLeasedAt,',
      },
    ],
  },
  {
    // As before the fix: a poll that says "nothing new" clears the marker of an unreadable message.
    name: 'unreadable stream message forgotten when the poll lags',
    edits: [
      {
        file: 'core/stream/stream-reader.ts',
        find: '      this.#reportMissingFromPoll(after);\n      return undefined;',
        replace:
          '      this.#buffer.setCursor(Number.MAX_SAFE_INTEGER);\n      this.#buffer.setCursor(after);\n' +
          '      this.#reportMissingFromPoll(after);\n      return undefined;',
      },
    ],
  },
  {
    // As before issue 24: the depth the bus processes is not checked, the bus refuses the event.
    name: 'event nested deeper than the bus processes sent as it is',
    edits: [
      {
        file: 'core/event-model.ts',
        find: '  if (depth > rules.maxDetailDepth) {',
        replace: '  if (depth > Number.MAX_SAFE_INTEGER) {',
      },
    ],
  },
  {
    // As before issue 24: a type longer than a detail-type may be is sent, the bus refuses it.
    name: 'type too long for a detail-type sent as it is',
    edits: [
      {
        file: 'core/event-model.ts',
        find: '  if (typeProblem !== undefined) refuse(',
        replace: "  if (typeProblem === 'never') refuse(",
      },
    ],
  },
  {
    // As before issue 24: the second event with an id is dropped as a repeat of the first.
    name: 'an id at a second number dropped as a repeat',
    edits: [
      {
        file: 'core/event-model.ts',
        find: '    const position = feedPosition(event);\n    if (seen.has(position)) continue;',
        replace: '    const position = event.id;\n    if (seen.has(position)) continue;',
      },
    ],
  },
  {
    // As before issue 32: the readers trust every sequence number, however far it jumps.
    name: 'a sequence number 2^53 − 1 trusted',
    edits: [
      {
        file: 'core/cycle/feed-sources.ts',
        find: '    recordedGaps,\n    jumps,\n  };',
        replace: '    recordedGaps,\n    jumps: undefined,\n  };',
      },
    ],
  },
];

describe('the no-loss property against mutants of the cycle', () => {
  it.each(MUTANTS)(
    'finds a lost event when the fix is undone: $name',
    async (mutant) => {
      const modules = await loadMutant(mutant);

      const details = await checkNoLossProperty(modules, { numRuns: 300, seed: 4_242 });

      expect(details.failed, `${mutant.name}: no counterexample in ${details.numRuns} runs`).toBe(true);
    },
    300_000,
  );
});
