// Observing a cluster: one catalog query per resource type per pass (never one per object), each row
// turned into the fields the type's schema declares. System objects are left out: roles named
// `pg_*`, template databases, schemas `pg_*` and `information_schema`, the `plpgsql` extension.
import type { GrantOn, GrantTarget } from './ids.js';
import { databaseId, extensionId, grantId, roleId, schemaId } from './ids.js';
import { PRIVILEGES } from './sql.js';

/** The part of a `pg` client the catalog reader uses. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

/** One observed object before the marker is read from its comment. */
export interface CatalogRow {
  readonly id: string;
  readonly fields: Record<string, unknown>;
}

const USER_SCHEMA = (n: string) =>
  `${n}.nspname NOT LIKE 'pg\\_%' AND ${n}.nspname <> 'information_schema'`;

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

const DATABASES = `SELECT d.datname AS name, pg_get_userbyid(d.datdba) AS owner,
  pg_encoding_to_char(d.encoding) AS encoding, d.datcollate AS lc_collate, d.datctype AS lc_ctype,
  d.datconnlimit AS connection_limit, shobj_description(d.oid, 'pg_database') AS comment
FROM pg_database d WHERE NOT d.datistemplate`;

const SCHEMAS = `SELECT n.nspname AS name, pg_get_userbyid(n.nspowner) AS owner,
  obj_description(n.oid, 'pg_namespace') AS comment
FROM pg_namespace n WHERE ${USER_SCHEMA('n')}`;

const EXTENSIONS = `SELECT e.extname AS name, e.extversion AS version, n.nspname AS schema,
  obj_description(e.oid, 'pg_extension') AS comment
FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname <> 'plpgsql'`;

/**
 * Every grant, as (target, name, for_role, grantee, privilege) rows: ACL entries of databases and
 * schemas; for "all tables/sequences/functions in schema", the privileges a role holds on every
 * object of the kind in the schema (a privilege missing on one of them is not held on all); default
 * privileges set for a schema. Grants to PUBLIC and the owner's own entries are not grants Tend
 * manages.
 */
const GRANTS = `WITH objs AS (
  SELECT n.nspname AS name,
    CASE WHEN c.relkind = 'S' THEN 'allSequencesInSchema' ELSE 'allTablesInSchema' END AS target,
    c.oid, c.relowner AS owner, c.relacl AS acl
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S') AND ${USER_SCHEMA('n')}
  UNION ALL
  SELECT n.nspname, 'allFunctionsInSchema', p.oid, p.proowner, p.proacl
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
  WHERE p.prokind IN ('f', 'a', 'w') AND ${USER_SCHEMA('n')}
), counts AS (
  SELECT name, target, count(*) AS n FROM objs GROUP BY name, target
), held AS (
  SELECT o.name, o.target, a.grantee, a.privilege_type, count(DISTINCT o.oid) AS n
  FROM objs o CROSS JOIN LATERAL aclexplode(o.acl) a
  WHERE a.grantee <> 0 AND a.grantee <> o.owner
  GROUP BY o.name, o.target, a.grantee, a.privilege_type
)
SELECT 'database' AS target, d.datname AS name, NULL AS for_role, g.rolname AS grantee,
  a.privilege_type AS privilege
FROM pg_database d CROSS JOIN LATERAL aclexplode(d.datacl) a JOIN pg_roles g ON g.oid = a.grantee
WHERE NOT d.datistemplate AND a.grantee <> d.datdba
UNION ALL
SELECT 'schema', n.nspname, NULL, g.rolname, a.privilege_type
FROM pg_namespace n CROSS JOIN LATERAL aclexplode(n.nspacl) a JOIN pg_roles g ON g.oid = a.grantee
WHERE ${USER_SCHEMA('n')} AND a.grantee <> n.nspowner
UNION ALL
SELECT h.target, h.name, NULL, g.rolname, h.privilege_type
FROM held h JOIN counts c ON c.name = h.name AND c.target = h.target
  JOIN pg_roles g ON g.oid = h.grantee
WHERE h.n = c.n
UNION ALL
SELECT CASE da.defaclobjtype WHEN 'r' THEN 'defaultTablesInSchema'
    WHEN 'S' THEN 'defaultSequencesInSchema' ELSE 'defaultFunctionsInSchema' END,
  n.nspname, pg_get_userbyid(da.defaclrole), g.rolname, a.privilege_type
FROM pg_default_acl da JOIN pg_namespace n ON n.oid = da.defaclnamespace
  CROSS JOIN LATERAL aclexplode(da.defaclacl) a JOIN pg_roles g ON g.oid = a.grantee
WHERE da.defaclobjtype IN ('r', 'S', 'f')`;

