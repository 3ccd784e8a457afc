import type {
  Address,
  Intent,
  LifecycleEvaluation,
  ObservedObject,
  Provider,
  ResourceDecl,
  ResourceTypeInfo,
} from '../core/index.js';
import { markerTags, Redactor, TendError } from '../core/index.js';
import type { Workspace } from '../engine/index.js';
import { createSendFence } from '../engine/index.js';
import type { Observation } from '../engine/observe.js';
import { deriveTypes, prepareOpenApiDocument } from '../providers/index.js';
import { buildOpenApiDocument } from '../sandbox/index.js';
import type { Store, TwinEntry } from '../store/index.js';

/**
 * The shape of a synthetic plan: of `count` resources, one in ten is a network and the rest are
 * services, each referencing a network (`network_id: ${sb.networks/…id}`). Most already exist and
 * match; a few are missing, drifted, replaced or removed from the intent, so every kind of step and
 * every code path of planning (references, Unknowns, lifecycle evaluation, blast radius) is taken.
 */
export const PLAN_MIX = {
  /** Services with no object yet: create. */
  create: 0.01,
  /** Services whose replicas drifted: update (evaluated by the provider). */
  update: 0.01,
  /** Networks whose create-only cidr changed: replace (the platform says so); their services see an Unknown id. */
  replace: 0.001,
  /** Remembered objects no longer declared: delete (with a blast radius). */
  delete: 0.005,
} as const;

/** A synthetic workspace and what one pass observed, ready for planPass. */
export interface PlanFixture {
  readonly ws: Workspace;
  readonly observation: Observation;
  readonly count: number;
}

const NETWORK_EVERY = 10;

function pad(i: number): string {
  return String(i).padStart(6, '0');
}

/** Whether resource i falls in the first `fraction` of a pseudo-random but deterministic spread. */
function picked(i: number, salt: number, fraction: number): boolean {
  // A multiplicative hash spreads indices evenly without Math.random (the fixture is repeatable).
  const h = (Math.imul(i + salt * 7919, 2654435761) >>> 0) / 4294967296;
  return h < fraction;
}

/** The resource types the sandbox's committed OpenAPI document derives (what a real pass uses). */
export async function sandboxTypeInfos(): Promise<ResourceTypeInfo[]> {
  const doc = await prepareOpenApiDocument(buildOpenApiDocument(), 'sandbox');
  return deriveTypes(doc.document).types.map((t) => t.info);
}

/** A provider that answers from memory; planning only calls `evaluate` (and `normalize`). */
function memoryProvider(infos: readonly ResourceTypeInfo[]): Provider {
  const offline = (): never => {
    throw new TendError('bench.offline', 'the plan benchmark provider sends nothing');
  };
  return {
    name: 'sb',
    describe: () => ({ types: infos, auditFeed: false, warnings: [] }),
    list: offline,
    read: offline,
    create: offline,
    update: offline,
    delete: offline,
    evaluate: (type, current, desired): Promise<LifecycleEvaluation> => {
      // The sandbox's lifecycle rule for these types: a changed cidr cannot change in place.
      if (type === 'networks' && desired['cidr'] !== current.fields['cidr']) {
        return Promise.resolve({
          action: 'replace',
          fields: ['cidr'],
          source: 'platform',
          reason: 'cidr cannot change in place',
        });
      }
      return Promise.resolve({ action: 'update', fields: [], source: 'platform' });
    },
  };
}

