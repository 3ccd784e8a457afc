// The corpus's expectation files are its specification: a malformed one must be an error that
// points at the place, never a silently dropped type. No document is loaded here; the runner is
// checked against stand-ins for `tend` that hang, crash, refuse or answer.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ExpectationError,
  findType,
  identityVerdict,
  inspect,
  parseExpectation,
  readExpectations,
  type ExpectedType,
  type InspectedType,
} from './corpus.js';

const FILE = 'test/corpus/expected/x.yaml';
const ok = ['document: x.json', 'set: tuned', 'types:', '  - name: things', '    path: /things'];

describe('parseExpectation', () => {
  it('reads a document, its overlay and its types', () => {
    const e = parseExpectation(
      FILE,
      [
        'document: x.json',
        'set: held-out',
        'overlay: examples/x.overlay.yaml',
        'types:',
        '  - { name: things, path: /things, identity: safe, key: [name], why: "name is unique" }',
        '  - name: others',
        '    path: /others/create',
        '    alt: [/others/json]',
        '    identity: none',
        '    why: nothing unique',
        '    overlay: true',
      ].join('\n'),
    );
    expect(e).toEqual({
      slug: 'x',
      set: 'held-out',
      document: 'x.json',
      overlay: 'examples/x.overlay.yaml',
      types: [
        {
          name: 'things',
          path: '/things',
          alt: [],
          identity: 'safe',
          key: ['name'],
          why: 'name is unique',
          overlay: false,
        },
        {
          name: 'others',
          path: '/others/create',
          alt: ['/others/json'],
          identity: 'none',
          key: [],
          why: 'nothing unique',
          overlay: true,
        },
      ],
    });
  });

  it('reads a document declared unusable', () => {
    const e = parseExpectation(
      FILE,
      'document: x.json\nset: tuned\nunusable: { code: openapi.parse_failed, why: broken }\ntypes: []\n',
    );
    expect(e.unusable).toEqual({ code: 'openapi.parse_failed', why: 'broken' });
  });

  it.each([
    ['not YAML', 'document: [', /^test\/corpus\/expected\/x\.yaml:\d+:\d+: not YAML/],
    ['not a mapping', '- a', `${FILE}:1:1: an expectation is a mapping with document and types`],
    [
      'an unknown key',
      'document: x.json\nset: tuned\ntypo: 1\ntypes: []',
      `${FILE}:3:1: unknown key "typo"; write one of document, set, overlay, unusable, types`,
    ],
    [
      'no document',
      'types: []',
      `${FILE}:1:1: document is missing: name the file under documents/`,
    ],
    [
      'no types',
      'document: x.json\nset: tuned',
      `${FILE}:1:1: types is missing: list the types a person expects`,
    ],
    [
      'empty types',
      'document: x.json\nset: tuned\ntypes: []',
      `${FILE}:1:1: types is empty: a usable document lists at least one expected type`,
    ],
    [
      'types not a list',
      'document: x.json\nset: tuned\ntypes: {}',
      `${FILE}:3:8: types must be a list of {name, path, identity, why}`,
    ],
    [
      'an empty document name',
      'document: ""\ntypes: []',
      `${FILE}:1:11: document must be a non-empty string`,
    ],
    [
      'unusable not a mapping',
      'document: x.json\nset: tuned\nunusable: yes\ntypes: []',
      `${FILE}:3:11: unusable must be a mapping {code, why}`,
    ],
    [
      'unusable without why',
      'document: x.json\nset: tuned\nunusable: { code: c }\ntypes: []',
      /unusable\.why must be a non-empty string/,
    ],
    [
      'a type that is not a mapping',
      'document: x.json\nset: tuned\ntypes: [a]',
      `${FILE}:3:9: each type is a mapping {name, path, identity, why}`,
    ],
    [
      'an unknown type key',
      [...ok, '    identity: safe', '    why: w', '    colection: /x'].join('\n'),
      `${FILE}:8:5: unknown key "colection"; write one of name, path, alt, identity, key, why, overlay`,
    ],
    [
      'a type without a name',
      'document: x.json\nset: tuned\ntypes:\n  - path: /x',
      /name must be a non-empty string/,
    ],
    [
      'a path without a slash',
      'document: x.json\nset: tuned\ntypes:\n  - { name: a, path: x, identity: safe, why: w }',
      /path of a must start with \//,
    ],
    [
      'a bad identity',
      [...ok, '    identity: maybe', '    why: w'].join('\n'),
      `${FILE}:6:15: identity of things must be safe or none`,
    ],
    ['no identity', [...ok, '    why: w'].join('\n'), /identity of things must be safe or none/],
    [
      'no why',
      [...ok, '    identity: safe'].join('\n'),
      /why of things must be a non-empty string/,
    ],
    [
      'alt not a list',
      [...ok, '    alt: /y', '    identity: safe', '    why: w'].join('\n'),
      /alt of things must be a list of paths/,
    ],
    [
      'overlay not a boolean',
      [...ok, '    identity: safe', '    why: w', '    overlay: yes'].join('\n'),
      /overlay of things must be true or false/,
    ],
    [
      'an empty gap',
      [...ok, '    identity: safe', '    why: w', "    gap: ''"].join('\n'),
      /gap of things must be a non-empty string/,
    ],
    [
      'an overlay type without an overlay',
      [...ok, '    identity: safe', '    why: w', '    overlay: true'].join('\n'),
      /a type is marked overlay: true but the document names no overlay/,
    ],
    [
      'no set',
      'document: x.json\ntypes:\n  - { name: a, path: /x, identity: safe, why: w }',
      `${FILE}:1:1: set is missing: write set: tuned or set: held-out (README, "The split")`,
    ],
    [
      'an unknown set',
      'document: x.json\nset: holdout\ntypes:\n  - { name: a, path: /x, identity: safe, why: w }',
      `${FILE}:2:6: set must be tuned or held-out, not "holdout" (README, "The split")`,
    ],
    [
      'a set that is not a word',
      'document: x.json\nset: [tuned]\ntypes: []',
      `${FILE}:2:6: set must be tuned or held-out, not null (README, "The split")`,
    ],
    [
      'a key that is not a list',
      [...ok, '    identity: safe', '    key: name', '    why: w'].join('\n'),
      `${FILE}:7:10: key of things must be a non-empty list of field names`,
    ],
    [
      'an empty key',
      [...ok, '    identity: safe', '    key: []', '    why: w'].join('\n'),
      `${FILE}:7:10: key of things must be a non-empty list of field names`,
    ],
    [
      'two types with one path',
      'document: x.json\nset: tuned\ntypes:\n  - { name: a, path: /x, identity: safe, why: w }\n  - { name: b, path: /x, identity: safe, why: w }',
      /two expected types have the path \/x/,
    ],
  ])('refuses %s, saying where and what to write', (_name, text, message) => {
    expect(() => parseExpectation(FILE, text)).toThrow(ExpectationError);
    expect(() => parseExpectation(FILE, text)).toThrow(message);
  });
});

