// The `schema` type: a schema of the provider's working database — its description, its catalog
// query and its DDL. A schema still holding objects is never dropped (RESTRICT).
import { listNamed, USER_SCHEMA } from './catalog.js';
import { commentStatements } from './comment.js';
import { schemaId } from './ids.js';
import type { PostgresType } from './postgres-type.js';
import { NAME, named } from './postgres-type.js';
import { differs, nameOf, str } from './spec.js';
import { ident } from './sql.js';

const INFO = named('schema', "A schema of the provider's working database.", { owner: NAME });

const SCHEMAS = `SELECT n.nspname AS name, pg_get_userbyid(n.nspowner) AS owner,
  obj_description(n.oid, 'pg_namespace') AS comment
FROM pg_namespace n WHERE ${USER_SCHEMA('n')}`;

/** `CREATE SCHEMA "name" [AUTHORIZATION "owner"]`. */
export function createSchema(name: string, owner?: string): string {
  return `CREATE SCHEMA ${ident(name)}${owner !== undefined ? ` AUTHORIZATION ${ident(owner)}` : ''}`;
}

/** `ALTER SCHEMA "name" OWNER TO "owner"`. */
export function alterSchemaOwner(name: string, owner: string): string {
  return `ALTER SCHEMA ${ident(name)} OWNER TO ${ident(owner)}`;
}

/** `DROP SCHEMA IF EXISTS "name"` (RESTRICT: a schema still holding objects is not dropped). */
export function dropSchema(name: string): string {
  return `DROP SCHEMA IF EXISTS ${ident(name)}`;
}

/** The `schema` type. */
export const SCHEMA: PostgresType = {
  info: INFO,
  list: (s) => listNamed(s, 'schema', SCHEMAS, schemaId),

  async create(s, desired, ctx) {
    const name = nameOf('schema', desired);
    const what = `creating schema ${JSON.stringify(name)}`;
    const comment = commentStatements('SCHEMA', name, desired, undefined, ctx.marker);
    await s.transaction(what, [createSchema(name, str(desired, 'owner')), ...comment], ctx);
    return s.mustRead('schema', name, what);
  },

  async update(s, id, desired, current, ctx) {
    const what = `updating schema ${JSON.stringify(id)}`;
    const statements: string[] = [];
    if (differs('owner', desired, current.fields)) {
      statements.push(alterSchemaOwner(id, str(desired, 'owner')!));
    }
    for (const c of commentStatements('SCHEMA', id, desired, current, ctx.marker)) {
      statements.push(c);
    }
    await s.transaction(what, statements, ctx);
    return s.mustRead('schema', id, what);
  },

  delete: (s, id, ctx) =>
    s.transaction(`deleting schema ${JSON.stringify(id)}`, [dropSchema(id)], ctx),
};
