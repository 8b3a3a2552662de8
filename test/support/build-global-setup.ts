/**
 * Vitest globalSetup of the projects that run what the package ships: `npm run build` once per
 * run (the handler asset, the construct library the repo's app imports as `banking-events-poller`,
 * the subscriber kit the example subscriber imports, and the CLI bundle), so the tests run exactly what a user installs, built from the sources
 * being tested.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { timedSetup } from './setup-timing.ts';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
/**
 * Global setups of every project run in this one process, one after the other: build once. The
 * consumer project's `npm run package` reads it to build the same parts only once too.
 */
export const BUILT = Symbol.for('banking-events-poller.test.built');

export default async function setup(): Promise<void> {
  const state = globalThis as { [BUILT]?: true };
  // `npm test` made the package, every part of the build with it, just before this run.
  if (state[BUILT] || process.env.PACKAGE_MADE_BY_RUN_TESTS === '1') return;
  // Declarations are for the package and the type check; the tests run JavaScript.
  await timedSetup('npm run build', () =>
    execFileSync('npm', ['run', '--silent', 'build', '--', 'handler', 'library', 'subscriber', 'cli'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    }),
  );
  state[BUILT] = true;
}