describe('the expectation files', () => {
  it('all parse', () => {
    expect(readExpectations().length).toBeGreaterThanOrEqual(15);
  });
});

const expected = (over: Partial<ExpectedType>): ExpectedType => ({
  name: 't',
  path: '/t',
  alt: [],
  identity: 'safe',
  key: [],
  why: 'w',
  overlay: false,
  ...over,
});
const inspected = (over: Partial<InspectedType>): InspectedType => ({
  name: 't',
  collectionPath: '/t',
  itemPath: '/t/{id}',
  create: { method: 'POST', path: '/t' },
  identity: null,
  ...over,
});

describe('matching an expected type', () => {
  it.each([
    ['the collection path', expected({}), [inspected({})], 't'],
    [
      'the create path',
      expected({ path: '/t/create' }),
      [inspected({ create: { method: 'POST', path: '/t/create' } })],
      't',
    ],
    [
      'an alt path',
      expected({ path: '/t/create', alt: ['/t'] }),
      [inspected({ create: { method: 'POST', path: '/x' } })],
      't',
    ],
    ['not the item path', expected({ path: '/t/{id}' }), [inspected({})], undefined],
    ['not a name', expected({ path: '/other' }), [inspected({})], undefined],
    [
      'the one with an identity first',
      expected({}),
      [inspected({ name: 'a' }), inspected({ name: 'b', identity: 'natural-key' })],
      'b',
    ],
  ])('by %s', (_name, e, types, name) => {
    expect(findType(e, types)?.name).toBe(name);
  });

  it.each([
    ['safe, with an identity', 'safe', inspected({ identity: 'marker' }), undefined],
    ['safe, without', 'safe', inspected({ identityReason: 'no key' }), 'no identity: no key'],
    ['none, with a reason', 'none', inspected({ identityReason: 'no key' }), undefined],
    ['none, without a reason', 'none', inspected({}), 'no identity and no reason given'],
    [
      'none, blank reason',
      'none',
      inspected({ identityReason: ' ' }),
      'no identity and no reason given',
    ],
    [
      'none, but guessed',
      'none',
      inspected({ identity: 'natural-key' }),
      'identity natural-key where a person sees none that is safe (w)',
    ],
  ] as const)('identity: %s', (_name, identity, found, problem) => {
    const verdict = identityVerdict(expected({ identity }), found);
    expect(verdict.ok).toBe(problem === undefined);
    expect(verdict.problem).toBe(problem);
  });
});

