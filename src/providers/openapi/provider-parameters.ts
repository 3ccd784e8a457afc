import type { DerivedType } from './derive-types.js';
import type { PathParam } from './shapes/item-create.js';

/**
 * Provider-level parameters: values, set per provider instance in the Provider document's
 * `parameters:`, for path parameters that are neither fixed by the overlay (`x-tend-parent-values`)
 * nor the id of a type Tend manages (Keycloak's `{realm}`, Unleash's `{projectId}`).
 */

/** The types of one provider instance, with its parameter values applied. */
export interface ParameterizedTypes {
  /** Types whose every path parameter has a value (provider ones now fixed). */
  readonly types: readonly DerivedType[];
  /** Types left out because a provider parameter has no value: name → the parameters missing. */
  readonly missing: ReadonlyMap<string, readonly string[]>;
  readonly warnings: readonly string[];
}

/** The provider parameters a type needs, outermost first. */
export function providerParams(t: DerivedType): string[] {
  return t.params.filter((p) => p.kind === 'provider').map((p) => p.param);
}

/**
 * Applies a provider instance's `parameters:` to the derived types: each provider parameter with a
 * value becomes a fixed one; a type with a provider parameter still without a value is left out
 * (with what is missing), and so are the types below it. A value no type uses is a warning.
 */
export function applyProviderParameters(
  providerName: string,
  types: readonly DerivedType[],
  parameters: Readonly<Record<string, string>>,
): ParameterizedTypes {
  const used = new Set<string>();
  const missing = new Map<string, string[]>();
  const kept: DerivedType[] = [];
  for (const t of types) {
    const lacking: string[] = [];
    const params = t.params.map((p): PathParam => {
      if (p.kind !== 'provider') return p;
      if (Object.hasOwn(parameters, p.param)) {
        used.add(p.param);
        return { kind: 'fixed', param: p.param, value: parameters[p.param]! };
      }
      lacking.push(p.param);
      return p;
    });
    const parent = t.embedded?.parentType ?? t.info.parent?.type;
    const parentMissing = parent !== undefined ? missing.get(parent) : undefined;
    if (lacking.length > 0 || parentMissing !== undefined) {
      missing.set(t.info.name, [...new Set([...(parentMissing ?? []), ...lacking])]);
      continue;
    }
    kept.push(params.some((p, i) => p !== t.params[i]) ? { ...t, params } : t);
  }
  const warnings: string[] = [];
  for (const name of Object.keys(parameters)) {
    if (!used.has(name)) {
      warnings.push(
        `provider ${providerName}: parameters.${name} is not a path parameter any type needs a value for; ignored`,
      );
    }
  }
  for (const [type, params] of missing) {
    warnings.push(
      `provider ${providerName}: type ${type} is not available: its paths need ${params.map((p) => `{${p}}`).join(', ')}; give ${params.length === 1 ? 'it a value' : 'them values'} with parameters: {${params.map((p) => `${p}: <value>`).join(', ')}} in the Provider document`,
    );
  }
  return { types: kept, missing, warnings };
}
