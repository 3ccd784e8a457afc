import type { PolicyVerdict } from '../../core/index.js';
import { denies, warns } from '../../core/index.js';
import type { Style } from './style.js';

/**
 * The policy verdicts worth a line (docs/policies.md): deny and warn violations, and rules that
 * could not be decided before apply; passes are not listed. Empty when there is nothing to say.
 */
export function renderPolicyVerdicts(verdicts: readonly PolicyVerdict[], s: Style): string {
  const shown = verdicts.filter(
    (v) => v.result !== 'pass' && (denies(v) || warns(v) || v.result === 'undecidable'),
  );
  if (shown.length === 0) return '';
  const lines = ["Policies on the plan's result:"];
  for (const v of shown) {
    const at = `${v.source.file}:${v.source.line}:${v.source.column}`;
    const rule = `${v.policy} rule ${v.rule + 1}`;
    if (denies(v)) {
      lines.push(
        `  ${s.red('✗ deny')}  ${s.bold(v.address)}: ${rule}: ${v.message} ${s.dim(`(${at})`)}`,
      );
    } else if (warns(v)) {
      lines.push(
        `  ${s.yellow('! warn')}  ${s.bold(v.address)}: ${rule}: ${v.message} ${s.dim(`(${at})`)}`,
      );
    } else {
      lines.push(s.dim(`  ? ${v.address}: ${rule} undecidable: ${v.message}`));
    }
  }
  const denied = shown.filter(denies).length;
  if (denied > 0) {
    lines.push(
      s.red(
        `${denied} deny violation${denied === 1 ? '' : 's'}: apply refuses this plan (nothing would be sent)`,
      ),
    );
  }
  return lines.join('\n');
}
