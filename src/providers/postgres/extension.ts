// The `extension` type: an extension installed in the provider's working database — its
// description, its catalog query and its DDL. `version` changes with `ALTER EXTENSION … UPDATE TO`,
// `schema` with `SET SCHEMA`; an extension's own comment is kept unless `comment` is declared.
import { listNamed } from './catalog.js';
import { commentStatements } from './comment.js';
import { extensionId } from './ids.js';
import type { PostgresType } from './postgres-type.js';
import { NAME, named } from './postgres-type.js';
import { differs, nameOf, str } from './spec.js';
import { ident, literal } from './sql.js';

const INFO = named(
  'extension',
  "An extension installed in the provider's working database (e.g. pgcrypto).",
  { version: { type: 'string', minLength: 1 }, schema: NAME },
);

const EXTENSIONS = `SELECT e.extname AS name, e.extversion AS version, n.nspname AS schema,
  obj_description(e.oid, 'pg_extension') AS comment
FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname <> 'plpgsql'`;

/** `CREATE EXTENSION "name" [WITH SCHEMA "s"] [VERSION 'v']`. */
export function createExtension(name: string, o: { schema?: string; version?: string }): string {
  const parts: string[] = [];
  if (o.schema !== undefined) parts.push(`SCHEMA ${ident(o.schema)}`);
  if (o.version !== undefined) parts.push(`VERSION ${literal(o.version)}`);
  return `CREATE EXTENSION ${ident(name)}${parts.length > 0 ? ` WITH ${parts.join(' ')}` : ''}`;
}

/** `ALTER EXTENSION "name" UPDATE TO 'version'`. */
export function updateExtension(name: string, version: string): string {
  return `ALTER EXTENSION ${ident(name)} UPDATE TO ${literal(version)}`;
}

/** `ALTER EXTENSION "name" SET SCHEMA "schema"`. */
export function moveExtension(name: string, schema: string): string {
  return `ALTER EXTENSION ${ident(name)} SET SCHEMA ${ident(schema)}`;
}

/** `DROP EXTENSION IF EXISTS "name"` (RESTRICT). */
export function dropExtension(name: string): string {
  return `DROP EXTENSION IF EXISTS ${ident(name)}`;
}

/** The `extension` type. */
export const EXTENSION: PostgresType = {
  info: INFO,
  list: (s) => listNamed(s, 'extension', EXTENSIONS, extensionId),

  async create(s, desired, ctx) {
    const name = nameOf('extension', desired);
    const what = `creating extension ${JSON.stringify(name)}`;
    const create = createExtension(name, {
      ...(str(desired, 'schema') !== undefined && { schema: str(desired, 'schema')! }),
      ...(str(desired, 'version') !== undefined && { version: str(desired, 'version')! }),
    });
    if (str(desired, 'comment') !== undefined) {
      const comment = commentStatements('EXTENSION', name, desired, undefined, ctx.marker);
      await s.transaction(what, [create, ...comment], ctx);
    } else {
      // An extension comes with its own comment (pgcrypto: "cryptographic functions"): the marker
      // goes after it, so it is read first. A crash in between leaves an unmarked extension, found
      // again by its name.
      await s.transaction(what, [create], ctx);
      const made = await s.mustRead('extension', name, what);
      const comment = commentStatements('EXTENSION', name, desired, made, ctx.marker);
      await s.transaction(`${what} (comment)`, comment, ctx);
    }
    return s.mustRead('extension', name, what);
  },

  async update(s, id, desired, current, ctx) {
    const what = `updating extension ${JSON.stringify(id)}`;
    const statements: string[] = [];
    if (differs('schema', desired, current.fields)) {
      statements.push(moveExtension(id, str(desired, 'schema')!));
    }
    if (differs('version', desired, current.fields)) {
      statements.push(updateExtension(id, str(desired, 'version')!));
    }
    for (const c of commentStatements('EXTENSION', id, desired, current, ctx.marker)) {
      statements.push(c);
    }
    await s.transaction(what, statements, ctx);
    return s.mustRead('extension', id, what);
  },

  delete: (s, id, ctx) =>
    s.transaction(`deleting extension ${JSON.stringify(id)}`, [dropExtension(id)], ctx),
};
