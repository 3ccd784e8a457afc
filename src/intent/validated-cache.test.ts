// The record of files that validated clean (decision 0029): a load that trusts it must give exactly
// what a load without any cache gives, whatever changed in between.
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProviderDescription, ResourceTypeInfo } from '../core/index.js';
import { loadIntent, validationFingerprint } from './load-intent.js';
import type { LoadIntentResult } from './load-intent.js';
import { directoryParseCache, parseCacheKey } from './parse-cache.js';
import type { ParseCache } from './parse-cache.js';

function type(name: string, schema: Record<string, unknown>): ResourceTypeInfo {
  return {
    name,
    schema,
    identity: 'marker',
    idField: 'id',
    createOnly: [],
    outputOnly: ['status'],
    sensitive: ['password'],
    lifecycle: 'platform',
    idempotencyKey: true,
  };
}

/** Two descriptions of one platform: the second requires `size` on buckets. */
function description(strict: boolean): ProviderDescription {
  return {
    auditFeed: false,
    warnings: [],
    types: [
      type('networks', {
        type: 'object',
        properties: { name: { type: 'string' }, cidr: { type: 'string' } },
        required: ['name'],
      }),
      type('buckets', {
        type: 'object',
        properties: {
          name: { type: 'string' },
          size: { type: 'integer', minimum: 1 },
          network: { type: 'string' },
          password: { type: 'string' },
        },
        required: strict ? ['name', 'size'] : ['name'],
      }),
    ],
  };
}

const PROVIDER =
  'kind: Provider\nname: sb\ntype: openapi\nspec: ./sandbox.json\nendpoint: http://127.0.0.1:9/\n';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tree(files: Record<string, string>): { dir: string; cache: ParseCache } {
  const root = mkdtempSync(join(tmpdir(), 'tend-validated-'));
  dirs.push(root);
  const dir = join(root, 'intent');
  mkdirSync(dir);
  writeFileSync(join(dir, 'sandbox.json'), '{}');
  writeFileSync(join(dir, 'providers.yaml'), PROVIDER);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const cacheDir = join(root, 'cache');
  return { dir, cache: directoryParseCache(cacheDir, (d) => mkdirSync(d, { recursive: true })) };
}

interface World {
  strict?: boolean;
  env?: Record<string, string>;
}

function load(dir: string, world: World, cache?: ParseCache): Promise<LoadIntentResult> {
  const desc = description(world.strict === true);
  return loadIntent(dir, {
    describe: () => Promise.resolve(desc),
    env: { TEND_PARSE_THREADS: '1', ...world.env },
    ...(cache ? { cache } : {}),
  });
}

/** Loads with the cache and without any, and says both gave the same. */
async function expectSameAsFresh(dir: string, world: World, cache: ParseCache) {
  const cached = await load(dir, world, cache);
  const fresh = await load(dir, world);
  expect(cached).toEqual(fresh);
  return cached;
}

const bucket = (name: string, spec: string, extra = '') =>
  `kind: Resource\ntype: sb.buckets\nname: ${name}\n${extra}spec:\n${spec}`;
const network = (name: string) =>
  `kind: Resource\ntype: sb.networks\nname: ${name}\nspec:\n  name: ${name}\n`;

const codes = (r: LoadIntentResult) =>
  r.diagnostics.map((d) => `${d.code} ${basename(d.file ?? '')}`);

interface ChangeCase {
  name: string;
  files: Record<string, string>;
  change: (dir: string) => void;
  world: World;
  want: string[];
}

