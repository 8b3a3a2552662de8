/**
 * The representative cases of the fault matrix, one run each, in `npm test`: the shipped artifact
 * under the runtime-faithful harness, faults injected by proxies in front of the simulator and
 * moto, the no-loss invariant checked after each. The full matrix (every fault, several seeds) is
 * `npm run test:faults` (test/faults/).
 */
import { describe, it } from 'vitest';
import { useFaultEnvironment } from '../../support/fault-run.ts';
import { FAULT_SCENARIOS } from '../../support/fault-scenarios.ts';

const environment = useFaultEnvironment();
/** Fixed, so a failure here is reproduced by the same seed (it is in every assertion message). */
const SEED = 9_100;

describe('fault matrix, representative cases (nothing lost)', () => {
  // One at a time: other integration files run beside this one on the same two cores.
  it.each(FAULT_SCENARIOS.filter((scenario) => scenario.fast).map((s, index) => [s.id, s, index] as const))(
    '%s',
    async (_id, scenario, index) => {
      await scenario.run(environment, SEED + index);
    },
  );
});
