// Tend's ownership marker on the objects PostgreSQL lets carry a comment (roles, databases, schemas,
// extensions): kept at the end of the comment, after the declared text (or the text the object has
// when none is declared), written with `COMMENT ON`.
import type { Marker, ObservedObject } from '../../core/index.js';
import { splitMarkerText, withMarkerText } from '../../core/index.js';
import { str } from './spec.js';
import { ident, literal } from './sql.js';

/** The objects `COMMENT ON` can carry Tend's marker for. */
export type CommentTarget = 'ROLE' | 'DATABASE' | 'SCHEMA' | 'EXTENSION';

/** `COMMENT ON <kind> "name" IS '…'`, or `IS NULL` to remove the comment. */
export function commentOn(kind: CommentTarget, name: string, text: string | null): string {
  return `COMMENT ON ${kind} ${ident(name)} IS ${text === null || text === '' ? 'NULL' : literal(text)}`;
}

/** Merges a new marker with the one an object has (the op of the create is never erased). */
function mergedMarker(marker: Marker | undefined, had: Marker | undefined): Marker | undefined {
  if (marker === undefined) return had;
  return marker.op === undefined && had?.op !== undefined ? { ...marker, op: had.op } : marker;
}

/**
 * The COMMENT ON statements putting the marker (and declared text) on an object: none when the
 * comment stays as it is, else one.
 */
export function commentStatements(
  kind: CommentTarget,
  name: string,
  desired: Readonly<Record<string, unknown>>,
  current: ObservedObject | undefined,
  marker: Marker | undefined,
): string[] {
  const now = current?.fields['comment'];
  const nowText = typeof now === 'string' ? now : '';
  const declared = str(desired, 'comment');
  const text = declared ?? splitMarkerText(nowText).text;
  const merged = mergedMarker(marker, current?.marker);
  const next = merged ? withMarkerText(text, merged) : text;
  return next === nowText ? [] : [commentOn(kind, name, next)];
}
