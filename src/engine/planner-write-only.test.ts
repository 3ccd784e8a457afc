import { describe, expect, it } from 'vitest';
import type { Provider, ResourceTypeInfo } from '../core/index.js';
import { hashValue, TendError } from '../core/index.js';
import type { TwinEntry } from '../store/index.js';
import { decl, fakeWorkspace, listed, twinOf } from '../../test/support/fake-workspace.js';
import { observe } from './observe.js';
import { planPass } from './planner.js';

// Write-only fields (sent on create, never returned) against what Tend remembers sending: a change
// rides along with a replace, forces one when the field is create-only, and is refused otherwise.

/** Buckets with a write-only `seed` and a write-only, create-only `boot`. */
function workspace(spec: Record<string, unknown>, sent: Record<string, unknown> | undefined) {
  const twin: TwinEntry = {
    ...twinOf('sb.buckets/b', 'b'),
    ...(sent
      ? { sent: Object.fromEntries(Object.entries(sent).map(([k, v]) => [k, hashValue(v)])) }
      : {}),
  };
  const ws = fakeWorkspace(
    [decl('sb.buckets/b', 'b', undefined, { name: 'b', ...spec })],
    [listed('buckets', 'b', ['w', 'sb.buckets/b'])],
    [twin],
  );
  const base = ws.typeOf('sb.buckets');
  const info: ResourceTypeInfo = {
    ...base.info,
    writeOnly: ['seed', 'boot'],
    createOnly: [...base.info.createOnly, 'boot'],
  };
  // As the OpenAPI provider does: a write-only field never compares with the platform.
  const provider: Provider = {
    ...base.provider,
    normalize: (_t, path, v) => (['seed', 'boot'].includes(path.split('.')[0]!) ? null : v),
  };
  return { ...ws, typeOf: () => ({ provider, info }) };
}

async function plan(spec: Record<string, unknown>, sent?: Record<string, unknown>) {
  const ws = workspace(spec, sent);
  const observation = await observe(ws, { visibilityWindowMs: 0, now: new Date(0) });
  return (await planPass(ws, observation, { approveDestroy: false, prune: true })).plan.steps[0]!;
}

describe('planPass: write-only fields', () => {
  it.each([
    { name: 'as sent: nothing to do', spec: { seed: 1 }, sent: { seed: 1 }, kind: 'noop' },
    {
      name: 'nothing recorded (adopted): not compared',
      spec: { seed: 2 },
      sent: undefined,
      kind: 'noop',
    },
    {
      name: 'a create-only one changed: a replace, forced by it',
      spec: { boot: 'b2' },
      sent: { boot: 'b1' },
      kind: 'replace',
      forcedBy: ['boot'],
    },
    {
      name: 'another one changed along with a create-only one: both ride the replace',
      spec: { boot: 'b2', seed: 2 },
      sent: { boot: 'b1', seed: 1 },
      kind: 'replace',
      forcedBy: ['boot'],
    },
  ])('$name', async ({ spec, sent, kind, forcedBy }) => {
    const step = await plan(spec, sent);
    expect(step.kind).toBe(kind);
    if (step.kind === 'replace') {
      expect(step.forcedBy).toEqual(forcedBy);
      for (const c of step.changes) {
        expect(c.before).toEqual({ $writeOnly: 'as sent on create; not readable' });
      }
    }
  });

  it('refuses a change that is neither create-only nor part of a replace, saying so', async () => {
    const err = await plan({ seed: 2 }, { seed: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TendError);
    expect((err as TendError).code).toBe('plan.write_only_changed');
    expect((err as TendError).message).toBe(
      'sb.buckets/b: seed is write-only (sent on create, never returned by the platform) and has changed in the intent since Tend created the object; an update cannot change it',
    );
  });

  it('marks the write-only fields of a create', async () => {
    const ws = workspace({ seed: 1 }, undefined);
    const observation = await observe(ws, { visibilityWindowMs: 0, now: new Date(0) });
    // The object is gone: the plan creates it again.
    observation.objects.clear();
    const { plan } = await planPass(ws, observation, { approveDestroy: false, prune: true });
    expect(plan.steps[0]).toMatchObject({ kind: 'create', writeOnly: ['seed'] });
  });
});