function str(v: unknown): string {
  return typeof v === 'string' ? v : String(v);
}

/** Drops null values: a field PostgreSQL has no value for is absent, as it is when not declared. */
function present(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).filter(([, v]) => v !== null && v !== undefined));
}

/** Reads the catalogs for one type: every object of it (see the queries above). */
export async function listCatalog(db: Queryable, type: string): Promise<CatalogRow[]> {
  switch (type) {
    case 'role': {
      const { rows } = await db.query(ROLES);
      return rows.map((r) => ({ id: roleId(str(r['name'])), fields: present(r) }));
    }
    case 'database': {
      const { rows } = await db.query(DATABASES);
      return rows.map((r) => ({ id: databaseId(str(r['name'])), fields: present(r) }));
    }
    case 'schema': {
      const { rows } = await db.query(SCHEMAS);
      return rows.map((r) => ({ id: schemaId(str(r['name'])), fields: present(r) }));
    }
    case 'extension': {
      const { rows } = await db.query(EXTENSIONS);
      return rows.map((r) => ({ id: extensionId(str(r['name'])), fields: present(r) }));
    }
    case 'grant': {
      const { rows } = await db.query(GRANTS);
      return groupGrants(rows);
    }
    default:
      return [];
  }
}

/** Rows of privileges folded into one grant per (target, name, forRole, grantee). */
export function groupGrants(rows: readonly Record<string, unknown>[]): CatalogRow[] {
  const grants = new Map<string, { on: GrantOn; role: string; privileges: Set<string> }>();
  for (const r of rows) {
    const target = str(r['target']) as GrantTarget;
    const forRole = r['for_role'];
    const on: GrantOn =
      typeof forRole === 'string'
        ? { target, name: str(r['name']), forRole }
        : { target, name: str(r['name']) };
    const role = str(r['grantee']);
    const id = grantId(on, role);
    const g = grants.get(id) ?? { on, role, privileges: new Set<string>() };
    g.privileges.add(str(r['privilege']));
    grants.set(id, g);
  }
  return [...grants.entries()].map(([id, g]) => ({
    id,
    fields: {
      id,
      role: g.role,
      on: onValue(g.on),
      privileges: PRIVILEGES[g.on.target].filter((p) => g.privileges.has(p)),
    },
  }));
}

/** A grant target as the declared `on` mapping: `{ schema: app }`, `{ defaultTablesInSchema: app, forRole: owner }`. */
export function onValue(on: GrantOn): Record<string, string> {
  return on.forRole !== undefined
    ? { [on.target]: on.name, forRole: on.forRole }
    : { [on.target]: on.name };
}

/** How many objects a grant on "all … in schema" would cover now (tables, sequences or functions). */
export async function countInSchema(
  db: Queryable,
  target: 'allTablesInSchema' | 'allSequencesInSchema' | 'allFunctionsInSchema',
  schema: string,
): Promise<number> {
  const text =
    target === 'allFunctionsInSchema'
      ? `SELECT count(*)::int AS n FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = $1 AND p.prokind IN ('f', 'a', 'w')`
      : `SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relkind = ANY($2::"char"[])`;
  const kinds = target === 'allSequencesInSchema' ? ['S'] : ['r', 'p', 'v', 'm', 'f'];
  const { rows } = await db.query(
    text,
    target === 'allFunctionsInSchema' ? [schema] : [schema, kinds],
  );
  return Number(rows[0]?.['n'] ?? 0);
}
