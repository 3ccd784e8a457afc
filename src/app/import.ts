import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Address, Diagnostic } from '../core/index.js';
import { TendError } from '../core/index.js';
import { closeProviders, observe } from '../engine/index.js';
import { createSpecValidator } from '../intent/index.js';
import type { AppContext } from './context.js';
import type { ImportType, KnownObject } from './import-intent.js';
import { buildImport, importExclusion, objectKey, renderImport } from './import-intent.js';
import { acquireWorkspaceLease } from './lease.js';
import type { WorkspaceSelection } from './workspace.js';
import { loadIntentWithProviders, openWorkspace, rememberWorkspaceName } from './workspace.js';

/** What `import` is asked. */
export interface ImportRequest extends WorkspaceSelection {
  readonly provider: string;
  /** Only these resource types (with or without the provider prefix); all when empty. */
  readonly types: readonly string[];
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
  const { ws, nameSource } = await openWorkspace(ctx, request);
  let lease;
  try {
    lease = await acquireWorkspaceLease(ctx, ws, {
      command: 'tend import',
      waitMs: request.lockTimeoutMs,
    });
    await rememberWorkspaceName(ws, nameSource);
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
    const infos = wanted.length > 0 ? all.filter((i) => wanted.includes(i.name)) : all;

    // What is already declared (and its objects), and what Tend remembers.
    const obs = await observe(ws, { visibilityWindowMs: 10_000, now: ctx.clock.now() });
    const declared = new Set<string>(ws.intent.resources.map((r) => r.address));
    const byAddress = new Map(ws.intent.resources.map((r) => [r.address, r] as const));
    const claimed = new Set<string>();
    const known: KnownObject[] = [];
    for (const [addr, object] of obs.objects) {
      const r = byAddress.get(addr);
      if (!r) continue;
      claimed.add(objectKey(r.type, object.id));
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
    const types: ImportType[] = [];
    const skipped: { type: string; id: string }[] = [];
    // Objects the platform owns (x-tend-import-exclude): never written as intent.
    const excluded: ExcludedObject[] = [];
    for (const info of infos) {
      const type = `${request.provider}.${info.name}`;
      const objects = [];
      for (const object of await provider.list(info.name)) {
        if (claimed.has(objectKey(type, object.id))) {
          skipped.push({ type, id: object.id });
          continue;
        }
        const reason = importExclusion(info, object);
        if (reason !== undefined) {
          excluded.push({ type, id: object.id, reason });
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
      types.push({ type, info, objects });
    }
    const taken = new Set<string>([...declared, ...obs.twin.keys()].filter((a) => !reused.has(a)));
    const { resources, problems } = buildImport({
      types,
      taken,
      known,
      validator: createSpecValidator(),
      names,
    });
    if (resources.length === 0) {
      return { ok: true, file: null, imported: [], skipped, excluded, secrets: [] };
    }

    const now = ctx.clock.now().toISOString();
    const secrets = resources.flatMap((r) => r.secrets);
    const header = [
      `Imported by \`tend import --provider ${request.provider}\` on ${now}: ${resources.length} object${resources.length === 1 ? '' : 's'}.`,
      'Tend adopted these objects (its store remembers each one): `tend plan` shows no change, and',
      'they are managed like objects Tend created. Removing a resource from the intent deletes its',
      'object where the type has no tags, and where it has them once Tend has written its marker.',
      ...(secrets.length > 0
        ? ['', `Secrets are never read back: set ${secrets.join(', ')} before the next apply.`]
        : []),
    ].join('\n');
    writeFileSync(file, renderImport(resources, header));

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
    for (const r of resources) {
      await ws.store.putTwin({
        address: r.address,
        type: r.type,
        objectId: r.objectId,
        fields: r.object.fields,
        stateful: false,
        dependsOn: r.dependsOn,
        observedAt: now,
      });
    }
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
      secrets,
    };
  } finally {
    await lease?.release();
    await ws.close();
  }
}
