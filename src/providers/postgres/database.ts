// The `database` type: a database of the cluster — its description, its catalog query and its DDL.
// Stateful (a replace or delete needs --approve-destroy); encoding, locale and template cannot change
// after CREATE DATABASE, which, like DROP DATABASE, cannot run in a transaction.
import { listNamed } from './catalog.js';
import { commentStatements } from './comment.js';
import { databaseId } from './ids.js';
import type { PostgresType } from './postgres-type.js';
import { NAME, named } from './postgres-type.js';
import { differs, nameOf, num, str } from './spec.js';
import { ident, literal } from './sql.js';

const INFO = named(
  'database',
  'A database of the cluster. Stateful: a replace or delete needs --approve-destroy.',
  {
    owner: NAME,
    encoding: { type: 'string', minLength: 1, description: 'Create-only (e.g. UTF8).' },
    lc_collate: { type: 'string', minLength: 1, description: 'Create-only.' },
    lc_ctype: { type: 'string', minLength: 1, description: 'Create-only.' },
    template: {
      type: 'string',
      minLength: 1,
      description: 'Create-only; not recorded by PostgreSQL (compared with what Tend sent).',
    },
    connection_limit: { type: 'integer', minimum: -1 },
  },
  {
    createOnly: ['name', 'encoding', 'lc_collate', 'lc_ctype', 'template'],
    writeOnly: ['template'],
    stateful: true,
  },
);

const DATABASES = `SELECT d.datname AS name, pg_get_userbyid(d.datdba) AS owner,
  pg_encoding_to_char(d.encoding) AS encoding, d.datcollate AS lc_collate, d.datctype AS lc_ctype,
  d.datconnlimit AS connection_limit, shobj_description(d.oid, 'pg_database') AS comment
FROM pg_database d WHERE NOT d.datistemplate`;

/** What `CREATE DATABASE` takes besides the name. */
export interface DatabaseOptions {
  readonly owner?: string;
  readonly encoding?: string;
  readonly lc_collate?: string;
  readonly lc_ctype?: string;
  readonly template?: string;
  readonly connection_limit?: number;
}

/**
 * `CREATE DATABASE "name" …`. An encoding or locale other than the template's is only allowed from
 * `template0`, so that is the template when one of them is given and no template is.
 */
export function createDatabase(name: string, o: DatabaseOptions): string {
  const parts: string[] = [];
  if (o.owner !== undefined) parts.push(`OWNER ${ident(o.owner)}`);
  const template =
    o.template ??
    (o.encoding !== undefined || o.lc_collate !== undefined || o.lc_ctype !== undefined
      ? 'template0'
      : undefined);
  if (template !== undefined) parts.push(`TEMPLATE ${ident(template)}`);
  if (o.encoding !== undefined) parts.push(`ENCODING ${literal(o.encoding)}`);
  if (o.lc_collate !== undefined) parts.push(`LC_COLLATE ${literal(o.lc_collate)}`);
  if (o.lc_ctype !== undefined) parts.push(`LC_CTYPE ${literal(o.lc_ctype)}`);
  if (o.connection_limit !== undefined) {
    parts.push(`CONNECTION LIMIT ${Math.trunc(o.connection_limit)}`);
  }
  return `CREATE DATABASE ${ident(name)}${parts.length > 0 ? ` ${parts.join(' ')}` : ''}`;
}

/** `ALTER DATABASE "name" OWNER TO "owner"`. */
export function alterDatabaseOwner(name: string, owner: string): string {
  return `ALTER DATABASE ${ident(name)} OWNER TO ${ident(owner)}`;
}

/** `ALTER DATABASE "name" CONNECTION LIMIT n`. */
export function alterDatabaseConnectionLimit(name: string, limit: number): string {
  return `ALTER DATABASE ${ident(name)} CONNECTION LIMIT ${Math.trunc(limit)}`;
}

/** `DROP DATABASE IF EXISTS "name"`. */
export function dropDatabase(name: string): string {
  return `DROP DATABASE IF EXISTS ${ident(name)}`;
}

/** The declared options of `CREATE DATABASE` (those not declared are not written). */
function databaseOptions(desired: Readonly<Record<string, unknown>>): DatabaseOptions {
  const o: { -readonly [K in keyof DatabaseOptions]: DatabaseOptions[K] } = {};
  for (const k of ['owner', 'encoding', 'lc_collate', 'lc_ctype', 'template'] as const) {
    const v = str(desired, k);
    if (v !== undefined) o[k] = v;
  }
  const limit = num(desired, 'connection_limit');
  if (limit !== undefined) o.connection_limit = limit;
  return o;
}

function normalize(path: string, value: unknown): unknown {
  if (path === 'encoding' && typeof value === 'string') {
    return value.toUpperCase().replace(/[-_]/g, '');
  }
  return value;
}

/** The `database` type. */
export const DATABASE: PostgresType = {
  info: INFO,
  normalize,
  list: (s) => listNamed(s, 'database', DATABASES, databaseId),

  async create(s, desired, ctx) {
    const name = nameOf('database', desired);
    const what = `creating database ${JSON.stringify(name)}`;
    const comment = commentStatements('DATABASE', name, desired, undefined, ctx.marker);
    await s.single(what, createDatabase(name, databaseOptions(desired)), ctx.fence);
    await s.transaction(`${what} (comment)`, comment, ctx);
    return s.mustRead('database', name, what);
  },

  async update(s, id, desired, current, ctx) {
    const what = `updating database ${JSON.stringify(id)}`;
    const statements: string[] = [];
    const changes = (f: string): boolean => differs(f, desired, current.fields, normalize);
    if (changes('owner')) statements.push(alterDatabaseOwner(id, str(desired, 'owner')!));
    if (changes('connection_limit')) {
      statements.push(alterDatabaseConnectionLimit(id, num(desired, 'connection_limit')!));
    }
    for (const c of commentStatements('DATABASE', id, desired, current, ctx.marker)) {
      statements.push(c);
    }
    await s.transaction(what, statements, ctx);
    return s.mustRead('database', id, what);
  },

  delete: (s, id, ctx) =>
    s.single(`deleting database ${JSON.stringify(id)}`, dropDatabase(id), ctx.fence),
};
