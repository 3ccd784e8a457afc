import type { AcceptOptions } from '../commands/accept.js';
import type { AcceptReport } from '../../app/index.js';
import { accept, ACCEPT_USAGE_ERRORS } from '../../app/index.js';
import { canonicalJson, TendError, toTendError } from '../../core/index.js';
import type { Output } from '../common.js';
import { cliContext, fail, output, workspaceOptions } from '../common.js';
import { EXIT } from '../exit-codes.js';
import type { Style } from '../render/style.js';

/** `accept` exits 2 for a usage error (an unknown address or field, a bad --value). */
const USAGE = 2;

/** A unified diff with its lines coloured (when the style is on). */
export function renderDiff(diff: string, s: Style): string {
  return diff
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => {
      if (line.startsWith('---') || line.startsWith('+++')) return s.bold(line);
      if (line.startsWith('@@')) return s.cyan(line);
      if (line.startsWith('+')) return s.green(line);
      if (line.startsWith('-')) return s.red(line);
      return line;
    })
    .join('\n');
}

function parseValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new TendError(
      'accept.invalid_value',
      `--value must be JSON: ${e instanceof Error ? e.message : String(e)}`,
      { hint: `e.g. --value 5, --value '"text"', --value '{"team":"core"}'` },
    );
  }
}

function show(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : canonicalJson(value);
}

function renderReport(out: Output, r: AcceptReport): void {
  const s = out.style;
  for (const note of r.notes) out.err(s.yellow(`note: ${note}`));
  switch (r.outcome) {
    case 'unchanged':
      out.line(`${r.file} already declares ${r.field}: ${show(r.value)}; nothing to change`);
      return;
    case 'elsewhere': {
      out.line(s.yellow(`${r.address} ${r.field}: not patched: ${r.elsewhere?.reason ?? ''}`));
      const at = r.elsewhere?.where;
      if (at) out.line(`  the change belongs at ${at.file}:${at.line}:${at.column}`);
      return;
    }
    case 'patched':
      out.line(renderDiff(r.diff, s));
      if (r.branch && r.pushedTo) {
        out.line(
          s.green(
            `committed ${r.commit?.slice(0, 12) ?? ''} on branch ${r.branch} and pushed it to ${r.pushedTo}`,
          ),
        );
      } else if (r.branch) {
        out.line(
          s.green(
            `committed ${r.commit?.slice(0, 12) ?? ''} on branch ${r.branch}; back on ${r.returnedTo ?? ''}, whose ${r.file} is unchanged`,
          ),
        );
      } else if (r.written) {
        out.line(s.green(`written ${r.file}:${r.line ?? 1}`));
      } else {
        out.line(
          s.dim(
            `run again with --write to write ${r.file} (or --git to commit it on a new branch)`,
          ),
        );
      }
  }
}

/** `tend accept`, run: the patch, written or committed as asked; exit 2 for a usage error. */
export async function acceptHandler(
  address: string,
  field: string,
  dir: string,
  o: AcceptOptions,
): Promise<void> {
  const out = output(o.json);
  try {
    const value = o.value === undefined ? undefined : parseValue(o.value);
    const r = await accept(cliContext(), {
      ...workspaceOptions(dir, o),
      address,
      field,
      ...(value !== undefined ? { value } : {}),
      write: Boolean(o.write),
      git: Boolean(o.git),
    });
    if (out.json) out.data({ ok: r.outcome !== 'elsewhere', ...r });
    else renderReport(out, r);
    process.exitCode = r.outcome === 'elsewhere' ? EXIT.error : EXIT.ok;
  } catch (e) {
    fail(out, e);
    if (ACCEPT_USAGE_ERRORS.has(toTendError(e).code)) process.exitCode = USAGE;
  }
}
