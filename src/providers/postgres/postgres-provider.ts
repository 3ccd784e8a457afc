// The native PostgreSQL provider: roles, databases, schemas, extensions and grants of one cluster,
// behind the same contract as the OpenAPI provider. Each type is a module of its own (role.ts,
// database.ts, schema.ts, extension.ts, grant.ts, audit.ts; listed in registry.ts) that reads the
// catalogs with one query and changes objects with its DDL, each change in one transaction where
// PostgreSQL allows it (session.ts); this file dispatches to them. Tend's ownership marker is kept at
// the end of the object's comment (comment.ts); grants have no comment and are Tend's through its
// record of creating them. The `audit` type installs Tend's DDL audit (ddl-audit.ts); once it is
// installed, `changes()` reads it as the provider's change feed (rows mapped by audit-feed.ts).
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import type {
  ActionDefinition,
  ChangesPage,
  LifecycleEvaluation,
  ObservedChange,
  ObservedObject,
  Provider,
  ProviderDescription,
  ResourceTypeInfo,
} from '../../core/index.js';
import { canonicalJson, TendError } from '../../core/index.js';
import { postgresActions } from './actions/rotate-password.js';
import { auditObjectOf } from './audit-feed.js';
import type { PgConnection } from './connection.js';
import { readAuditFeed } from './ddl-audit.js';
import { pgError } from './errors.js';
import type { PostgresType } from './postgres-type.js';
import { normalizeValue, POSTGRES_TYPES, postgresType } from './registry.js';
import type { PgSession } from './session.js';
import { createSession } from './session.js';

/** What the provider needs: its name and a resolved connection (see connection.ts). */
export interface PostgresProviderOptions {
  readonly name: string;
  readonly connection: PgConnection;
  /** The database schemas, extensions and grants in a schema live in; default the connection's. */
  readonly database?: string;
  /** Most connections the provider holds at once (default 4). */
  readonly maxConnections?: number;
  /** How often `changes` reads the audit table again while it waits for news (default 2000 ms). */
  readonly feedPollMs?: number;
  /** Waits (tests pass a fake); default a timer that the signal cancels. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Milliseconds now (tests pass a fake); default Date.now. */
  readonly clock?: () => number;
}

/** The PostgreSQL provider. */
export interface PostgresProvider extends Provider {
  /** The database schemas, extensions and schema grants are managed in. */
  readonly database: string;
}

/** Creates the provider; connections are opened on first use. */
export function createPostgresProvider(options: PostgresProviderOptions): PostgresProvider {
  const database = options.database ?? options.connection.summary.database;
  const pool = new pg.Pool({
    ...options.connection.config,
    database,
    max: options.maxConnections ?? 4,
  });
  // An idle connection the server closes must not crash the process: the next query reconnects.
  pool.on('error', () => undefined);
  const actionsOf = postgresActions({
    connection: () => ({
      config: { ...options.connection.config, database },
      summary: { ...options.connection.summary, database },
    }),
  });
  const description: ProviderDescription = {
    types: POSTGRES_TYPES,
    auditFeed: false,
    // One server, the primary Tend writes to: a committed statement is seen by every later one, on
    // any connection of the pool (each statement of READ COMMITTED takes a new snapshot).
    consistentReads: true,
    warnings: [],
  };
  // The feed is on once an audit installation has been seen (declared as a `audit` resource).
  let auditSeen = false;

  const typeOf = (type: string): PostgresType => {
    const t = postgresType(type);
    if (!t) {
      throw new TendError(
        'provider.unknown_type',
        `provider ${options.name} has no type ${type}; it has ${POSTGRES_TYPES.map((i) => i.name).join(', ')}`,
      );
    }
    return t;
  };

  const list = async (type: string): Promise<ObservedObject[]> => {
    const t = typeOf(type);
    const objects = await t.list(session);
    if (t.turnsOnFeed === true && objects.length > 0) auditSeen = true;
    return objects;
  };

  const session: PgSession = createSession(pool, database, list);

  return {
    name: options.name,
    database,
    describe: () => (auditSeen ? { ...description, auditFeed: true } : description),

    async changes(cursor, opts = {}): Promise<ChangesPage> {
      // The audit table cannot be waited on: it is read again every feedPollMs until something is
      // new or the wait is over.
      const sleep =
        options.sleep ??
        ((ms: number, signal?: AbortSignal) =>
          delay(ms, undefined, signal ? { signal } : {}).then(() => undefined));
      const clock = options.clock ?? Date.now;
      const until = clock() + (opts.waitMs ?? 0);
      for (;;) {
        const page = await feedPage(session, list, cursor);
        const left = until - clock();
        if (page.changes.length > 0 || left <= 0) return page;
        cursor = page.cursor;
        await sleep(Math.min(options.feedPollMs ?? 2000, left), opts.signal);
      }
    },

    list: (type) => list(type),
    read: (type, id) => session.read(type, id),

    create: async (type, desired, ctx) => typeOf(type).create(session, desired, ctx),
    update: async (type, id, desired, current, ctx) =>
      typeOf(type).update(session, id, desired, current, ctx),
    delete: async (type, id, ctx) => typeOf(type).delete(session, id, ctx),

    evaluate: (type, current, desired) =>
      Promise.resolve(evaluate(typeOf(type).info, current, desired)),

    normalize: (type, path, value, object) => normalizeValue(type, path, value, object),

    actions: (type): readonly ActionDefinition[] => actionsOf(type),

    close: () => pool.end(),
  };
}

