// The import direction is the architecture (docs/architecture.md):
//   core      pure: no I/O, no clock, imports nothing of ours outside core
//   sandbox   a stand-in platform: imports nothing of the engine's side
//   the rest  may import core; nothing imports cli
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeIo = [
  'fs',
  'net',
  'http',
  'https',
  'child_process',
  'dgram',
  'dns',
  'os',
  'worker_threads',
].flatMap((m) => [m, `node:${m}`, `${m}/promises`, `node:${m}/promises`]);

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'reports/**', 'scripts/**', '.ci/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['../cli/*', '../../cli/*'], message: 'nothing imports the CLI.' }] },
      ],
    },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeIo.map((name) => ({
            name,
            message: 'core is pure: no I/O. Pass what you need in.',
          })),
          patterns: [
            {
              group: ['../*', '!../core', '../../*'],
              message:
                'core imports nothing outside core (the import direction is the architecture).',
            },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message: 'core takes the clock as a parameter.',
        },
        {
          selector: "CallExpression[callee.object.name='Math'][callee.property.name='random']",
          message: 'core takes randomness as a parameter.',
        },
      ],
    },
  },
  {
    files: ['src/sandbox/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '../core/*',
                '../engine/*',
                '../providers/*',
                '../store/*',
                '../intent/*',
                '../checks/*',
                '../cli/*',
              ],
              message: 'the sandbox is a separate platform: it knows nothing of the engine.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  { files: ['eslint.config.js'], ...tseslint.configs.disableTypeChecked },
);