describe('files that validated clean', () => {
  it('are recorded, and an unchanged tree loads the same from the record', async () => {
    const { dir, cache } = tree({
      'a.yaml': bucket('a', '  name: a\n  size: 2\n'),
      'n.yaml': network('main'),
    });
    const first = await load(dir, {}, cache);
    expect(first.diagnostics).toEqual([]);
    const fp = validationFingerprint(new Map([['sb', description(false)]]))!;
    const a = parseCacheKey(bucket('a', '  name: a\n  size: 2\n'));
    const n = parseCacheKey(network('main'));
    // The provider file is never recorded (nor cached): only Resource documents are.
    expect(cache.validated(fp)).toEqual(new Set([a, n]));
    await expectSameAsFresh(dir, {}, cache);
  });

  // Each case: a tree, loaded once with the cache (recording what validated clean), then a change,
  // then a load with the cache that must equal a fresh one and show the change's diagnostic.
  it.each<ChangeCase>([
    {
      name: 'a file changed to an invalid spec',
      files: { 'a.yaml': bucket('a', '  name: a\n') },
      change: (dir: string) =>
        writeFileSync(join(dir, 'a.yaml'), bucket('a', '  name: a\n  size: 0\n')),
      world: {},
      want: ['schema.invalid a.yaml'],
    },
    {
      name: 'a referenced resource in another file renamed',
      files: {
        'a.yaml': bucket('a', '  name: a\n  network: ${sb.networks/main.id}\n'),
        'n.yaml': network('main'),
      },
      change: (dir: string) => writeFileSync(join(dir, 'n.yaml'), network('other')),
      world: {},
      want: ['ref.dangling a.yaml'],
    },
    {
      name: 'the provider description changed (a field now required)',
      files: { 'a.yaml': bucket('a', '  name: a\n') },
      change: () => {},
      world: { strict: true },
      want: ['schema.required a.yaml'],
    },
    {
      name: 'the Provider document renamed the provider',
      files: { 'a.yaml': bucket('a', '  name: a\n') },
      change: (dir: string) =>
        writeFileSync(join(dir, 'providers.yaml'), PROVIDER.replace('name: sb', 'name: sc')),
      world: {},
      want: ['type.unknown a.yaml'],
    },
    {
      name: 'the variable a secret is read from unset',
      files: { 'a.yaml': bucket('a', '  name: a\n  password: { fromEnv: PW }\n') },
      change: () => {},
      world: {},
      want: ['secret.unavailable a.yaml'],
    },
  ])('$name: diagnosed as without a cache', async ({ files, change, world, want }) => {
    const { dir, cache } = tree(files);
    const before = await load(dir, { env: { PW: 'x' } }, cache);
    expect(before.diagnostics).toEqual([]);
    change(dir);
    const after = await expectSameAsFresh(dir, world, cache);
    expect(codes(after)).toEqual(want);
  });

  it('a secret file removed: warned as without a cache', async () => {
    const { dir, cache } = tree({
      'a.yaml': bucket('a', '  name: a\n  password: { fromFile: pw }\n'),
    });
    writeFileSync(join(dir, 'pw'), 'x');
    expect((await load(dir, {}, cache)).diagnostics).toEqual([]);
    unlinkSync(join(dir, 'pw'));
    const after = await expectSameAsFresh(dir, {}, cache);
    expect(codes(after)).toEqual(['secret.unavailable a.yaml']);
  });

  it('a record made under another fingerprint (another Tend, other providers) is not used', async () => {
    const invalid = bucket('a', '  name: a\n  size: 0\n');
    const { dir, cache } = tree({ 'a.yaml': invalid });
    cache.setValidated('another-tend', [parseCacheKey(invalid)]);
    expect(codes(await load(dir, {}, cache))).toEqual(['schema.invalid a.yaml']);
    // The same record under this Tend's fingerprint is trusted: the record is what decides.
    const fp = validationFingerprint(new Map([['sb', description(false)]]))!;
    cache.setValidated(fp, [parseCacheKey(invalid)]);
    expect((await load(dir, {}, cache)).diagnostics).toEqual([]);
  });

  it('the fingerprint changes with the code and with any provider description', () => {
    const one = new Map([['sb', description(false)]]);
    expect(validationFingerprint(one)).toBe(validationFingerprint(new Map(one)));
    expect(validationFingerprint(one, 'other code')).not.toBe(validationFingerprint(one));
    expect(validationFingerprint(new Map([['sb', description(true)]]))).not.toBe(
      validationFingerprint(one),
    );
    expect(validationFingerprint(new Map([['sc', description(false)]]))).not.toBe(
      validationFingerprint(one),
    );
    const cyclic: Record<string, unknown> = { type: 'object' };
    cyclic['properties'] = { self: cyclic };
    const withCycle = { ...description(false), types: [type('trees', cyclic)] };
    expect(validationFingerprint(new Map([['sb', withCycle]]))).toBeUndefined();
  });
});

