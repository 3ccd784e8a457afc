// The import direction is the architecture (docs/architecture.md):
//   core      pure: no I/O, no clock, imports nothing of ours outside core
//   sandbox   a stand-in platform: imports nothing of the engine's side
//   the rest  may import core; nothing imports cli
import js from '@eslint/js';
import ts from 'typescript';
import tseslint from 'typescript-eslint';

// Which layers each folder must not import. Order, from the bottom: core → policy, checks → intent,
// providers, store → engine → app → cli. The sandbox is a separate platform; bench drives the app.
const LAYERS = {
  intent: ['engine', 'app', 'cli', 'providers', 'store', 'sandbox', 'bench', 'server', 'mcp'],
  checks: [
    'engine',
    'app',
    'cli',
    'providers',
    'store',
    'intent',
    'policy',
    'sandbox',
    'bench',
    'server',
    'mcp',
  ],
  // Policies (CEL over a resource's fields, docs/policies.md): pure evaluation, like checks.
  policy: [
    'engine',
    'app',
    'cli',
    'providers',
    'store',
    'intent',
    'checks',
    'sandbox',
    'bench',
    'server',
    'mcp',
  ],
  providers: [
    'engine',
    'app',
    'cli',
    'store',
    'intent',
    'checks',
    'policy',
    'sandbox',
    'bench',
    'server',
    'mcp',
  ],
  store: [
    'engine',
    'app',
    'cli',
    'providers',
    'intent',
    'checks',
    'policy',
    'sandbox',
    'bench',
    'server',
    'mcp',
  ],
  engine: ['app', 'cli', 'providers', 'sandbox', 'bench', 'server', 'mcp'],
  app: ['cli', 'mcp', 'sandbox', 'bench', 'server'],
  // The CLI parses and renders: behaviour is reached through src/app (the sandbox command runs the
  // separate stand-in platform).
  cli: ['engine', 'store', 'providers', 'intent', 'checks', 'policy', 'bench'],
  bench: ['cli', 'server', 'mcp'],
  // The HTTP API parses, authorises and renders: like the CLI, it reaches behaviour through src/app.
  server: [
    'engine',
    'store',
    'providers',
    'intent',
    'checks',
    'policy',
    'bench',
    'cli',
    'sandbox',
    'mcp',
  ],
  // The MCP server adapts src/app to agents like the CLI does to people; only the CLI starts it.
  mcp: [
    'engine',
    'store',
    'providers',
    'intent',
    'checks',
    'policy',
    'bench',
    'cli',
    'sandbox',
    'server',
  ],
  // The web page runs in the browser: it reaches Tend only through the HTTP API (docs/web.md).
  web: [
    'core',
    'engine',
    'app',
    'cli',
    'providers',
    'store',
    'intent',
    'checks',
    'policy',
    'sandbox',
    'bench',
    'server',
    'mcp',
  ],
};

// The patterns that keep a folder of src/ from importing one layer (files of src/providers/openapi's
// groups sit three folders below src/).
const layerPatterns = (folder, banned) =>
  banned.map((layer) => ({
    group: [
      `../${layer}/*`,
      `../../${layer}/*`,
      `../../../${layer}/*`,
      `../${layer}`,
      `../../${layer}`,
      `../../../${layer}`,
    ],
    message: `${folder} must not import ${layer} (docs/architecture.md: the import direction is the architecture).`,
  }));

// src/providers/openapi is grouped by role (docs/architecture.md), each group importing only the
// groups below it: fields/ (the bottom) ← transport/ ← shapes/, and document/ imports only fields/.
// The files at the top of openapi/ (derive-types, object-access, inspect, …) import any group; no
// group imports them. access/ (object-access's implementations per shape) belongs to the top: it
// imports derive-types, object-ids and marker-values, so no group imports it either. The value: the
// groups each group must not import.
const OPENAPI_GROUPS = {
  fields: ['transport', 'shapes', 'document', 'access'],
  transport: ['shapes', 'document', 'access'],
  shapes: ['document', 'access'],
  document: ['transport', 'shapes', 'access'],
};
// The engine's modules that decide (what drifted and who wins; what to do): no store (see below).
const DECISION_MODULES = ['src/engine/arbitrate.ts', 'src/engine/planner.ts'];

