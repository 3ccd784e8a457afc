// The `grant` type: privileges of a role on a database, a schema, all tables (sequences, functions)
// in a schema, or default privileges for future ones — its description, its catalog query (from the
// ACLs) and its DDL. Grants carry no comment, hence no marker: they are Tend's through its record.
// Privileges compare as a set.
import type { ResourceTypeInfo } from '../../core/index.js';
import { TendError } from '../../core/index.js';
import type { CatalogRow, Queryable } from './catalog.js';
import { observedObject, text, USER_SCHEMA } from './catalog.js';
import type { GrantOn, GrantTarget } from './ids.js';
import { GRANT_TARGETS, grantId, isDefaultTarget, parseGrantId } from './ids.js';
import type { PostgresType } from './postgres-type.js';
import { BASE, NAME } from './postgres-type.js';
import { bad, strings } from './spec.js';
import type { PgSession } from './session.js';
import { ident } from './sql.js';

const ON_SCHEMA = {
  type: 'object',
  description:
    'What the grant is on: exactly one of database, schema, allTablesInSchema, allSequencesInSchema, allFunctionsInSchema, defaultTablesInSchema, defaultSequencesInSchema, defaultFunctionsInSchema (a name); forRole with the default* ones.',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    ...Object.fromEntries(GRANT_TARGETS.map((t) => [t, NAME])),
    forRole: NAME,
  },
} as const;

const INFO: ResourceTypeInfo = {
  ...BASE,
  name: 'grant',
  description:
    'Privileges of a role on a database, a schema, all tables/sequences/functions in a schema, or default privileges for future ones.',
  schema: {
    type: 'object',
    required: ['role', 'on', 'privileges'],
    additionalProperties: false,
    properties: {
      role: NAME,
      on: ON_SCHEMA,
      privileges: {
        type: 'array',
        minItems: 1,
        items: { type: 'string', minLength: 1 },
        description: 'Compared as a set; ALL means every privilege of the target.',
      },
    },
  },
  idField: 'id',
  naturalKeyFields: ['role', 'on'],
  createOnly: ['role', 'on'],
  outputOnly: ['id'],
};

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

/** Rows of privileges folded into one grant per (target, name, forRole, grantee). */
export function groupGrants(rows: readonly Record<string, unknown>[]): CatalogRow[] {
  const grants = new Map<string, { on: GrantOn; role: string; privileges: Set<string> }>();
  for (const r of rows) {
    const target = text(r['target']) as GrantTarget;
    const forRole = r['for_role'];
    const on: GrantOn =
      typeof forRole === 'string'
        ? { target, name: text(r['name']), forRole }
        : { target, name: text(r['name']) };
    const role = text(r['grantee']);
    const id = grantId(on, role);
    const g = grants.get(id) ?? { on, role, privileges: new Set<string>() };
    g.privileges.add(text(r['privilege']));
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
  const query =
    target === 'allFunctionsInSchema'
      ? `SELECT count(*)::int AS n FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = $1 AND p.prokind IN ('f', 'a', 'w')`
      : `SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relkind = ANY($2::"char"[])`;
  const kinds = target === 'allSequencesInSchema' ? ['S'] : ['r', 'p', 'v', 'm', 'f'];
  const { rows } = await db.query(
    query,
    target === 'allFunctionsInSchema' ? [schema] : [schema, kinds],
  );
  return Number(rows[0]?.['n'] ?? 0);
}

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

/** The grant target named by an `on` mapping, or undefined when it names none or several. */
export function targetOf(on: unknown): GrantTarget | undefined {
  if (on === null || typeof on !== 'object') return undefined;
  const keys = Object.keys(on).filter((k) => (GRANT_TARGETS as readonly string[]).includes(k));
  return keys.length === 1 ? (keys[0] as GrantTarget) : undefined;
}

/** Privileges as PostgreSQL names them: upper case, TEMP → TEMPORARY, ALL → every one of the target. */
export function canonicalPrivileges(
  value: readonly unknown[],
  target: GrantTarget | undefined,
): string[] {
  const out = new Set<string>();
  for (const v of value) {
    const p = String(v).trim().toUpperCase().replace(/\s+/g, ' ');
    if ((p === 'ALL' || p === 'ALL PRIVILEGES') && target !== undefined) {
      for (const q of PRIVILEGES[target]) out.add(q);
    } else out.add(p === 'TEMP' ? 'TEMPORARY' : p);
  }
  const order = target === undefined ? [] : PRIVILEGES[target];
  return [...out].sort((a, b) => {
    const i = order.indexOf(a);
    const j = order.indexOf(b);
    return i === -1 || j === -1 ? a.localeCompare(b) : i - j;
  });
}

/** The grant target an `on` mapping names; a clear error for a malformed one. */
function grantOn(on: unknown): GrantOn {
  const target = targetOf(on);
  if (target === undefined) {
    throw bad(
      '`on` must name exactly one of database, schema, allTablesInSchema, allSequencesInSchema, allFunctionsInSchema, defaultTablesInSchema, defaultSequencesInSchema, defaultFunctionsInSchema',
      'e.g. on: { schema: app } or on: { defaultTablesInSchema: app, forRole: owner }',
    );
  }
  const o = on as Record<string, unknown>;
  const name = String(o[target]);
  const forRole = o['forRole'];
  if (target.startsWith('default')) {
    if (typeof forRole !== 'string' || forRole === '') {
      throw bad(
        `default privileges (${target}) need \`on.forRole\`: the role whose future objects get them`,
        `e.g. on: { ${target}: ${name}, forRole: owner }`,
      );
    }
    return { target, name, forRole };
  }
  if (forRole !== undefined) {
    throw bad(
      `\`on.forRole\` is only for default privileges, not ${target}`,
      'remove forRole, or use a default* target',
    );
  }
  return { target, name };
}

function grantee(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') {
    throw bad(
      `a grant needs \`${field}\`: the role that gets the privileges`,
      `declare spec.${field}`,
    );
  }
  return value;
}

