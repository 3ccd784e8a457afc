import { TendError } from '../../core/index.js';
import type { DerivedType } from './derive-types.js';

/**
 * Object ids of nested types. An object that lives under parents is addressed by its parents' ids
 * and its own id (for a sub-collection item: its key values; for an object addressed by several
 * parameters together, their values: item-key.ts), so one string is enough to read,
 * change or delete it: each part URI-encoded, joined by `/` (`example.org./www.example.org./A`).
 * Objects of top-level types keep the platform's id as it is.
 */

/** The values of a type's path parameters: fixed ones and parent ids, by parameter name. */
export type Scope = ReadonlyMap<string, string>;

/** The scope holding only the type's fixed path parameters. */
export function fixedScope(t: DerivedType): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of t.params) if (p.kind === 'fixed') out.set(p.param, p.value);
  return out;
}

/** The id of an object from its scope and its own id parts (one id, or the key values of an item). */
export function composeId(t: DerivedType, scope: Scope, own: readonly string[]): string {
  if (t.parentFields.length === 0 && own.length === 1) return own[0]!;
  return [...t.parentFields.map((f) => scope.get(f) ?? ''), ...own]
    .map((part) => encodeURIComponent(part))
    .join('/');
}

/** The scope and own id parts of an object id; a TendError when the id is not one of this type. */
export function splitId(t: DerivedType, id: string): { scope: Map<string, string>; own: string[] } {
  const scope = fixedScope(t);
  const ownCount = t.embedded ? t.embedded.key.length : (t.itemKey?.length ?? 1);
  if (t.parentFields.length === 0 && ownCount === 1) return { scope, own: [id] };
  const parts = id.split('/');
  if (parts.length !== t.parentFields.length + ownCount) {
    const own = t.embedded ? t.embedded.key : (t.itemKey?.map((k) => k.param) ?? [t.idParam]);
    const shape = [...t.parentFields, ...own].join('/');
    throw new TendError(
      'provider.bad_id',
      `"${id}" is not an id of ${t.info.name}: expected ${shape}, each part URI-encoded`,
    );
  }
  let decoded: string[];
  try {
    decoded = parts.map((p) => decodeURIComponent(p));
  } catch {
    throw new TendError(
      'provider.bad_id',
      `"${id}" is not an id of ${t.info.name}: a part is not URI-encoded`,
    );
  }
  t.parentFields.forEach((f, i) => scope.set(f, decoded[i]!));
  return { scope, own: decoded.slice(t.parentFields.length) };
}

/** A path template with its parameters filled from a scope (values URI-encoded). */
export function fillPath(template: string, scope: Scope): string {
  return template.replace(/\{([^{}]+)\}/g, (_m, name: string) => {
    const v = scope.get(name);
    if (v === undefined) {
      throw new TendError(
        'provider.missing_parent',
        `no value for path parameter {${name}} of ${template}`,
      );
    }
    return encodeURIComponent(v);
  });
}
