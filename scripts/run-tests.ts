/**
 * `npm test` (`tsx scripts/run-tests.ts all`) and `npm run test:fast` (`... fast`): a test tier's
 * steps in order (type check, Biome, then Vitest on the tier's projects), each timed, stopping at
 * the first that fails; then one line per step with its time. Arguments after the tier go to
 * Vitest: `npm test -- -t 'lease'`, `npm run test:fast -- test/unit/core`.
 *
 * Vitest's own timing reporter (test/support/timing-reporter.ts) then says where its step went:
 * the global setups and each project.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const VITEST = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));

/** The Vitest projects of each tier (CONTRIBUTING.md, "At a glance"). */
const TIERS: Readonly<Record<string, readonly string[]>> = {
  all: ['unit', 'integration', 'infra', 'consumer'],
  fast: ['unit'],
};

const [tier = 'all', ...vitestArguments] = process.argv.slice(2);
const projects = TIERS[tier];
if (projects === undefined) {
  console.error(`run-tests: unknown tier ${tier}: choose from ${Object.keys(TIERS).join(', ')}`);
  process.exit(2);
}

const steps: ReadonlyArray<{
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
}> = [
  { name: 'typecheck', command: 'npm', args: ['run', '--silent', 'typecheck'] },
  { name: 'lint', command: 'npm', args: ['run', '--silent', 'lint'] },
  {
    name: `vitest (${projects.join(', ')})`,
    command: process.execPath,
    args: [VITEST, 'run', ...projects.flatMap((project) => ['--project', project]), ...vitestArguments],
  },
];

/** `42.0 s`, or `6 min 10 s` from a minute on. */
function duration(ms: number): string {
  const seconds = ms / 1_000;
  return seconds < 60
    ? `${seconds.toFixed(1)} s`
    : `${Math.floor(seconds / 60)} min ${Math.floor(seconds % 60)} s`;
}

const times: string[] = [];
const report = (): void => console.log(`\ntest tier ${tier}: ${times.join(', ')}`);
for (const step of steps) {
  const started = performance.now();
  const { status, signal, error } = spawnSync(step.command, step.args, { cwd: REPO_ROOT, stdio: 'inherit' });
  times.push(`${step.name} ${duration(performance.now() - started)}`);
  if (status !== 0) {
    times[times.length - 1] += ` (failed: ${error?.message ?? signal ?? `exit ${status}`})`;
    report();
    process.exit(status ?? 1);
  }
}
report();