/**
 * A grant on all tables (sequences, functions) of a schema holding none would grant nothing, and
 * could never be observed: refused, with what to declare instead.
 */
async function mustCover(s: PgSession, on: GrantOn, what: string): Promise<void> {
  const target = on.target as 'allTablesInSchema' | 'allSequencesInSchema' | 'allFunctionsInSchema';
  const n = await s.reading(what, () => countInSchema(s.pool, target, on.name));
  if (n > 0) return;
  const kind = target.replace(/^all|InSchema$/g, '').toLowerCase();
  throw new TendError(
    'postgres.nothing_to_grant',
    `${what}: schema ${JSON.stringify(on.name)} has no ${kind}, so a grant on all of them would grant nothing (and could not be seen)`,
    {
      hint: `declare default privileges for ${kind} to come (on: { default${target.slice(3, -8)}InSchema: ${on.name}, forRole: <creator> }); this grant applies once the schema has ${kind}`,
    },
  );
}

function normalize(
  path: string,
  value: unknown,
  object?: Readonly<Record<string, unknown>>,
): unknown {
  if (path === 'privileges' && Array.isArray(value)) {
    return canonicalPrivileges(value, targetOf(object?.['on']));
  }
  return value;
}

/** The `grant` type. */
export const GRANT: PostgresType = {
  info: INFO,
  normalize,

  async list(s) {
    const { rows } = await s.reading(`reading grants from ${s.database}`, () =>
      s.pool.query<Record<string, unknown>>(GRANTS),
    );
    return groupGrants(rows).map((r) => observedObject('grant', r));
  },

  async create(s, desired, ctx) {
    const on = grantOn(desired['on']);
    const role = grantee(desired['role'], 'role');
    const privileges = canonicalPrivileges(strings(desired['privileges']), on.target);
    const what = `granting ${privileges.join(', ')} to ${role}`;
    if (on.target.startsWith('all')) await mustCover(s, on, what);
    await s.transaction(what, [grantPrivileges(on, role, privileges)], ctx);
    return s.mustRead('grant', grantId(on, role), what);
  },

  async update(s, id, desired, current, ctx) {
    const what = `updating grant ${JSON.stringify(id)}`;
    const on = grantOn(current.fields['on']);
    const role = String(current.fields['role']);
    const want = canonicalPrivileges(strings(desired['privileges']), on.target);
    const have = strings(current.fields['privileges']);
    const add = want.filter((p) => !have.includes(p));
    const remove = have.filter((p) => !want.includes(p));
    const statements: string[] = [];
    if (add.length > 0) statements.push(grantPrivileges(on, role, add));
    if (remove.length > 0) statements.push(revokePrivileges(on, role, remove));
    await s.transaction(what, statements, ctx);
    return s.mustRead('grant', id, what);
  },

  async delete(s, id, ctx) {
    const what = `deleting grant ${JSON.stringify(id)}`;
    const grant = parseGrantId(id);
    if (grant === undefined) {
      throw bad(`${id} is not a grant id`, 'grant ids look like schema:app:reader');
    }
    const current = await s.read('grant', id);
    if (!current) return; // nothing granted: already deleted
    const privileges = strings(current.fields['privileges']);
    if (privileges.length === 0) return;
    try {
      await s.transaction(what, [revokePrivileges(grant.on, grant.role, privileges)], ctx);
    } catch (e) {
      // The role, database or schema went away meanwhile: nothing is granted any more.
      const code = e instanceof TendError ? e.code : '';
      if (code.startsWith('postgres.undefined_')) return;
      throw e;
    }
  },
};