// Spreading a list into a call's arguments overflows the stack at ~120,000 elements (a document
// or an intent of that size is an input, not a bug): loop instead (issue 10, item 7).
const spreadArguments = [
  {
    // A literal list (or a choice of literal lists) written in the code is as short as it looks.
    selector:
      'CallExpression[callee.property.name=/^(push|unshift|splice|concat)$/] > SpreadElement:not([argument.type=/^(ArrayExpression|ConditionalExpression)$/])',
    message:
      'push(...list) overflows the stack past ~120,000 elements: loop (for (const x of list) out.push(x)).',
  },
  {
    selector:
      'CallExpression[callee.object.name=/^(Math|String)$/][callee.property.name=/^(max|min|fromCharCode|fromCodePoint)$/] > SpreadElement',
    message: 'Math.max(...list) overflows the stack past ~120,000 elements: use reduce or a loop.',
  },
];

// Packages that cost every command start-up time and that few commands use are imported with
// `import()` where they are used (docs/decisions/0033-lazy-modules.md): a static import only in the
// module that is itself loaded that way (the value: globs of those modules). Type imports are free.
// src/cli/start.test.ts checks what a command actually loads.
const LAZY_PACKAGES = {
  pg: ['src/providers/postgres/**'],
  qs: ['src/providers/openapi/transport/form-encoding.ts'],
  swagger2openapi: [],
  '@apidevtools/json-schema-ref-parser': [],
  '@readme/openapi-parser': [],
  'dns-packet': [],
  diff: [],
};
const lazyExempt = [...new Set(Object.values(LAZY_PACKAGES).flat())];
const lazyImports = (exempt) => [
  'error',
  {
    paths: Object.entries(LAZY_PACKAGES)
      .filter(([, where]) => !where.includes(exempt))
      .map(([name]) => ({
        name,
        allowTypeImports: true,
        message: `load ${name} with import() where it is used (docs/decisions/0033-lazy-modules.md).`,
      })),
    patterns: [
      {
        // The PostgreSQL barrel loads pg: src/app imports it with import() (the connection and the
        // ids, which need no driver, are in ../providers/index.ts).
        group: ['**/providers/postgres/*'],
        allowTypeImports: true,
        message:
          'load the PostgreSQL provider with import() where it is used (docs/decisions/0033-lazy-modules.md).',
      },
    ],
  },
];

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

