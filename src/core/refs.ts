import type { Address } from './address.js';
import { parseAddress } from './address.js';
import { setKey } from './safe-keys.js';
import { valueAt } from './value-at.js';

/**
 * A reference `${type/name.path}` inside a declared value: the value depends on a field of another
 * resource, observed after that resource exists. References define the dependency graph.
 */
export interface Reference {
  /** The referenced resource. */
  readonly target: Address;
  /** Field path inside the referenced object, e.g. `id` or `network.cidr`. */
  readonly path: string;
  /** The text as written, e.g. `${sb.networks/main.id}`. */
  readonly raw: string;
  /** Where in the declaring document the reference sits, as path segments below `spec`. */
  readonly at: readonly (string | number)[];
}

/** A malformed `${…}` expression. */
export interface BadReference {
  readonly raw: string;
  readonly at: readonly (string | number)[];
}

/**
 * A value that cannot be known until another resource is created or replaced. Plans show it as
 * "(known after apply)"; it is plain data so plans stay serialisable.
 */
export interface Unknown {
  readonly $unknown: string;
}

const EXPR = /\$\{([^}]*)\}/g;
const WHOLE = /^\$\{([^}]*)\}$/;

function parseExpr(inner: string): { target: Address; path: string } | undefined {
  const slash = inner.indexOf('/');
  if (slash < 0) return undefined;
  const dot = inner.indexOf('.', slash);
  if (dot < 0) return undefined;
  const target = inner.slice(0, dot);
  const path = inner.slice(dot + 1);
  if (!parseAddress(target) || !/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(path)) return undefined;
  return { target: target as Address, path };
}

/** Every reference in a value (depth-first, in document order), plus the malformed ones. */
export function findReferences(value: unknown): { refs: Reference[]; bad: BadReference[] } {
  const refs: Reference[] = [];
  const bad: BadReference[] = [];
  const walk = (v: unknown, at: (string | number)[]): void => {
    if (typeof v === 'string') {
      for (const m of v.matchAll(EXPR)) {
        const parsed = parseExpr(m[1]!);
        if (parsed) refs.push({ ...parsed, raw: m[0], at });
        else bad.push({ raw: m[0], at });
      }
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, [...at, i]));
    } else if (v !== null && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) walk(item, [...at, k]);
    }
  };
  walk(value, []);
  return { refs, bad };
}

/** True when a value is an Unknown placeholder. */
export function isUnknown(v: unknown): v is Unknown {
  return v !== null && typeof v === 'object' && typeof (v as Unknown).$unknown === 'string';
}

/** Reads `a.b.c` (or `ports.0`) from a value: `valueAt` of the dotted path's parts. */
export function getPath(value: unknown, path: string): unknown {
  return valueAt(value, path.split('.'));
}

/**
 * What a reference resolves to: `{ value }` when known, `undefined` when it cannot be known yet
 * (the target is absent, about to be created or replaced).
 */
export type RefLookup = (target: Address, path: string) => { value: unknown } | undefined;

/**
 * Substitutes references in a value. A string that is exactly one reference becomes the referenced
 * value (keeping its type); references embedded in text are substituted as text. A reference that
 * cannot be known makes its whole string an Unknown.
 */
export function resolveReferences(value: unknown, lookup: RefLookup): unknown {
  if (typeof value === 'string') {
    // Most strings hold no reference: skip both regular expressions for them.
    if (!value.includes('${')) return value;
    const whole = WHOLE.exec(value);
    if (whole) {
      const parsed = parseExpr(whole[1]!);
      if (!parsed) return value;
      const found = lookup(parsed.target, parsed.path);
      return found ? found.value : { $unknown: value };
    }
    let unknown = false;
    const out = value.replace(EXPR, (raw, inner: string) => {
      const parsed = parseExpr(inner);
      if (!parsed) return raw;
      const found = lookup(parsed.target, parsed.path);
      if (!found) {
        unknown = true;
        return raw;
      }
      return typeof found.value === 'string' ? found.value : JSON.stringify(found.value);
    });
    return unknown ? { $unknown: value } : out;
  }
  if (Array.isArray(value)) return value.map((v) => resolveReferences(v, lookup));
  if (value !== null && typeof value === 'object' && !isUnknown(value)) {
    const out: Record<string, unknown> = {};
    const from = value as Record<string, unknown>;
    for (const k of Object.keys(from)) setKey(out, k, resolveReferences(from[k], lookup));
    return out;
  }
  return value;
}

/** True when a value contains an Unknown anywhere. */
export function containsUnknown(value: unknown): boolean {
  if (isUnknown(value)) return true;
  if (Array.isArray(value)) return value.some(containsUnknown);
  if (value !== null && typeof value === 'object')
    return Object.values(value).some(containsUnknown);
  return false;
}

/** True when a value (deeply) contains the string `id`: how one object references another. */
export function mentionsId(value: unknown, id: string): boolean {
  if (value === id) return true;
  if (Array.isArray(value)) return value.some((v) => mentionsId(v, id));
  if (value !== null && typeof value === 'object') {
    return Object.values(value).some((v) => mentionsId(v, id));
  }
  return false;
}
