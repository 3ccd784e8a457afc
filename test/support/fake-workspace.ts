// A Workspace built from functions, for unit tests of observe and plan: one provider `sb` with three
// types (a natural-key type with tags, one without, a marker type) listing fixed objects, and a store
// holding a fixed twin. Nothing here mutates: a mutation or an evaluation not given fails the test.
import type {
  Address,
  LifecycleEvaluation,
  ObservedObject,
  Operation,
  Provider,
  ResourceDecl,
  ResourceTypeInfo,
} from '../../src/core/index.js';
import { findReferences, Redactor, TendError } from '../../src/core/index.js';
import type { Workspace } from '../../src/engine/workspace.js';
import { createSendFence } from '../../src/engine/send-fence.js';
import type { Store, TwinEntry } from '../../src/store/index.js';

export const TYPES: ResourceTypeInfo[] = [
  {
    name: 'buckets',
    schema: {},
    identity: 'natural-key',
    naturalKey: 'name',
    idField: 'name',
    createOnly: ['name'],
    outputOnly: [],
    sensitive: [],
    markerField: 'tags',
    lifecycle: 'platform',
    idempotencyKey: false,
  },
  {
    name: 'tagless',
    schema: {},
    identity: 'natural-key',
    naturalKey: 'name',
    idField: 'name',
    createOnly: ['name'],
    outputOnly: [],
    sensitive: [],
    lifecycle: 'platform',
    idempotencyKey: false,
  },
  {
    // Named by a field below the top level (DigitalOcean's apps: `spec.name`), with no marker.
    name: 'apps',
    schema: {},
    identity: 'natural-key',
    naturalKey: 'spec.name',
    naturalKeyFields: ['spec.name'],
    idField: 'id',
    createOnly: [],
    outputOnly: [],
    sensitive: [],
    lifecycle: 'platform',
    idempotencyKey: false,
  },
  {
    name: 'networks',
    schema: {},
    identity: 'marker',
    idField: 'id',
    createOnly: [],
    outputOnly: [],
    sensitive: [],
    markerField: 'tags',
    lifecycle: 'platform',
    idempotencyKey: true,
  },
];

/** A listed object; `marker` is `[workspace, address]`. */
export const listed = (
  type: string,
  id: string,
  marker?: [string, string],
  fields: Record<string, unknown> = {},
): ObservedObject => ({
  type,
  id,
  fields: { id, name: id, ...fields },
  ...(marker ? { marker: { workspace: marker[0], address: marker[1] as Address } } : {}),
});
/** A declared resource; `spec` defaults to `{ name }`, and references in it make its dependencies. */
export const decl = (
  address: string,
  name: string,
  movedFrom?: string,
  spec: Record<string, unknown> = { name },
): ResourceDecl => {
  const [type, rname] = address.split('/') as [string, string];
  const deps = [...new Set(findReferences(spec).refs.map((r) => r.target))];
  return {
    kind: 'Resource',
    address: address as Address,
    type,
    provider: 'sb',
    resourceType: type.slice(3),
    name: rname,
    spec,
    lifecycle: { stateful: false },
    checks: [],
    dependsOn: deps,
    ...(movedFrom ? { moved: { from: movedFrom as Address } } : {}),
    source: { file: 'f.yaml', line: 1, column: 1 },
  };
};
export const twinOf = (address: string, objectId: string): TwinEntry => ({
  address: address as Address,
  type: address.split('/')[0]!,
  objectId,
  fields: {},
  stateful: false,
  dependsOn: [],
  observedAt: '2026-01-01T00:00:00Z',
});

/** A workspace of functions: one provider listing `objects`, a store holding `twin`. */
/** A twin entry; `dependsOn` is what the resource referenced when Tend recorded it. */
export const twinWith = (address: string, objectId: string, dependsOn: string[]): TwinEntry => ({
  ...twinOf(address, objectId),
  dependsOn: dependsOn as Address[],
});

/** More of the fake workspace's world: what the provider promises, what the journal holds. */
export interface FakeWorkspaceOptions {
  /** The provider's `consistentReads` (absent: not said). */
  readonly consistentReads?: boolean;
  /** The journal, oldest first; `operations({address, limit})` answers the newest of an address's. */
  readonly operations?: readonly Operation[];
}

