import {
  KEYED_FORMATS,
  NORMALIZE_OPS,
  isCreateOnly,
  isOutputOnly,
  isSensitive,
  isServerOwned,
  isWriteOnly,
  normalizeOps,
} from './annotations.js';
import type { ObjectView } from './schema-view.js';

/**
 * What each top-level field of a type is to Tend, read from the create and read schemas and their
 * annotations (annotations.ts): whether a client writes it, the platform fills it, it is a secret,
 * the platform changes it on its own, it is sent but never read back, and whether it changes only
 * by a replace. An embedded sub-collection's array field (another type's objects) is none of the
 * type's own fields.
 */

/** The roles of a type's top-level fields. */
export interface FieldRoles {
  /** Output-only fields the create body lists (left out of the desired-spec schema). */
  readonly outputInCreate: readonly string[];
  /** Fields the platform fills: output-only in the read or the create. */
  readonly outputOnly: readonly string[];
  /** Fields a client may write: the create body's, output-only ones left out. */
  readonly writableFields: readonly string[];
  readonly writable: ReadonlySet<string>;
  readonly sensitive: readonly string[];
  /** Fields the platform changes on its own: never compared, never sent. */
  readonly serverOwned: readonly string[];
  /** Writable fields sent on create and never read back. */
  readonly writeOnly: readonly string[];
  /** Fields annotated create-only (in the create or the read). */
  readonly annotated: readonly string[];
}

/**
 * The roles of the fields of a type whose create body is `create` and whose read answer is `read`;
 * an unknown `x-tend-normalize` operation is a warning (once per field).
 */
export function fieldRoles(
  typeName: string,
  create: ObjectView,
  read: ObjectView,
  embedded: readonly string[],
  warnings: string[],
): FieldRoles {
  // Sets for every membership test below: a schema may have many thousands of properties.
  const embeddedSet = new Set(embedded);
  const outputInCreate = names(create, isOutputOnly).filter((n) => !embeddedSet.has(n));
  const outputInCreateSet = new Set(outputInCreate);
  const outputOnly = unique([...names(read, isOutputOnly), ...outputInCreate]).filter(
    (n) => !embeddedSet.has(n),
  );
  const writableFields = Object.keys(create.properties).filter(
    (n) => !outputInCreateSet.has(n) && !embeddedSet.has(n),
  );
  const writable = new Set(writableFields);
  const sensitive = unique([...names(create, isSensitive), ...names(read, isSensitive)]);
  const serverOwned = unique([...names(create, isServerOwned), ...names(read, isServerOwned)]);
  const writeOnly = names(create, isWriteOnly).filter((n) => writable.has(n));
  const annotated = unique([...names(create, isCreateOnly), ...names(read, isCreateOnly)]);
  for (const view of [create, read]) {
    for (const [field, prop] of Object.entries(view.properties)) {
      if (view === read && field in create.properties) continue; // reported once
      const bad = normalizeOps(prop).unknown;
      if (bad.length > 0) {
        warnings.push(
          `${typeName}.${field}: x-tend-normalize does not know ${bad.join(', ')}; it offers ${NORMALIZE_OPS.join(', ')}, and {by, at?, format: ${KEYED_FORMATS.join('|')}} or {by, at?, cases} keyed by a sibling field`,
        );
      }
    }
  }
  return {
    outputInCreate,
    outputOnly,
    writableFields,
    writable,
    sensitive,
    serverOwned,
    writeOnly,
    annotated,
  };
}

/**
 * The fields that change only by a replace, in this order: the parent fields (a new parent is
 * another object: no API moves one in place), the key of an object created at its own address,
 * every writable field when nothing changes in place (else the annotated ones), those an update by
 * POST does not take, and those sent with the create only (in its query, or as its array body).
 */
export function createOnlyFields(input: {
  readonly roles: FieldRoles;
  readonly parentFields: readonly string[];
  /** The item path parameter naming an object created at its own address. */
  readonly createdAtKey?: string;
  /** True when the type has an update in place. */
  readonly updatable: boolean;
  /** Writable fields an update by POST does not take. */
  readonly notUpdatable: readonly string[];
  /** Fields the create sends outside its body's object (create-query.ts), in order. */
  readonly sentWithCreateOnly: readonly string[];
}): string[] {
  const { writable, writableFields } = input.roles;
  const annotated = input.roles.annotated.filter((f) => writable.has(f));
  return unique([
    ...input.parentFields,
    ...(input.createdAtKey !== undefined ? [input.createdAtKey] : []),
    ...(input.updatable ? annotated : writableFields),
    ...input.notUpdatable,
    ...annotated,
    ...input.sentWithCreateOnly.filter((f) => writable.has(f)),
  ]);
}

/** The properties of a view whose schema passes `test`, in order. */
export function names(view: ObjectView, test: (p: Record<string, unknown>) => boolean): string[] {
  const out: string[] = [];
  const props = view.properties;
  for (const n of Object.keys(props)) if (test(props[n]!)) out.push(n);
  return out;
}

function unique(list: readonly string[]): string[] {
  return [...new Set(list)];
}
