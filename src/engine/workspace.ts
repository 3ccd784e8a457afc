import type {
  IntentOrigin,
  Address,
  DependencyGraph,
  Intent,
  Provider,
  ResourceDecl,
  ResourceTypeInfo,
  SecretRegistry,
} from '../core/index.js';
import { Redactor, TendError, topoOrder } from '../core/index.js';
import type { SqlRunner } from '../checks/index.js';
import { isSecretRef } from '../intent/index.js';
import type { Store } from '../store/index.js';
import type { SendFence } from './send-fence.js';
import { createSendFence, fencedProvider } from './send-fence.js';

/**
 * Everything a pass needs: the validated intent, a provider per declaration, and the store. Built by
 * the composition root (`src/app`), which owns how providers are connected and stores opened; the
 * engine only uses what it is handed.
 */
export interface Workspace {
  /** Name carried in ownership markers; several workspaces may share one platform. */
  readonly name: string;
  readonly intent: Intent;
  readonly providers: ReadonlyMap<string, Provider>;
  readonly store: Store;
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * Where every secret the pass resolves (secret references read at send time, secret fields a
   * platform returns) is registered: the process's redactor, which every output passes through.
   */
  readonly secrets: SecretRegistry;
  /** Runs the queries of `sql` checks; without one they fail saying so. */
  readonly sql?: SqlRunner;
  /** The User-Agent of the requests `http` checks send (Tend's version and this process). */
  readonly userAgent?: string;
  /** The provider and type info of a resource type `provider.resourceType`. */
  typeOf(type: string): { provider: Provider; info: ResourceTypeInfo };
  /**
   * Passed by every mutation right before it is sent: the lease holder installs its check here
   * (send-fence.ts). `providers` and `typeOf` hand out providers that pass it.
   */
  readonly fence: SendFence;
  /**
   * The commit the intent was read from (a git workspace): every ledger entry a pass of this
   * workspace writes names it. Absent for an intent read from a directory.
   */
  readonly origin?: IntentOrigin;
  /** Closes the providers and the store. */
  close(): Promise<void>;
}

/** The parts a workspace is made of. */
export interface WorkspaceParts {
  readonly name: string;
  readonly intent: Intent;
  readonly providers: ReadonlyMap<string, Provider>;
  readonly store: Store;
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * The process's redactor (the composition root passes its own). Without one, a private registry:
   * for tests and benchmarks that print and store nothing a person reads.
   */
  readonly secrets?: SecretRegistry;
  /** Runs the queries of `sql` checks (the application layer's, over real connections). */
  readonly sql?: SqlRunner;
  /** The User-Agent of the requests `http` checks send. */
  readonly userAgent?: string;
  /** Closes the store along with the providers (default true). */
  readonly ownsStore?: boolean;
  /**
   * The send fence to use (default: a new one). A workspace made again on the same store and lease —
   * the intent of a run reloaded — passes the one in force, so the lease's check keeps guarding it.
   */
  readonly fence?: SendFence;
  /** The commit the intent was read from (`Workspace.origin`). */
  readonly origin?: IntentOrigin;
}

/** Assembles a workspace from connected providers and an open store. */
export function createWorkspace(parts: WorkspaceParts): Workspace {
  const fence = parts.fence ?? createSendFence();
  const providers = new Map<string, Provider>();
  const infos = new Map<string, { provider: Provider; info: ResourceTypeInfo }>();
  for (const [pname, unfenced] of parts.providers) {
    const provider = fencedProvider(unfenced, fence);
    providers.set(pname, provider);
    for (const info of unfenced.describe().types)
      infos.set(`${pname}.${info.name}`, { provider, info });
  }
  return {
    name: parts.name,
    intent: parts.intent,
    providers,
    fence,
    store: parts.store,
    env: parts.env,
    secrets: parts.secrets ?? new Redactor(),
    ...(parts.sql ? { sql: parts.sql } : {}),
    ...(parts.userAgent !== undefined ? { userAgent: parts.userAgent } : {}),
    ...(parts.origin ? { origin: parts.origin } : {}),
    typeOf(type: string) {
      const found = infos.get(type);
      if (!found) throw new TendError('provider.unknown_type', `unknown resource type ${type}`);
      return found;
    },
    async close() {
      await closeProviders(parts.providers.values());
      if (parts.ownsStore !== false) await parts.store.close();
    },
  };
}

const declaredByIntent = new WeakMap<Intent, ReadonlyMap<string, ResourceDecl>>();
const graphByIntent = new WeakMap<Intent, { graph: DependencyGraph; order: readonly Address[] }>();

/**
 * The declared resources by address, built once per intent (an intent is immutable; a changed one is
 * a new object): observing, planning and executing a pass all look resources up by address.
 */
export function declaredIndex(intent: Intent): ReadonlyMap<string, ResourceDecl> {
  let declared = declaredByIntent.get(intent);
  if (!declared) {
    declared = declaredByAddress(intent);
    declaredByIntent.set(intent, declared);
  }
  return declared;
}

/**
 * The intent's dependency graph and its order (every resource after what it references), computed
 * once per intent. Cycles are refused when intent is loaded; an intent built otherwise with one keeps
 * the order it was declared in.
 */
export function intentGraph(intent: Intent): {
  graph: DependencyGraph;
  order: readonly Address[];
} {
  let found = graphByIntent.get(intent);
  if (!found) {
    const graph = new Map(intent.resources.map((r) => [r.address, r.dependsOn] as const));
    const ordered = topoOrder(graph);
    found = { graph, order: ordered.kind === 'ordered' ? ordered.order : [...graph.keys()] };
    graphByIntent.set(intent, found);
  }
  return found;
}

/**
 * The fields of an object of `type` at `address` that are secrets: the ones its type marks
 * sensitive, and the ones the declared resource fills from a secret reference (a `secrets:` entry
 * or a sensitive field). Their values are never stored or compared (`redact`).
 */
export function secretFields(ws: Workspace, type: string, address?: string): readonly string[] {
  const { sensitive } = ws.typeOf(type).info;
  if (address === undefined) return sensitive;
  const decl = declaredIndex(ws.intent).get(address);
  if (!decl) return sensitive;
  // Asked for every resource in every pass: the spec's secret references are found once per
  // declaration (declarations are frozen data).
  let refs = secretRefFields.get(decl);
  if (!refs) {
    refs = Object.keys(decl.spec).filter((k) => isSecretRef(decl.spec[k]));
    secretRefFields.set(decl, refs);
  }
  if (refs.length === 0) return sensitive;
  const fromRefs = refs.filter((k) => !sensitive.includes(k));
  return fromRefs.length === 0 ? sensitive : [...sensitive, ...fromRefs];
}

/** Per declaration: the top-level spec fields that are secret references. */
const secretRefFields = new WeakMap<ResourceDecl, readonly string[]>();

/** Closes providers that hold resources (connections, timers); errors are ignored. */
export async function closeProviders(providers: Iterable<Provider>): Promise<void> {
  await Promise.allSettled([...providers].map(async (p) => p.close?.()));
}

/** The declared resources by address. */
export function declaredByAddress(intent: Intent): Map<string, ResourceDecl> {
  return new Map(intent.resources.map((r) => [r.address, r]));
}
