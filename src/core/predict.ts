import { keyPathSegments } from './key-path.js';
import type { PlanStep } from './plan.js';
import type { ResourceTypeInfo } from './provider.js';
import { isUnknown } from './refs.js';
import { defineKey } from './safe-keys.js';

/**
 * A plan's predicted result for one resource (docs/policies.md): what the platform will hold once
 * the step is carried out, as far as Tend can know before sending anything.
 */
export interface PredictedState {
  /** The fields whose value is known. */
  readonly object: Readonly<Record<string, unknown>>;
  /**
   * Top-level fields whose value is not known before apply: a reference to a resource not yet made,
   * and, when the step writes to an existing object, the fields the platform sets (output-only), which
   * it may recompute from what is written.
   */
  readonly unknown: ReadonlySet<string>;
  /**
   * True for an object the step creates: every field not in `object` is set by the platform, so
   * not known before apply.
   */
  readonly onlyKnown: boolean;
}

/** True when a value is, or holds, an Unknown (`(known after apply)`). */
function holdsUnknown(v: unknown): boolean {
  if (isUnknown(v)) return true;
  if (Array.isArray(v)) return v.some(holdsUnknown);
  if (v !== null && typeof v === 'object') return Object.values(v).some(holdsUnknown);
  return false;
}

/**
 * True for a declared value Tend fills in later: a reference (`${type/name.field}`) or a secret's
 * source (`fromEnv`, `fromFile`); its value is not known from the intent alone.
 */
export function filledLater(v: unknown): boolean {
  if (typeof v === 'string') return v.includes('${');
  if (Array.isArray(v)) return v.some(filledLater);
  if (v !== null && typeof v === 'object') {
    if (isUnknown(v) || 'fromEnv' in v || 'fromFile' in v) return true;
    return Object.values(v).some(filledLater);
  }
  return false;
}

/** A deep copy of plain data (what observed fields are). */
function copy(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(copy);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) defineKey(out, k, copy(x));
    return out;
  }
  return v;
}

/** Sets `value` at `segments` below `target`, making the mappings on the way. */
function setAt(target: Record<string, unknown>, segments: readonly string[], value: unknown): void {
  let at = target;
  segments.forEach((s, i) => {
    if (i === segments.length - 1) {
      defineKey(at, s, value);
      return;
    }
    const next = at[s];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) {
      const fresh: Record<string, unknown> = {};
      defineKey(at, s, fresh);
      at = fresh;
    } else at = next as Record<string, unknown>;
  });
}

/** The defaults the type's schema gives its top-level fields. */
function schemaDefaults(info: ResourceTypeInfo | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const properties = (info?.schema as { properties?: Record<string, unknown> } | undefined)
    ?.properties;
  if (properties === undefined || properties === null || typeof properties !== 'object') return out;
  for (const [k, s] of Object.entries(properties)) {
    if (s !== null && typeof s === 'object' && 'default' in s) {
      defineKey(out, k, copy(s.default));
    }
  }
  return out;
}

/**
 * What `step` leaves on the platform: for a create (and the new object of a replace), the declared
 * fields over the schema's defaults, every other field unknown; for an update, a move, an adoption
 * and a step with nothing to do, the observed object with the step's changes made; nothing for a
 * delete or a conflict. A declared value that is `(known after apply)` makes its field unknown.
 *
 * A step that writes to an existing object (an update, a move, an adoption) makes the type's
 * output-only fields unknown, its id excepted: the platform may derive them from what is written
 * (the sandbox's service `status` becomes `stopped` when `replicas` becomes 0), which Tend cannot
 * know. A step with nothing to do sends nothing, so they keep their observed values.
 */
export function predictedState(
  step: PlanStep,
  observed: Readonly<Record<string, unknown>> | undefined,
  desired: Readonly<Record<string, unknown>>,
  info: ResourceTypeInfo | undefined,
): PredictedState | undefined {
  if (step.kind === 'delete' || step.kind === 'conflict') return undefined;
  const unknown = new Set<string>();
  if (step.kind === 'create' || step.kind === 'replace') {
    const object = schemaDefaults(info);
    // A replace's new object is made from the intent, whose references are not resolved here.
    const fields = step.kind === 'create' ? step.desired : desired;
    for (const [k, v] of Object.entries(fields)) {
      if (holdsUnknown(v) || (step.kind === 'replace' && filledLater(v))) {
        unknown.add(k);
        delete object[k];
      } else defineKey(object, k, copy(v));
    }
    for (const k of info?.outputOnly ?? []) delete object[k];
    return { object, unknown, onlyKnown: true };
  }
  const object = copy(observed ?? {}) as Record<string, unknown>;
  const changes = step.kind === 'noop' ? [] : step.changes;
  for (const c of changes) {
    const segments = keyPathSegments(c.path);
    if (holdsUnknown(c.after)) unknown.add(segments[0]!);
    else setAt(object, segments, copy(c.after));
  }
  if (step.kind !== 'noop') {
    for (const k of info?.outputOnly ?? []) {
      if (k === info?.idField) continue;
      unknown.add(k);
      delete object[k];
    }
  }
  return { object, unknown, onlyKnown: false };
}
