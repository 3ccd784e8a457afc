import { describe, expect, it } from 'vitest';
import type {
  Address,
  LifecycleEvaluation,
  ObservedObject,
  Provider,
  RemovedInput,
  ResourceDecl,
  ResourceTypeInfo,
} from '../core/index.js';
import { Redactor, TendError, findReferences } from '../core/index.js';
import type { TwinEntry } from '../store/index.js';
import type { Observation } from './observe.js';
import { planPass } from './planner.js';
import type { Workspace } from './workspace.js';
import { createSendFence } from './send-fence.js';

// `--target`: a plan limited to some resources and what they reference. A hand-written fake provider
// (functions, no mocking library) stands in for the platform; the planner is the real one.

const info = (name: string): ResourceTypeInfo => ({
  name,
  schema: { type: 'object' },
  identity: 'marker',
  idField: 'id',
  createOnly: [],
  outputOnly: ['id'],
  sensitive: [],
  lifecycle: 'platform',
  idempotencyKey: true,
  markerField: 'tags',
});

/** Fields whose change the fake platform says needs a replacement. */
const REPLACE_FIELDS = new Set(['cidr']);

const provider: Provider = {
  name: 'sb',
  describe: () => ({
    types: ['networks', 'instances', 'volumes', 'buckets'].map(info),
    auditFeed: false,
    warnings: [],
  }),
  evaluate: (_type, current, desired): Promise<LifecycleEvaluation> => {
    const changed = Object.keys(desired).filter(
      (k) => JSON.stringify(desired[k]) !== JSON.stringify(current.fields[k]),
    );
    const forced = changed.filter((k) => REPLACE_FIELDS.has(k));
    return Promise.resolve(
      forced.length > 0
        ? { action: 'replace', fields: forced, source: 'platform' }
        : { action: 'update', fields: changed, source: 'platform' },
    );
  },
  list: () => Promise.reject(new Error('the planner never lists')),
  read: () => Promise.reject(new Error('the planner never reads')),
  create: () => Promise.reject(new Error('the planner never mutates')),
  update: () => Promise.reject(new Error('the planner never mutates')),
  delete: () => Promise.reject(new Error('the planner never mutates')),
};

function decl(address: Address, spec: Record<string, unknown>): ResourceDecl {
  const [type, name] = address.split('/') as [string, string];
  return {
    kind: 'Resource',
    address,
    type,
    provider: 'sb',
    resourceType: type.slice(3),
    name,
    spec,
    lifecycle: { stateful: false },
    checks: [],
    dependsOn: [...new Set(findReferences(spec).refs.map((r) => r.target))],
    source: { file: 'intent.yaml', line: 1, column: 1 },
  };
}

const NET = 'sb.networks/main' as Address;
const WEB = 'sb.instances/web' as Address;
const DATA = 'sb.volumes/data' as Address;
const DB = 'sb.instances/db' as Address;
const BUCKET = 'sb.buckets/assets' as Address;
const OLD = 'sb.buckets/old' as Address;
const OLD_CHILD = 'sb.volumes/old-child' as Address;

/** net ← web ← data, net ← db, a lone bucket; old and old-child (which references old) removed. */
function workspace(netCidr: string): Workspace {
  const resources = [
    decl(NET, { name: 'main', cidr: netCidr }),
    decl(WEB, { name: 'web', network_id: '${sb.networks/main.id}' }),
    decl(DATA, { name: 'data', instance_id: '${sb.instances/web.id}' }),
    decl(DB, { name: 'db', network_id: '${sb.networks/main.id}', size: 'large' }),
    decl(BUCKET, { name: 'assets', versioning: true }),
  ];
  const types = new Map<string, ResourceTypeInfo>(
    provider.describe().types.map((t) => [`sb.${t.name}`, t] as const),
  );
  return {
    name: 'w',
    intent: { dir: '/intent', contentHash: 'h', providers: [], resources },
    providers: new Map([['sb', provider]]),
    store: undefined as never,
    env: {},
    secrets: new Redactor(),
    fence: createSendFence(),
    typeOf: (type) => {
      const i = types.get(type);
      if (!i) throw new TendError('provider.unknown_type', type);
      return { provider, info: i };
    },
    close: () => Promise.resolve(),
  };
}

const object = (type: string, id: string, fields: Record<string, unknown>): ObservedObject => ({
  type,
  id,
  fields: { id, ...fields },
});
const removed = (address: Address, dependsOn: Address[] = []): RemovedInput => ({
  address,
  type: address.split('/')[0]!,
  objectId: address.split('/')[1]!,
  stateful: false,
  dependsOn,
});
const twin = (r: RemovedInput): TwinEntry => ({
  address: r.address,
  type: r.type,
  objectId: r.objectId,
  fields: {},
  stateful: false,
  dependsOn: r.dependsOn,
  observedAt: '2026-11-25T00:00:00Z',
});

