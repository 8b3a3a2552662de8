import { defineConfig } from 'vitest/config';

// Unit, integration, infra and consumer make `npm test`; faults is the full fault matrix (`npm run test:faults`).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
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
        // The full fault matrix: `npm run test:faults`, not part of `npm test` (a few minutes).
        test: {
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
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
          environment: 'node',
          globalSetup: ['test/support/build-global-setup.ts', 'test/support/moto-global-setup.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
