// Large and hostile input (issue 10, item 7): reading a wide OpenAPI document, a spec with many
// paths and a large intent must take time linear in their size, never overflow the stack; a deep or
// alias-bombed document must be refused at once. Each figure is measured at its size and at a
// quarter of it: the ratio of the two says whether the cost is linear (≈4×) or worse (16× for
// quadratic).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setKey } from '../core/index.js';
import { loadIntent } from '../intent/index.js';
import { deriveTypes, loadOpenApiDocument } from '../providers/index.js';
import { writeIntentFixture } from './intent-fixture.js';
import { sandboxTypeInfos } from './plan-fixture.js';

/** One input figure: the time at `size` and at a quarter of it. */
export interface InputRun {
  readonly label: string;
  readonly size: number;
  readonly ms: number;
  readonly cpuMs: number;
  readonly quarterSize: number;
  readonly quarterMs: number;
  /** What the run produced (types derived, resources loaded, the error a refusal gave). */
  readonly outcome: string;
}

/** Refusals: how long a hostile document takes to be refused. */
export interface InputRefusal {
  readonly label: string;
  readonly ms: number;
  readonly outcome: string;
}

export interface InputResults {
  readonly runs: InputRun[];
  readonly refusals: InputRefusal[];
}

/** Sizes: entries of the wide document, paths of the spec, resources of the intent. */
export interface InputSizes {
  readonly entries: number;
  readonly paths: number;
  readonly resources: number;
}

const op = (schema: unknown): Record<string, unknown> => ({
  requestBody: { content: { 'application/json': { schema } } },
  responses: { '201': { description: 'ok', content: { 'application/json': { schema } } } },
});
const ok = { responses: { '200': { description: 'ok' } } };

/** `collections` resource types (a collection path and an item path each) sharing one schema. */
function manyPaths(collections: number, schema: unknown = { $ref: '#/components/schemas/S' }) {
  const paths: Record<string, unknown> = {};
  for (let i = 0; i < collections; i++) {
    setKey(paths, `/c${i}`, { post: op(schema), get: ok });
    setKey(paths, `/c${i}/{id}`, {
      get: {
        responses: {
          '200': { description: 'ok', content: { 'application/json': { schema } } },
        },
      },
      delete: { responses: { '204': { description: 'gone' } } },
    });
  }
  return {
    openapi: '3.0.3',
    info: { title: 'bench', version: '1' },
    paths,
    components: {
      schemas: {
        S: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string' }, tags: { type: 'object' } },
        },
      },
    },
  };
}

/** One type whose schema has `n` properties, all required. */
function wideSchema(n: number) {
  const properties: Record<string, unknown> = { name: { type: 'string' } };
  const required = ['name'];
  for (let i = 0; i < n; i++) {
    setKey(properties, `p${i}`, { type: 'string', maxLength: 64 });
    required.push(`p${i}`);
  }
  const doc = manyPaths(1);
  doc.components.schemas.S = { type: 'object', required, properties } as never;
  return doc;
}

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const value = await run();
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { value, ms, cpuMs: (used.user + used.system) / 1000 };
}

/** Runs `measure` at a quarter of `size` (after a warm-up there) and at `size`. */
async function atTwoSizes(
  label: string,
  size: number,
  measure: (n: number) => Promise<string>,
): Promise<InputRun> {
  const quarterSize = Math.max(1, Math.round(size / 4));
  await measure(quarterSize);
  const quarter = await timed(() => measure(quarterSize));
  const full = await timed(() => measure(size));
  return {
    label,
    size,
    ms: full.ms,
    cpuMs: full.cpuMs,
    quarterSize,
    quarterMs: quarter.ms,
    outcome: full.value,
  };
}

async function refusal(label: string, path: string): Promise<InputRefusal> {
  const { value, ms } = await timed(() =>
    loadOpenApiDocument(path).then(
      () => 'loaded (not refused!)',
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    ),
  );
  return { label, ms, outcome: value.length > 140 ? `${value.slice(0, 137)}...` : value };
}

/** Measures every input figure, writing its documents and intents under `workDir`. */
export async function runInputBench(workDir: string, sizes: InputSizes): Promise<InputResults> {
  const dir = join(workDir, 'input');
  mkdirSync(dir, { recursive: true });
  const loadAndDerive = async (name: string, doc: unknown): Promise<string> => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(doc));
    const loaded = await loadOpenApiDocument(path);
    const derived = deriveTypes(loaded.document);
    const props = derived.types[0]
      ? Object.keys(derived.types[0].info.schema['properties'] ?? {})
      : [];
    return `${derived.types.length.toLocaleString('en-US')} types, the first with ${props.length.toLocaleString('en-US')} fields, ${derived.warnings.length + loaded.warnings.length} warnings`;
  };
  const runs: InputRun[] = [];
  runs.push(
    await atTwoSizes(
      'OpenAPI document, one schema of N properties: load + derive',
      sizes.entries,
      (n) => loadAndDerive(`wide-${n}.json`, wideSchema(n)),
    ),
  );
  runs.push(
    await atTwoSizes('OpenAPI document of N paths: load + derive', sizes.paths, (n) =>
      loadAndDerive(`paths-${n}.json`, manyPaths(Math.round(n / 2))),
    ),
  );
  const infos = await sandboxTypeInfos();
  runs.push(
    await atTwoSizes('intent of N resources: load and validate', sizes.resources, async (n) => {
      const fixture = writeIntentFixture(join(dir, `intent-${n}`), n, {
        endpoint: 'http://127.0.0.1:9',
        concurrency: 8,
        rateLimit: 0,
      });
      const loaded = await loadIntent(fixture.dir, {
        describe: () => Promise.resolve({ types: infos, auditFeed: false, warnings: [] }),
      });
      const errors = loaded.diagnostics.filter((d) => d.severity === 'error').length;
      return `${loaded.intent?.resources.length ?? 0} resources, ${errors} errors`;
    }),
  );

  const depth = sizes.entries;
  const deep = join(dir, 'deep.json');
  writeFileSync(deep, `{"openapi":"3.0.3","x":${'['.repeat(depth)}${']'.repeat(depth)}}`);
  const bomb = join(dir, 'bomb.yaml');
  const lines = [
    'openapi: 3.0.3',
    'paths: {}',
    'x-bomb:',
    '  a0: &a0 [x, x, x, x, x, x, x, x, x, x]',
  ];
  for (let i = 1; i < 10; i++) {
    lines.push(
      `  a${i}: &a${i} [${Array(10)
        .fill(`*a${i - 1}`)
        .join(', ')}]`,
    );
  }
  writeFileSync(bomb, `${lines.join('\n')}\n`);
  const refusals = [
    await refusal(`OpenAPI document nested ${depth.toLocaleString('en-US')} levels deep`, deep),
    await refusal('YAML alias bomb (10^10 values written out)', bomb),
  ];
  return { runs, refusals };
}
