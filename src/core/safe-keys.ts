import { TendError } from './errors.js';

/**
 * The one safe way to copy data Tend parsed (intent, overlays, OpenAPI documents, platform answers,
 * changesets) into objects by key. `target[key] = value` with a key from parsed data reaches the
 * prototype when the key is `__proto__` (and, one level further, through `constructor.prototype`):
 * a merge that follows such a key writes into `Object.prototype` for the whole process. Input with
 * these keys is refused where it enters (with file:line:column where there is a file), and every
 * write by a key from data goes through `setKey`, which refuses them again. The lint rule
 * `tend/no-unchecked-key-write` (eslint.config.js) keeps it the only way. See
 * docs/decisions/0009-prototype-pollution.md.
 */

/** Keys refused anywhere in parsed input: they can reach an object's prototype when copied. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set([
  '__proto__',
  'constructor',
  'prototype',
]);

/** Deeper input is refused before anything walks it (no walker can then overflow the stack). */
export const MAX_INPUT_DEPTH = 64;

const HINT =
  'rename the key: Tend refuses `__proto__`, `constructor` and `prototype` as keys anywhere in what it reads';

/** True for `__proto__`, `constructor` and `prototype`. */
export function isForbiddenKey(key: PropertyKey): boolean {
  return typeof key === 'string' && FORBIDDEN_KEYS.has(key);
}

/** An empty record without a prototype: reading a key gives only what was written under it. */
export function nullRecord<T = unknown>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** The value of an own property, never an inherited one (`constructor` of a plain object is absent). */
export function ownValue(obj: object, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(obj, key)
    ? (obj as Record<string, unknown>)[key]
    : undefined;
}

/**
 * Sets `target[key]`, refusing a forbidden key with a TendError `input.forbidden_key` (`where` says
 * what was being read, for the message). The write is an own data property of `target`.
 */
export function setKey<T>(
  target: Record<string, T>,
  key: string,
  value: NoInfer<T>,
  where?: string,
): void {
  if (isForbiddenKey(key)) throw forbiddenKeyError(key, where);
  // The key can no longer reach a prototype: the assignment is the checked one.
  // eslint-disable-next-line tend/no-unchecked-key-write -- this is the check the rule asks for
  target[key] = value;
}

/**
 * Sets `target[key]` as an own data property whatever the key, `__proto__` included (kept as plain
 * data, never as the prototype). For total copies of data that was already checked, such as the
 * canonical form hashed or stored, where refusing would only move the problem.
 */
export function defineKey<T>(target: Record<string, T>, key: string, value: NoInfer<T>): void {
  if (isForbiddenKey(key)) {
    Object.defineProperty(target, key, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  } else {
    // eslint-disable-next-line tend/no-unchecked-key-write -- the key cannot reach a prototype here
    target[key] = value;
  }
}

/** The error for a forbidden key found in `where` (a file, a URL, "the platform's answer"). */
export function forbiddenKeyError(key: string, where?: string, path?: string): TendError {
  const at = path !== undefined && path !== '' ? ` at ${path}` : '';
  const inWhat = where !== undefined ? ` in ${where}` : '';
  return new TendError(
    'input.forbidden_key',
    `the key \`${key}\`${at}${inWhat} is refused: it could reach an object's prototype`,
    { hint: HINT },
  );
}

function isPlainRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** How `mergeInto` treats an array that meets an array. */
export type ArrayMerge = 'append' | 'replace';

/**
 * Merges `update` into `target` in place: mappings merge recursively, arrays are appended to or
 * replaced (`arrays`), anything else is replaced. Values taken from `update` pass through `copy`
 * (e.g. structuredClone) so the two never share objects. Only own keys are read; a forbidden key in
 * `update` is refused (`input.forbidden_key`) before anything is read or written under it.
 */
export function mergeInto(
  target: Record<string, unknown>,
  update: Readonly<Record<string, unknown>>,
  options: { arrays?: ArrayMerge; copy?: (v: unknown) => unknown; where?: string } = {},
): void {
  const copy = options.copy ?? ((v: unknown) => v);
  const pending: [Record<string, unknown>, Readonly<Record<string, unknown>>][] = [
    [target, update],
  ];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [into, from] = next;
    for (const key of Object.keys(from)) {
      if (isForbiddenKey(key)) throw forbiddenKeyError(key, options.where);
      const value = from[key];
      const current = ownValue(into, key);
      if (isPlainRecord(current) && isPlainRecord(value)) pending.push([current, value]);
      else if (options.arrays === 'append' && Array.isArray(current) && Array.isArray(value)) {
        // One push per item: spreading a long list into push() overflows the stack.
        for (const item of copy(value) as unknown[]) current.push(item);
      } else setKey(into, key, copy(value), options.where);
    }
  }
}

