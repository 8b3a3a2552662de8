/**
 * Bundles a benchmark entry (the naive baseline, an SDK-only module) with the poller's own
 * esbuild settings (infra/constructs/poller-bundling.ts), so comparisons with the shipped
 * artifact are like for like.
 */
import { build } from 'esbuild';
import { POLLER_BUNDLING } from '../../infra/constructs/poller-bundling.ts';

export async function bundleLikeThePoller(entry: string, outfile: string): Promise<void> {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: POLLER_BUNDLING.target,
    mainFields: POLLER_BUNDLING.mainFields,
    banner: { js: POLLER_BUNDLING.banner ?? '' },
    minify: POLLER_BUNDLING.minify,
    keepNames: POLLER_BUNDLING.keepNames,
    sourcemap: POLLER_BUNDLING.sourceMap ? 'external' : false,
    sourcesContent: POLLER_BUNDLING.sourcesContent,
    logLevel: 'silent',
  });
}
