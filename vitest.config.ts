import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Fails a file that leaves keys under its prefixes in the shared Redis at 6379.
    setupFiles: ['test/helpers/redis-leak-guard.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