/** Builds `count` declared resources, their observed objects and a workspace around them. */
export async function buildPlanFixture(count: number): Promise<PlanFixture> {
  const infos = await sandboxTypeInfos();
  const provider = memoryProvider(infos);
  const byType = new Map<string, { provider: Provider; info: ResourceTypeInfo }>(
    infos.map((info) => [`sb.${info.name}`, { provider, info }]),
  );
  const networks = Math.max(1, Math.ceil(count / NETWORK_EVERY));
  const resources: ResourceDecl[] = [];
  const objects = new Map<Address, ObservedObject>();
  const removed: Observation['removed'] = [];
  const source = { file: 'bench.yaml', line: 1, column: 1 };
  const tags = (address: Address, extra: Record<string, string>) => ({
    ...extra,
    ...markerTags({ workspace: 'bench', address, op: `op-${address}` }),
  });

  for (let i = 0; i < count; i++) {
    const network = i % NETWORK_EVERY === 0;
    const k = network ? i / NETWORK_EVERY : (i % networks) * 1;
    const name = network ? `n-${pad(k)}` : `s-${pad(i)}`;
    const type = network ? 'sb.networks' : 'sb.services';
    const address: Address = `${type}/${name}`;
    const target: Address = `sb.networks/n-${pad(Math.floor(k % networks))}`;
    const spec: Record<string, unknown> = network
      ? {
          name: `net-${pad(k)}`,
          cidr: `10.${(k >> 8) & 255}.${k & 255}.0/24`,
          tags: { team: `t${k % 10}` },
        }
      : {
          name: `svc-${pad(i)}`,
          image: 'nginx:1.27',
          replicas: 2,
          network_id: `\${${target}.id}`,
          tags: { team: `t${i % 10}`, tier: 'web' },
        };
    resources.push({
      kind: 'Resource',
      address,
      type,
      provider: 'sb',
      resourceType: network ? 'networks' : 'services',
      name,
      spec,
      lifecycle: { stateful: false },
      checks: [],
      dependsOn: network ? [] : [target],
      source,
    });
    if (!network && picked(i, 1, PLAN_MIX.create)) continue;
    const id = network
      ? `net-${(0x10000000 + k).toString(16)}`
      : `svc-${(0x10000000 + i).toString(16)}`;
    const fields: Record<string, unknown> = network
      ? {
          id,
          name: spec['name'],
          cidr: picked(k, 2, PLAN_MIX.replace * NETWORK_EVERY) ? '172.16.0.0/16' : spec['cidr'],
          tags: tags(address, spec['tags'] as Record<string, string>),
          status: 'available',
          created_at: '2026-01-01T00:00:00.000Z',
        }
      : {
          id,
          name: spec['name'],
          image: spec['image'],
          replicas: picked(i, 3, PLAN_MIX.update) ? 5 : 2,
          network_id: `net-${(0x10000000 + Math.floor(k % networks)).toString(16)}`,
          tags: tags(address, spec['tags'] as Record<string, string>),
          status: 'running',
          created_at: '2026-01-01T00:00:00.000Z',
        };
    objects.set(address, {
      type: network ? 'networks' : 'services',
      id,
      fields,
      marker: { workspace: 'bench', address, op: `op-${address}` },
    });
  }
  const removedCount = Math.round(count * PLAN_MIX.delete);
  for (let j = 0; j < removedCount; j++) {
    const address: Address = `sb.services/gone-${pad(j)}`;
    removed.push({
      address,
      type: 'sb.services',
      objectId: `svc-${(0x20000000 + j).toString(16)}`,
      stateful: false,
      dependsOn: [`sb.networks/n-${pad(j % networks)}`],
    });
  }

  const intent: Intent = { dir: '/bench', contentHash: 'bench', providers: [], resources };
  const twin = new Map<Address, TwinEntry>();
  const ws: Workspace = {
    name: 'bench',
    intent,
    providers: new Map([['sb', provider]]),
    // Planning never touches the store; a pass that did would fail loudly here.
    store: new Proxy({} as Store, {
      get: () => () => Promise.reject(new Error('the plan benchmark has no store')),
    }),
    env: {},
    secrets: new Redactor(),
    fence: createSendFence(),
    typeOf(type: string) {
      const found = byType.get(type);
      if (!found) throw new TendError('provider.unknown_type', `unknown resource type ${type}`);
      return found;
    },
    close: () => Promise.resolve(),
  };
  // Asserted rather than annotated: the observation grows fields as the engine learns more (empty
  // here), and the benchmark should not break each time one is added.
  const observation = {
    objects,
    pendingVisibility: new Set<Address>(),
    removed,
    orphans: [],
    duplicates: [],
    moves: new Map(),
    adoptions: new Map(),
    conflicts: new Map(),
    leftovers: [],
    failures: [],
    twin,
  } as Observation;
  return { ws, observation, count };
}
