/**
 * Vitest globalSetup of the `consumer` project: `npm run package`, exactly as a maintainer runs
 * it, once per run. The tests install the tarball it makes (`inject('packageTarball')`).
 *
 * `npm test` (scripts/run-tests.ts) runs `npm run package` itself, side by side with the unit
 * tests, just before this Vitest run, and says so with `PACKAGE_MADE_BY_RUN_TESTS=1`: the package
 * in dist/ is then the one the sources make, and is not made again.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { BUILT } from './build-global-setup.ts';
import { timedSetup } from './setup-timing.ts';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

declare module 'vitest' {
  export interface ProvidedContext {
    packageTarball: string;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  if (process.env.PACKAGE_MADE_BY_RUN_TESTS === '1') {
    console.log('setup: npm run package made by npm test just before');
  } else {
    await timedSetup('npm run package', () =>
      execFileSync('npm', ['run', '--silent', 'package'], {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'ignore', 'inherit'],
      }),
    );
  }
  // `npm run package` built every part `npm run build` does: the build setup need not again.
  (globalThis as { [BUILT]?: true })[BUILT] = true;
  const dir = path.join(REPO_ROOT, 'dist/package');
  const tarballs = readdirSync(dir).filter((name) => name.endsWith('.tgz'));
  if (tarballs.length !== 1) {
    throw new Error(
      `npm run package should make one tarball in ${dir}, found ${tarballs.join(', ') || 'none'}`,
    );
  }
  project.provide('packageTarball', path.join(dir, tarballs[0]!));
}
