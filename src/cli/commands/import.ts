import type { Command } from 'commander';
import { existsSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { TendError } from '../../core/index.js';
import {
  IntentError,
  loadWorkspaceIntent,
  observe,
  openWorkspace,
  systemClock,
} from '../../engine/index.js';
import { createSpecValidator } from '../../intent/index.js';
import type { CommonOptions, Output } from '../common.js';
import { fail, output, printDiagnostics, workspaceOptions } from '../common.js';
import { EXIT } from '../exit-codes.js';
import type { ImportType, KnownObject } from '../import-intent.js';
import { buildImport, importExclusion, objectKey, renderImport } from '../import-intent.js';

interface ImportOptions extends CommonOptions {
  provider: string;
  type?: string[];
  out?: string;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), ...value.split(',').filter((v) => v !== '')];
}

/**
 * `tend import <dir> --provider <name>`: writes Resource documents for the provider's objects that
 * the intent does not declare yet, checks that the directory still validates, and adopts the
 * objects (records them in the store, as if Tend had created them) so that `tend plan` is empty.
 */
export function registerImportCommand(program: Command): void {
  program
    .command('import')
    .description(
      'write intent for objects that already exist on a platform and adopt them (plan is then empty)',
    )
    .argument('<dir>', 'intent directory holding the Provider document')
    .requiredOption('--provider <name>', 'the provider whose objects to import')
    .option(
      '--type <type>',
      'only this resource type (repeatable, or comma-separated; default: all)',
      collect,
    )
    .option(
      '--out <file>',
      'file to write (default <dir>/<provider>-import.yaml); never overwritten',
    )
    .option('--json', 'machine-readable output')
    .option('--store <path>', 'store location (default <dir>/.tend/tend.db)')
    .option('--workspace <name>', 'workspace name carried in ownership markers')
    .action(async (dir: string, o: ImportOptions) => {
      const out = output(o.json);
      try {
        const opts = workspaceOptions(dir, o);
        const file = resolve(o.out ?? join(opts.dir, `${o.provider}-import.yaml`));
        if (existsSync(file)) {
          throw new TendError('import.exists', `${file} already exists; import never overwrites`, {
            hint: 'choose another file with --out, or remove it',
          });
        }
        const ws = await openWorkspace(opts);
        try {
          const provider = ws.providers.get(o.provider);
          if (!provider) {
            const names = [...ws.providers.keys()];
            throw new TendError(
              'import.unknown_provider',
              `no provider named ${o.provider} in ${opts.dir}; declared: ${names.join(', ') || '(none)'}`,
              { hint: 'add a kind: Provider document to the directory, or fix --provider' },
            );
          }
          const all = provider.describe().types;
          const wanted = (o.type ?? []).map((t) =>
            t.startsWith(`${o.provider}.`) ? t.slice(o.provider.length + 1) : t,
          );
          for (const t of wanted) {
            if (!all.some((i) => i.name === t)) {
              throw new TendError(
                'import.unknown_type',
                `provider ${o.provider} has no resource type ${t}; its types: ${all.map((i) => i.name).join(', ')}`,
              );
            }
          }
          const infos = wanted.length > 0 ? all.filter((i) => wanted.includes(i.name)) : all;

          // What is already declared (and its objects), and what Tend remembers.
          const obs = await observe(ws, { visibilityWindowMs: 10_000, now: systemClock.now() });
          const declared = new Set<string>(ws.intent.resources.map((r) => r.address));
          const claimed = new Set<string>();
          const known: KnownObject[] = [];
          for (const [addr, object] of obs.objects) {
            const r = ws.intent.resources.find((d) => d.address === addr);
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
          const excluded: { type: string; id: string; reason: string }[] = [];
          for (const info of infos) {
            const type = `${o.provider}.${info.name}`;
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
          const taken = new Set<string>(
            [...declared, ...obs.twin.keys()].filter((a) => !reused.has(a)),
          );
          const { resources, problems } = buildImport({
            types,
            taken,
            known,
            validator: createSpecValidator(),
            names,
          });
          if (resources.length === 0) {
            if (out.json) out.data({ ok: true, file: null, imported: [], skipped, excluded });
            else {
              out.line(`nothing to import from ${o.provider}: ${skipped.length} already declared`);
              printExcluded(out, excluded);
            }
            process.exitCode = EXIT.ok;
            return;
          }

          const now = systemClock.now().toISOString();
          const secrets = resources.flatMap((r) => r.secrets);
          const header = [
            `Imported by \`tend import --provider ${o.provider}\` on ${now}: ${resources.length} object${resources.length === 1 ? '' : 's'}.`,
            'Tend adopted these objects (its store remembers each one): `tend plan` shows no change, and',
            'they are managed like objects Tend created. Removing a resource from the intent deletes its',
            'object where the type has no tags, and where it has them once Tend has written its marker.',
            ...(secrets.length > 0
              ? [
                  '',
                  `Secrets are never read back: set ${secrets.join(', ')} before the next apply.`,
                ]
              : []),
          ].join('\n');
          writeFileSync(file, renderImport(resources, header));

          // The written intent must validate (with the rest of the directory) before anything is adopted.
          const check = await loadWorkspaceIntent(opts.dir, ws.name, process.env);
          const errors = check.diagnostics.filter((d) => d.severity === 'error');
          if (!check.intent || errors.length > 0) {
            const message = `${relative(process.cwd(), file) || file} was written but the intent does not validate; nothing was adopted (fix or remove the file)`;
            if (out.json) {
              out.data({ ok: false, file, message, diagnostics: check.diagnostics, problems });
            } else {
              printDiagnostics(out, check.diagnostics);
              for (const p of problems) out.err(`${p.address}: ${p.message}`);
              out.err(out.style.red(`error: ${message}`));
            }
            process.exitCode = EXIT.error;
            return;
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
          if (out.json) {
            out.data({
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
            });
          } else {
            const w = Math.max(...resources.map((r) => r.address.length));
            for (const r of resources) out.line(`+ ${r.address.padEnd(w)}  ${r.objectId}`);
            out.line(
              `imported ${resources.length} object${resources.length === 1 ? '' : 's'} of ${o.provider} into ${file}` +
                (skipped.length > 0 ? ` (${skipped.length} already declared)` : '') +
                '; adopted: tend plan should show no changes',
            );
            printExcluded(out, excluded);
            if (secrets.length > 0) out.line(`set before apply: ${secrets.join(', ')}`);
          }
          process.exitCode = EXIT.ok;
        } finally {
          await ws.close();
        }
      } catch (e) {
        if (e instanceof IntentError) {
          printDiagnostics(out, e.diagnostics);
          out.err('fix the intent directory first: tend import adds to a directory that validates');
          process.exitCode = EXIT.error;
          return;
        }
        fail(out, e);
      }
    });
}

/** One line per reason: how many objects of which type the platform owns and import left out. */
function printExcluded(
  out: Output,
  excluded: readonly { type: string; id: string; reason: string }[],
): void {
  const groups = new Map<string, number>();
  for (const e of excluded) {
    const key = `${e.type}\u0000${e.reason}`;
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  for (const [key, n] of groups) {
    const [type, reason] = key.split('\u0000') as [string, string];
    out.line(`left out ${n} ${type} object${n === 1 ? '' : 's'} the platform owns (${reason})`);
  }
}
