// The statements the PostgreSQL provider sends, built from declared values. DDL takes no bind
// parameters, so every name goes through `pg.escapeIdentifier` and every value through
// `pg.escapeLiteral` (or is a number checked here): a name with quotes, spaces or capitals is one
// identifier, exactly as written, and a name designed as SQL injection is just a strange name.
import pg from 'pg';
import type { GrantOn, GrantTarget } from './ids.js';
import { isDefaultTarget } from './ids.js';

const ident = (name: string): string => pg.escapeIdentifier(name);
const literal = (text: string): string => pg.escapeLiteral(text);

/** The role attributes that are flags: declared field → the keyword pair. */
export const ROLE_FLAGS = {
  superuser: ['SUPERUSER', 'NOSUPERUSER'],
  createdb: ['CREATEDB', 'NOCREATEDB'],
  createrole: ['CREATEROLE', 'NOCREATEROLE'],
  inherit: ['INHERIT', 'NOINHERIT'],
  login: ['LOGIN', 'NOLOGIN'],
  replication: ['REPLICATION', 'NOREPLICATION'],
  bypassrls: ['BYPASSRLS', 'NOBYPASSRLS'],
} as const;

/** The role attributes `CREATE ROLE` / `ALTER ROLE` take (all optional; absent ones not written). */
export interface RoleAttributes {
  readonly superuser?: boolean;
  readonly createdb?: boolean;
  readonly createrole?: boolean;
  readonly inherit?: boolean;
  readonly login?: boolean;
  readonly replication?: boolean;
  readonly bypassrls?: boolean;
  readonly connection_limit?: number;
  /** A timestamp PostgreSQL understands, or `infinity`; null means no expiry. */
  readonly valid_until?: string | null;
  /** The password as PostgreSQL stores it: a SCRAM verifier, never the clear text. */
  readonly passwordVerifier?: string;
}

function roleOptions(a: RoleAttributes): string {
  const parts: string[] = [];
  for (const [field, [on, off]] of Object.entries(ROLE_FLAGS)) {
    const v = a[field as keyof typeof ROLE_FLAGS];
    if (v !== undefined) parts.push(v ? on : off);
  }
  if (a.connection_limit !== undefined) {
    if (!Number.isInteger(a.connection_limit) || a.connection_limit < -1) {
      throw new RangeError(
        `connection_limit must be a whole number >= -1, not ${a.connection_limit}`,
      );
    }
    parts.push(`CONNECTION LIMIT ${a.connection_limit}`);
  }
  if (a.valid_until !== undefined) {
    parts.push(`VALID UNTIL ${literal(a.valid_until ?? 'infinity')}`);
  }
  if (a.passwordVerifier !== undefined) parts.push(`PASSWORD ${literal(a.passwordVerifier)}`);
  return parts.length === 0 ? '' : ` WITH ${parts.join(' ')}`;
}

/** `CREATE ROLE "name" WITH …`. */
export function createRole(name: string, a: RoleAttributes): string {
  return `CREATE ROLE ${ident(name)}${roleOptions(a)}`;
}

/** `ALTER ROLE "name" WITH …`; undefined when there is nothing to change. */
export function alterRole(name: string, a: RoleAttributes): string | undefined {
  const options = roleOptions(a);
  return options === '' ? undefined : `ALTER ROLE ${ident(name)}${options}`;
}

/** `DROP ROLE IF EXISTS "name"` (a missing role is already deleted). */
export function dropRole(name: string): string {
  return `DROP ROLE IF EXISTS ${ident(name)}`;
}

/** `GRANT "group" TO "member"`: membership in another role. */
export function grantMembership(group: string, member: string): string {
  return `GRANT ${ident(group)} TO ${ident(member)}`;
}

/** `REVOKE "group" FROM "member"`. */
export function revokeMembership(group: string, member: string): string {
  return `REVOKE ${ident(group)} FROM ${ident(member)}`;
}

/** The objects `COMMENT ON` can carry Tend's marker for. */
export type CommentTarget = 'ROLE' | 'DATABASE' | 'SCHEMA' | 'EXTENSION';

