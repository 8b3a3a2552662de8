/** The no-loss property (`test/support/no-loss-property.ts`) over 3 000 drawn fault schedules. */
import { it } from 'vitest';
import { assertNoLossProperty } from '../support/no-loss-property.ts';

it('loses nothing over 3 000 drawn fault schedules', async () => {
  await assertNoLossProperty({ numRuns: 3_000, seed: Number(process.env.FC_SEED ?? 77) });
}, 600_000);