/**
 * Whether a change to the declared fields fits in place: a create-only field that differs makes a
 * replace; sensitive and write-only fields are never compared.
 */
function evaluate(
  info: ResourceTypeInfo,
  current: ObservedObject,
  desired: Record<string, unknown>,
): LifecycleEvaluation {
  const type = info.name;
  const changed = Object.keys(desired).filter(
    (f) =>
      !info.sensitive.includes(f) &&
      !(info.writeOnly ?? []).includes(f) &&
      canonicalJson(normalizeValue(type, f, desired[f], desired)) !==
        canonicalJson(normalizeValue(type, f, current.fields[f], current.fields)),
  );
  const forcing = changed.filter((f) => info.createOnly.includes(f));
  if (forcing.length > 0) {
    return {
      action: 'replace',
      fields: forcing,
      source: 'annotation',
      reason: `${forcing.join(', ')} cannot change after the ${type} is created`,
    };
  }
  return changed.length > 0
    ? { action: 'update', fields: changed, source: 'annotation' }
    : { action: 'none', fields: [], source: 'annotation' };
}

/**
 * One page of the feed: the audit rows after `cursor` of the (first) installed audit, mapped to the
 * provider's objects. No installation: nothing, at the same cursor.
 */
async function feedPage(
  s: PgSession,
  list: (type: string) => Promise<ObservedObject[]>,
  cursor: string | undefined,
): Promise<ChangesPage> {
  const schema = (await list('audit'))[0]?.id;
  if (schema === undefined) return { changes: [], cursor: cursor ?? '0' };
  let page: ChangesPage;
  try {
    page = await readAuditFeed(s.pool, schema, cursor, {
      mapObject: (objectType, identity, _schema, entry) =>
        auditObjectOf(objectType, identity, entry),
    });
  } catch (e) {
    if (e instanceof TendError) throw e;
    throw pgError(e, `reading the DDL audit of ${s.database}`, false);
  }
  return { changes: await withAfter(page.changes, list), cursor: page.cursor };
}

/** The feed's changes with the object as the catalog shows it now (`after`), deletes without. */
async function withAfter(
  changes: readonly ObservedChange[],
  list: (type: string) => Promise<ObservedObject[]>,
): Promise<ObservedChange[]> {
  const now = new Map<string, Map<string, ObservedObject>>();
  const out: ObservedChange[] = [];
  for (const c of changes) {
    if (c.action === 'delete') {
      out.push(c);
      continue;
    }
    let objects = now.get(c.type);
    if (objects === undefined) {
      objects = new Map((await list(c.type)).map((o) => [o.id, o]));
      now.set(c.type, objects);
    }
    const o = objects.get(c.id);
    out.push(o === undefined ? c : { ...c, after: o.fields });
  }
  return out;
}
