// What a resource type of the PostgreSQL provider is: one module per type (role.ts, database.ts,
// schema.ts, extension.ts, grant.ts, audit.ts), each with its description for the provider contract,
// its catalog query (`list`) and its DDL (`create`, `update`, `delete`); registry.ts lists them and
// postgres-provider.ts dispatches to them. Also the parts of a description the types share.
import type { ObservedObject, ResourceTypeInfo, WriteContext } from '../../core/index.js';
import type { PgSession } from './session.js';
import type { Normalize } from './spec.js';

/**
 * One type of the provider. `list` reads every object of the type with one catalog query (never one
 * per object) and never changes anything; `create` and `update` return the object as the catalog
 * shows it afterwards; `delete` of an object already gone succeeds. Each change runs in one
 * transaction where PostgreSQL allows it.
 */
export interface PostgresType {
  readonly info: ResourceTypeInfo;
  list(s: PgSession): Promise<ObservedObject[]>;
  create(
    s: PgSession,
    desired: Readonly<Record<string, unknown>>,
    ctx: WriteContext,
  ): Promise<ObservedObject>;
  update(
    s: PgSession,
    id: string,
    desired: Readonly<Record<string, unknown>>,
    current: ObservedObject,
    ctx: WriteContext,
  ): Promise<ObservedObject>;
  delete(s: PgSession, id: string, ctx: WriteContext): Promise<void>;
  /** How values of the type's own fields compare; absent: as they are (see registry.ts). */
  readonly normalize?: Normalize;
  /** Listing an object of this type turns the provider's change feed on (the `audit` type). */
  readonly turnsOnFeed?: boolean;
}

/** A name as PostgreSQL allows it (at most 63 bytes). */
export const NAME = { type: 'string', minLength: 1, maxLength: 63 } as const;

const COMMENT = {
  type: 'string',
  description: "Free text; Tend's ownership marker is kept at its end, never compared.",
} as const;

/** What every type of this provider shares: named by a natural key, annotations lifecycle. */
export const BASE = {
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
export function named(
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
