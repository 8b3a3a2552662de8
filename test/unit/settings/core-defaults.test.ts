/**
 * The core still has its own fallbacks for some settings (the CLI's `run` relies on them). Until
 * the core takes them from the settings table, they must agree with it; delete each line when
 * its copy is gone.
 */
import { describe, expect, it } from 'vitest';
import { GAP_REPAIR_DEFAULTS } from '../../../functions/core/gap-repair.ts';
import { PUBLISH_DEFAULTS } from '../../../functions/core/publish-pipeline.ts';
import { SETTINGS } from '../../../functions/settings/settings.ts';

describe("the core's own defaults", () => {
  it('agree with the settings table', () => {
    expect(GAP_REPAIR_DEFAULTS.maxLookups).toBe(SETTINGS.gapRepairMaxLookups.default);
    expect(GAP_REPAIR_DEFAULTS.graceMs).toBe(SETTINGS.gapRepairGraceSeconds.default * 1000);
    expect(PUBLISH_DEFAULTS.maxAttempts).toBe(SETTINGS.publishMaxAttempts.default);
    expect(PUBLISH_DEFAULTS.concurrency).toBe(SETTINGS.publishConcurrency.default);
  });
});
