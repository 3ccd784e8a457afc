import type { ImportOptions } from '../commands/import.js';
import { relative } from 'node:path';
import type { ExcludedObject } from '../../app/index.js';
import { importObjects, IntentError } from '../../app/index.js';
import type { Output } from '../common.js';
import { cliContext, fail, output, printDiagnostics, workspaceOptions } from '../common.js';
import { EXIT } from '../exit-codes.js';

/** One line per reason: how many objects of which type the platform owns and import left out. */
function printExcluded(out: Output, excluded: readonly ExcludedObject[]): void {
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

/** The scope flags as words: ` matching "a", "b" under pdns.zones/x`, or nothing. */
function scopeText(o: ImportOptions): string {
  const match = o.match?.length ? ` matching ${o.match.map((m) => `"${m}"`).join(' or ')}` : '';
  const under = o.under !== undefined ? ` under ${o.under}` : '';
  return match + under;
}

/** `tend import <dir>`, run: writes the file, validates, adopts. */
export async function importHandler(dir: string, o: ImportOptions): Promise<void> {
  const out = output(o.json);
  try {
    const r = await importObjects(cliContext(), {
      ...workspaceOptions(dir, o),
      provider: o.provider,
      types: o.type ?? [],
      ...(o.match ? { match: o.match } : {}),
      ...(o.under !== undefined ? { under: o.under } : {}),
      ...(o.out ? { out: o.out } : {}),
      lockTimeoutMs: o.lockTimeout * 1000,
    });
    if (!r.ok) {
      if (out.json) out.data(r);
      else {
        printDiagnostics(out, r.diagnostics);
        for (const p of r.problems) out.err(`${p.address}: ${p.message}`);
        out.err(
          out.style.red(
            `error: ${relative(process.cwd(), r.file) || r.file} was written but the intent does not validate; nothing was adopted (fix or remove the file)`,
          ),
        );
      }
      process.exitCode = EXIT.error;
      return;
    }
    if (out.json) out.data(r);
    else if (r.file === null) {
      out.line(
        `nothing to import from ${o.provider}${scopeText(o)}: ${r.skipped.length} already declared` +
          (r.outOfScope > 0 ? `, ${r.outOfScope} outside the scope` : ''),
      );
      printExcluded(out, r.excluded);
    } else {
      const w = r.imported.reduce((max, x) => Math.max(max, x.address.length), 0);
      for (const x of r.imported) out.line(`+ ${x.address.padEnd(w)}  ${x.objectId}`);
      out.line(
        `imported ${r.imported.length} object${r.imported.length === 1 ? '' : 's'} of ${o.provider} into ${r.file}` +
          scopeText(o) +
          (r.skipped.length > 0 ? ` (${r.skipped.length} already declared)` : '') +
          (r.outOfScope > 0 ? ` (${r.outOfScope} outside the scope left out)` : '') +
          '; adopted: tend plan should show no changes',
      );
      printExcluded(out, r.excluded);
      if (r.secrets.length > 0) out.line(`set before apply: ${r.secrets.join(', ')}`);
    }
    process.exitCode = EXIT.ok;
  } catch (e) {
    if (e instanceof IntentError) {
      printDiagnostics(out, e.diagnostics);
      out.err('fix the intent directory first: tend import adds to a directory that validates');
      process.exitCode = EXIT.error;
      return;
    }
    fail(out, e);
  }
}
