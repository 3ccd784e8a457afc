// The PostgreSQL provider's resource types as the provider contract describes them, and how their
// values compare (`normalize`): memberships and privileges as sets, encodings by name, expiry times
// as instants, comments without Tend's marker.
import type { ResourceTypeInfo } from '../../core/index.js';
import { withoutMarkerIn } from '../../core/index.js';
import { GRANT_TARGETS, type GrantTarget } from './ids.js';
import { PRIVILEGES } from './sql.js';

const NAME = { type: 'string', minLength: 1, maxLength: 63 } as const;
const COMMENT = {
  type: 'string',
  description: "Free text; Tend's ownership marker is kept at its end, never compared.",
} as const;

/** What every type of this provider shares: named by a natural key, annotations lifecycle. */
const BASE = {
  identity: 'natural-key',
  lifecycle: 'annotations',
  idempotencyKey: false,
  outputOnly: [],
  sensitive: [],
} as const satisfies Partial<ResourceTypeInfo>;

/**
 * An object PostgreSQL names (role, database, schema, extension): keyed and created by `name`, with
 * `properties` between the name and the `comment` that carries Tend's marker; `more` adds to or
 * overrides the description (create-only fields, write-only ones, stateful).
 */
function named(
  name: string,
  description: string,
  properties: Record<string, unknown>,
  more: Partial<ResourceTypeInfo> = {},
): ResourceTypeInfo {
  return {
    ...BASE,
    name,
    description,
    schema: {
      type: 'object',
      required: ['name'],
      additionalProperties: false,
      properties: { name: NAME, ...properties, comment: COMMENT },
    },
    idField: 'name',
    naturalKey: 'name',
    createOnly: ['name'],
    markerField: 'comment',
    markerKind: 'text',
    ...more,
  };
}

const ROLE = named(
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

const DATABASE = named(
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

const SCHEMA = named('schema', "A schema of the provider's working database.", { owner: NAME });

const EXTENSION = named(
  'extension',
  "An extension installed in the provider's working database (e.g. pgcrypto).",
  { version: { type: 'string', minLength: 1 }, schema: NAME },
);

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

const GRANT: ResourceTypeInfo = {
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

const AUDIT: ResourceTypeInfo = {
  ...BASE,
  name: 'audit',
  description:
    "Tend's DDL audit in the provider's working database: an audit table and two event triggers (docs/postgres-audit.md). Declaring it turns on the provider's change feed; installing it needs a superuser.",
  schema: {
    type: 'object',
    required: ['schema'],
    additionalProperties: false,
    properties: {
      schema: { ...NAME, description: 'The schema the audit table and functions go in.' },
      version: { type: 'string', description: 'The installed version (read only).' },
    },
  },
  idField: 'schema',
  naturalKey: 'schema',
  createOnly: ['schema'],
  outputOnly: ['version'],
};

/** The provider's types. */
export const POSTGRES_TYPES: readonly ResourceTypeInfo[] = [
  ROLE,
  DATABASE,
  SCHEMA,
  EXTENSION,
  GRANT,
  AUDIT,
];

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

/** An expiry as an instant (`2027-01-01` and `2027-01-01T00:00:00Z` compare equal); text otherwise. */
function instant(value: unknown): unknown {
  if (typeof value !== 'string' || value === 'infinity') return value;
  const t = Date.parse(
    /[zZ]|[+-]\d\d(:?\d\d)?$/.test(value) || !value.includes('T') ? value : `${value}Z`,
  );
  return Number.isNaN(t) ? value : new Date(t).toISOString();
}

/** How a value of a type's field compares (see the file comment). */
export function normalizeValue(
  type: string,
  path: string,
  value: unknown,
  object?: Readonly<Record<string, unknown>>,
): unknown {
  if (path === 'comment') return withoutMarkerIn('text', value);
  if (type === 'role' && path === 'member_of' && Array.isArray(value)) {
    return [...new Set(value.map(String))].sort();
  }
  if (type === 'role' && path === 'valid_until') return instant(value);
  if (type === 'database' && path === 'encoding' && typeof value === 'string') {
    return value.toUpperCase().replace(/[-_]/g, '');
  }
  if (type === 'grant' && path === 'privileges' && Array.isArray(value)) {
    return canonicalPrivileges(value, targetOf(object?.['on']));
  }
  return value;
}
