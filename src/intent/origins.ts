import { originOf } from '../core/index.js';
import type { FieldReader } from './fields.js';
import { typeName } from './fields.js';
import type { PathSegment } from './positions.js';

/**
 * Reads `allowRedirectsTo`: a list of origins (`https://host[:port]`, written with or without a
 * trailing `/`) or `*` for any, the other origins a redirect may lead to. Returns them normalised
 * (`https://Host:443/` → `https://host`); undefined when absent or when any entry is wrong (each
 * wrong entry is reported at its place).
 */
export function readAllowedOrigins(
  r: FieldReader,
  obj: Record<string, unknown>,
  at: readonly PathSegment[],
): string[] | undefined {
  const key = 'allowRedirectsTo';
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  const path = [...at, key];
  const hint =
    'e.g. allowRedirectsTo: [https://downloads.example.com] (scheme, host and port only)';
  if (!Array.isArray(value)) {
    r.report('field.type', `\`${key}\` must be a list of origins, got ${typeName(value)}`, path, {
      hint,
    });
    return undefined;
  }
  const origins: string[] = [];
  let ok = true;
  (value as unknown[]).forEach((entry, i) => {
    const origin = typeof entry === 'string' ? normalise(entry) : undefined;
    if (origin === undefined) {
      ok = false;
      r.report(
        'field.invalid',
        `\`${key}[${i}]\` must be an http(s) origin such as https://api.example.com:8443, or *; got ${typeof entry === 'string' ? entry : typeName(entry)}`,
        [...path, i],
        { hint },
      );
      return;
    }
    origins.push(origin);
  });
  return ok ? origins : undefined;
}

/** An origin as written (no path, query, fragment or user-info), normalised; or `*`. */
function normalise(text: string): string | undefined {
  if (text === '*') return '*';
  const origin = originOf(text);
  if (origin === undefined) return undefined;
  const u = new URL(text);
  const bare =
    u.pathname === '/' &&
    u.search === '' &&
    u.hash === '' &&
    u.username === '' &&
    u.password === '';
  return bare ? origin : undefined;
}