describe('property: over random edits of a small tree, a load with the cache equals a fresh one', () => {
  const NAMES = ['a', 'b', 'c'] as const;
  const spec = fc.oneof(
    fc.constant('  name: x\n'),
    fc.constant('  name: x\n  size: 3\n'),
    fc.constant('  name: x\n  size: 0\n'),
    fc.constant('  name: x\n  size: "big"\n'),
    fc.constant('  name: x\n  colour: red\n'),
    fc.constant('  name: x\n  status: up\n'),
    fc.constant('  name: x\n  password: { fromEnv: PW }\n'),
    fc.constant('  name: x\n  network: ${sb.networks/main.id}\n'),
    fc.constant('  name: x\n  network: ${sb.buckets/a.name}\n'),
    fc.constant('  name: x\n  network: ${sb.networks/nowhere.id}\n'),
  );
  // Besides kind, type, name and spec (the documents read the shortest way once validated).
  const extra = fc.constantFrom(
    '',
    'labels:\n  team: a\n',
    'lifecycle:\n  stateful: true\n',
    'moved:\n  from: sb.buckets/old\n',
    'checks:\n  - name: up\n    cel: "true"\n',
    'colour: red\n',
  );
  const edit = fc.oneof(
    fc.record({
      kind: fc.constant('write' as const),
      file: fc.constantFrom(...NAMES),
      spec,
      extra,
    }),
    fc.record({
      kind: fc.constant('rename' as const),
      file: fc.constantFrom(...NAMES),
      to: fc.constantFrom('a', 'b', 'c', 'd'),
    }),
    fc.record({ kind: fc.constant('remove' as const), file: fc.constantFrom(...NAMES) }),
    fc.record({ kind: fc.constant('network' as const), name: fc.constantFrom('main', 'other') }),
    fc.record({ kind: fc.constant('strict' as const), on: fc.boolean() }),
    fc.record({ kind: fc.constant('env' as const), on: fc.boolean() }),
  );

  it('holds', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(edit, { minLength: 1, maxLength: 8 }), async (edits) => {
        const { dir, cache } = tree({
          'a.yaml': bucket('a', '  name: x\n'),
          'b.yaml': bucket('b', '  name: x\n'),
          'n.yaml': network('main'),
        });
        const world: { strict: boolean; env: Record<string, string> } = { strict: false, env: {} };
        const names: Record<string, string> = { a: 'a', b: 'b', c: 'c' };
        const specs: Record<string, string> = {
          a: '  name: x\n',
          b: '  name: x\n',
          c: '  name: x\n',
        };
        const extras: Record<string, string> = { a: '', b: '', c: '' };
        await load(dir, world, cache);
        for (const e of edits) {
          if (e.kind === 'write') {
            specs[e.file] = e.spec;
            extras[e.file] = e.extra;
            writeFileSync(join(dir, `${e.file}.yaml`), bucket(names[e.file]!, e.spec, e.extra));
          } else if (e.kind === 'rename') {
            names[e.file] = e.to;
            writeFileSync(
              join(dir, `${e.file}.yaml`),
              bucket(e.to, specs[e.file]!, extras[e.file]),
            );
          } else if (e.kind === 'remove') {
            rmSync(join(dir, `${e.file}.yaml`), { force: true });
          } else if (e.kind === 'network') {
            writeFileSync(join(dir, 'n.yaml'), network(e.name));
          } else if (e.kind === 'strict') {
            world.strict = e.on;
          } else {
            world.env = e.on ? { PW: 'x' } : {};
          }
          await expectSameAsFresh(dir, world, cache);
        }
      }),
      { numRuns: 40 },
    );
  });
});
