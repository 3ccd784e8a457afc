// Hand-written fakes for the step units (src/engine/steps): a StepContext built from plain functions
// over an in-memory platform, recording every journaled operation it is asked for. No mocking library.
import type { Address, ObservedObject, Operation, PlanStep } from '../../src/core/index.js';
import { resolveReferences, getPath } from '../../src/core/index.js';
import type { EngineEvent } from '../../src/engine/index.js';
import type { OperationTarget } from '../../src/engine/operator.js';
import type { StepContext, StepOps } from '../../src/engine/steps/step-context.js';

/** One call the fake operator received, as plain data (what tests compare). */
export type OpCall =
  | { op: 'create'; address: Address; group?: string; step?: number; body: Record<string, unknown> }
  | { op: 'update'; address: Address; id: string; body: Record<string, unknown>; why: string }
  | { op: 'delete'; address: Address; id: string; forget: boolean; group?: string; step?: number }
  | { op: 'takeOver'; address: Address; id: string; from?: Address };

/** What a fake context starts from. */
export interface FakeWorld {
  /** Objects by address, as the plan saw them. */
  objects?: Record<string, ObservedObject>;
  /** Declared specs by address (references `${type/name.path}` resolved against `objects`). */
  specs?: Record<string, Record<string, unknown>>;
  /** What Tend last recorded of each address's fields. */
  remembered?: Record<string, Record<string, unknown>>;
  /** Journal entries `latest` finds, by `${address}:${action}`. */
  journal?: Record<string, Operation>;
  /** Objects `read` finds by id. */
  platform?: Record<string, ObservedObject>;
  /** Make a call fail: return an error to throw for it. */
  fail?: (call: OpCall) => Error | undefined;
  /** An object id still referenced by a declared resource. */
  referenced?: Record<string, Address>;
}

/** A StepContext over a FakeWorld; `calls` and `events` record what the step did. */
export function fakeContext(world: FakeWorld = {}): {
  ctx: StepContext;
  calls: OpCall[];
  events: EngineEvent[];
} {
  const objects = new Map<Address, ObservedObject>(
    Object.entries(world.objects ?? {}) as [Address, ObservedObject][],
  );
  const calls: OpCall[] = [];
  const events: EngineEvent[] = [];
  let next = 1;
  const record = (call: OpCall) => {
    calls.push(call);
    const err = world.fail?.(call);
    if (err) throw err;
  };
  const extra = (t: OperationTarget) => ({
    ...(t.group !== undefined ? { group: t.group } : {}),
    ...(t.step !== undefined ? { step: t.step } : {}),
  });
  const ops: StepOps = {
    create: (t, desired) => {
      record({ op: 'create', address: t.address, ...extra(t), body: desired });
      const o: ObservedObject = { type: t.type, id: `new-${next++}`, fields: { ...desired } };
      return Promise.resolve(o);
    },
    update: (t, current, body, _hash, why) => {
      record({ op: 'update', address: t.address, id: current.id, body, why });
      return Promise.resolve({ ...current, fields: { ...current.fields, ...body } });
    },
    delete: (t, current, forget) => {
      record({ op: 'delete', address: t.address, id: current.id, forget, ...extra(t) });
      return Promise.resolve();
    },
    takeOver: (t, current, _why, from) => {
      record({ op: 'takeOver', address: t.address, id: current.id, ...(from ? { from } : {}) });
      return Promise.resolve({
        ...current,
        marker: { workspace: 'w', address: t.address },
      });
    },
    latest: (t, action) => Promise.resolve(world.journal?.[`${t.address}:${action}`]),
  };
  const ctx: StepContext = {
    ops,
    target: (step: PlanStep, more = {}) => ({
      address: step.address,
      type: step.type,
      stateful: false,
      dependsOn: step.dependsOn,
      ...more,
    }),
    object: (a) => objects.get(a),
    desired: (a) =>
      resolveReferences(world.specs?.[a] ?? {}, (target, path) => {
        const o = objects.get(target);
        const v = o ? getPath(o.fields, path) : undefined;
        return v === undefined ? undefined : { value: v };
      }) as Record<string, unknown>,
    sendable: (_a, desired) => ({ ...desired }),
    verify: (a, id, desired) => {
      const o: ObservedObject = { type: 'fake', id, fields: { ...desired } };
      objects.set(a, o);
      return Promise.resolve(o);
    },
    read: (_type, id) => Promise.resolve(world.platform?.[id]),
    remembered: (a) => world.remembered?.[a],
    referencedBy: (id) => world.referenced?.[id],
    now: () => Date.parse('2026-01-01T00:00:10Z'),
    verifyTimeoutMs: 15_000,
    report: (e) => events.push(e),
  };
  return { ctx, calls, events };
}

/** An observed object of the fake platform. */
export function obj(
  id: string,
  fields: Record<string, unknown>,
  address?: Address,
): ObservedObject {
  return {
    type: 'fake',
    id,
    fields: { id, ...fields },
    ...(address ? { marker: { workspace: 'w', address } } : {}),
  };
}

/** What a step unit did, for want/got comparison: the operations, or the error code it threw. */
export async function outcome<T>(
  run: () => Promise<T>,
  calls: OpCall[],
): Promise<{ calls: OpCall[]; error?: string }> {
  try {
    await run();
    return { calls };
  } catch (e) {
    const code = (e as { code?: string }).code ?? (e as Error).message;
    return { calls, error: code };
  }
}
