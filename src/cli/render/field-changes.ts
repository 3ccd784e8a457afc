import type { Change } from '../../core/index.js';
import { canonicalJson, getPath, isMarkerTag } from '../../core/index.js';
import { showValue } from './plan.js';

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The changed fields of a ledger entry as `path before → after`, descending into objects so that a
 * tag change reads `tags.hotfix (absent) → "INC-42"`. Tend's marker tags and timestamps are omitted.
 */
export function describeFieldChanges(
  change: Pick<Change, 'fields' | 'before' | 'after' | 'action' | 'objectId'>,
): string {
  if (change.action === 'create') return `created ${change.objectId}`;
  if (change.action === 'delete') return `deleted ${change.objectId}`;
  if (change.action === 'verdict') {
    // What the rule read, as observed: `versioning = false`.
    return change.fields
      .filter((f) => change.after !== undefined && Object.hasOwn(change.after, f))
      .map((f) => `${f} = ${showValue(change.after![f])}`)
      .join(', ');
  }
  const parts: string[] = [];
  const walk = (path: string, b: unknown, a: unknown) => {
    if (isObject(b) && isObject(a)) {
      for (const k of [...new Set([...Object.keys(b), ...Object.keys(a)])].sort()) {
        if (isMarkerTag(k)) continue;
        walk(`${path}.${k}`, b[k], a[k]);
      }
    } else if (canonicalJson(b ?? null) !== canonicalJson(a ?? null)) {
      parts.push(`${path} ${showValue(b)} → ${showValue(a)}`);
    }
  };
  for (const f of change.fields) {
    if (f === 'updated_at' || f === 'updatedAt') continue;
    const at = (o: Readonly<Record<string, unknown>> | undefined) =>
      o === undefined ? undefined : Object.hasOwn(o, f) ? o[f] : getPath(o, f);
    walk(f, at(change.before), at(change.after));
  }
  return parts.join(', ');
}
