// The PostgreSQL provider's resource types, one module each, and how their values compare
// (`normalize`): comments without Tend's marker for every type, the rest as each type says
// (memberships and privileges as sets, encodings by name, expiry times as instants).
import type { ResourceTypeInfo } from '../../core/index.js';
import { withoutMarkerIn } from '../../core/index.js';
import { AUDIT } from './audit.js';
import { DATABASE } from './database.js';
import { EXTENSION } from './extension.js';
import { GRANT } from './grant.js';
import type { PostgresType } from './postgres-type.js';
import { ROLE } from './role.js';
import { SCHEMA } from './schema.js';

/** Every type of the provider, in the order the provider describes them. */
export const POSTGRES_TYPE_MODULES: readonly PostgresType[] = [
  ROLE,
  DATABASE,
  SCHEMA,
  EXTENSION,
  GRANT,
  AUDIT,
];

const BY_NAME = new Map(POSTGRES_TYPE_MODULES.map((t) => [t.info.name, t] as const));

/** The provider's types as the provider contract describes them. */
export const POSTGRES_TYPES: readonly ResourceTypeInfo[] = POSTGRES_TYPE_MODULES.map((t) => t.info);

/** The module of a type, or undefined when the provider has no such type. */
export function postgresType(name: string): PostgresType | undefined {
  return BY_NAME.get(name);
}

/** How a value of a type's field compares (see the file comment). */
export function normalizeValue(
  type: string,
  path: string,
  value: unknown,
  object?: Readonly<Record<string, unknown>>,
): unknown {
  if (path === 'comment') return withoutMarkerIn('text', value);
  const normalize = BY_NAME.get(type)?.normalize;
  return normalize === undefined ? value : normalize(path, value, object);
}
