// Form-encoded request bodies (docs/decisions/0014). Loaded by request-media.ts's encodeRequestBody
// for the first form it sends, with `qs` (docs/decisions/0033-lazy-modules.md).
import qs from 'qs';
import { TendError, setKey } from '../../../core/index.js';

/**
 * A JSON value as a form, the way Rack, PHP and Stripe read nested forms (docs/decisions/0014):
 * nested objects and arrays in bracket notation (`metadata[key]=v`, `items[0][price]=p`), keys and
 * values percent-encoded with the brackets left readable (a key's `&`, `=` or `%` is encoded, so it
 * never splits a pair), booleans and numbers as text, `null` and an empty array or object as an empty
 * value (`metadata=`: how such APIs say "unset" or "clear"). A key holding `[` or `]` is refused: the
 * server would read it as nesting.
 */
export function encodeForm(body: unknown): string {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new TendError(
      'provider.bad_form_body',
      `a form-encoded request body must be an object of fields, not ${Array.isArray(body) ? 'an array' : body === null ? 'null' : typeof body}`,
      { retryable: false },
    );
  }
  const prepared = prepare(body, '');
  return qs
    .stringify(prepared, { arrayFormat: 'indices', encode: true, allowDots: false })
    .replace(/%5B/gi, '[')
    .replace(/%5D/gi, ']');
}

/**
 * A copy with every empty array or object (and null) as the empty string, so that it is sent as
 * `key=` rather than left out; refuses keys that cannot be sent unambiguously.
 */
function prepare(value: unknown, at: string): unknown {
  if (value === null) return '';
  if (Array.isArray(value)) {
    if (value.length === 0) return '';
    return value.map((v, i) => prepare(v, `${at}[${i}]`));
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(
      ([, v]) => v !== undefined,
    );
    if (entries.length === 0) return '';
    const out: Record<string, unknown> = {};
    for (const [k, v] of entries) {
      const where = at === '' ? k : `${at}[${k}]`;
      if (/[[\]]/.test(k)) {
        throw new TendError(
          'provider.bad_form_body',
          `the field ${where} cannot be sent in a form: a key holding [ or ] would be read as nesting; rename the key`,
          { retryable: false },
        );
      }
      setKey(out, k, prepare(v, where), 'a form-encoded request body');
    }
    return out;
  }
  return value;
}
