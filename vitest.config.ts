import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/{raft,sim,state,storage,transport,checker,client}/**/*.test.ts'],
          testTimeout: 120_000,
        },
      },
      {
        // Real processes on fixed loopback ports: one file at a time.
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
