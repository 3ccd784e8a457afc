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
      created_at: 't',
    });
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
    expect([...predictedState(step, { tags: { zone: 'a' } }, {}, info)!.unknown]).toEqual(['tags']);
  });

  it('a step with nothing to do: the observed object', () => {
    const step: PlanStep = { ...base, kind: 'noop', objectId: 'b1' };
    expect(predictedState(step, { name: 'logs', versioning: true }, {}, info)!.object).toEqual({
      name: 'logs',
      versioning: true,
    });
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
    ['a number', 3, false],
    ['null', null, false],
  ];
  it.each(cases)('%s', (_w, v, expected) => expect(filledLater(v)).toBe(expected));
});
