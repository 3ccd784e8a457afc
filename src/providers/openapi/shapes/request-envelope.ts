import { singular } from './envelope.js';
import { hasType, isObject, objectView } from '../fields/schema-view.js';

/**
 * Request envelopes (issue 12): a create or update body whose schema is one object property wrapping
 * the object's fields, as Rails applications take them (`POST /admin/groups.json` with
 * `{"group": {"name": …}}`). The type's fields are the wrapped ones; Tend sends them wrapped.
 *
 * Declared with `x-tend-request-envelope: <property>` on the operation (`false` says the body is not
 * wrapped), or inferred from the body schema when it says so itself: its only property, required,
 * is an object schema with properties and is named after the type (`group` for `groups`, or the
 * type's name). Anything else is a body whose one field happens to be an object, never guessed.
 */

const PROPERTY = /^[A-Za-z0-9_$@-]+$/;

/** The envelope of one operation's request body, and how it was found (for inspect). */
export interface RequestEnvelope {
  readonly field: string;
  readonly why: string;
}

/**
 * The property wrapping the fields of `op`'s request body `schema` (the body schema as the document
 * writes it), for a type named `typeName`; undefined when the body is not wrapped. A declaration
 * that cannot hold (not a property name, not an object property of the body) is a warning and is
 * ignored.
 */
export function requestEnvelopeOf(
  typeName: string,
  where: string,
  op: Record<string, unknown>,
  schema: unknown,
  warnings: string[],
): RequestEnvelope | undefined {
  const props = objectView(schema).properties;
  const declared = op['x-tend-request-envelope'];
  if (declared === false || declared === 'none') return undefined;
  if (declared !== undefined) {
    if (typeof declared !== 'string' || !PROPERTY.test(declared)) {
      warnings.push(
        `${typeName}: ${where}: x-tend-request-envelope must be the name of the body property wrapping the fields, or false, not ${JSON.stringify(declared)}; ignored`,
      );
      return undefined;
    }
    if (!isWrapper(props[declared])) {
      warnings.push(
        `${typeName}: ${where}: x-tend-request-envelope names ${declared}, which is not an object property of the request body (it has ${Object.keys(props).join(', ') || 'no properties'}); ignored`,
      );
      return undefined;
    }
    return { field: declared, why: `declared with x-tend-request-envelope on ${where}` };
  }
  const names = Object.keys(props);
  if (names.length !== 1) return undefined;
  const field = names[0]!;
  const required = objectView(schema).required.includes(field);
  const named = [typeName, singular(typeName)].some((n) => n.toLowerCase() === field.toLowerCase());
  if (!required || !named || !isWrapper(props[field])) return undefined;
  return {
    field,
    why: `inferred: the body of ${where} is one required object property, ${field}, named after the type`,
  };
}

/** What inspect says when a body is one object property that inference does not take as a wrapper. */
export function requestEnvelopeHint(
  typeName: string,
  where: string,
  schema: unknown,
): string | undefined {
  const props = objectView(schema).properties;
  const names = Object.keys(props);
  if (names.length !== 1 || !isWrapper(props[names[0]!])) return undefined;
  return `${typeName}: the body of ${where} is one object property, ${names[0]}; if it wraps the object's fields, declare x-tend-request-envelope: ${names[0]} on the operation`;
}

/** The body to send: the fields wrapped in the envelope's property, or as they are. */
export function wrapRequest(
  body: Record<string, unknown>,
  field: string | undefined,
): Record<string, unknown> {
  if (field === undefined) return body;
  const out: Record<string, unknown> = {};
  Object.defineProperty(out, field, { value: body, enumerable: true, writable: true });
  return out;
}

function isWrapper(prop: unknown): boolean {
  return (
    isObject(prop) && !hasType(prop, 'array') && Object.keys(objectView(prop).properties).length > 0
  );
}
