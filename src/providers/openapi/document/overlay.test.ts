import { describe, expect, it } from 'vitest';
import { TendError } from '../../../core/index.js';
import { applyOverlay, parseOverlay } from './overlay.js';

type Obj = Record<string, unknown>;

const overlay = (actions: unknown[]): unknown => ({
  overlay: '1.0.0',
  info: { title: 't', version: '1' },
  actions,
});

const base = (): Obj => ({
  paths: { '/a': { get: { tags: ['x'] } }, '/b': { get: {} } },
  definitions: { Zone: { properties: { name: { type: 'string' }, id: { type: 'string' } } } },
});

interface Case {
  name: string;
  reason: string;
  actions: unknown[];
  want: Obj;
  warnings?: string[];
}

const cases: Case[] = [
  {
    name: 'update merges into an object',
    reason: 'Overlay 1.0: the update object is merged into each selected object',
    actions: [
      { target: '$.definitions.Zone.properties.name', update: { 'x-tend-immutable': true } },
    ],
    want: {
      definitions: {
        Zone: { properties: { name: { type: 'string', 'x-tend-immutable': true } } },
      },
    },
  },
  {
    name: 'update of a parent object reaches several children',
    reason: 'a portable way to annotate several fields in one action',
    actions: [
      {
        target: '$.definitions.Zone.properties',
        update: { name: { readOnly: true }, id: { readOnly: true } },
      },
    ],
    want: {
      definitions: {
        Zone: {
          properties: {
            name: { type: 'string', readOnly: true },
            id: { type: 'string', readOnly: true },
          },
        },
      },
    },
  },
  {
    name: 'update appends to a selected array and concatenates arrays',
    reason: 'arrays are appended to, never replaced',
    actions: [
      { target: '$.paths./a.get.tags', update: 'y' },
      { target: '$.paths./a.get', update: { tags: ['z'] } },
    ],
    want: { paths: { '/a': { get: { tags: ['x', 'y', 'z'] } } } },
  },
  {
    name: 'wildcard target',
    reason: 'targets are real JSONPath: one action may select many nodes',
    actions: [{ target: '$.paths.*.get', update: { 'x-seen': 1 } }],
    want: { paths: { '/a': { get: { 'x-seen': 1 } }, '/b': { get: { 'x-seen': 1 } } } },
  },
  {
    name: 'bracket notation for path keys',
    reason: "paths contain slashes and braces: $.paths['/a'] must work",
    actions: [{ target: "$.paths['/a'].get", update: { 'x-tend-type': 'as' } }],
    want: { paths: { '/a': { get: { 'x-tend-type': 'as' } } } },
  },
  {
    name: 'remove',
    reason: 'remove deletes the selected node from its parent',
    actions: [{ target: "$.paths['/b']", remove: true }],
    want: { ...base(), paths: { '/a': { get: { tags: ['x'] } } } },
  },
  {
    name: 'root target',
    reason: '$ selects the document itself, where document-level extensions go',
    actions: [{ target: '$', update: { 'x-tend-parent-values': { server_id: 'localhost' } } }],
    want: { 'x-tend-parent-values': { server_id: 'localhost' } },
  },
  {
    name: 'a target that selects nothing',
    reason: 'a typo must be visible, but is not fatal',
    actions: [{ target: '$.definitions.Zonee', description: 'typo', update: { a: 1 } }],
    want: base(),
    warnings: [
      'overlay action 1 (typo): target $.definitions.Zonee selects nothing in the document',
    ],
  },
];

describe('applyOverlay', () => {
  it.each(cases)('$name: $reason', ({ actions, want, warnings }) => {
    const doc = base();
    const got = applyOverlay(doc, parseOverlay(overlay(actions), 'o.yaml'));
    if (want === undefined) return;
    if (actions.some((a) => (a as Obj)['remove'] === true)) expect(doc).toEqual(want);
    else expect(doc).toMatchObject(want);
    expect(got).toEqual(warnings ?? []);
  });

  it('applies actions in order: a later action sees an earlier one', () => {
    const doc = base();
    applyOverlay(
      doc,
      parseOverlay(
        overlay([
          { target: '$.definitions', update: { New: { properties: {} } } },
          { target: '$.definitions.New', update: { 'x-tend-identity': 'natural-key' } },
        ]),
        'o.yaml',
      ),
    );
    expect(doc).toMatchObject({ definitions: { New: { 'x-tend-identity': 'natural-key' } } });
  });
});

