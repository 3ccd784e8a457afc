import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type {
  Address,
  Diagnostic,
  ObservedObject,
  Provider,
  ResourceDecl,
  ResourceTypeInfo,
} from '../core/index.js';
import { TendError } from '../core/index.js';
import type { Workspace } from '../engine/index.js';
import { closeProviders, observe, Recorder, tendActor } from '../engine/index.js';
import { createSpecValidator } from '../intent/index.js';
import type { AppContext } from './context.js';
import type { ImportCandidate, ImportType, KnownObject } from './import-intent.js';
import {
  buildImport,
  globMatcher,
  importExclusion,
  matchTexts,
  objectKey,
  renderImport,
} from './import-intent.js';
import type { WorkspaceSelection } from './workspace.js';
import { withWorkspace } from './with-workspace.js';
import { loadIntentWithProviders } from './workspace.js';

/** What `import` is asked. */
export interface ImportRequest extends WorkspaceSelection {
  readonly provider: string;
  /** Only these resource types (with or without the provider prefix); all when empty. */
  readonly types: readonly string[];
  /**
   * Only objects one of these globs matches (`*`, `?`): on the address the import gives the object,
   * its name there, its id, or its natural key or `name` as the platform reports it. All when empty.
   */
  readonly match?: readonly string[];
  /**
   * Only objects that live under this declared resource (`pdns.zones/example`): its children, and
   * theirs. Its object must exist.
   */
  readonly under?: string;
  /** The file to write (default `<dir>/<provider>-import.yaml`); never overwritten. */
  readonly out?: string;
  readonly lockTimeoutMs: number;
}

/** An object the platform owns that import left out, and why. */
export interface ExcludedObject {
  readonly type: string;
  readonly id: string;
  readonly reason: string;
}

/** What `import` did. */
export type ImportReport =
  | {
      readonly ok: true;
      /** The file written, or null when there was nothing to import. */
      readonly file: string | null;
      readonly imported: readonly {
        address: Address;
        objectId: string;
        dependsOn: readonly Address[];
      }[];
      readonly skipped: readonly { type: string; id: string }[];
      readonly excluded: readonly ExcludedObject[];
      /** Objects of the listed types that `--match` or `--under` left out. */
      readonly outOfScope: number;
      /** Environment variables to set before the next apply (secrets are never read back). */
      readonly secrets: readonly string[];
    }
  | {
      /** The file was written but the directory no longer validates: nothing was adopted. */
      readonly ok: false;
      readonly file: string;
      readonly message: string;
      readonly diagnostics: readonly Diagnostic[];
      readonly problems: readonly { address: Address; message: string }[];
    };

/**
 * Writes Resource documents for a provider's objects that the intent does not declare yet, checks
 * that the directory still validates, and adopts the objects (records them in the store, as if Tend
 * had created them) so that `tend plan` is empty. Holds the workspace lease: it writes the store.
 */
export async function importObjects(
  ctx: AppContext,
  request: ImportRequest,
): Promise<ImportReport> {
  const dir = resolve(request.dir);
  const file = resolve(request.out ?? join(dir, `${request.provider}-import.yaml`));
  if (existsSync(file)) {
    throw new TendError('import.exists', `${file} already exists; import never overwrites`, {
      hint: 'choose another file with --out, or remove it',
    });
  }
  const lease = { command: 'tend import', waitMs: request.lockTimeoutMs };
  return withWorkspace(ctx, request, { lease }, async ({ ws }) => {
    const scope = importScope(ws, request, dir);
    const found = await findCandidates(ctx, ws, request, scope);
    const { resources, problems } = buildImport({
      types: found.types,
      taken: found.taken,
      known: found.known,
      validator: createSpecValidator(),
      names: found.names,
      ...(scope.matchers.length > 0
        ? {
            keep: (c: ImportCandidate) => {
              const ok = scope.matches([c.address, c.name, ...matchTexts(c.info, c.object)]);
              if (!ok) found.outOfScope++;
              return ok;
            },
          }
        : {}),
    });
    const { skipped, excluded, outOfScope } = found;
    if (resources.length === 0) {
      return { ok: true, file: null, imported: [], skipped, excluded, outOfScope, secrets: [] };
    }
    const now = ctx.clock.now().toISOString();
    const secrets = resources.flatMap((r) => r.secrets);
    writeFileSync(file, renderImport(resources, importHeader(request, scope, resources, now)));

    // The written intent must validate (with the rest of the directory) before anything is adopted.
    const check = await loadIntentWithProviders(ctx, dir, ws.name);
    await closeProviders(check.providers.values());
    const errors = check.diagnostics.filter((d) => d.severity === 'error');
    if (!check.intent || errors.length > 0) {
      return {
        ok: false,
        file,
        message: `${file} was written but the intent does not validate; nothing was adopted (fix or remove the file)`,
        diagnostics: check.diagnostics,
        problems,
      };
    }
    await adoptImported(ctx, ws, resources, now);
    return {
      ok: true,
      file,
      imported: resources.map((r) => ({
        address: r.address,
        objectId: r.objectId,
        dependsOn: r.dependsOn,
      })),
      skipped,
      excluded,
      outOfScope,
      secrets,
    };
  });
}

