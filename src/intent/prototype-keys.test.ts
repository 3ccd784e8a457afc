import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Diagnostic, ProviderDecl, ProviderDescription } from '../core/index.js';
import { TendError, assemblePlan, decideStep } from '../core/index.js';
import { applyOverlay, loadOpenApiDocument } from '../providers/index.js';
import type { Overlay } from '../providers/openapi/document/overlay.js';
import { loadIntent } from './index.js';
import { parseDocuments } from './parse-documents.js';

// Issue 10: a `__proto__` key in an overlay wrote into Object.prototype and turned every destroy
// gate off for the whole process. Every key that can reach a prototype is now refused where it is
// written, and nothing of it reaches Object.prototype.

const prototypeKeys = () => Object.getOwnPropertyNames(Object.prototype).sort();
const pristine = prototypeKeys();
afterEach(() => {
  expect(prototypeKeys()).toEqual(pristine);
  for (const k of ['approveDestroy', 'stateful', 'gated', 'polluted', 'someKey']) {
    expect(({} as Record<string, unknown>)[k]).toBeUndefined();
  }
});

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function fixture(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tend-proto-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    await mkdir(join(dir, name, '..'), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return dir;
}

const yaml = (...lines: string[]) => lines.join('\n') + '\n';

/** The payload that switched the gates off: defaults every options object would inherit. */
const EVIL_OVERLAY = yaml(
  'overlay: 1.0.0',
  'info: { title: evil, version: "1" }',
  'actions:',
  '  - target: $.paths',
  '    update:',
  '      __proto__:',
  '        approveDestroy: true',
  '        stateful: false',
  '        gated: false',
);

const SPEC = JSON.stringify({
  openapi: '3.0.3',
  info: { title: 't', version: '1' },
  paths: {},
});

const PROVIDER = yaml(
  'kind: Provider',
  'name: sb',
  'type: openapi',
  'spec: ./spec.json',
  'overlay: overlays/evil.yaml',
  'endpoint: http://127.0.0.1:9/',
);

/** The destroy gate, asked the way the planner asks it, without --approve-destroy. */
function expectGatesHold(): void {
  const replace = decideStep({
    address: 'sb.volumes/data',
    type: 'sb.volumes',
    dependsOn: [],
    stateful: true,
    objectId: 'vol-1',
    desired: { size: 2 },
    changes: [{ path: 'size', before: 1, after: 2 }],
    evaluation: { action: 'replace', fields: ['size'], source: 'annotation' },
    canCreateBeforeDestroy: true,
    approveDestroy: false,
  });
  expect(replace).toMatchObject({ kind: 'replace', gated: true, gate: 'stateful resource' });
  const plan = assemblePlan(
    [],
    [
      {
        address: 'sb.volumes/old',
        type: 'sb.volumes',
        objectId: 'vol-2',
        stateful: true,
        dependsOn: [],
      },
    ],
    false,
  );
  expect(plan.gated).toEqual(['sb.volumes/old']);
  expect(plan.steps[0]).toMatchObject({ kind: 'delete', gated: true });
}

describe('an overlay with __proto__', () => {
  it('is refused at overlay:line:column when the intent loads, and the destroy gate still holds', async () => {
    const dir = await fixture({
      'providers.yaml': PROVIDER,
      'spec.json': SPEC,
      'overlays/evil.yaml': EVIL_OVERLAY,
    });
    const calls: ProviderDecl[] = [];
    const describeProvider = (decl: ProviderDecl): Promise<ProviderDescription | Diagnostic> => {
      calls.push(decl);
      return Promise.resolve({ types: [], warnings: [], auditFeed: false });
    };
    const result = await loadIntent(dir, { describe: describeProvider });
    expect(result.intent).toBeUndefined();
    expect(result.diagnostics).toEqual([
      {
        code: 'key.forbidden',
        severity: 'error',
        message: "the key `__proto__` is refused: it could reach an object's prototype",
        hint: expect.stringMatching(/^remove or rename the key/) as unknown,
        file: join(dir, 'overlays/evil.yaml'),
        line: 6,
        column: 7,
        path: 'actions[0].update.__proto__',
      },
    ]);
    // The overlay never reached the loader.
    expect(calls).toEqual([]);
    expectGatesHold();
  });

  it('is refused by the OpenAPI loader too (a URL overlay, or a caller other than the intent)', async () => {
    const dir = await fixture({ 'spec.json': SPEC, 'evil.yaml': EVIL_OVERLAY });
    const err = await loadOpenApiDocument(join(dir, 'spec.json'), {
      overlay: join(dir, 'evil.yaml'),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TendError);
    expect((err as TendError).code).toBe('overlay.forbidden_key');
    expect((err as TendError).message).toBe(
      `${join(dir, 'evil.yaml')}: the key \`__proto__\` at $.actions[0].update.__proto__ is refused: merged into the document, it would reach an object's prototype`,
    );
    expectGatesHold();
  });

  it('cannot be merged even when built by hand, past parseOverlay', () => {
    const update = JSON.parse('{"__proto__": {"approveDestroy": true}}') as unknown;
    const overlay: Overlay = {
      location: 'hand.yaml',
      version: '1.0.0',
      actions: [{ target: '$.paths', update }],
    };
    expect(() => applyOverlay({ paths: {} }, overlay)).toThrow(
      "the key `__proto__` in hand.yaml is refused: it could reach an object's prototype",
    );
    expectGatesHold();
  });
});

describe('intent YAML with a key that could reach a prototype', () => {
  const resource = (...specLines: string[]) =>
    yaml('kind: Resource', 'type: sb.volumes', 'name: data', 'spec:', ...specLines);
  const cases: {
    name: string;
    reason: string;
    text: string;
    line: number;
    column: number;
    path: string;
    key?: string;
  }[] = [
    {
      name: '__proto__ at the top',
      reason: 'a document-level key',
      text: yaml('kind: Resource', '__proto__: { stateful: false }'),
      line: 2,
      column: 1,
      path: '__proto__',
    },
    {
      name: 'constructor in spec',
      reason: 'a spec field named like the prototype chain',
      text: resource('  constructor: { prototype: { polluted: true } }'),
      line: 5,
      column: 3,
      path: 'spec.constructor',
      key: 'constructor',
    },
    {
      name: 'prototype deep in a list',
      reason: 'at any depth, inside lists too',
      text: resource('  tags:', '    - a: 1', '    - b:', '        prototype: x'),
      line: 8,
      column: 9,
      path: 'spec.tags[1].b.prototype',
      key: 'prototype',
    },
    {
      name: 'a quoted __proto__ in a flow mapping',
      reason: 'however the key is spelt, it is the same key',
      text: resource('  labels: { "__proto__": { polluted: true } }'),
      line: 5,
      column: 13,
      path: 'spec.labels.__proto__',
    },
    {
      name: 'a key in a flow sequence pair',
      reason: '`[__proto__: x]` is a one-entry mapping inside the list',
      text: resource('  list: [__proto__: x]'),
      line: 5,
      column: 10,
      path: 'spec.list[0].__proto__',
    },
    {
      name: 'inside an anchor used elsewhere',
      reason: 'an anchor is checked where it is written, once',
      text: yaml('kind: Resource', 'base: &b', '  __proto__: { polluted: true }', 'spec: *b'),
      line: 3,
      column: 3,
      path: 'base.__proto__',
    },
  ];
  it.each(cases)('$name: $reason', ({ text, line, column, path, key }) => {
    const parsed = parseDocuments('main.yaml', text);
    expect(parsed.documents).toEqual([]);
    expect(parsed.diagnostics).toEqual([
      {
        code: 'key.forbidden',
        severity: 'error',
        message: `the key \`${key ?? '__proto__'}\` is refused: it could reach an object's prototype`,
        hint: expect.stringMatching(/^remove or rename the key/) as unknown,
        file: 'main.yaml',
        line,
        column,
        path,
      },
    ]);
  });

  it('a key written as an alias of a scalar anchor is refused once aliases resolve', () => {
    const parsed = parseDocuments(
      'main.yaml',
      yaml('kind: Resource', 'k: &k __proto__', 'spec:', '  *k : 1'),
    );
    expect(parsed.documents).toEqual([]);
    expect(parsed.diagnostics).toMatchObject([
      { code: 'key.forbidden', file: 'main.yaml', line: 4, path: 'spec.__proto__' },
    ]);
  });

  it('every such key of a file is reported at once, with the intent not loaded', async () => {
    const dir = await fixture({
      'main.yaml': yaml(
        'kind: Resource',
        'type: sb.volumes',
        'name: data',
        'spec:',
        '  __proto__: { size: 1 }',
        '  constructor: 1',
        '---',
        'kind: Workspace',
        'prototype: prod',
      ),
    });
    const result = await loadIntent(dir, {
      describe: () => Promise.reject(new Error('no provider is declared')),
    });
    expect(result.intent).toBeUndefined();
    expect(result.diagnostics.map((d) => [d.code, d.line, d.column, d.path])).toEqual([
      ['key.forbidden', 5, 3, 'spec.__proto__'],
      ['key.forbidden', 6, 3, 'spec.constructor'],
      ['key.forbidden', 9, 1, 'prototype'],
    ]);
    expectGatesHold();
  });
});