describe('running inspect on a document', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tend-corpus-runner-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const standIn = (name: string, body: string): string => {
    const file = join(dir, `${name}.mjs`);
    writeFileSync(file, body);
    return file;
  };
  const report = { ok: true, version: '3.0.0', types: [], unmapped: [], warnings: [] };

  it.each([
    ['a report', `console.log(${JSON.stringify(JSON.stringify(report))})`, { report }],
    [
      'a refusal (a TendError)',
      `console.log(JSON.stringify({ ok: false, error: { code: 'openapi.parse_failed', message: 'bad' } })); process.exit(1)`,
      { refused: { code: 'openapi.parse_failed', message: 'bad' } },
    ],
    [
      'an internal error',
      `console.log(JSON.stringify({ ok: false, error: { code: 'internal', message: 'x is undefined' } })); process.exit(1)`,
      { crashed: 'internal: x is undefined' },
    ],
    [
      'a derive failure',
      `console.log(JSON.stringify({ ok: false, error: { code: 'inspect.failed', message: 'bug' } })); process.exit(1)`,
      { crashed: 'inspect.failed: bug' },
    ],
    [
      'a stack trace',
      `throw new TypeError('boom')`,
      {
        crashed: expect.stringMatching(
          /^exit 1, output is not a JSON report: .*TypeError: boom/s,
        ) as unknown,
      },
    ],
    [
      'JSON that is not a report',
      `console.log('[1,2]')`,
      { crashed: 'exit 0, unexpected report: [1,2]\n' },
    ],
    ['a hang', `setInterval(() => {}, 1000)`, { crashed: 'did not finish within 1 s (killed)' }],
  ])(
    'tells %s apart',
    async (_name, body, outcome) => {
      const result = await inspect('doc.json', undefined, {
        cli: standIn(_name.replace(/\W/g, '-'), body),
        seconds: 1,
      });
      expect(result).toMatchObject(outcome);
      expect(Object.keys(result).sort()).toEqual(['ms', ...Object.keys(outcome)].sort());
    },
    20_000,
  );

  it('passes the document and the overlay to tend', async () => {
    const echo = standIn(
      'echo',
      `console.log(JSON.stringify({ ok: true, types: [], unmapped: [], warnings: [process.argv.slice(2).join(' ')] }))`,
    );
    const result = await inspect('/d/doc.json', 'examples/o.yaml', { cli: echo, seconds: 5 });
    expect(result.report?.warnings[0]).toMatch(
      /^providers inspect \/d\/doc\.json --json --overlay \/.*\/examples\/o\.yaml$/,
    );
  }, 20_000);
});
