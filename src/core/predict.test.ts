import { describe, expect, it } from 'vitest';
import type { PlanStep } from './plan.js';
import { filledLater, predictedState } from './predict.js';
import type { ResourceTypeInfo } from './provider.js';

const info = {
  name: 'buckets',
  schema: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      versioning: { type: 'boolean', default: false },
      tags: { type: 'object', default: {} },
      created_at: { type: 'string', readOnly: true, default: 'never' },
    },
  },
  outputOnly: ['created_at'],
  idField: 'name',
} as unknown as ResourceTypeInfo;

const unknown = (address: string, field: string) => ({ $unknown: `${address}.${field}` });

const base = { address: 'sb.buckets/logs' as const, type: 'sb.buckets', dependsOn: [] };

describe('predictedState', () => {
  it('a create: the declared fields over the schema defaults; output-only fields and the rest unknown', () => {
    const step: PlanStep = { ...base, kind: 'create', desired: { name: 'logs' } };
    expect(predictedState(step, undefined, { name: 'logs' }, info)).toEqual({
      object: { name: 'logs', versioning: false, tags: {} },
      unknown: new Set(),
      onlyKnown: true,
    });
  });

  it('a create: a declared value wins over the default; a value known after apply is unknown', () => {
    const step: PlanStep = {
      ...base,
      kind: 'create',
      desired: { name: 'logs', versioning: true, tags: { zone: unknown('sb.zones/z', 'id') } },
    };
    const p = predictedState(step, undefined, {}, info)!;
    expect(p.object).toEqual({ name: 'logs', versioning: true });
    expect([...p.unknown]).toEqual(['tags']);
  });

  it('an update: the observed object with the changes made, nested paths included', () => {
    const observed = {
      name: 'logs',
      versioning: false,
      tags: { team: 'a', env: 'x' },
      created_at: 't',
    };
    const step: PlanStep = {
      ...base,
      kind: 'update',
      objectId: 'b1',
      changes: [
        { path: 'versioning', before: false, after: true },
        { path: 'tags.team', before: 'a', after: 'b' },
      ],
    };
    const p = predictedState(step, observed, {}, info)!;
    expect(p.object).toEqual({
      name: 'logs',
      versioning: true,
      tags: { team: 'b', env: 'x' },
    });
    expect([...p.unknown]).toEqual(['created_at']);
    expect(p.onlyKnown).toBe(false);
    expect(observed.tags.team).toBe('a');
  });

  it('an update to a value known after apply makes the top-level field unknown', () => {
    const step: PlanStep = {
      ...base,
      kind: 'update',
      objectId: 'b1',
      changes: [{ path: 'tags.zone', before: 'a', after: unknown('sb.zones/z', 'id') }],
    };
    expect([...predictedState(step, { tags: { zone: 'a' } }, {}, info)!.unknown]).toEqual([
      'tags',
      'created_at',
    ]);
  });

  it('a step with nothing to do: the observed object, output-only fields included', () => {
    const step: PlanStep = { ...base, kind: 'noop', objectId: 'b1' };
    const p = predictedState(step, { name: 'logs', versioning: true, created_at: 't' }, {}, info)!;
    expect(p.object).toEqual({ name: 'logs', versioning: true, created_at: 't' });
    expect(p.unknown).toEqual(new Set());
  });

  // Found by test/e2e/predict-property.test.ts: the sandbox's service `status` (output-only) turns
  // `stopped` when an update sets `replicas` to 0. What the platform derives from a write is not
  // Tend's to know: every output-only field but the id is unknown after a write.
  const services = {
    name: 'services',
    schema: { type: 'object', properties: { replicas: { type: 'integer', default: 1 } } },
    outputOnly: ['id', 'status', 'created_at'],
    idField: 'id',
  } as unknown as ResourceTypeInfo;
  const svc = { address: 'sb.services/api' as const, type: 'sb.services', dependsOn: [] };
  const running = { id: 's1', name: 'api', replicas: 2, status: 'running', created_at: 't' };
  const writes: [string, PlanStep][] = [
    [
      'an update',
      {
        ...svc,
        kind: 'update',
        objectId: 's1',
        changes: [{ path: 'replicas', before: 2, after: 0 }],
      },
    ],
    [
      'a move',
      {
        ...svc,
        kind: 'move',
        objectId: 's1',
        from: 'sb.services/old',
        changes: [{ path: 'replicas', before: 2, after: 0 }],
      },
    ],
    [
      'an adoption without changes',
      { ...svc, kind: 'adopt', objectId: 's1', foundBy: 'marker', changes: [] },
    ],
  ];
  it.each(writes)('%s: output-only fields unknown, the id kept', (_w, step) => {
    const p = predictedState(step, running, {}, services)!;
    expect([...p.unknown].sort()).toEqual(['created_at', 'status']);
    expect(p.object['id']).toBe('s1');
    expect(p.object).not.toHaveProperty('status');
    expect(p.object).not.toHaveProperty('created_at');
    expect(p.onlyKnown).toBe(false);
  });

  it('a replace: a new object from the intent; a reference in it is unknown', () => {
    const step: PlanStep = {
      ...base,
      kind: 'replace',
      objectId: 'b1',
      changes: [],
      forcedBy: ['name'],
      decidedBy: 'annotation',
      strategy: 'delete-before-create',
      gated: false,
      blastRadius: [],
    };
    const p = predictedState(
      step,
      { name: 'old', versioning: true },
      { name: 'new', tags: { z: '${sb.zones/z.id}' } },
      info,
    )!;
    expect(p.object).toEqual({ name: 'new', versioning: false });
    expect([...p.unknown]).toEqual(['tags']);
  });

  it('nothing for a delete or a conflict', () => {
    expect(
      predictedState(
        { ...base, kind: 'delete', objectId: 'b1', gated: false, blastRadius: [], waitsFor: [] },
        {},
        {},
        info,
      ),
    ).toBeUndefined();
    expect(
      predictedState({ ...base, kind: 'conflict', objectId: 'b1', owner: 'other' }, {}, {}, info),
    ).toBeUndefined();
  });

  // Values of every shape, through a create and an update (killed mutants of StrykerJS,
  // docs/mutation.md): lists stay lists, null stays null, one Unknown anywhere in a value is enough.
  const shapes: [string, unknown, boolean][] = [
    ['a list', [1, 'a'], false],
    ['null', null, false],
    ['a list holding an Unknown', ['a', unknown('sb.zones/z', 'id')], true],
    [
      'a mapping with an Unknown among plain values',
      { team: 'a', zone: unknown('sb.zones/z', 'id') },
      true,
    ],
    ['a list of mappings', [{ a: 1 }, { b: [2] }], false],
    ['a resolved text holding ${ (not a reference: a create sends it as is)', 'cost ${5}', false],
  ];
  it.each(shapes)('a create declaring %s', (_w, value, isUnknown) => {
    const step: PlanStep = { ...base, kind: 'create', desired: { name: 'logs', tags: value } };
    const p = predictedState(step, undefined, {}, info)!;
    expect(p.unknown.has('tags')).toBe(isUnknown);
    if (isUnknown) expect(p.object).not.toHaveProperty('tags');
    else expect(p.object['tags']).toEqual(value);
  });
  it.each(shapes)('an update to %s', (_w, value, isUnknown) => {
    const step: PlanStep = {
      ...base,
      kind: 'update',
      objectId: 'b1',
      changes: [{ path: 'tags', before: {}, after: value }],
    };
    const observed = { name: 'logs', tags: {}, list: [1, [2]], none: null };
    const p = predictedState(step, observed, {}, info)!;
    expect(p.unknown.has('tags')).toBe(isUnknown);
    if (!isUnknown) expect(p.object['tags']).toEqual(value);
    // The observed fields the step does not change are copied as they are.
    expect(p.object['list']).toEqual([1, [2]]);
    expect(p.object['none']).toBeNull();
  });

  const nested: [string, Record<string, unknown>, string, Record<string, unknown>][] = [
    ['under a null', { tags: null }, 'tags.team', { tags: { team: 'b' } }],
    ['under a text', { tags: 'x' }, 'tags.team', { tags: { team: 'b' } }],
    ['under a list', { tags: ['x'] }, 'tags.team', { tags: { team: 'b' } }],
    ['two levels under nothing', {}, 'a.b.c', { a: { b: { c: 'b' } } }],
    [
      'beside what is there',
      { a: { x: 1, b: { y: 2 } } },
      'a.b.c',
      { a: { x: 1, b: { y: 2, c: 'b' } } },
    ],
    ['a key holding a dot, escaped', { tags: {} }, 'tags.k\\.x', { tags: { 'k.x': 'b' } }],
  ];
  it.each(nested)('an update of a nested path %s', (_w, observed, path, expected) => {
    const step: PlanStep = {
      ...base,
      kind: 'update',
      objectId: 'b1',
      changes: [{ path, before: undefined, after: 'b' }],
    };
    expect(predictedState(step, observed, {}, info)!.object).toEqual(expected);
  });

  const schemas: [string, unknown][] = [
    ['no properties', { type: 'object' }],
    ['properties null', { type: 'object', properties: null }],
    ['properties not a mapping', { type: 'object', properties: 'x' }],
    [
      'a property schema that is true, null or a default-less mapping',
      { properties: { a: true, b: null, c: { type: 'string' } } },
    ],
  ];
  it.each(schemas)('a create on a schema with %s: no defaults', (_w, schema) => {
    const step: PlanStep = { ...base, kind: 'create', desired: { name: 'logs' } };
    const odd = { ...info, schema } as unknown as ResourceTypeInfo;
    expect(predictedState(step, undefined, {}, odd)!.object).toEqual({ name: 'logs' });
  });

  it('an update of a type whose info is not known (the gate could not find the type): the observed object with the changes', () => {
    const step: PlanStep = {
      ...base,
      kind: 'update',
      objectId: 'b1',
      changes: [{ path: 'versioning', before: false, after: true }],
    };
    expect(predictedState(step, { name: 'logs', versioning: false }, {}, undefined)).toEqual({
      object: { name: 'logs', versioning: true },
      unknown: new Set(),
      onlyKnown: false,
    });
  });

  it('a type without a schema: no defaults', () => {
    const step: PlanStep = { ...base, kind: 'create', desired: { name: 'logs' } };
    expect(predictedState(step, undefined, {}, undefined)!.object).toEqual({ name: 'logs' });
  });
});

describe('filledLater', () => {
  const cases: [string, unknown, boolean][] = [
    ['a plain string', 'logs', false],
    ['a reference', '${sb.zones/z.id}', true],
    ['a reference inside a list', ['a', 'x-${sb.zones/z.name}'], true],
    ['a secret from the environment', { fromEnv: 'PW' }, true],
    ['a secret from a file', { fromFile: 'pw.txt' }, true],
    ['a mapping of plain values', { a: 1, b: [true] }, false],
    ['a mapping with one reference among plain values', { a: 'x', b: '${sb.zones/z.id}' }, true],
    ['a number', 3, false],
    ['null', null, false],
  ];
  it.each(cases)('%s', (_w, v, expected) => expect(filledLater(v)).toBe(expected));
});
