import { access, mkdir, writeFile } from 'node:fs/promises';
import { dirname, extname, join } from 'node:path';
import type {
  Diagnostic,
  Intent,
  Provider,
  ProviderDecl,
  ResourceDecl,
  ResourceTypeInfo,
} from '../core/index.js';
import { TendError, toTendError } from '../core/index.js';
import { loadIntent } from '../intent/index.js';
import { loadOpenApiProvider } from '../providers/index.js';
import type { Store } from '../store/index.js';
import { openStore } from '../store/index.js';
import { readSecret } from './secrets.js';

/** Everything a pass needs: the validated intent, a provider per declaration, and the store. */
export interface Workspace {
  /** Name carried in ownership markers; several workspaces may share one platform. */
  readonly name: string;
  readonly intent: Intent;
  readonly providers: ReadonlyMap<string, Provider>;
  readonly store: Store;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The provider and type info of a resource type `provider.resourceType`. */
  typeOf(type: string): { provider: Provider; info: ResourceTypeInfo };
  close(): Promise<void>;
}

/** Options for opening a workspace. */
export interface WorkspaceOptions {
  readonly dir: string;
  /** Store location; default `<dir>/.tend/tend.db`. */
  readonly store?: string;
  readonly name?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Loads providers and validates intent without opening a store (what `tend validate` needs). */
export async function loadWorkspaceIntent(
  dir: string,
  name: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<{ intent?: Intent; providers: Map<string, Provider>; diagnostics: Diagnostic[] }> {
  const providers = new Map<string, Provider>();
  const describe = async (decl: ProviderDecl) => {
    try {
      const provider = await connectProvider(decl, name, env, dir);
      providers.set(decl.name, provider);
      const description = provider.describe();
      return description;
    } catch (e) {
      const err = toTendError(e, 'provider.load');
      const d: Diagnostic = {
        code: err.code,
        severity: 'error',
        message: `provider ${decl.name}: ${err.message}`,
        file: decl.source.file,
        line: decl.source.line,
        column: decl.source.column,
        ...(err.hint ? { hint: err.hint } : {}),
      };
      return d;
    }
  };
  const { intent, diagnostics } = await loadIntent(dir, { describe, env });
  return intent ? { intent, providers, diagnostics } : { providers, diagnostics };
}

async function connectProvider(
  decl: ProviderDecl,
  workspace: string,
  env: Readonly<Record<string, string | undefined>>,
  dir: string,
): Promise<Provider> {
  const auth = decl.auth
    ? {
        header: decl.auth.header,
        value: (decl.auth.prefix ?? '') + readSecret(decl.auth, env, dir),
      }
    : undefined;
  const spec = await cachedSpec(decl, dir, auth);
  return loadOpenApiProvider({
    name: decl.name,
    spec,
    ...(decl.overlay ? { overlay: decl.overlay } : {}),
    endpoint: decl.endpoint,
    workspace,
    ...(auth ? { auth } : {}),
    concurrency: decl.concurrency,
    rateLimit: decl.rateLimit,
    timeoutMs: decl.timeoutMs,
  });
}

/**
 * A document served by the platform itself is kept in `<dir>/.tend/cache/`, so that Tend can still
 * load its intent (and `tend status` can say what is wrong) while the platform is down. Returns the
 * location to load: the fresh copy when the platform answers, else the cached one.
 */
async function cachedSpec(
  decl: ProviderDecl,
  dir: string,
  auth: { header: string; value: string } | undefined,
): Promise<string> {
  if (!/^https?:\/\//.test(decl.spec)) return decl.spec;
  const file = join(
    dir,
    '.tend',
    'cache',
    `${decl.name}.openapi${extname(new URL(decl.spec).pathname) || '.json'}`,
  );
  try {
    const sameOrigin = new URL(decl.spec).origin === new URL(decl.endpoint).origin;
    const res = await fetch(decl.spec, {
      headers: sameOrigin && auth ? { [auth.header]: auth.value } : {},
      signal: AbortSignal.timeout(decl.timeoutMs),
    });
    if (!res.ok) return decl.spec; // let the loader report the status the way it does
    const text = await res.text();
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, text);
    return file;
  } catch (e) {
    if (await exists(file)) return file;
    throw new TendError(
      'provider.spec_unreachable',
      `cannot fetch ${decl.spec}: ${toTendError(e).message}`,
      {
        hint: 'is the platform up? Tend keeps a copy of a served document after the first successful load',
      },
    );
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** Thrown by openWorkspace when intent has errors; carries every diagnostic. */
export class IntentError extends TendError {
  readonly diagnostics: readonly Diagnostic[];
  constructor(diagnostics: readonly Diagnostic[]) {
    const n = diagnostics.filter((d) => d.severity === 'error').length;
    super('intent.invalid', `intent has ${n} error${n === 1 ? '' : 's'}`, { phase: 'load' });
    this.diagnostics = diagnostics;
  }
}

/** The default store location for an intent directory. */
export function defaultStorePath(dir: string): string {
  return join(dir, '.tend', 'tend.db');
}

/** Validates the intent, connects providers and opens the store. Throws IntentError on bad intent. */
export async function openWorkspace(options: WorkspaceOptions): Promise<Workspace> {
  const env = options.env ?? process.env;
  const name = options.name ?? env['TEND_WORKSPACE'] ?? 'default';
  const { intent, providers, diagnostics } = await loadWorkspaceIntent(options.dir, name, env);
  if (!intent) throw new IntentError(diagnostics);
  const store = await openStore(options.store ?? defaultStorePath(options.dir));
  const infos = new Map<string, { provider: Provider; info: ResourceTypeInfo }>();
  for (const [pname, provider] of providers) {
    for (const info of provider.describe().types)
      infos.set(`${pname}.${info.name}`, { provider, info });
  }
  return {
    name,
    intent,
    providers,
    store,
    env,
    typeOf(type: string) {
      const found = infos.get(type);
      if (!found) throw new TendError('provider.unknown_type', `unknown resource type ${type}`);
      return found;
    },
    close: () => store.close(),
  };
}

/** The declared resources by address. */
export function declaredByAddress(intent: Intent): Map<string, ResourceDecl> {
  return new Map(intent.resources.map((r) => [r.address, r]));
}
