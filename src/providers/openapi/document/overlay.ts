import { JSONPath } from 'jsonpath-plus';
import {
  FORBIDDEN_KEYS,
  TendError,
  formatDataPath,
  mergeInto,
  setKey,
  shapeProblems,
} from '../../../core/index.js';
import { isObject } from '../fields/schema-view.js';

/** One action of an Overlay 1.0 document. */
export interface OverlayAction {
  /** A JSONPath (RFC 9535 style, as jsonpath-plus reads it) selecting the nodes to change. */
  readonly target: string;
  readonly description?: string;
  /** Merged into each selected object (recursively; arrays are appended), or appended to a selected array. */
  readonly update?: unknown;
  /** True: each selected node is removed from the object or array holding it. */
  readonly remove?: boolean;
}

/** A parsed and checked OpenAPI Overlay 1.0 document. */
export interface Overlay {
  /** Where it came from, for messages. */
  readonly location: string;
  readonly version: string;
  readonly title?: string;
  readonly actions: readonly OverlayAction[];
}

/**
 * Checks that a parsed value is an OpenAPI Overlay 1.0 document (`overlay: 1.0.x`, `info`, a non-empty
 * `actions` list whose entries have a `target` starting with `$` and an `update` or `remove`). Throws
 * a TendError (code `overlay.invalid`) naming the first problem and where it is, and one coded
 * `overlay.forbidden_key` for a `__proto__`, `constructor` or `prototype` key anywhere in it (or
 * in a target): an overlay is merged into the document, and such a key would reach a prototype.
 */
export function parseOverlay(raw: unknown, location: string): Overlay {
  const bad = (what: string): never => {
    throw new TendError(
      'overlay.invalid',
      `${location} is not an OpenAPI Overlay 1.0 document: ${what}; see docs/onboard-rest-api.md`,
      { phase: 'load' },
    );
  };
  const [shape] = shapeProblems(raw, { limit: 1 });
  if (shape?.kind === 'forbidden-key') {
    throw new TendError(
      'overlay.forbidden_key',
      `${location}: the key \`${String(shape.path.at(-1))}\` at ${formatDataPath(shape.path)} is refused: merged into the document, it would reach an object's prototype`,
      { phase: 'load', hint: 'remove the key; no OpenAPI document needs it' },
    );
  }
  if (shape?.kind === 'too-deep') return bad(`${formatDataPath(shape.path)} is nested too deeply`);
  if (shape?.kind === 'cycle') {
    return bad(
      `${formatDataPath(shape.path)} contains itself (a YAML alias inside its own anchor)`,
    );
  }
  if (!isObject(raw)) return bad('it is not a mapping');
  const version = raw['overlay'];
  if (typeof version !== 'string' || !/^1\.0\.\d+$/.test(version)) {
    return bad(
      version === undefined
        ? 'it has no `overlay: 1.0.0` field'
        : `\`overlay\` is ${JSON.stringify(version)}, not 1.0.x`,
    );
  }
  const info = raw['info'];
  const title = isObject(info) && typeof info['title'] === 'string' ? info['title'] : undefined;
  const list = raw['actions'];
  if (!Array.isArray(list) || list.length === 0) return bad('`actions` must be a non-empty list');
  const actions: OverlayAction[] = list.map((a: unknown, i): OverlayAction => {
    const at = `actions[${i}]`;
    if (!isObject(a)) return bad(`${at} is not a mapping`);
    const target = a['target'];
    if (typeof target !== 'string' || !target.startsWith('$')) {
      return bad(`${at}.target must be a JSONPath starting with $`);
    }
    const named = [...FORBIDDEN_KEYS].find((k) => target.includes(k));
    if (named !== undefined) {
      throw new TendError(
        'overlay.forbidden_key',
        `${location}: ${at}.target names \`${named}\`, which is refused: it could reach an object's prototype`,
        { phase: 'load', hint: "target the document's own fields" },
      );
    }
    const remove = a['remove'];
    if (remove !== undefined && typeof remove !== 'boolean') {
      return bad(`${at}.remove must be true or false`);
    }
    if (a['update'] === undefined && remove !== true) {
      return bad(`${at} has neither update nor remove: true`);
    }
    const description = typeof a['description'] === 'string' ? a['description'] : undefined;
    return {
      target,
      ...(description !== undefined ? { description } : {}),
      ...(a['update'] !== undefined ? { update: a['update'] } : {}),
      ...(remove === true ? { remove: true } : {}),
    };
  });
  return { location, version, ...(title !== undefined ? { title } : {}), actions };
}

/**
 * Applies an overlay to a parsed document, in place and in order (Overlay 1.0: each action sees the
 * result of the previous ones). An action whose target selects nothing is a warning, not an error:
 * overlays outlive the documents they were written for, and a typo must be visible but not fatal.
 * Returns the warnings. Throws a TendError (`overlay.bad_target`) for a target JSONPath cannot parse.
 */
export function applyOverlay(document: Record<string, unknown>, overlay: Overlay): string[] {
  const warnings: string[] = [];
  overlay.actions.forEach((action, i) => {
    const label = `overlay action ${i + 1}${action.description ? ` (${action.description})` : ''}`;
    let matches: { parent: unknown; parentProperty: string | number; value: unknown }[];
    try {
      matches = JSONPath<typeof matches>({
        path: action.target,
        json: document,
        resultType: 'all',
        wrap: true,
      });
    } catch (e) {
      throw new TendError(
        'overlay.bad_target',
        `${overlay.location}: ${label}: target ${action.target} is not a JSONPath (${e instanceof Error ? e.message : String(e)})`,
        { phase: 'load' },
      );
    }
    if (!Array.isArray(matches) || matches.length === 0) {
      warnings.push(`${label}: target ${action.target} selects nothing in the document`);
      return;
    }
    if (action.remove === true) {
      // Array elements are removed from the highest index down so earlier indexes stay valid.
      const ordered = [...matches].sort((a, b) =>
        typeof a.parentProperty === 'number' && typeof b.parentProperty === 'number'
          ? b.parentProperty - a.parentProperty
          : 0,
      );
      for (const m of ordered) {
        if (Array.isArray(m.parent) && typeof m.parentProperty === 'number') {
          m.parent.splice(m.parentProperty, 1);
        } else if (isObject(m.parent)) {
          delete m.parent[String(m.parentProperty)];
        } else {
          warnings.push(`${label}: the document root cannot be removed; ignored`);
        }
      }
      return;
    }
    for (const m of matches) {
      if (Array.isArray(m.value)) {
        m.value.push(structuredClone(action.update));
      } else if (isObject(m.value) && isObject(action.update)) {
        mergeInto(m.value, action.update, {
          arrays: 'append',
          copy: (v) => structuredClone(v),
          where: overlay.location,
        });
      } else if (
        !isObject(action.update) &&
        Array.isArray(m.parent) &&
        typeof m.parentProperty === 'number'
      ) {
        // A scalar target is replaced by a scalar update.
        m.parent[m.parentProperty] = structuredClone(action.update);
      } else if (!isObject(action.update) && isObject(m.parent)) {
        setKey(
          m.parent,
          String(m.parentProperty),
          structuredClone(action.update),
          overlay.location,
        );
      } else {
        warnings.push(
          `${label}: cannot merge ${describe(action.update)} into ${describe(m.value)} at ${action.target}; ignored`,
        );
      }
    }
  });
  return warnings;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  return isObject(value) ? 'an object' : `a ${typeof value}`;
}