// tend/no-unchecked-key-write (docs/decisions/0009-prototype-pollution.md): `obj[key] = value` with
// a key that may be any string reaches the prototype when the key is `__proto__`, so such writes go
// through setKey (src/core/safe-keys.ts), which refuses `__proto__`, `constructor` and `prototype`.
// Type-aware, so writes the types prove safe pass: array elements, number keys, keys of a literal
// union (`counts[kind]`). Object.assign is refused outright: it copies with [[Set]], and a
// `__proto__` member of a source replaces the target's prototype; spread copies safely.
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const noUncheckedKeyWrite = {
  meta: {
    type: 'problem',
    docs: { description: 'writes by a string key go through setKey (prototype pollution)' },
    messages: {
      write:
        'a write by a string key can reach the prototype (`__proto__`): use setKey() from core/safe-keys.ts, or a Map (docs/decisions/0009-prototype-pollution.md).',
      assign:
        'Object.assign copies with [[Set]]: a `__proto__` member replaces the target prototype. Use spread or mergeInto() from core/safe-keys.ts.',
    },
    schema: [],
  },
  create(context) {
    const services = context.sourceCode.parserServices;
    if (!services?.program) return {};
    const checker = services.program.getTypeChecker();
    const typeOf = (node) => checker.getTypeAtLocation(services.esTreeNodeToTSNodeMap.get(node));
    const OPEN =
      ts.TypeFlags.String |
      ts.TypeFlags.Any |
      ts.TypeFlags.Unknown |
      ts.TypeFlags.TemplateLiteral |
      ts.TypeFlags.StringMapping;
    const anyString = (type) =>
      type.isUnion()
        ? type.types.some(anyString)
        : (type.flags & OPEN) !== 0 || (type.isStringLiteral() && PROTOTYPE_KEYS.has(type.value));
    const listLike = (type) =>
      type.isUnion()
        ? type.types.every(listLike)
        : checker.isArrayType(type) || checker.isTupleType(type);
    return {
      AssignmentExpression(node) {
        const left = node.left;
        if (left.type !== 'MemberExpression' || !left.computed) return;
        if (!anyString(typeOf(left.property)) || listLike(typeOf(left.object))) return;
        context.report({ node: left, messageId: 'write' });
      },
      "CallExpression[callee.object.name='Object'][callee.property.name='assign']"(node) {
        context.report({ node, messageId: 'assign' });
      },
    };
  },
};

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'reports/**',
      'scripts/**',
      '.ci/**',
      // Plain-JavaScript driver processes that tests run with node on the built dist/ (no types).
      'test/support/*.mjs',
      // Real platforms' own installs for the e2e suites (test/platforms/unleash/node_modules).
      'test/platforms/*/node_modules/**',
    ],
  },
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
    ignores: ['**/*.test.ts'],
    rules: { 'no-restricted-syntax': ['error', ...spreadArguments] },
  },
  {
    // The sandbox is a stand-in platform that may not import core (where setKey lives), and tests
    // build their own fixtures; everything else that copies parsed data by key goes through setKey.
    files: ['src/**/*.ts'],
    ignores: ['**/*.test.ts', 'src/sandbox/**'],
    plugins: { tend: { rules: { 'no-unchecked-key-write': noUncheckedKeyWrite } } },
    rules: { 'tend/no-unchecked-key-write': 'error' },
  },
  // Every folder of src/ is a layer; each may import only the layers below it (tests compose freely).
  ...Object.entries(LAYERS).map(([folder, banned]) => ({
    files: [`src/${folder}/**/*.ts`],
    ignores: ['**/*.test.ts', ...(folder === 'core' ? ['src/core/**'] : [])],
    rules: {
      'no-restricted-imports': ['error', { patterns: layerPatterns(folder, banned) }],
    },
  })),
  // The groups of src/providers/openapi (OPENAPI_GROUPS): the providers layer's patterns (a later
  // no-restricted-imports replaces the one above for these files), the top of openapi/, the groups
  // above.
  ...Object.entries(OPENAPI_GROUPS).map(([group, banned]) => ({
    files: [`src/providers/openapi/${group}/**/*.ts`],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...layerPatterns('providers', LAYERS.providers),
            {
              group: ['../*.js'],
              message: `openapi/${group}/ must not import the files at the top of openapi/: they import it (docs/architecture.md).`,
            },
            ...banned.map((other) => ({
              group: [`../${other}/*`, `../${other}`],
              message: `openapi/${group}/ must not import openapi/${other}/ (docs/architecture.md: each group of openapi/ imports only the groups below it).`,
            })),
          ],
        },
      ],
    },
  })),
  // The engine's decision modules decide; they neither read nor write Tend's memory (issue 25,
  // docs/decisions/0036-pass-recorder.md): arbitrate is handed what it decides with and returns the
  // writes it wants, the planner plans from the observation. Every write of a pass is the Recorder's
  // (src/engine/recorder.ts; src/engine/recorder-only.test.ts and pass-recorder.test.ts check it).
  {
    files: DECISION_MODULES,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...LAYERS.engine.map((layer) => ({
              group: [`../${layer}/*`, `../../${layer}/*`, `../${layer}`, `../../${layer}`],
              message: `engine must not import ${layer} (docs/architecture.md: the import direction is the architecture).`,
            })),
            {
              group: ['../store/*', '../store', './recorder.js', './store-writer.js'],
              message:
                'a decision module imports no store and no recorder: it returns what it decided, the Recorder writes it (docs/decisions/0036-pass-recorder.md).',
            },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        ...spreadArguments,
        {
          selector: "MemberExpression[property.name='store']",
          message:
            'a decision module reads no store: it is handed what it decides with (docs/decisions/0036-pass-recorder.md).',
        },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['**/*.test.ts', ...lazyExempt],
    rules: { '@typescript-eslint/no-restricted-imports': lazyImports(undefined) },
  },
  ...lazyExempt.map((glob) => ({
    files: [glob],
    ignores: ['**/*.test.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': lazyImports(glob) },
  })),
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
        ...spreadArguments,
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