/** What an import reads: the provider, its types asked for, the `--match` and `--under` scopes. */
interface ImportScope {
  readonly provider: Provider;
  /** The type names asked for (`--type`, without the provider prefix). */
  readonly wanted: readonly string[];
  /** The types read: those asked for, or all, that live under `--under` when it is given. */
  readonly infos: readonly ResourceTypeInfo[];
  readonly matchers: readonly ((text: string) => boolean)[];
  /** Whether a --match pattern matches one of the texts (all pass without --match). */
  readonly matches: (texts: readonly string[]) => boolean;
  readonly under: UnderScope | undefined;
}

/** Step 1: checks the request against the workspace's providers and intent (every mistake named). */
function importScope(ws: Workspace, request: ImportRequest, dir: string): ImportScope {
  const provider = ws.providers.get(request.provider);
  if (!provider) {
    const names = [...ws.providers.keys()];
    throw new TendError(
      'import.unknown_provider',
      `no provider named ${request.provider} in ${dir}; declared: ${names.join(', ') || '(none)'}`,
      { hint: 'add a kind: Provider document to the directory, or fix --provider' },
    );
  }
  const all = provider.describe().types;
  const wanted = request.types.map((t) =>
    t.startsWith(`${request.provider}.`) ? t.slice(request.provider.length + 1) : t,
  );
  for (const t of wanted) {
    if (!all.some((i) => i.name === t)) {
      throw new TendError(
        'import.unknown_type',
        `provider ${request.provider} has no resource type ${t}; its types: ${all.map((i) => i.name).join(', ')}`,
      );
    }
  }
  const matchers = (request.match ?? []).map((m) => {
    if (m.trim() === '') {
      throw new TendError('import.bad_match', '--match needs a pattern, got an empty one', {
        hint: 'e.g. --match "*.example.org." (* for any characters, ? for one)',
      });
    }
    return globMatcher(m);
  });
  const under =
    request.under === undefined
      ? undefined
      : underScope(request.under, request.provider, all, ws.intent.resources, dir);
  if (under) {
    for (const t of wanted) {
      if (!under.fields.has(t)) {
        throw new TendError(
          'import.bad_scope',
          `--type ${request.provider}.${t} does not live under ${under.address}: nothing of it can be its child; types under it: ${[...under.fields.keys()].map((n) => `${request.provider}.${n}`).join(', ')}`,
          { hint: 'drop --type, or pick one of the types under it' },
        );
      }
    }
  }
  const infos = (wanted.length > 0 ? all.filter((i) => wanted.includes(i.name)) : all).filter(
    (i) => under === undefined || under.fields.has(i.name),
  );
  const matches = (texts: readonly string[]): boolean =>
    matchers.length === 0 || matchers.some((m) => texts.some((t) => m(t)));
  return { provider, wanted, infos, matchers, matches, under };
}

/** What step 2 found on the platform, for `buildImport`. */
interface Candidates {
  readonly types: ImportType[];
  readonly skipped: { type: string; id: string }[];
  /** Objects the platform owns (x-tend-import-exclude): never written as intent. */
  readonly excluded: ExcludedObject[];
  /** Objects of the types read that a scope left out (buildImport's `keep` adds to it). */
  outOfScope: number;
  readonly known: KnownObject[];
  /** Names to reuse, by object key: an address Tend remembers (or marked) and no longer declares. */
  readonly names: Map<string, string>;
  /** Addresses imported names must avoid. */
  readonly taken: Set<string>;
}

