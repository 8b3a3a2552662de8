/**
 * The checkpoint store contract with several programs in one table, as a worker uses it: every
 * case of `CHECKPOINT_STORE_CONTRACT` runs on the rows of several programs at once, their calls
 * interleaved, each row on its own clock. Program names are chosen to be near one another (one a
 * prefix of the others), so a key built carelessly (`program#cards` against `program#cards.eu`)
 * would show: any write landing on a neighbour's row breaks that row's case.
 */
import { describe, it } from 'vitest';
import type { CheckpointStore } from '../../functions/core/checkpoint/store.ts';
import { CHECKPOINT_STORE_CONTRACT, type ContractCase, T0 } from './checkpoint-store-contract.ts';

/** A fresh row of `program` in a table shared by every program of one case. */
export type ProgramRowFactory = (
  program: string,
  now: () => number,
) => CheckpointStore | Promise<CheckpointStore>;

/** Names of the programs of one case, near one another: one is a prefix of the others. */
export function neighbourNames(base: string): readonly string[] {
  return [base, `${base}.eu`, `${base}-2`, `${base}_x`];
}

async function runOnRows(contractCase: ContractCase, programs: readonly string[], newRow: ProgramRowFactory) {
  await Promise.all(
    programs.map(async (program) => {
      let now = T0;
      const store = await newRow(program, () => now);
      await contractCase.run({
        store,
        at: (epochMs) => {
          now = epochMs;
        },
      });
    }),
  );
}

/**
 * Registers every contract case as a test that runs it on the rows of neighbouring programs at
 * once. `uniqueBase` gives each case a base name of its own (the table is shared across cases).
 */
export function describeContractAcrossPrograms(
  name: string,
  uniqueBase: () => string,
  newRow: ProgramRowFactory,
): void {
  describe(`${name}: the contract on several programs' rows at once`, () => {
    for (const contractCase of CHECKPOINT_STORE_CONTRACT) {
      it(`${contractCase.rule}: ${contractCase.name}`, () =>
        runOnRows(contractCase, neighbourNames(uniqueBase()), newRow));
    }
  });
}
