import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Real platforms' own installs for the e2e suites (test/platforms/unleash/node_modules).
    exclude: [...configDefaults.exclude, 'test/platforms/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
