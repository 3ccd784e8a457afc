import { normalizeOps } from './annotations.js';
import { isObject } from './schema-view.js';

/**
 * Date-time values compared as instants: `2026-12-01T00:00:00Z`, `2026-12-01T00:00:00.000Z` and
 * `2026-12-01T01:00:00+01:00` are one moment, whatever spelling the platform answers with. A string
 * whose schema says `format: date-time` is compared this way without being told.
 */

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,12}))?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/** An RFC 3339 date-time read as an instant; undefined when the text is not one. */
export function parseInstant(
  text: string,
): { readonly ms: number; readonly fraction: string } | undefined {
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, 0);
  // A day past the end of its month (02-30) rolls over: not a date.
  if (date.getUTCDate() !== d || date.getUTCMonth() !== mo - 1) return undefined;
  let ms = date.getTime();
  if (m[9] !== undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return undefined;
    ms -= (m[9] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  return { ms, fraction: (m[7] ?? '').replace(/0+$/, '') };
}

/** The canonical UTC spelling of an instant (`…T00:00:00Z`, fraction without trailing zeros). */
export function canonicalInstant(text: string): string | undefined {
  const i = parseInstant(text);
  if (i === undefined || !Number.isFinite(i.ms)) return undefined;
  const iso = new Date(i.ms).toISOString();
  return `${iso.slice(0, 19)}${i.fraction === '' ? '' : `.${i.fraction}`}Z`;
}

/** True when a schema says its strings are date-times (`format: date-time`). */
export function isDateTime(schema: unknown): boolean {
  return isObject(schema) && schema['format'] === 'date-time';
}

/** What a time at or before now compares as under `x-tend-normalize: past-is-now`. */
export const PAST = 'at or before now';

/**
 * Under `x-tend-normalize: past-is-now` (the platform moves a time in the past to the moment of the
 * write — Alertmanager's `startsAt` — and any past time has the same effect as any other), an
 * instant at or before `now` compares as one value, {@link PAST}; later ones as themselves.
 */
export function pastIsNow(schema: unknown, value: unknown, now: number): unknown {
  if (typeof value !== 'string' || !normalizeOps(schema).ops.includes('past-is-now')) return value;
  const i = parseInstant(value);
  if (i === undefined) return value;
  const fractionMs = Number(`0.${i.fraction || '0'}`) * 1000;
  return i.ms + fractionMs <= now ? PAST : value;
}
