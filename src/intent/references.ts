import { findCycles, findReferences } from '../core/index.js';
import type { Address, Diagnostic, Reference } from '../core/index.js';
import type { PathSegment } from './positions.js';
import { formatPath } from './positions.js';
import { reportAt } from './report.js';
import type { ResourceDraft } from './resource-doc.js';
import { closest } from './suggest.js';

/** What the reference check found: each resource's dependencies, and the problems. */
export interface ReferenceCheck {
  /**
   * Addresses each resource's spec references (self excluded), in order of first appearance. A
   * resource whose spec and checks hold no reference at all (most of them) has no entry.
   */
  readonly dependsOn: ReadonlyMap<Address, readonly Address[]>;
  readonly diagnostics: Diagnostic[];
}

const REF_FORMAT = '${<provider>.<type>/<name>.<field>}, e.g. ${sb.networks/main.id}';

/**
 * True when some text in a value contains `${` (only such text can hold a reference). Recursive: an
 * intent value is at most MAX_INPUT_DEPTH deep (both readings of a file refuse deeper ones).
 */
function mayHoldReferences(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('${');
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) if (mayHoldReferences(item)) return true;
    return false;
  }
  for (const key of Object.keys(value)) {
    if (mayHoldReferences((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

/**
 * Checks the `${type/name.path}` references of every resource: malformed ones (`ref.invalid`), ones
 * to addresses nobody declares (`ref.dangling`, with the closest declared address), a spec that
 * references its own resource (`ref.self`), and cycles (`ref.cycle`, once per cycle, at the first
 * member's reference to the next). References in checks may name the resource itself and do not
 * add dependencies; references in the spec define the dependency graph. `declared` maps each address
 * to its first declaration among `drafts`.
 */
export function checkReferences(
  drafts: readonly ResourceDraft[],
  declared: ReadonlyMap<Address, ResourceDraft>,
): ReferenceCheck {
  // Only for a dangling reference's suggestion.
  let addresses: Address[] | undefined;
  const diagnostics: Diagnostic[] = [];
  const dependsOn = new Map<Address, Address[]>();
  const specRefs = new Map<ResourceDraft, Reference[]>();

  for (const d of drafts) {
    // Most resources reference nothing: one walk without paths says so, and they are left out of
    // the graph searched for cycles (no cycle passes through a resource that references nothing).
    if (!mayHoldReferences(d.spec) && !mayHoldReferences(d.rawChecks)) continue;
    const report = (code: string, message: string, at: readonly PathSegment[], hint?: string) =>
      diagnostics.push(
        reportAt(d.doc, code, message, {
          path: at,
          address: d.address,
          ...(hint !== undefined && { hint }),
        }),
      );
    const spec = findReferences(d.spec);
    const checks = findReferences(d.rawChecks);
    const all = [
      ...spec.refs.map((ref) => ({ ref, at: ['spec', ...ref.at], inSpec: true })),
      ...checks.refs.map((ref) => ({ ref, at: ['checks', ...ref.at], inSpec: false })),
    ];
    for (const bad of [
      ...spec.bad.map((b) => ({ ...b, at: ['spec', ...b.at] })),
      ...checks.bad.map((b) => ({ ...b, at: ['checks', ...b.at] })),
    ]) {
      report('ref.invalid', `malformed reference \`${bad.raw}\`; write ${REF_FORMAT}`, bad.at);
    }
    const deps: Address[] = [];
    const depSet = new Set<Address>();
    for (const { ref, at, inSpec } of all) {
      if (ref.target === d.address) {
        if (inSpec) {
          report(
            'ref.self',
            `\`${formatPath(at)}\` references its own resource (${ref.raw}); a resource cannot depend on itself`,
            at,
            'refer to another resource, or use a check to relate fields of the same resource',
          );
        }
        continue;
      }
      if (!declared.has(ref.target)) {
        const near = closest(ref.target, (addresses ??= [...declared.keys()]));
        report(
          'ref.dangling',
          `${ref.raw} refers to ${ref.target}, which no Resource document declares.${near === undefined ? '' : ` Did you mean \`${near}\`?`}`,
          at,
          'declare that resource, or fix the address (type/name) in the reference',
        );
        continue;
      }
      if (inSpec && !depSet.has(ref.target)) {
        depSet.add(ref.target);
        deps.push(ref.target);
      }
    }
    if (declared.get(d.address) === d) {
      dependsOn.set(d.address, deps);
      specRefs.set(d, spec.refs);
    }
  }

  for (const cycle of findCycles(dependsOn)) {
    const first = declared.get(cycle[0]!)!;
    const next = cycle[1]!;
    const ref = specRefs.get(first)?.find((r) => r.target === next);
    diagnostics.push(
      reportAt(first.doc, 'ref.cycle', `reference cycle: ${cycle.join(' → ')}`, {
        ...(ref && { path: ['spec', ...ref.at] }),
        address: first.address,
        hint: 'break the cycle: one of these resources must stop referencing the next',
      }),
    );
  }
  return { dependsOn, diagnostics };
}