/**
 * Step 2: observes the workspace (what is declared and its objects, what Tend remembers) and lists
 * the provider's objects of the types read: those not declared yet are candidates; declared ones are
 * skipped, platform-owned ones excluded, out-of-scope ones counted.
 */
async function findCandidates(
  ctx: AppContext,
  ws: Workspace,
  request: ImportRequest,
  scope: ImportScope,
): Promise<Candidates> {
  const { under, matches } = scope;
  const obs = await observe(ws, { now: ctx.clock.now() });
  const parentId = under === undefined ? undefined : obs.objects.get(under.address)?.id;
  if (under !== undefined && parentId === undefined) {
    throw new TendError(
      'import.bad_scope',
      `--under ${under.address}: its object does not exist on ${request.provider} yet, so nothing lives under it`,
      { hint: `apply the intent first (tend apply ${request.dir}), then import what is under it` },
    );
  }
  /** Whether an object is in the --under scope (its field naming the parent holds the parent's id). */
  const isUnder = (info: ResourceTypeInfo, object: ObservedObject): boolean => {
    if (under === undefined) return true;
    const field = under.fields.get(info.name);
    return field !== undefined && object.fields[field] === parentId;
  };
  const declared = new Set<string>(ws.intent.resources.map((r) => r.address));
  const byAddress = new Map(ws.intent.resources.map((r) => [r.address, r] as const));
  const matched = new Set<string>();
  const known: KnownObject[] = [];
  for (const [addr, object] of obs.objects) {
    const r = byAddress.get(addr);
    if (!r) continue;
    matched.add(objectKey(r.type, object.id));
    known.push({ address: addr, info: ws.typeOf(r.type).info, object });
  }
  // An object Tend remembers (or marked) under an address no longer declared gets that name back.
  const names = new Map<string, string>();
  const reused = new Set<string>();
  for (const t of obs.twin.values()) {
    if (declared.has(t.address)) continue;
    names.set(objectKey(t.type, t.objectId), t.address.slice(t.address.indexOf('/') + 1));
    reused.add(t.address);
  }
  const found: Candidates = {
    types: [],
    skipped: [],
    excluded: [],
    outOfScope: 0,
    known,
    names,
    taken: new Set(),
  };
  for (const info of scope.infos) {
    const type = `${request.provider}.${info.name}`;
    const objects = [];
    for (const object of await scope.provider.list(info.name)) {
      if (!isUnder(info, object)) {
        found.outOfScope++;
        continue;
      }
      if (matched.has(objectKey(type, object.id))) {
        if (matches(matchTexts(info, object))) found.skipped.push({ type, id: object.id });
        continue;
      }
      const reason = importExclusion(info, object);
      if (reason !== undefined) {
        if (matches(matchTexts(info, object))) found.excluded.push({ type, id: object.id, reason });
        continue;
      }
      const marked = object.marker;
      if (marked?.workspace === ws.name && marked.address.startsWith(`${type}/`)) {
        const name = marked.address.slice(type.length + 1);
        if (!declared.has(marked.address) && !names.has(objectKey(type, object.id))) {
          names.set(objectKey(type, object.id), name);
          reused.add(marked.address);
        }
      }
      objects.push(object);
    }
    found.types.push({ type, info, objects });
  }
  for (const a of [...declared, ...obs.twin.keys()]) if (!reused.has(a)) found.taken.add(a);
  return found;
}

/** Step 3: the comment at the top of the written file: the command, and what to do next. */
function importHeader(
  request: ImportRequest,
  scope: ImportScope,
  resources: readonly { secrets: readonly string[] }[],
  now: string,
): string {
  const secrets = resources.flatMap((r) => r.secrets);
  const command = [
    `tend import --provider ${request.provider}`,
    ...scope.wanted.map((t) => `--type ${t}`),
    ...(request.match ?? []).map((m) => `--match '${m}'`),
    ...(request.under !== undefined ? [`--under ${request.under}`] : []),
  ].join(' ');
  return [
    `Imported by \`${command}\` on ${now}: ${resources.length} object${resources.length === 1 ? '' : 's'}.`,
    'Tend adopted these objects (its store remembers each one): `tend plan` shows no change, and',
    'they are managed like objects Tend created. Removing a resource from the intent deletes its',
    'object where the type has no tags, and where it has them once Tend has written its marker.',
    ...(secrets.length > 0
      ? ['', `Secrets are never read back: set ${secrets.join(', ')} before the next apply.`]
      : []),
  ].join('\n');
}

