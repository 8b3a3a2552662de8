/**
 * The no-loss invariant for a fleet, over drawn programs, worker counts and killed workers
 * (`test/support/fleet-no-loss-property.ts`): several programs per worker, programs moving between
 * workers as the count changes, a worker's process dying at any of its programs' port calls.
 */
import { describe, expect, it } from 'vitest';
import { buildMutant, type Mutant } from '../../../support/cycle-mutants.ts';
import {
  assertFleetNoLossProperty,
  checkFleetNoLossProperty,
  type FleetModules,
} from '../../../support/fleet-no-loss-property.ts';

it('loses nothing for any program of a fleet, whatever workers die and however the count changes', async () => {
  await assertFleetNoLossProperty({ numRuns: 60, seed: Number(process.env.FC_SEED ?? 3_535) });
}, 180_000);

describe('the fleet property on mutants', () => {
  it.each<[string, Mutant]>([
    [
      'a dead worker’s lease never taken over',
      {
        name: 'fleet expired lease never taken over',
        edits: [
          {
            file: 'core/checkpoint/rules.ts',
            find: '    state.lease === null || state.lease.expiresAt < now,',
            replace: '    state.lease === null || (now < 0 && state.lease.expiresAt < now),',
          },
        ],
      },
    ],
    [
      'a worker polling every program, not its own: the lease keeps one holder, so nothing is lost',
      {
        name: 'fleet every worker polls every program',
        edits: [
          {
            file: 'core/fleet/assignment.ts',
            find: '  return programs.filter((program) => assignedWorker(program.name, workerCount) === worker);',
            replace:
              '  return programs.filter((program) => assignedWorker(program.name, workerCount) >= 0 || worker < 0);',
          },
        ],
      },
    ],
  ])(
    '%s',
    async (name, mutant) => {
      const code = await buildMutant(mutant);
      const modules = {
        cycle: code.modules,
        runWorker: (await code.import('core/fleet/worker-run.ts')).runWorker as FleetModules['runWorker'],
      };

      const verdict = await checkFleetNoLossProperty(modules, { numRuns: 40, seed: 3_535 });

      // Taking over is what frees a dead worker's programs; the assignment only decides who tries.
      expect(verdict.failed).toBe(name.startsWith('a dead'));
    },
    180_000,
  );
});