/** `COMMENT ON <kind> "name" IS '…'`, or `IS NULL` to remove the comment. */
export function commentOn(kind: CommentTarget, name: string, text: string | null): string {
  return `COMMENT ON ${kind} ${ident(name)} IS ${text === null || text === '' ? 'NULL' : literal(text)}`;
}

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

/** The privileges each grant target knows, in PostgreSQL's order. */
export const PRIVILEGES: Readonly<Record<GrantTarget, readonly string[]>> = {
  database: ['CREATE', 'CONNECT', 'TEMPORARY'],
  schema: ['USAGE', 'CREATE'],
  allTablesInSchema: ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER'],
  allSequencesInSchema: ['USAGE', 'SELECT', 'UPDATE'],
  allFunctionsInSchema: ['EXECUTE'],
  defaultTablesInSchema: [
    'SELECT',
    'INSERT',
    'UPDATE',
    'DELETE',
    'TRUNCATE',
    'REFERENCES',
    'TRIGGER',
  ],
  defaultSequencesInSchema: ['USAGE', 'SELECT', 'UPDATE'],
  defaultFunctionsInSchema: ['EXECUTE'],
};

const OBJECTS: Record<GrantTarget, string> = {
  database: 'DATABASE',
  schema: 'SCHEMA',
  allTablesInSchema: 'ALL TABLES IN SCHEMA',
  allSequencesInSchema: 'ALL SEQUENCES IN SCHEMA',
  allFunctionsInSchema: 'ALL FUNCTIONS IN SCHEMA',
  defaultTablesInSchema: 'TABLES',
  defaultSequencesInSchema: 'SEQUENCES',
  defaultFunctionsInSchema: 'FUNCTIONS',
};

function privilegeList(on: GrantOn, privileges: readonly string[]): string {
  const known = PRIVILEGES[on.target];
  for (const p of privileges) {
    if (!known.includes(p)) {
      throw new RangeError(`${p} is not a privilege on ${on.target} (known: ${known.join(', ')})`);
    }
  }
  if (privileges.length === 0) throw new RangeError('a grant needs at least one privilege');
  return privileges.join(', ');
}

/**
 * `GRANT … ON … TO "role"`, or for default privileges `ALTER DEFAULT PRIVILEGES FOR ROLE "r" IN
 * SCHEMA "s" GRANT … ON TABLES TO "role"`. Privileges are canonical names (see `PRIVILEGES`).
 */
export function grantPrivileges(on: GrantOn, role: string, privileges: readonly string[]): string {
  const list = privilegeList(on, privileges);
  if (isDefaultTarget(on.target)) {
    return `${defaultsPrefix(on)} GRANT ${list} ON ${OBJECTS[on.target]} TO ${ident(role)}`;
  }
  return `GRANT ${list} ON ${OBJECTS[on.target]} ${ident(on.name)} TO ${ident(role)}`;
}

/** The `REVOKE` (or `ALTER DEFAULT PRIVILEGES … REVOKE`) undoing `grantPrivileges`. */
export function revokePrivileges(on: GrantOn, role: string, privileges: readonly string[]): string {
  const list = privilegeList(on, privileges);
  if (isDefaultTarget(on.target)) {
    return `${defaultsPrefix(on)} REVOKE ${list} ON ${OBJECTS[on.target]} FROM ${ident(role)}`;
  }
  return `REVOKE ${list} ON ${OBJECTS[on.target]} ${ident(on.name)} FROM ${ident(role)}`;
}

function defaultsPrefix(on: GrantOn): string {
  if (on.forRole === undefined || on.forRole === '') {
    throw new RangeError('default privileges need forRole: the role whose future objects get them');
  }
  return `ALTER DEFAULT PRIVILEGES FOR ROLE ${ident(on.forRole)} IN SCHEMA ${ident(on.name)}`;
}

/**
 * The settings that let PostgreSQL's audit (an event trigger, `current_setting('tend.actor')`) say
 * who made a change: one statement with bind parameters, local to the transaction.
 */
export const SET_ACTOR =
  "SELECT set_config('tend.actor', $1, true), set_config('tend.intent', $2, true), set_config('tend.motivation', $3, true)";
