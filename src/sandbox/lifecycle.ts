import { isDeepStrictEqual } from 'node:util';
import type { TypeSpec } from './spec.js';

/** A change the platform cannot make in place: the object has to be replaced. */
export interface InPlaceRefusal {
  readonly field: string;
  readonly code: 'immutable_field' | 'shrink_not_supported';
  readonly message: string;
}

/** What going from an object's current state to a desired one takes. */
export interface LifecycleEvaluation {
  readonly action: 'none' | 'update' | 'replace';
  /** The fields that force the action. */
  readonly fields: string[];
  readonly reason: string;
}

/**
 * The changes among `desired` (writable fields, only those given) that an update cannot make:
 * create-only fields that differ, and a volume getting smaller. Volume shrinking is deliberately
 * known only here and in the lifecycle endpoint, not annotated in the OpenAPI document.
 */
export function inPlaceRefusals(
  spec: TypeSpec,
  current: Readonly<Record<string, unknown>>,
  desired: Readonly<Record<string, unknown>>,
): InPlaceRefusal[] {
  const refusals: InPlaceRefusal[] = [];
  const noun = spec.singular.toLowerCase();
  for (const field of changedFields(spec, current, desired)) {
    if (spec.fields[field]?.createOnly) {
      refusals.push({
        field,
        code: 'immutable_field',
        message: `${field} cannot change after create: replace the ${noun}`,
      });
    }
  }
  const size = desired.size;
  if (spec.name === 'volumes' && typeof size === 'number' && typeof current.size === 'number') {
    if (size < current.size) {
      refusals.push({
        field: 'size',
        code: 'shrink_not_supported',
        message: 'volumes cannot shrink in place: replace the volume',
      });
    }
  }
  return refusals;
}

/**
 * The declared fields whose desired value differs from the current one. Only keys present in
 * `desired` count; for tags, only the tag keys present in `desired.tags`. Secrets are never compared
 * (reads do not return them, so they would always differ).
 */
export function changedFields(
  spec: TypeSpec,
  current: Readonly<Record<string, unknown>>,
  desired: Readonly<Record<string, unknown>>,
): string[] {
  const changed: string[] = [];
  for (const [field, value] of Object.entries(desired)) {
    const fieldSpec = spec.fields[field];
    if (!fieldSpec || fieldSpec.readOnly || fieldSpec.sensitive) continue;
    if (field === 'tags' && isRecord(value)) {
      const currentTags = isRecord(current.tags) ? current.tags : {};
      if (Object.entries(value).some(([k, v]) => currentTags[k] !== v)) changed.push(field);
    } else if (!isDeepStrictEqual(value, current[field])) {
      changed.push(field);
    }
  }
  return changed;
}

/** The lifecycle rules: a refused in-place change means replace, any other difference update. */
export function evaluateLifecycle(
  spec: TypeSpec,
  current: Readonly<Record<string, unknown>>,
  desired: Readonly<Record<string, unknown>>,
): LifecycleEvaluation {
  const refusals = inPlaceRefusals(spec, current, desired);
  if (refusals.length > 0) {
    return {
      action: 'replace',
      fields: [...new Set(refusals.map((r) => r.field))],
      reason: refusals.map((r) => r.message).join('; '),
    };
  }
  const changed = changedFields(spec, current, desired);
  if (changed.length > 0) {
    return {
      action: 'update',
      fields: changed,
      reason: `${changed.join(', ')} can change in place`,
    };
  }
  return { action: 'none', fields: [], reason: 'every given field already has its desired value' };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
