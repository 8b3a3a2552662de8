import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Test files run side by side in this many workers: at least two, even on two cores (Vitest's own
 * default there is one). Most of an integration file's time is spent waiting on other processes
 * (a function's deadline, a dead run's lease, the CLI, moto), not computing.
 */
const WORKERS = Math.max(2, availableParallelism() - 1);

/**
 * The projects that run the function or the CLI against budgets and deadlines run after the others
 * (Vitest runs a lower `groupOrder` first, and each group to its end): the CPU-bound synths of
 * infra, consumer's installs and unit's property runs never take the cores from a function whose
 * invocation must finish within its budget.
 */
const AFTER_THE_CPU_BOUND = { groupOrder: 1 } as const;

/**
 * Integration files run in one worker more than the others: they spend most of their time waiting
 * (a run's budget, a dead run's lease, the CLI). Measured on two shared cores with three workers:
 * 3.4 CPU-minutes in 4.8 minutes, under one core of the two. Its own group, as Vitest requires of
 * a project with its own `maxWorkers`.
 */
const INTEGRATION_WORKERS = WORKERS + 1;

/** The full fault matrix runs alone, after everything else, in the default workers. */
const LAST = { groupOrder: 2 } as const;

// Unit, integration, infra and consumer make `npm test`; faults is the full fault matrix
// (`npm run test:faults`, which CI runs after `npm test`).
export default defineConfig({
  test: {
    maxWorkers: WORKERS,
    // After the summary: the global setups' time, and each project's span and slowest files.
    reporters: ['default', './test/support/timing-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
          // Not Vitest's 5 s: the seeded property runs take 1-2 s alone, and 9 s on two cores that
          // `npm test` shares with the package's build (and other work on a shared machine).
          testTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          sequence: AFTER_THE_CPU_BOUND,
          maxWorkers: INTEGRATION_WORKERS,
          // Tests a file runs side by side (it.concurrent): each is a function process or more.
          maxConcurrency: 3,
          environment: 'node',
          globalSetup: [
            'test/support/spawned-node-global-setup.ts',
            'test/support/build-global-setup.ts',
            'test/support/moto-global-setup.ts',
            'test/support/poller-artifact-global-setup.ts',
            'test/support/subscriber-deployment-global-setup.ts',
          ],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The full fault matrix: `npm run test:faults`, not part of `npm test` (about 12 minutes).
        test: {
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
          sequence: LAST,
          // Runs of a scenario go in parallel, a few at a time: each is a function process or more.
          maxConcurrency: 3,
          environment: 'node',
          globalSetup: [
            'test/support/spawned-node-global-setup.ts',
            'test/support/build-global-setup.ts',
            'test/support/moto-global-setup.ts',
            'test/support/poller-artifact-global-setup.ts',
          ],
          testTimeout: 300_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The package as users get it: the tarball installed into throwaway apps and a global prefix.
        test: {
          name: 'consumer',
          include: ['test/consumer/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/spawned-node-global-setup.ts', 'test/support/package-global-setup.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
      {
        // Apps driven through the jsii kernel as Python, Java, .NET and Go drive them: `npm run test:jsii`,
        // not part of `npm test` yet (about a minute: loading aws-cdk-lib in the kernel and each synth take seconds).
        test: {
          name: 'jsii',
          include: ['test/jsii/**/*.test.ts'],
          environment: 'node',
          globalSetup: [
            'test/support/spawned-node-global-setup.ts',
            'test/support/jsii-kernel/global-setup.ts',
          ],
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
      {
        test: {
          name: 'infra',
          include: ['test/infra/**/*.test.ts'],
          // One module graph per worker for all its files: importing aws-cdk-lib again for every
          // file was half the project's CPU time. Each file builds its own Apps; what the files
          // share through modules is read-only (the registry schemas, loaded once).
          isolate: false,
          environment: 'node',
          globalSetup: ['test/support/build-global-setup.ts', 'test/support/moto-global-setup.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
