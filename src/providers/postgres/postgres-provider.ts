// The native PostgreSQL provider: roles, databases, schemas, extensions and grants of one cluster,
// behind the same contract as the OpenAPI provider. Objects are observed by reading the catalogs
// (catalog.ts, one query per type), changed with DDL built in sql.ts, each change in one transaction
// where PostgreSQL allows it (CREATE/DROP DATABASE cannot be in one). Tend's ownership marker is kept
// at the end of the object's comment (`COMMENT ON`); grants have no comment and are Tend's through
// its record of creating them. The `audit` type installs Tend's DDL audit (ddl-audit.ts); once it is
// installed, `changes()` reads it as the provider's change feed (rows mapped by audit-feed.ts).
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import type {
  ActionDefinition,
  ChangesPage,
  LifecycleEvaluation,
  ObservedChange,
  Marker,
  ObservedObject,
  Provider,
  ProviderDescription,
  WriteContext,
} from '../../core/index.js';
import {
  canonicalJson,
  setKey,
  splitMarkerText,
  TendError,
  withMarkerText,
} from '../../core/index.js';
import { postgresActions } from './actions/rotate-password.js';
import { scramVerifier } from './actions/generate-secret.js';
import { installAudit, readAuditFeed, readAuditInstallation, uninstallAudit } from './ddl-audit.js';
import { auditObjectOf } from './audit-feed.js';
import type { CatalogRow } from './catalog.js';
import { countInSchema, listCatalog } from './catalog.js';
import type { PgConnection } from './connection.js';
import { pgError, sqlstateOf } from './errors.js';
import type { GrantOn } from './ids.js';
import { grantId, parseGrantId } from './ids.js';
import * as sql from './sql.js';
import type { RoleAttributes } from './sql.js';
import { canonicalPrivileges, normalizeValue, POSTGRES_TYPES, targetOf } from './types.js';

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

const COMMENT_KIND = {
  role: 'ROLE',
  database: 'DATABASE',
  schema: 'SCHEMA',
  extension: 'EXTENSION',
} as const;
type CommentedType = keyof typeof COMMENT_KIND;

function bad(message: string, hint: string): TendError {
  return new TendError('postgres.invalid_spec', message, { hint });
}

function str(spec: Readonly<Record<string, unknown>>, key: string): string | undefined {
  const v = spec[key];
  return typeof v === 'string' ? v : undefined;
}

