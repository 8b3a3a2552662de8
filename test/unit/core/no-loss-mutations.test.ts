/**
 * Mutation tests of the no-loss property: each mutant undoes one fix of the first-runs issue in a
 * copy of the code, and the property must find a schedule that loses an event on it. A property
 * that passed on a mutant could not see the hole the fix closed.
 */
import { describe, expect, it } from 'vitest';
import { loadMutant, type Mutant } from '../../support/cycle-mutants.ts';
import { checkNoLossProperty } from '../../support/no-loss-property.ts';

const MUTANTS: readonly Mutant[] = [
  {
    // As before the fix: a row without a checkpoint is new unless its last cycle completed, and
    // `latest` counts from the run's own start rather than the row's first run.
    name: 'start position applied again after a failed first run',
    edits: [
      {
        file: 'core/poll-cycle.ts',
        find: '    if (this.#lease.startApplied) return;',
        replace:
          '    if (this.#lease.checkpoint !== null) return;\n' +
          "    if ((await this.#deps.checkpoints.read()).lastCycle?.outcome === 'completed') return;",
      },
      {
        file: 'core/poll-cycle.ts',
        find: '        startedAt: this.#lease.firstLeasedAt,',
        replace: '        startedAt: this.#budget.startedAt,',
      },
    ],
  },
  {
    // As before the fix: a poll that says "nothing new" clears the marker of an unreadable message.
    name: 'unreadable stream message forgotten when the poll lags',
    edits: [
      {
        file: 'core/stream-reader.ts',
        find: '      if (this.#unread !== undefined) {\n        // A poll index that lags',
        replace:
          '      this.#unread = undefined;\n      if (this.#unread !== undefined) {\n        // A poll index that lags',
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
