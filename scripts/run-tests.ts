/**
 * `npm test` (`tsx scripts/run-tests.ts all`) and `npm run test:fast` (`... fast`): a test tier's
 * steps, each timed; then one line per step with its time. Arguments after the tier go to the
 * Vitest steps: `npm test -- -t 'lease'`, `npm run test:fast -- test/unit/core`.
 *
 * The steps run in two lanes side by side, since most of them keep one core busy (tsc, jsii, Biome
 * on a small tree) or wait. For `all`: one lane makes the package (`npm run package`), then runs
 * the projects that use it, integration, infra and consumer, in one Vitest run that reuses it
 * (`PACKAGE_MADE_BY_RUN_TESTS`, read by test/support/package-global-setup.ts) instead of making
 * it again; the other lints, runs the unit project (which needs no build), then type-checks once
 * the package's declarations are there (`npm run typecheck` without its own declarations step).
 * For `fast`: the type check beside Biome then the unit project.
 *
 * A lane stops at its first failing step, and once a step failed no lane starts another; the
 * command fails if any step did. Vitest's own timing reporter (test/support/timing-reporter.ts)
 * says where each Vitest step went: the global setups and each project.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const VITEST = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const TSC = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));

interface Step {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** A step of the other lane this one starts after (it reads what that one makes). */
  readonly after?: string;
}

const [tier = 'all', ...vitestArguments] = process.argv.slice(2);

const vitest = (projects: readonly string[], env: Readonly<Record<string, string>> = {}): Step => ({
  name: `vitest (${projects.join(', ')})`,
  command: process.execPath,
  args: [
    VITEST,
    'run',
    ...projects.flatMap((project) => ['--project', project]),
    // Files or a name given: one of the Vitest steps may have none of them.
    ...(vitestArguments.length > 0 ? ['--passWithNoTests', ...vitestArguments] : []),
  ],
  env,
});
const lint: Step = { name: 'lint', command: 'npm', args: ['run', '--silent', 'lint'] };
const typecheck: Step = { name: 'typecheck', command: 'npm', args: ['run', '--silent', 'typecheck'] };
const makePackage: Step = { name: 'package', command: 'npm', args: ['run', '--silent', 'package'] };
/** `npm run typecheck` without its declarations step: `npm run package` emits them. */
const typecheckAfterPackage: Step = {
  name: 'typecheck',
  command: process.execPath,
  args: [TSC, '--noEmit', '-p', 'tsconfig.json'],
  after: makePackage.name,
};

/** Each tier's lanes, which run side by side. The projects are those of CONTRIBUTING.md, "At a glance". */
const TIERS: Readonly<Record<string, readonly (readonly Step[])[]>> = {
  all: [
    [makePackage, vitest(['integration', 'infra', 'consumer'], { PACKAGE_MADE_BY_RUN_TESTS: '1' })],
    [lint, vitest(['unit']), typecheckAfterPackage],
  ],
  fast: [[typecheck], [lint, vitest(['unit'])]],
};

const lanes = TIERS[tier];
if (lanes === undefined) {
  console.error(`run-tests: unknown tier ${tier}: choose from ${Object.keys(TIERS).join(', ')}`);
  process.exit(2);
}

/** `42.0 s`, or `6 min 10 s` from a minute on. */
function duration(ms: number): string {
  const seconds = ms / 1_000;
  return seconds < 60
    ? `${seconds.toFixed(1)} s`
    : `${Math.floor(seconds / 60)} min ${Math.floor(seconds % 60)} s`;
}

const started = performance.now();
const times: string[] = [];
let failed = false;
/** Each step's end, by name: resolves to whether it passed (false when it never ran). */
const ends = new Map<string, { readonly promise: Promise<boolean>; resolve(passed: boolean): void }>();
for (const step of lanes.flat()) {
  let resolve!: (passed: boolean) => void;
  const promise = new Promise<boolean>((settle) => {
    resolve = settle;
  });
  ends.set(step.name, { promise, resolve });
}

/** Runs one step to its end; its time (and failure) goes to `times`. Resolves to whether it passed. */
function run(step: Step): Promise<boolean> {
  const stepStarted = performance.now();
  return new Promise((resolve) => {
    const child = spawn(step.command, step.args, {
      cwd: REPO_ROOT,
      stdio: 'inherit',
      env: { ...process.env, ...step.env },
    });
    let settled = false;
    const end = (failure?: string): void => {
      if (settled) return;
      settled = true;
      times.push(
        `${step.name} ${duration(performance.now() - stepStarted)}${failure ? ` (failed: ${failure})` : ''}`,
      );
      resolve(failure === undefined);
    };
    child.on('error', (error) => end(error.message));
    child.on('exit', (code, signal) => (code === 0 ? end() : end(signal ?? `exit ${code}`)));
  });
}

/** A lane's steps in order, each after the step it waits for; stops once any step failed. */
async function runLane(steps: readonly Step[]): Promise<void> {
  for (const step of steps) {
    const waitedFor = step.after === undefined ? true : await ends.get(step.after)!.promise;
    const runs = !failed && waitedFor;
    if (!runs) times.push(`${step.name} not run`);
    const passed = runs && (await run(step));
    ends.get(step.name)!.resolve(passed);
    if (!passed) {
      failed = true;
      // What waits on this lane's later steps learns they will not run.
      for (const later of steps.slice(steps.indexOf(step) + 1)) ends.get(later.name)!.resolve(false);
      return;
    }
  }
}

await Promise.all(lanes.map(runLane));
console.log(`\ntest tier ${tier}: ${times.join(', ')}; ${duration(performance.now() - started)} in all`);
process.exit(failed ? 1 : 0);