function num(spec: Readonly<Record<string, unknown>>, key: string): number | undefined {
  const v = spec[key];
  return typeof v === 'number' ? v : undefined;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
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
  for (const f of Object.keys(sql.ROLE_FLAGS)) {
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

/** Merges a new marker with the one an object has (the op of the create is never erased). */
function mergedMarker(marker: Marker | undefined, had: Marker | undefined): Marker | undefined {
  if (marker === undefined) return had;
  return marker.op === undefined && had?.op !== undefined ? { ...marker, op: had.op } : marker;
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

  /** The schemas holding a current audit installation (normally one, the declared one). */
  const auditInstallations = async (): Promise<ObservedObject[]> => {
    const { rows } = await pool.query<{ schema: string }>(
      `SELECT DISTINCT n.nspname AS schema FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE p.proname = 'capture_ddl' AND p.prorettype = 'event_trigger'::regtype ORDER BY 1`,
    );
    const out: ObservedObject[] = [];
    for (const r of rows) {
      const now = await readAuditInstallation(pool, r.schema);
      // An older or partial installation is not listed: the plan installs it again (idempotent).
      if (!now.installed) continue;
      out.push({
        type: 'audit',
        id: r.schema,
        fields: { schema: r.schema, ...(now.version !== undefined && { version: now.version }) },
      });
    }
    if (out.length > 0) auditSeen = true;
    return out;
  };

  const typeInfo = (type: string) => {
    const info = POSTGRES_TYPES.find((t) => t.name === type);
    if (!info) {
      throw new TendError(
        'provider.unknown_type',
        `provider ${options.name} has no type ${type}; it has ${POSTGRES_TYPES.map((t) => t.name).join(', ')}`,
      );
    }
    return info;
  };

  const observed = (type: string, row: CatalogRow): ObservedObject => {
    const comment = row.fields['comment'];
    const marker = typeof comment === 'string' ? splitMarkerText(comment).marker : undefined;
    return { type, id: row.id, fields: row.fields, ...(marker ? { marker } : {}) };
  };

  const list = async (type: string): Promise<ObservedObject[]> => {
    typeInfo(type);
    if (type === 'audit') {
      try {
        return await auditInstallations();
      } catch (e) {
        throw pgError(e, `reading the DDL audit installation of ${database}`, false);
      }
    }
    let rows: CatalogRow[];
    try {
      rows = await listCatalog(pool, type);
    } catch (e) {
      throw pgError(e, `reading ${type}s from ${database}`, false);
    }
    return rows.map((r) => observed(type, r));
  };

  const read = async (type: string, id: string): Promise<ObservedObject | undefined> =>
    (await list(type)).find((o) => o.id === id);

  /**
   * Runs statements in one transaction, with the actor in settings PostgreSQL's audit can read.
   * A failure before COMMIT rolled everything back (the outcome is known, also when the connection
   * went away); a lost connection during COMMIT leaves the outcome unknown.
   */
  const transaction = async (
    what: string,
    statements: readonly string[],
    ctx: WriteContext,
  ): Promise<void> => {
    if (statements.length === 0) return;
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (e) {
      throw pgError(e, what, false);
    }
    let committing = false;
    let broken = false;
    try {
      await client.query('BEGIN');
      await client.query(sql.SET_ACTOR, [
        ctx.actor.actor,
        ctx.actor.intent ?? '',
        ctx.actor.motivation ?? '',
      ]);
      for (const s of statements) await client.query(s);
      committing = true;
      await client.query('COMMIT');
    } catch (e) {
      // A connection that failed without a server error is not given back to the pool.
      broken = sqlstateOf(e) === undefined;
      if (!broken) await client.query('ROLLBACK').catch(() => undefined);
      // Before COMMIT, a lost connection rolls the transaction back: only COMMIT leaves it unknown.
      throw pgError(e, what, committing);
    } finally {
      client.release(broken);
    }
  };

  /** One statement outside a transaction (CREATE/DROP DATABASE cannot run in one). */
  const single = async (what: string, statement: string): Promise<void> => {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (e) {
      throw pgError(e, what, false); // nothing was sent
    }
    let broken = false;
    try {
      await client.query(statement);
    } catch (e) {
      broken = sqlstateOf(e) === undefined;
      throw pgError(e, what, true);
    } finally {
      client.release(broken);
    }
  };

  /** The COMMENT ON statement putting the marker (and declared text) on an object, if it changes. */
  const commentStatement = (
    type: CommentedType,
    name: string,
    desired: Readonly<Record<string, unknown>>,
    current: ObservedObject | undefined,
    marker: Marker | undefined,
  ): string | undefined => {
    const now = current?.fields['comment'];
    const nowText = typeof now === 'string' ? now : '';
    const declared = str(desired, 'comment');
    const text = declared ?? splitMarkerText(nowText).text;
    const merged = mergedMarker(marker, current?.marker);
    const next = merged ? withMarkerText(text, merged) : text;
    return next === nowText ? undefined : sql.commentOn(COMMENT_KIND[type], name, next);
  };

  const mustRead = async (type: string, id: string, what: string): Promise<ObservedObject> => {
    const o = await read(type, id);
    if (!o) {
      throw new TendError(
        'postgres.not_visible',
        `${what} succeeded but ${type} ${id} is not in the catalog`,
        {
          retryable: true,
          outcomeUnknown: true,
        },
      );
    }
    return o;
  };

  /**
   * A grant on all tables (sequences, functions) of a schema holding none would grant nothing, and
   * could never be observed: refused, with what to declare instead.
   */
  const mustCover = async (on: GrantOn, what: string): Promise<void> => {
    const target = on.target as
      'allTablesInSchema' | 'allSequencesInSchema' | 'allFunctionsInSchema';
    let n: number;
    try {
      n = await countInSchema(pool, target, on.name);
    } catch (e) {
      throw pgError(e, what, false);
    }
    if (n > 0) return;
    const kind = target.replace(/^all|InSchema$/g, '').toLowerCase();
    throw new TendError(
      'postgres.nothing_to_grant',
      `${what}: schema ${JSON.stringify(on.name)} has no ${kind}, so a grant on all of them would grant nothing (and could not be seen)`,
      {
        hint: `declare default privileges for ${kind} to come (on: { default${target.slice(3, -8)}InSchema: ${on.name}, forRole: <creator> }); this grant applies once the schema has ${kind}`,
      },
    );
  };

  const nameOf = (type: string, desired: Readonly<Record<string, unknown>>): string => {
    const name = str(desired, 'name');
    if (name === undefined) throw bad(`a ${type} needs a name`, 'declare spec.name');
    return name;
  };

  /** Installs (or brings up to date) the audit in `schema`; a superuser's job (the error says so). */
  const install = async (schema: string, what: string): Promise<ObservedObject> => {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (e) {
      throw pgError(e, what, false);
    }
    let broken = false;
    try {
      await installAudit(client, schema);
    } catch (e) {
      if (e instanceof TendError) throw e;
      broken = sqlstateOf(e) === undefined;
      throw pgError(e, what, broken);
    } finally {
      client.release(broken);
    }
    return mustRead('audit', schema, what);
  };

  /** The feed's changes with the object as the catalog shows it now (`after`), deletes without. */
  const withAfter = async (changes: readonly ObservedChange[]): Promise<ObservedChange[]> => {
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
  };

  /**
   * One page of the feed: the audit rows after `cursor` of the (first) installed audit, mapped to the
   * provider's objects. No installation: nothing, at the same cursor.
   */
  const feedPage = async (cursor: string | undefined): Promise<ChangesPage> => {
    let schemas: ObservedObject[];
    try {
      schemas = await auditInstallations();
    } catch (e) {
      throw pgError(e, `reading the DDL audit installation of ${database}`, false);
    }
    const schema = schemas[0]?.id;
    if (schema === undefined) return { changes: [], cursor: cursor ?? '0' };
    let page: ChangesPage;
    try {
      page = await readAuditFeed(pool, schema, cursor, {
        mapObject: (objectType, identity, _schema, entry) =>
          auditObjectOf(objectType, identity, entry),
      });
    } catch (e) {
      if (e instanceof TendError) throw e;
      throw pgError(e, `reading the DDL audit of ${database}`, false);
    }
    return { changes: await withAfter(page.changes), cursor: page.cursor };
  };

  const provider: PostgresProvider = {
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
        const page = await feedPage(cursor);
        const left = until - clock();
        if (page.changes.length > 0 || left <= 0) return page;
        cursor = page.cursor;
        await sleep(Math.min(options.feedPollMs ?? 2000, left), opts.signal);
      }
    },

    list: (type) => list(type),
    read: (type, id) => read(type, id),

    async create(type, desired, ctx) {
      typeInfo(type);
      if (type === 'audit') {
        const schema = str(desired, 'schema');
        if (schema === undefined)
          throw bad('an audit needs a schema', 'declare spec.schema, e.g. tend_audit');
        return install(schema, `installing the DDL audit in schema ${JSON.stringify(schema)}`);
      }
      if (type === 'grant') {
        const on = grantOn(desired['on']);
        const role = nameOrThrow(desired['role'], 'role');
        const privileges = canonicalPrivileges(strings(desired['privileges']), on.target);
        const what = `granting ${privileges.join(', ')} to ${role}`;
        if (on.target.startsWith('all')) await mustCover(on, what);
        await transaction(what, [sql.grantPrivileges(on, role, privileges)], ctx);
        const id = grantId(on, role);
        return mustRead(type, id, what);
      }
      const name = nameOf(type, desired);
      const what = `creating ${type} ${JSON.stringify(name)}`;
      const comment = commentStatement(type as CommentedType, name, desired, undefined, ctx.marker);
      const after = comment === undefined ? [] : [comment];
      if (type === 'role') {
        const memberships = strings(desired['member_of']).map((g) => sql.grantMembership(g, name));
        await transaction(
          what,
          [sql.createRole(name, roleAttributes(desired)), ...memberships, ...after],
          ctx,
        );
      } else if (type === 'database') {
        await single(
          what,
          sql.createDatabase(name, {
            ...(str(desired, 'owner') !== undefined && { owner: str(desired, 'owner')! }),
            ...(str(desired, 'encoding') !== undefined && { encoding: str(desired, 'encoding')! }),
            ...(str(desired, 'lc_collate') !== undefined && {
              lc_collate: str(desired, 'lc_collate')!,
            }),
            ...(str(desired, 'lc_ctype') !== undefined && { lc_ctype: str(desired, 'lc_ctype')! }),
            ...(str(desired, 'template') !== undefined && { template: str(desired, 'template')! }),
            ...(num(desired, 'connection_limit') !== undefined && {
              connection_limit: num(desired, 'connection_limit')!,
            }),
          }),
        );
        await transaction(`${what} (comment)`, after, ctx);
      } else if (type === 'schema') {
        await transaction(what, [sql.createSchema(name, str(desired, 'owner')), ...after], ctx);
      } else {
        const create = sql.createExtension(name, {
          ...(str(desired, 'schema') !== undefined && { schema: str(desired, 'schema')! }),
          ...(str(desired, 'version') !== undefined && { version: str(desired, 'version')! }),
        });
        if (str(desired, 'comment') !== undefined) {
          await transaction(what, [create, ...after], ctx);
        } else {
          // An extension comes with its own comment (pgcrypto: "cryptographic functions"): the
          // marker goes after it, so it is read first. A crash in between leaves an unmarked
          // extension, found again by its name.
          await transaction(what, [create], ctx);
          const made = await mustRead(type, name, what);
          const comment = commentStatement('extension', name, desired, made, ctx.marker);
          await transaction(`${what} (comment)`, comment === undefined ? [] : [comment], ctx);
        }
      }
      return mustRead(type, name, what);
    },

    async update(type, id, desired, current, ctx) {
      typeInfo(type);
      const differs = (field: string): boolean =>
        desired[field] !== undefined &&
        canonicalJson(normalizeValue(type, field, desired[field], desired)) !==
          canonicalJson(normalizeValue(type, field, current.fields[field], current.fields));
      const what = `updating ${type} ${JSON.stringify(id)}`;
      if (type === 'audit') return install(id, what);
      const statements: string[] = [];
      if (type === 'grant') {
        const on = grantOn(current.fields['on']);
        const role = String(current.fields['role']);
        const want = canonicalPrivileges(strings(desired['privileges']), on.target);
        const have = strings(current.fields['privileges']);
        const add = want.filter((p) => !have.includes(p));
        const remove = have.filter((p) => !want.includes(p));
        if (add.length > 0) statements.push(sql.grantPrivileges(on, role, add));
        if (remove.length > 0) statements.push(sql.revokePrivileges(on, role, remove));
        await transaction(what, statements, ctx);
        return mustRead(type, id, what);
      }
      if (type === 'role') {
        const changed: Record<string, unknown> = {};
        for (const f of [...Object.keys(sql.ROLE_FLAGS), 'connection_limit', 'valid_until']) {
          if (differs(f)) setKey(changed, f, desired[f]);
        }
        if (desired['password'] !== undefined) changed['password'] = desired['password'];
        const alter = sql.alterRole(id, roleAttributes(changed));
        if (alter !== undefined) statements.push(alter);
        if (desired['member_of'] !== undefined) {
          const want = strings(desired['member_of']);
          const have = strings(current.fields['member_of']);
          for (const g of want) if (!have.includes(g)) statements.push(sql.grantMembership(g, id));
          for (const g of have) if (!want.includes(g)) statements.push(sql.revokeMembership(g, id));
        }
      } else if (type === 'database') {
        if (differs('owner')) statements.push(sql.alterDatabaseOwner(id, str(desired, 'owner')!));
        if (differs('connection_limit')) {
          statements.push(sql.alterDatabaseConnectionLimit(id, num(desired, 'connection_limit')!));
        }
      } else if (type === 'schema') {
        if (differs('owner')) statements.push(sql.alterSchemaOwner(id, str(desired, 'owner')!));
      } else if (type === 'extension') {
        if (differs('schema')) statements.push(sql.moveExtension(id, str(desired, 'schema')!));
        if (differs('version')) statements.push(sql.updateExtension(id, str(desired, 'version')!));
      }
      const comment = commentStatement(type as CommentedType, id, desired, current, ctx.marker);
      if (comment !== undefined) statements.push(comment);
      await transaction(what, statements, ctx);
      return mustRead(type, id, what);
    },

    async delete(type, id, ctx) {
      typeInfo(type);
      const what = `deleting ${type} ${JSON.stringify(id)}`;
      if (type === 'database') return single(what, sql.dropDatabase(id));
      if (type === 'role') return transaction(what, [sql.dropRole(id)], ctx);
      if (type === 'schema') return transaction(what, [sql.dropSchema(id)], ctx);
      if (type === 'extension') return transaction(what, [sql.dropExtension(id)], ctx);
      if (type === 'audit') {
        let client: pg.PoolClient;
        try {
          client = await pool.connect();
        } catch (e) {
          throw pgError(e, what, false);
        }
        try {
          return await uninstallAudit(client, id);
        } catch (e) {
          if (e instanceof TendError) throw e;
          throw pgError(e, what, false);
        } finally {
          client.release();
        }
      }
      const grant = parseGrantId(id);
      if (grant === undefined) {
        throw bad(`${id} is not a grant id`, 'grant ids look like schema:app:reader');
      }
      const current = await read(type, id);
      if (!current) return; // nothing granted: already deleted
      const privileges = strings(current.fields['privileges']);
      if (privileges.length === 0) return;
      try {
        await transaction(what, [sql.revokePrivileges(grant.on, grant.role, privileges)], ctx);
      } catch (e) {
        // The role, database or schema went away meanwhile: nothing is granted any more.
        const code = e instanceof TendError ? e.code : '';
        if (code.startsWith('postgres.undefined_')) return;
        throw e;
      }
    },

    evaluate: (type, current, desired) => Promise.resolve(evaluate(type, current, desired)),

    normalize: (type, path, value, object) => normalizeValue(type, path, value, object),

    actions: (type): readonly ActionDefinition[] => actionsOf(type),

    close: () => pool.end(),
  };
  return provider;

  function evaluate(
    type: string,
    current: ObservedObject,
    desired: Record<string, unknown>,
  ): LifecycleEvaluation {
    const info = typeInfo(type);
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
}

function nameOrThrow(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') {
    throw bad(
      `a grant needs \`${field}\`: the role that gets the privileges`,
      `declare spec.${field}`,
    );
  }
  return value;
}
