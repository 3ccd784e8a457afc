import { defineConfig } from 'vitest/config';

// The tests StrykerJS runs against each mutant (`npm run mutate`, docs/mutation.md): the unit tests
// of the layers it mutates. End-to-end and torture suites start built processes (dist/), which a
// mutant in the sandbox copy of src/ would never reach, so they are left out.
export default defineConfig({
  test: {
    include: ['src/core/**/*.test.ts', 'src/engine/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