/** One step of a path into parsed data: a key or a list index. */
export type DataPathSegment = string | number;

/** A problem with the shape of parsed input, and where it is. */
export interface ShapeProblem {
  readonly kind: 'forbidden-key' | 'too-deep' | 'cycle';
  /** The path to the offending key (forbidden-key), value (too-deep) or repeated ancestor (cycle). */
  readonly path: readonly DataPathSegment[];
}

/** Formats a data path as `$.a.b[0]["odd key"]` for messages. */
export function formatDataPath(path: readonly DataPathSegment[]): string {
  let out = '$';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(seg)) out += `.${seg}`;
    else out += `[${JSON.stringify(seg.length > 60 ? `${seg.slice(0, 57)}...` : seg)}]`;
  }
  return out;
}

/**
 * Every forbidden key in a parsed value (up to `limit`), each with its path. Iterative and visiting
 * each object once, so cyclic graphs (a dereferenced OpenAPI document) and any depth are fine.
 */
export function forbiddenKeyPaths(value: unknown, limit = 10): DataPathSegment[][] {
  // Paths are linked back to the parent step and spelled out only for what is found: copying them
  // at every step would make a deep document quadratic.
  interface Step {
    readonly v: unknown;
    readonly key?: DataPathSegment;
    readonly up?: Step;
  }
  const pathOf = (s: Step, last: DataPathSegment): DataPathSegment[] => {
    const out = [last];
    for (let at: Step | undefined = s; at?.key !== undefined; at = at.up) out.push(at.key);
    return out.reverse();
  };
  const found: DataPathSegment[][] = [];
  const seen = new Set<object>();
  const stack: Step[] = [{ v: value }];
  while (stack.length > 0) {
    const step = stack.pop()!;
    const v = step.v;
    if (v === null || typeof v !== 'object' || seen.has(v)) continue;
    seen.add(v);
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i] as unknown, key: i, up: step });
      continue;
    }
    const children: Step[] = [];
    for (const k of Object.keys(v)) {
      if (!isForbiddenKey(k))
        children.push({ v: (v as Record<string, unknown>)[k], key: k, up: step });
      else if (found.push(pathOf(step, k)) >= limit) return found;
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return found;
}

/**
 * Throws `input.forbidden_key` (naming the first one and its path) when a parsed value holds a
 * forbidden key anywhere. `where` names the input for the message.
 */
export function assertNoForbiddenKeys(value: unknown, where: string): void {
  const [first] = forbiddenKeyPaths(value, 1);
  if (first === undefined) return;
  throw forbiddenKeyError(String(first.at(-1)), where, formatDataPath(first));
}

/**
 * The shape problems of a parsed tree (YAML or JSON as plain data): forbidden keys, values nested
 * deeper than `maxDepth`, and cycles (a YAML alias inside its own anchor). Iterative; a node shared
 * by aliases is walked again only when reached deeper than before, so the walk stays small.
 * Returns at most `limit` problems.
 */
export function shapeProblems(
  value: unknown,
  options: { maxDepth?: number; limit?: number } = {},
): ShapeProblem[] {
  const maxDepth = options.maxDepth ?? MAX_INPUT_DEPTH;
  const limit = options.limit ?? 10;
  const problems: ShapeProblem[] = [];
  const checkedAtDepth = new Map<object, number>();
  const onPath = new Set<object>();
  type Frame = { v: unknown; path: DataPathSegment[]; exit?: false } | { v: object; exit: true };
  const stack: Frame[] = [{ v: value, path: [] }];
  while (stack.length > 0 && problems.length < limit) {
    const frame = stack.pop()!;
    if (frame.exit === true) {
      onPath.delete(frame.v);
      continue;
    }
    const { v, path } = frame;
    if (v === null || typeof v !== 'object') continue;
    if (onPath.has(v)) {
      problems.push({ kind: 'cycle', path });
      continue;
    }
    const depth = path.length;
    if (depth >= maxDepth) {
      problems.push({ kind: 'too-deep', path });
      continue;
    }
    const before = checkedAtDepth.get(v);
    // Reached again no deeper than before: everything below was checked already.
    if (before !== undefined && before >= depth) continue;
    checkedAtDepth.set(v, depth);
    onPath.add(v);
    stack.push({ v, exit: true });
    const children: Frame[] = [];
    if (Array.isArray(v)) {
      v.forEach((item: unknown, i) => children.push({ v: item, path: [...path, i] }));
    } else {
      for (const k of Object.keys(v)) {
        if (isForbiddenKey(k)) problems.push({ kind: 'forbidden-key', path: [...path, k] });
        else children.push({ v: (v as Record<string, unknown>)[k], path: [...path, k] });
      }
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return problems.slice(0, limit);
}
