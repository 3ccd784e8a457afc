import { canonicalJson } from './hash.js';
import { isUnknown } from './refs.js';
import { ownValue, setKey } from './safe-keys.js';

/** One declared field whose observed value differs from its declared value. */
export interface FieldChange {
  /** Dotted path below the spec, e.g. `size` or `tags.team`. */
  readonly path: string;
  readonly before: unknown;
  /** The declared value; an Unknown when it depends on a resource not yet created or replaced. */
  readonly after: unknown;
}

/** How to compare. */
export interface DiffOptions {
  /** Paths never compared (secrets, which cannot be read back). */
  readonly ignore?: ReadonlySet<string>;
  /**
   * Normalises a value at a path before comparing (trailing dots, case, set order). A function of
   * the path and the value (and of the whole object the value is in, desired or observed, for values
   * compared by a sibling field): identical values are taken as equal without asking it.
   */
  readonly normalize?: (
    path: string,
    value: unknown,
    object?: Readonly<Record<string, unknown>>,
  ) => unknown;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !isUnknown(v);
}

function same(a: unknown, b: unknown): boolean {
  if ((a === null || a === undefined) && (b === null || b === undefined)) return true;
  // Scalars need no canonical form: equal ones are the same, and two different strings or booleans
  // (or finite numbers) never print alike. Other numbers (NaN, Infinity print as null) take the long way.
  if (a === b) return true;
  const ta = typeof a;
  if (ta === typeof b && (ta === 'string' || ta === 'boolean')) return false;
  if (ta === 'number' && typeof b === 'number' && Number.isFinite(a) && Number.isFinite(b)) {
    return false;
  }
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * Field-level diff of DECLARED fields only: keys the intent does not mention are never drift, and for
 * a declared object (like tags) only its declared keys are compared. Arrays compare as a whole.
 * Changes come out in declaration order.
 */
export function diffDeclared(
  desired: Readonly<Record<string, unknown>>,
  observed: Readonly<Record<string, unknown>>,
  options: DiffOptions = {},
): FieldChange[] {
  const out: FieldChange[] = [];
  const norm = options.normalize ?? ((_p: string, v: unknown) => v);
  const walk = (
    d: Record<string, unknown>,
    o: Record<string, unknown> | undefined,
    prefix: string,
  ) => {
    for (const key of Object.keys(d)) {
      const dv = d[key];
      const path = prefix ? `${prefix}.${key}` : key;
      if (options.ignore?.has(path)) continue;
      const ov = o === undefined ? undefined : ownValue(o, key);
      if (isUnknown(dv)) {
        out.push({ path, before: ov, after: dv });
      } else if (isPlainObject(dv) && isPlainObject(ov)) {
        walk(dv, ov, path);
      } else if (dv === ov) {
        // Identical values stay identical once normalised: the normaliser (a provider's, which may
        // look up schemas) is not asked. In a pass with no drift this is nearly every field.
      } else if (!same(norm(path, dv, desired), norm(path, ov, observed))) {
        out.push({ path, before: ov, after: dv });
      }
    }
  };
  walk(desired, observed, '');
  return out;
}

/** The top-level field names touched by a list of changes. */
export function topLevelFields(changes: readonly FieldChange[]): string[] {
  return [...new Set(changes.map((c) => c.path.split('.')[0]!))];
}

function deepMerge(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = ownValue(out, k);
    setKey(out, k, isPlainObject(v) && isPlainObject(b) ? deepMerge(b, v) : v);
  }
  return out;
}

/**
 * The body of an in-place update: only the top-level fields that changed, and for a declared object
 * (like tags) the observed object with the declared keys laid over it, so keys the intent does not
 * declare (someone's hotfix tag, Tend's marker) survive the update.
 */
export function updateBody(
  desired: Readonly<Record<string, unknown>>,
  observed: Readonly<Record<string, unknown>>,
  changes: readonly FieldChange[],
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const key of topLevelFields(changes)) {
    const d = ownValue(desired, key);
    const o = ownValue(observed, key);
    setKey(body, key, isPlainObject(d) && isPlainObject(o) ? deepMerge(o, d) : d);
  }
  return body;
}
