// The ids of the PostgreSQL provider's objects. Identity is the natural key: a role, a database, a
// schema and an extension are their names; a grant is the canonical string of what it is on and to
// whom. These functions are the only place ids are made, so that anything mapping DDL to objects (the
// audit feed) makes the same ones.

/** The kinds of object a grant can be on (see `GrantOn`). */
export const GRANT_TARGETS = [
  'database',
  'schema',
  'allTablesInSchema',
  'allSequencesInSchema',
  'allFunctionsInSchema',
  'defaultTablesInSchema',
  'defaultSequencesInSchema',
  'defaultFunctionsInSchema',
] as const;
export type GrantTarget = (typeof GRANT_TARGETS)[number];

/**
 * What a grant is on, as declared: exactly one target key naming a database or schema, and for
 * default privileges `forRole`, the role whose future objects get them.
 */
export interface GrantOn {
  readonly target: GrantTarget;
  /** The database or schema name. */
  readonly name: string;
  /** Default privileges only: `ALTER DEFAULT PRIVILEGES FOR ROLE <forRole>`. */
  readonly forRole?: string;
}

/** True for the targets that are default privileges (`ALTER DEFAULT PRIVILEGES`). */
export function isDefaultTarget(target: GrantTarget): boolean {
  return target.startsWith('default');
}

/** A role's id: its name. */
export function roleId(name: string): string {
  return name;
}

/** A database's id: its name. */
export function databaseId(name: string): string {
  return name;
}

/** A schema's id: its name (schemas live in the provider's working database). */
export function schemaId(name: string): string {
  return name;
}

/** An extension's id: its name (extensions live in the provider's working database). */
export function extensionId(name: string): string {
  return name;
}

/** `%` and `:` escaped so that parts joined by `:` split back unambiguously. */
function part(text: string): string {
  return text.replace(/%/g, '%25').replace(/:/g, '%3A');
}

function unpart(text: string): string {
  return text.replace(/%3A/gi, ':').replace(/%25/g, '%');
}

/**
 * A grant's id: `<target>:<name>:<grantee>`, or `<target>:<name>:<forRole>:<grantee>` for default
 * privileges, each part with `%` and `:` percent-encoded — e.g. `schema:app:reader`,
 * `defaultTablesInSchema:app:owner:reader`.
 */
export function grantId(on: GrantOn, role: string): string {
  const parts = [
    on.target,
    on.name,
    ...(isDefaultTarget(on.target) ? [on.forRole ?? ''] : []),
    role,
  ];
  return parts.map(part).join(':');
}

/** The grant an id names, or undefined when the text is not a grant id. */
export function parseGrantId(id: string): { on: GrantOn; role: string } | undefined {
  const parts = id.split(':').map(unpart);
  const target = parts[0] as GrantTarget;
  if (!(GRANT_TARGETS as readonly string[]).includes(target)) return undefined;
  if (isDefaultTarget(target)) {
    if (parts.length !== 4) return undefined;
    return { on: { target, name: parts[1]!, forRole: parts[2]! }, role: parts[3]! };
  }
  if (parts.length !== 3) return undefined;
  return { on: { target, name: parts[1]! }, role: parts[2]! };
}
