// The `role` type: a role (user or group) of the cluster — its description, its catalog query and
// its DDL. Memberships compare as a set, `valid_until` as an instant; a password is write-only and
// sent as a SCRAM verifier computed here, so the clear text never reaches the server or its logs.
import { setKey } from '../../core/index.js';
import { scramVerifier } from './actions/generate-secret.js';
import { listNamed } from './catalog.js';
import { commentStatements } from './comment.js';
import { roleId } from './ids.js';
import type { PostgresType } from './postgres-type.js';
import { NAME, named } from './postgres-type.js';
import { differs, nameOf, num, strings } from './spec.js';
import { ident, literal } from './sql.js';

const INFO = named(
  'role',
  'A role (user or group) of the cluster.',
  {
    login: { type: 'boolean' },
    superuser: { type: 'boolean' },
    createdb: { type: 'boolean' },
    createrole: { type: 'boolean' },
    inherit: { type: 'boolean' },
    replication: { type: 'boolean' },
    bypassrls: { type: 'boolean' },
    connection_limit: { type: 'integer', minimum: -1, description: '-1: no limit' },
    valid_until: {
      type: 'string',
      description: 'When the password stops working (ISO 8601), or `infinity`.',
    },
    member_of: {
      type: 'array',
      items: NAME,
      uniqueItems: true,
      description: 'Roles this role is a member of (compared as a set).',
    },
    password: {
      type: 'string',
      writeOnly: true,
      description:
        'From { fromEnv } or { fromFile } only; sent as a SCRAM verifier, never read back.',
    },
  },
  { sensitive: ['password'], writeOnly: ['password'] },
);

/** `rolvaliduntil` as text: ISO 8601 in UTC, `infinity`, or null. */
const VALID_UNTIL = `CASE WHEN r.rolvaliduntil IS NULL THEN NULL
  WHEN r.rolvaliduntil = 'infinity' THEN 'infinity'
  ELSE to_char(r.rolvaliduntil AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') END`;

const ROLES = `SELECT r.rolname AS name, r.rolsuper AS superuser, r.rolcreatedb AS createdb,
  r.rolcreaterole AS createrole, r.rolinherit AS inherit, r.rolcanlogin AS login,
  r.rolreplication AS replication, r.rolbypassrls AS bypassrls, r.rolconnlimit AS connection_limit,
  ${VALID_UNTIL} AS valid_until,
  COALESCE((SELECT array_agg(g.rolname::text ORDER BY g.rolname) FROM pg_auth_members m
    JOIN pg_roles g ON g.oid = m.roleid WHERE m.member = r.oid), '{}'::text[]) AS member_of,
  shobj_description(r.oid, 'pg_authid') AS comment
FROM pg_roles r WHERE r.rolname NOT LIKE 'pg\\_%'`;

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

/**
 * The verifier for a password: PostgreSQL then never sees the clear text. A password needing
 * SASLprep (non-ASCII) is sent as is, since the verifier computed here would not match the one the
 * server computes at login.
 */
function passwordVerifier(password: unknown): string | undefined {
  if (typeof password !== 'string') return undefined;
  return /^[\x20-\x7e]*$/.test(password) ? scramVerifier(password) : password;
}

function roleAttributes(spec: Readonly<Record<string, unknown>>): RoleAttributes {
  const a: Record<string, unknown> = {};
  for (const f of Object.keys(ROLE_FLAGS)) {
    if (typeof spec[f] === 'boolean') setKey(a, f, spec[f]);
  }
  const limit = num(spec, 'connection_limit');
  if (limit !== undefined) a['connection_limit'] = limit;
  const until = spec['valid_until'];
  if (typeof until === 'string' || until === null) setKey(a, 'valid_until', until);
  const verifier = passwordVerifier(spec['password']);
  if (verifier !== undefined) setKey(a, 'passwordVerifier', verifier);
  return a;
}

/** An expiry as an instant (`2027-01-01` and `2027-01-01T00:00:00Z` compare equal); text otherwise. */
function instant(value: unknown): unknown {
  if (typeof value !== 'string' || value === 'infinity') return value;
  const t = Date.parse(
    /[zZ]|[+-]\d\d(:?\d\d)?$/.test(value) || !value.includes('T') ? value : `${value}Z`,
  );
  return Number.isNaN(t) ? value : new Date(t).toISOString();
}

function normalize(path: string, value: unknown): unknown {
  if (path === 'member_of' && Array.isArray(value)) return [...new Set(value.map(String))].sort();
  if (path === 'valid_until') return instant(value);
  return value;
}

/** The `role` type. */
export const ROLE: PostgresType = {
  info: INFO,
  normalize,
  list: (s) => listNamed(s, 'role', ROLES, roleId),

  async create(s, desired, ctx) {
    const name = nameOf('role', desired);
    const what = `creating role ${JSON.stringify(name)}`;
    const memberships = strings(desired['member_of']).map((g) => grantMembership(g, name));
    const comment = commentStatements('ROLE', name, desired, undefined, ctx.marker);
    await s.transaction(
      what,
      [createRole(name, roleAttributes(desired)), ...memberships, ...comment],
      ctx,
    );
    return s.mustRead('role', name, what);
  },

  async update(s, id, desired, current, ctx) {
    const what = `updating role ${JSON.stringify(id)}`;
    const statements: string[] = [];
    const changed: Record<string, unknown> = {};
    for (const f of [...Object.keys(ROLE_FLAGS), 'connection_limit', 'valid_until']) {
      if (differs(f, desired, current.fields, normalize)) setKey(changed, f, desired[f]);
    }
    if (desired['password'] !== undefined) changed['password'] = desired['password'];
    const alter = alterRole(id, roleAttributes(changed));
    if (alter !== undefined) statements.push(alter);
    if (desired['member_of'] !== undefined) {
      const want = strings(desired['member_of']);
      const have = strings(current.fields['member_of']);
      for (const g of want) if (!have.includes(g)) statements.push(grantMembership(g, id));
      for (const g of have) if (!want.includes(g)) statements.push(revokeMembership(g, id));
    }
    for (const c of commentStatements('ROLE', id, desired, current, ctx.marker)) {
      statements.push(c);
    }
    await s.transaction(what, statements, ctx);
    return s.mustRead('role', id, what);
  },

  delete: (s, id, ctx) => s.transaction(`deleting role ${JSON.stringify(id)}`, [dropRole(id)], ctx),
};
