import { denies, filledLater, verdictText, warns } from '../core/index.js';
import type { Diagnostic, PolicyDecl, PolicyVerdict } from '../core/index.js';
import { evaluatePolicies } from '../policy/index.js';
import { reportAt } from './report.js';
import type { ResourceDraft } from './resource-doc.js';

/**
 * Admission on the intent as written: every policy evaluated on every declared resource it matches,
 * with the declared fields only (a field the intent leaves to the platform, or fills in later from a
 * reference or a secret, is not known: a rule reading it is decided on the plan's predicted result).
 * A violated `deny` rule is an error at the resource's field the rule reads (or its document); a
 * violated `warn` rule a warning. The verdicts are returned for the caller's report.
 */
export function admitDeclared(
  policies: readonly PolicyDecl[],
  drafts: readonly ResourceDraft[],
): { verdicts: PolicyVerdict[]; diagnostics: Diagnostic[] } {
  const verdicts: PolicyVerdict[] = [];
  const diagnostics: Diagnostic[] = [];
  if (policies.length === 0) return { verdicts, diagnostics };
  for (const d of drafts) {
    if (!d.ok) continue;
    const unknown = new Set(Object.keys(d.spec).filter((k) => filledLater(d.spec[k])));
    const found = evaluatePolicies(policies, {
      subject: { address: d.address, type: d.type, name: d.name, labels: d.labels },
      moment: 'declared',
      object: d.spec,
      unknown,
      onlyDeclaredKnown: true,
      declared: d.spec,
      observed: null,
    });
    for (const v of found) {
      verdicts.push(v);
      const deny = denies(v);
      if (!deny && !warns(v)) continue;
      const field = v.fields.find((f) => f !== '*' && Object.hasOwn(d.spec, f));
      diagnostics.push(
        reportAt(d.doc, deny ? 'policy.denied' : 'policy.warned', verdictText(v), {
          ...(field !== undefined ? { path: ['spec', field] } : {}),
          address: d.address,
          severity: deny ? 'error' : 'warning',
          hint: `the rule is at ${v.source.file}:${v.source.line}:${v.source.column}${deny ? '; change the resource, or the policy if the rule is wrong' : ''}`,
        }),
      );
    }
  }
  return { verdicts, diagnostics };
}
