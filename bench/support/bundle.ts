/**
 * Bundles a benchmark entry (the naive baseline, an SDK-only module) with the poller's own
 * esbuild settings (the ones `npm run build` makes the shipped handler with), so comparisons with
 * the shipped artifact are like for like.
 */
import { build } from 'esbuild';
import { pollerEsbuildOptions } from '../../scripts/build/artifacts.ts';

export async function bundleLikeThePoller(entry: string, outfile: string): Promise<void> {
  await build({ ...pollerEsbuildOptions(entry, outfile), logLevel: 'silent' });
}
