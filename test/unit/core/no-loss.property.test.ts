/**
 * The no-loss invariant over random fault schedules, against the in-memory ports (fast-check).
 * 400 schedules with a fixed seed here; `npm run test:faults` runs 3 000 (FC_SEED explores others).
 */
import { it } from 'vitest';
import { assertNoLossProperty } from '../../support/no-loss-property.ts';

it('loses nothing, never moves the checkpoint back or past an unaccepted event, whatever faults are drawn', async () => {
  await assertNoLossProperty({ numRuns: 400, seed: Number(process.env.FC_SEED ?? 4_242) });
}, 120_000);