/** The workspace; `evaluate` answers the lifecycle question (default: every change fits in place). */
export function fakeWorkspace(
  declared: ResourceDecl[],
  objects: ObservedObject[],
  twin: TwinEntry[],
  evaluate: (type: string, current: ObservedObject) => LifecycleEvaluation = () => ({
    action: 'update',
    fields: [],
    source: 'platform',
  }),
  options: FakeWorkspaceOptions = {},
): Workspace {
  const description = {
    types: TYPES,
    auditFeed: false,
    warnings: [],
    ...(options.consistentReads !== undefined ? { consistentReads: options.consistentReads } : {}),
  };
  const provider: Provider = {
    name: 'sb',
    describe: () => description,
    list: (type) => Promise.resolve(objects.filter((o) => o.type === type)),
    read: () => Promise.resolve(undefined),
    create: () => Promise.reject(new Error('observe never mutates')),
    update: () => Promise.reject(new Error('observe never mutates')),
    delete: () => Promise.reject(new Error('observe never mutates')),
    evaluate: (type, current) => Promise.resolve(evaluate(type, current)),
  };
  const store = {
    listTwin: () => Promise.resolve(twin),
    operations: (q: { address?: Address; limit?: number }) =>
      Promise.resolve(
        (options.operations ?? [])
          .filter((o) => q.address === undefined || o.address === q.address)
          .slice(q.limit === undefined ? 0 : -q.limit),
      ),
  } as unknown as Store;
  return {
    name: 'w',
    intent: { dir: '/', contentHash: 'fake', providers: [], resources: declared },
    providers: new Map([['sb', provider]]),
    store,
    env: {},
    secrets: new Redactor(),
    fence: createSendFence(),
    typeOf: (type) => ({ provider, info: TYPES.find((t) => `sb.${t.name}` === type)! }),
    close: () => Promise.resolve(),
  };
}

/** One mutation the fake platform received. */
export interface PlatformCall {
  readonly verb: 'create' | 'update' | 'delete';
  readonly type: string;
  readonly id: string;
}

/**
 * An in-memory platform behind the `sb` provider, for executor tests: objects by type and id, every
 * mutation logged in order, and `refuse` to make one fail (as a 409 would). Creates get ids `n-1`,
 * `n-2`, …; markers are stored as given.
 */
export function fakePlatform(
  objects: ObservedObject[],
  options: {
    refuse?: (call: PlatformCall) => string | undefined;
    evaluate?: (type: string, current: ObservedObject) => LifecycleEvaluation;
  } = {},
): { provider: Provider; calls: PlatformCall[]; objects: Map<string, ObservedObject> } {
  const live = new Map(objects.map((o) => [`${o.type}/${o.id}`, o] as const));
  const calls: PlatformCall[] = [];
  let next = 1;
  const mutate = (call: PlatformCall) => {
    calls.push(call);
    const why = options.refuse?.(call);
    if (why) return Promise.reject(new TendError('provider.conflict', why, { status: 409 }));
    return Promise.resolve();
  };
  const provider: Provider = {
    name: 'sb',
    describe: () => ({ types: TYPES, auditFeed: false, warnings: [] }),
    list: (type) => Promise.resolve([...live.values()].filter((o) => o.type === type)),
    read: (type, id) => Promise.resolve(live.get(`${type}/${id}`)),
    create: async (type, desired, ctx) => {
      const id = `n-${next++}`;
      await mutate({ verb: 'create', type, id });
      const o: ObservedObject = {
        type,
        id,
        fields: { id, ...desired },
        ...(ctx.marker ? { marker: ctx.marker } : {}),
      };
      live.set(`${type}/${id}`, o);
      return o;
    },
    update: async (type, id, desired, current, ctx) => {
      await mutate({ verb: 'update', type, id });
      const o: ObservedObject = {
        ...current,
        fields: { ...current.fields, ...desired },
        ...(ctx.marker ? { marker: ctx.marker } : {}),
      };
      live.set(`${type}/${id}`, o);
      return o;
    },
    delete: async (type, id) => {
      await mutate({ verb: 'delete', type, id });
      live.delete(`${type}/${id}`);
    },
    evaluate: (type, current) =>
      Promise.resolve(
        options.evaluate?.(type, current) ?? { action: 'update', fields: [], source: 'platform' },
      ),
  };
  return { provider, calls, objects: live };
}

/** A workspace over a given provider and a real store (the executor journals into it). */
export function workspaceOver(
  declared: ResourceDecl[],
  provider: Provider,
  store: Store,
): Workspace {
  return {
    name: 'w',
    intent: { dir: '/', contentHash: 'fake', providers: [], resources: declared },
    providers: new Map([['sb', provider]]),
    store,
    env: {},
    secrets: new Redactor(),
    fence: createSendFence(),
    typeOf: (type) => ({ provider, info: TYPES.find((t) => `sb.${t.name}` === type)! }),
    close: () => store.close(),
  };
}
