import { defineConfig } from 'vitest/config';

// The tests StrykerJS runs against each mutant (`npm run mutate`, docs/mutation.md): the unit tests
// of the layers it mutates. End-to-end and torture suites start built processes (dist/), which a
// mutant in the sandbox copy of src/ would never reach, so they are left out. A run that mutates
// another layer names its tests in TEND_MUTATE_TESTS (comma-separated globs):
// `TEND_MUTATE_TESTS='src/providers/openapi/**/*.test.ts' npx stryker run --mutate <file>`.
const named = process.env['TEND_MUTATE_TESTS']
  ?.split(',')
  .map((g) => g.trim())
  .filter((g) => g !== '');

export default defineConfig({
  test: {
    include:
      named && named.length > 0 ? named : ['src/core/**/*.test.ts', 'src/engine/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