/**
 * Step 4, the twin write: records each imported object in the store as if Tend had created it
 * (adoption), so that `tend plan` is empty. The only write of an import besides the file.
 */
async function adoptImported(
  ctx: AppContext,
  ws: Workspace,
  resources: ReturnType<typeof buildImport>['resources'],
  now: string,
): Promise<void> {
  const recorder = new Recorder(ws, tendActor('import'), ctx.clock, () => {});
  for (const r of resources) {
    await recorder.recordImported({
      address: r.address,
      type: r.type,
      objectId: r.objectId,
      fields: r.object.fields,
      stateful: false,
      dependsOn: r.dependsOn,
      observedAt: now,
    });
  }
}

/** What `--under` selects: the parent's address, and per type under it the field naming the parent. */
interface UnderScope {
  readonly address: Address;
  /** Type name → the field of its objects holding the parent's id (its children's parent field). */
  readonly fields: ReadonlyMap<string, string>;
}

/**
 * Checks `--under <address>` against the provider's types and the declared resources, and finds the
 * types that live under the parent: its children, and theirs (which carry the parent's field too).
 * Every wrong address is refused with what would be right.
 */
export function underScope(
  under: string,
  provider: string,
  types: readonly ResourceTypeInfo[],
  declared: readonly ResourceDecl[],
  dir: string,
): UnderScope {
  const m = /^([^./]+)\.([^/]+)\/(.+)$/.exec(under);
  if (!m) {
    throw new TendError(
      'import.bad_scope',
      `--under takes the address of a declared resource, <provider>.<type>/<name>, not "${under}"`,
      { hint: `e.g. --under ${provider}.zones/example` },
    );
  }
  const [, p, typeName] = m as unknown as [string, string, string, string];
  if (p !== provider) {
    throw new TendError(
      'import.bad_scope',
      `--under ${under} is a resource of provider ${p}, but --provider is ${provider}`,
      { hint: `import from ${p} with --provider ${p}, or name a ${provider} resource` },
    );
  }
  const fields = new Map<string, string>();
  const byName = new Map(types.map((t) => [t.name, t] as const));
  for (const t of types) {
    // Walk up from t to the parent type: the last step's field names the parent.
    let cur: ResourceTypeInfo | undefined = t;
    for (let depth = 0; cur?.parent !== undefined && depth < 16; depth++) {
      if (cur.parent.type === typeName) {
        fields.set(t.name, cur.parent.field);
        break;
      }
      cur = byName.get(cur.parent.type);
    }
  }
  if (!byName.has(typeName)) {
    throw new TendError(
      'import.bad_scope',
      `--under ${under}: provider ${provider} has no resource type ${typeName}; its types: ${types.map((t) => t.name).join(', ')}`,
    );
  }
  if (fields.size === 0) {
    const nested = types
      .filter((t) => t.parent !== undefined)
      .map((t) => `${t.name} (under ${t.parent!.type})`);
    throw new TendError(
      'import.bad_scope',
      `--under ${under}: nothing of ${provider} lives under a ${typeName} object; types with a parent: ${nested.join(', ') || '(none)'}`,
      { hint: 'import it with --type and --match instead' },
    );
  }
  if (!declared.some((r) => r.address === under)) {
    const same = declared.filter((r) => r.type === `${provider}.${typeName}`).map((r) => r.address);
    throw new TendError(
      'import.bad_scope',
      `--under ${under}: no such resource is declared in ${dir}${same.length > 0 ? `; declared ${provider}.${typeName} resources: ${same.join(', ')}` : ''}`,
      {
        hint: `import the parent first (tend import --provider ${provider} --type ${typeName} --match <its name>), then what lives under it`,
      },
    );
  }
  return { address: under as Address, fields };
}