describe('parseOverlay', () => {
  const bad: { name: string; raw: unknown; message: string }[] = [
    { name: 'not a mapping', raw: [1], message: 'it is not a mapping' },
    { name: 'no version', raw: { actions: [] }, message: 'it has no `overlay: 1.0.0` field' },
    {
      name: 'wrong version',
      raw: { overlay: '2.0.0', actions: [] },
      message: '`overlay` is "2.0.0", not 1.0.x',
    },
    {
      name: 'no actions',
      raw: { overlay: '1.0.0', actions: [] },
      message: '`actions` must be a non-empty list',
    },
    {
      name: 'target without $',
      raw: overlay([{ target: 'paths', update: {} }]),
      message: 'actions[0].target must be a JSONPath starting with $',
    },
    {
      name: 'neither update nor remove',
      raw: overlay([{ target: '$' }]),
      message: 'actions[0] has neither update nor remove: true',
    },
    {
      name: 'remove not boolean',
      raw: overlay([{ target: '$', remove: 'yes' }]),
      message: 'actions[0].remove must be true or false',
    },
  ];
  it.each(bad)('refuses $name', ({ raw, message }) => {
    let err: unknown;
    try {
      parseOverlay(raw, 'o.yaml');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TendError);
    expect((err as TendError).code).toBe('overlay.invalid');
    expect((err as TendError).message).toBe(
      `o.yaml is not an OpenAPI Overlay 1.0 document: ${message}; see docs/onboard-rest-api.md`,
    );
  });

  it('refuses a target JSONPath cannot parse, naming the action', () => {
    const o = parseOverlay(overlay([{ target: '$[?(@.a ==', update: {} }]), 'o.yaml');
    expect(() => applyOverlay(base(), o)).toThrow(
      /o\.yaml: overlay action 1: target \$\[\?\(@\.a == is not a JSONPath/,
    );
  });
});

describe('parseOverlay: keys that could reach a prototype', () => {
  const hostile = (text: string): unknown => JSON.parse(text);
  it.each([
    {
      name: '__proto__ in an update',
      raw: hostile(
        '{"overlay": "1.0.0", "info": {}, "actions": [{"target": "$", "update": {"__proto__": {"x": 1}}}]}',
      ),
      message:
        "o.yaml: the key `__proto__` at $.actions[0].update.__proto__ is refused: merged into the document, it would reach an object's prototype",
    },
    {
      name: 'constructor deep in an update',
      raw: hostile(
        '{"overlay": "1.0.0", "info": {}, "actions": [{"target": "$", "update": {"a": [{"constructor": {"prototype": {}}}]}}]}',
      ),
      message:
        "o.yaml: the key `constructor` at $.actions[0].update.a[0].constructor is refused: merged into the document, it would reach an object's prototype",
    },
    {
      name: 'prototype at the top',
      raw: hostile('{"overlay": "1.0.0", "prototype": {}, "actions": []}'),
      message:
        "o.yaml: the key `prototype` at $.prototype is refused: merged into the document, it would reach an object's prototype",
    },
    {
      name: 'a target naming __proto__',
      raw: overlay([{ target: "$.paths['__proto__']", update: { x: 1 } }]),
      message:
        "o.yaml: actions[0].target names `__proto__`, which is refused: it could reach an object's prototype",
    },
    {
      name: 'a target naming constructor.prototype',
      raw: overlay([{ target: '$.constructor.prototype', update: { x: 1 } }]),
      message:
        "o.yaml: actions[0].target names `constructor`, which is refused: it could reach an object's prototype",
    },
  ])('refuses $name', ({ raw, message }) => {
    let err: unknown;
    try {
      parseOverlay(raw, 'o.yaml');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TendError);
    expect((err as TendError).code).toBe('overlay.forbidden_key');
    expect((err as TendError).message).toBe(message);
    expect(({} as Record<string, unknown>)['x']).toBeUndefined();
  });

  it('refuses an overlay that contains itself (a YAML alias inside its own anchor)', () => {
    const raw = overlay([{ target: '$', update: { a: {} } }]) as Record<string, unknown>;
    raw['loop'] = raw;
    expect(() => parseOverlay(raw, 'o.yaml')).toThrow(
      'o.yaml is not an OpenAPI Overlay 1.0 document: $.loop contains itself (a YAML alias inside its own anchor)',
    );
  });

  it('replaces a scalar selected under a key as an own property of its parent', () => {
    const doc = { info: { title: 'old' } };
    applyOverlay(doc, parseOverlay(overlay([{ target: '$.info.title', update: 'new' }]), 'o.yaml'));
    expect(doc).toEqual({ info: { title: 'new' } });
  });
});
