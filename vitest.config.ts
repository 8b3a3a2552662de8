import { defineConfig } from 'vitest/config';

// Three projects so a developer can run the fast unit tests alone; `npm test` runs them all.
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
            'test/support/moto-global-setup.ts',
            'test/support/poller-artifact-global-setup.ts',
            'test/support/cli-build-global-setup.ts',
          ],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'infra',
          include: ['test/infra/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/moto-global-setup.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