/** What exists: main (10.0.0.0/16), db drifted (size small), assets drifted, the removed two. */
function observation(): Observation {
  const gone = [removed(OLD), removed(OLD_CHILD, [OLD])];
  return {
    objects: new Map<Address, ObservedObject>([
      [NET, object('networks', 'net-1', { name: 'main', cidr: '10.0.0.0/16' })],
      [DB, object('instances', 'i-db', { name: 'db', network_id: 'net-1', size: 'small' })],
      [BUCKET, object('buckets', 'assets', { name: 'assets', versioning: false })],
      [OLD, object('buckets', 'old', { name: 'old' })],
      [OLD_CHILD, object('volumes', 'old-child', { name: 'old-child' })],
    ]),
    pendingVisibility: new Set(),
    removed: gone,
    orphans: [],
    duplicates: [],
    leftovers: [],
    moves: new Map(),
    adoptions: new Map(),
    conflicts: new Map(),
    failures: [],
    twin: new Map(gone.map((r) => [r.address, twin(r)] as const)),
  };
}

const CASES: {
  name: string;
  reason: string;
  targets: Address[];
  prune?: boolean;
  netCidr?: string;
  want: string[];
  blast?: Record<string, string[]>;
}[] = [
  {
    name: 'no targets',
    reason: 'the whole intent, and the deletes of removed resources',
    targets: [],
    want: [
      `noop ${NET}`,
      `create ${WEB}`,
      `create ${DATA}`,
      `update ${DB}`,
      `update ${BUCKET}`,
      `delete ${OLD_CHILD}`,
      `delete ${OLD}`,
    ],
  },
  {
    name: 'a leaf',
    reason: 'a target comes with everything it references, transitively',
    targets: [DATA],
    want: [`noop ${NET}`, `create ${WEB}`, `create ${DATA}`],
  },
  {
    name: 'a middle resource',
    reason: 'what references the target is not planned (data is left out)',
    targets: [WEB],
    want: [`noop ${NET}`, `create ${WEB}`],
  },
  {
    name: 'an independent resource',
    reason: 'nothing else is planned, not even the removed resources',
    targets: [BUCKET],
    want: [`update ${BUCKET}`],
  },
  {
    name: 'two targets',
    reason: 'the union of both closures, in dependency order',
    targets: [BUCKET, DB],
    want: [`noop ${NET}`, `update ${DB}`, `update ${BUCKET}`],
  },
  {
    name: 'a removed resource',
    reason: 'a delete is planned only when targeted; the blast radius still shows old-child',
    targets: [OLD],
    want: [`delete ${OLD}`],
    blast: { [OLD]: [OLD_CHILD] },
  },
  {
    name: 'a removed resource without prune',
    reason: '--no-prune wins: a target never adds a delete the options rule out',
    targets: [OLD],
    prune: false,
    want: [],
  },
  {
    name: 'a replaced target',
    reason: 'its dependents must move to the new object, so they join the plan with what they read',
    targets: [NET],
    netCidr: '10.9.0.0/16',
    want: [`replace ${NET}`, `create ${WEB}`, `create ${DATA}`, `update ${DB}`],
    blast: { [NET]: [WEB, DB, DATA].sort() },
  },
];

describe('planPass with targets', () => {
  it.each(CASES)('$name: $reason', async (c) => {
    const ws = workspace(c.netCidr ?? '10.0.0.0/16');
    const { plan } = await planPass(ws, observation(), {
      approveDestroy: true,
      prune: c.prune ?? true,
      targets: c.targets,
    });
    expect(plan.steps.map((s) => `${s.kind} ${s.address}`)).toEqual(c.want);
    for (const [address, radius] of Object.entries(c.blast ?? {})) {
      const step = plan.steps.find((s) => s.address === address);
      expect(step && 'blastRadius' in step ? [...step.blastRadius].sort() : undefined).toEqual(
        radius,
      );
    }
    const counted = Object.values(plan.counts).reduce((a, b) => a + b, 0);
    expect(counted).toBe(c.want.length);
  });

  const UNKNOWN: { name: string; reason: string; targets: Address[]; message: string }[] = [
    {
      name: 'a typo',
      reason: 'the near match is named',
      targets: ['sb.network/main'],
      message: '--target sb.network/main: no such resource; did you mean sb.networks/main?',
    },
    {
      name: 'nothing near',
      reason: 'says where Tend looked',
      targets: ['zz.things/x'],
      message:
        '--target zz.things/x: no such resource in the intent or among the objects Tend manages',
    },
    {
      name: 'a bare name',
      reason: 'not an address; the addresses with that name are suggested',
      targets: ['main' as Address],
      message: '--target main: not an address (provider.type/name); did you mean sb.networks/main?',
    },
    {
      name: 'a removed resource misspelt',
      reason: 'remembered resources are candidates too',
      targets: [BUCKET, 'sb.buckets/odl'],
      message: '--target sb.buckets/odl: no such resource; did you mean sb.buckets/old?',
    },
  ];
  it.each(UNKNOWN)('unknown target, $name: $reason', async ({ targets, message }) => {
    const ws = workspace('10.0.0.0/16');
    const err = await planPass(ws, observation(), {
      approveDestroy: false,
      prune: true,
      targets,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TendError);
    expect((err as TendError).code).toBe('plan.unknown_target');
    expect((err as TendError).message).toBe(message);
  });
});
