import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { readFast } from './fast-yaml.js';
import type { FastDocument } from './fast-yaml.js';
import { directoryParseCache, parseCacheKey } from './parse-cache.js';
import type { ParseCache } from './parse-cache.js';
import { parseIntentFiles, splitBySize } from './parse-files.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function cacheIn(): { dir: string; cache: ParseCache } {
  const root = mkdtempSync(join(tmpdir(), 'tend-parse-cache-'));
  dirs.push(root);
  const dir = join(root, 'cache', 'intent');
  return {
    dir,
    cache: directoryParseCache(dir, (d) => mkdirSync(d, { recursive: true, mode: 0o700 })),
  };
}

const TEXT =
  'kind: Resource\ntype: sb.buckets\nname: a\nspec:\n  versioning: true\n---\nkind: Resource\ntype: sb.buckets\nname: b\n';

describe('the parse cache', () => {
  it('gives back what the fast reading gave, and files its entry by content', () => {
    const { dir, cache } = cacheIn();
    const key = parseCacheKey(TEXT);
    expect(cache.get(key)).toBeUndefined();
    const docs = readFast(TEXT)!;
    cache.put(key, docs);
    expect(cache.get(key)).toEqual(docs);
    expect(readdirSync(dir)).toEqual([`${key}.json`]);
    expect(statSync(join(dir, `${key}.json`)).mode & 0o777).toBe(0o600);
    expect(parseCacheKey(`${TEXT} `)).not.toBe(key);
  });

  it('prunes entries of files no longer in the intent, and leftover temporary files', () => {
    const { dir, cache } = cacheIn();
    const a = parseCacheKey('a: 1\n');
    const b = parseCacheKey('b: 1\n');
    cache.put(a, readFast('a: 1\n')!);
    cache.put(b, readFast('b: 1\n')!);
    writeFileSync(join(dir, `${a}.json.99.0.tmp`), 'partial');
    writeFileSync(join(dir, 'README'), 'not ours');
    cache.prune(new Set([b]));
    expect(readdirSync(dir).sort()).toEqual(['README', `${b}.json`]);
  });

  it('keeps out values JSON cannot carry exactly (NaN, Infinity, -0)', () => {
    const { dir, cache } = cacheIn();
    for (const text of ['x: .nan\n', 'x: -.inf\n', 'x: -0\n']) {
      const docs = readFast(text)!;
      cache.put(parseCacheKey(text), docs);
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  it('never copies a Provider document, or a URL with a password, into its directory', () => {
    const { dir, cache } = cacheIn();
    for (const text of [
      'kind: Provider\nname: sb\ntype: openapi\nendpoint: http://127.0.0.1:1\n',
      'kind: Resource\nspec:\n  hook: https://bot:s3cret-token@hooks.example/x\n',
    ]) {
      cache.put(parseCacheKey(text), readFast(text)!);
    }
    expect(readdirSync(dir)).toEqual([]);
    // A URL with a user but no password is kept.
    const plain = 'kind: Resource\nspec:\n  hook: https://bot@hooks.example/x\n';
    cache.put(parseCacheKey(plain), readFast(plain)!);
    expect(readdirSync(dir)).toHaveLength(1);
  });

  // An entry is the store's to trust, but one that does not read back as the fast reading's output
  // is a miss: the file is parsed again.
  it.each([
    ['not JSON', '{"index":'],
    ['not a list', '{"index":0}'],
    ['a document without its position', '[{"index":0,"value":{"a":1}}]'],
    ['a null value', '[{"index":0,"value":null,"offset":0,"line":1,"column":1}]'],
    ['a line 0', '[{"index":0,"value":{"a":1},"offset":0,"line":0,"column":1}]'],
    [
      'a __proto__ key',
      '[{"index":0,"value":{"__proto__":{"x":1}},"offset":0,"line":1,"column":1}]',
    ],
    [
      'a key spelled with escapes',
      '[{"index":0,"value":{"\\u005f_proto__":{"x":1}},"offset":0,"line":1,"column":1}]',
    ],
    ['a constructor key', '[{"index":0,"value":{"constructor":1},"offset":0,"line":1,"column":1}]'],
    [
      'a prototype key deep inside',
      '[{"index":0,"value":{"a":[{"b":{"prototype":1}}]},"offset":0,"line":1,"column":1}]',
    ],
    ['a null in a list', '[{"index":0,"value":{"a":[1,null]},"offset":0,"line":1,"column":1}]'],
    [
      'nesting deeper than the intent may be',
      `[{"index":0,"value":${'['.repeat(100)}1${']'.repeat(100)},"offset":0,"line":1,"column":1}]`,
    ],
  ])('ignores an entry holding %s', (_name, text) => {
    const { dir, cache } = cacheIn();
    const key = parseCacheKey('k: v\n');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${key}.json`), text);
    expect(cache.get(key)).toBeUndefined();
  });

  it('uses an entry whose strings merely mention brackets or forbidden names', () => {
    const { dir, cache } = cacheIn();
    const text = 'kind: Resource\nspec:\n  note: "constructor [[[[ {{ __proto__"\n';
    const key = parseCacheKey(text);
    cache.put(key, readFast(text)!);
    expect(readdirSync(dir)).toEqual([`${key}.json`]);
    expect(cache.get(key)).toEqual(readFast(text));
  });

  it('remembers which files validated clean, under one fingerprint only', () => {
    const { dir, cache } = cacheIn();
    const [a, b] = [parseCacheKey('a: 1\n'), parseCacheKey('b: 1\n')];
    expect(cache.validated('f1')).toEqual(new Set());
    cache.setValidated('f1', [b, a]);
    expect(cache.validated('f1')).toEqual(new Set([a, b]));
    expect(cache.validated('f2')).toEqual(new Set());
    expect(statSync(join(dir, 'validated.json')).mode & 0o777).toBe(0o600);
    // Pruning entries leaves the record alone; it is rewritten by the loader.
    cache.prune(new Set());
    expect(cache.validated('f1')).toEqual(new Set([a, b]));
  });

  it.each([
    ['not JSON', '{"fingerprint":'],
    ['a list', '["f1"]'],
    ['keys that are not keys', '{"fingerprint":"f1","keys":["../x"]}'],
    ['keys not a list', '{"fingerprint":"f1","keys":"abc"}'],
  ])('takes nothing as validated from a record holding %s', (_name, text) => {
    const { dir, cache } = cacheIn();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'validated.json'), text);
    expect(cache.validated('f1')).toEqual(new Set());
  });
});

describe('parseIntentFiles', () => {
  const files = [
    { path: 'a.yaml', text: TEXT },
    { path: 'b.yaml', text: 'kind: Resource\ntype: sb.buckets\nname: c\n' },
    // Refused by the fast reading (an anchor): read by the position-keeping parser, never cached.
    { path: 'c.yaml', text: 'kind: Resource\ntype: sb.buckets\nname: &n d\nspec: {name: *n}\n' },
    { path: 'd.yaml', text: 'kind: Resource\nname: [\n' },
  ];

  it('gives the same documents and diagnostics from the cache as without it', async () => {
    const { dir, cache } = cacheIn();
    const plain = await parseIntentFiles(files);
    const first = await parseIntentFiles(files, { cache });
    const second = await parseIntentFiles(files, { cache });
    const view = (r: typeof plain) =>
      r.parsed.map((f) => ({
        documents: f.documents.map((d) => ({ value: d.value, index: d.index, file: d.file })),
        diagnostics: f.diagnostics,
      }));
    expect(view(first)).toEqual(view(plain));
    expect(view(second)).toEqual(view(plain));
    expect(readdirSync(dir).length).toBe(2);
    expect(second.keys.size).toBe(4);
    // Positions still come from the text, for diagnostics.
    expect(plain.parsed[3]!.diagnostics[0]).toMatchObject({ code: 'yaml.syntax', file: 'd.yaml' });
  });

  it('reads a changed file again', async () => {
    const { cache } = cacheIn();
    await parseIntentFiles(files, { cache });
    const changed = [
      { path: 'a.yaml', text: TEXT.replace('versioning: true', 'versioning: false') },
    ];
    const r = await parseIntentFiles(changed, { cache });
    const spec = (r.parsed[0]!.documents[0]!.value as { spec: unknown }).spec;
    expect(spec).toEqual({ versioning: false });
  });

  it('property: whatever a file holds, the cache gives back what parsing gives', async () => {
    const scalar = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.integer(),
      fc.boolean(),
      fc.double({ noNaN: false }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), scalar, { maxKeys: 5 }),
        async (spec) => {
          const text = `kind: Resource\nspec: ${JSON.stringify(spec)}\n`;
          const { cache } = cacheIn();
          const plain = await parseIntentFiles([{ path: 'p.yaml', text }]);
          await parseIntentFiles([{ path: 'p.yaml', text }], { cache });
          const cached = await parseIntentFiles([{ path: 'p.yaml', text }], { cache });
          const values = (r: typeof plain) => r.parsed[0]!.documents.map((d) => d.value);
          expect(values(cached)).toEqual(values(plain));
          expect(cached.parsed[0]!.diagnostics).toEqual(plain.parsed[0]!.diagnostics);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('splitBySize', () => {
  it.each([
    { sizes: [], want: [[], []] },
    { sizes: [5], want: [[0], []] },
    {
      sizes: [1, 1, 1, 1],
      want: [
        [0, 2],
        [1, 3],
      ],
    },
    { sizes: [10, 1, 1, 8], want: [[0], [1, 2, 3]] },
  ])('splits $sizes into two shares of about equal size', ({ sizes, want }) => {
    expect(splitBySize(sizes)).toEqual(want);
  });

  it('property: every file in exactly one share, the shares differ by at most the largest file', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 1000 }), { maxLength: 60 }), (sizes) => {
        const [a, b] = splitBySize(sizes);
        expect([...a, ...b].sort((x, y) => x - y)).toEqual(sizes.map((_, i) => i));
        const sum = (s: number[]) => s.reduce((n, i) => n + sizes[i]!, 0);
        expect(Math.abs(sum(a) - sum(b))).toBeLessThanOrEqual(Math.max(0, ...sizes));
      }),
    );
  });
});

// The cache entry holds the reading as JSON; a sanity check that it is what the file says.
it('an entry is plain JSON of the documents', () => {
  const { dir, cache } = cacheIn();
  const key = parseCacheKey(TEXT);
  cache.put(key, readFast(TEXT)!);
  const entry = JSON.parse(readFileSync(join(dir, `${key}.json`), 'utf8')) as FastDocument[];
  expect(entry.map((d) => d.line)).toEqual([1, 7]);
});
