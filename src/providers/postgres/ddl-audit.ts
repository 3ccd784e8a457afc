// Change capture for DDL (issue 14, item 3): an event trigger writes every DDL command — who ran it,
// from where, the statement, and the `tend.*` settings the actor set — into an audit table, which the
// PostgreSQL provider reads as its change feed. See docs/postgres-audit.md for what PostgreSQL can
// and cannot report (roles and databases fire no event triggers).
//
// The API, for the provider to wire in:
// - `auditInstallStatements(schema)` / `auditUninstallStatements(schema)`: the SQL, idempotent;
//   `installAudit` / `uninstallAudit` run it in one transaction and explain a refusal (superuser).
// - `readAuditInstallation(client, schema)`: what is installed now and whether it is current, so the
//   installation can be a declared resource that shows up in the plan.
// - `readAuditFeed(client, schema, cursor, { limit, mapObject })`: the provider's `changes()` page.
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { ActorKind, ChangesPage, ObservedChange } from '../../core/index.js';
import { checkActorKind, TendError } from '../../core/index.js';

/**
 * The version of what `auditInstallStatements` creates. Bump it whenever the table, the functions or
 * the triggers change: an installation reporting another version is seen as needing an update.
 */
export const AUDIT_VERSION = '1';

/** The schema the audit objects go in unless the provider option names another. */
export const DEFAULT_AUDIT_SCHEMA = 'tend_audit';

/** The audit table's name inside the schema. */
export const AUDIT_TABLE = 'ddl_log';

/** The settings an actor sets in its session to be attributed (`SET tend.actor = 'alice'`). */
export const AUDIT_SETTINGS = [
  'tend.actor',
  'tend.actor_kind',
  'tend.intent',
  'tend.motivation',
] as const;

/** The longest value kept from a `tend.*` setting; longer ones are cut (a setting is user input). */
const MAX_SETTING = 400;

/** The one method of a `pg` client the audit code uses (a `pg.Client` or a pool client). */
export interface AuditClient {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

// Identifiers and literals are quoted by the driver (`pg.escapeIdentifier`, `pg.escapeLiteral`): any
// name, quotes, backslashes and `$` included, is stored and compared as exactly that name.
const quoteIdent = (name: string): string => pg.escapeIdentifier(name);
const quoteLiteral = (text: string): string => pg.escapeLiteral(text);

/** A dollar-quote tag that does not occur in `body`. */
function dollarTag(body: string): string {
  let tag = '$tend_audit$';
  for (let i = 0; body.includes(tag); i++) tag = `$tend_audit_${i}$`;
  return tag;
}

function checkSchema(schema: string): void {
  if (schema === '' || Buffer.byteLength(schema) > 63 || schema.includes('\0')) {
    throw new TendError(
      'postgres.audit_schema',
      `the audit schema name must be 1 to 63 bytes without NUL characters, got ${JSON.stringify(schema.slice(0, 80))}`,
      { hint: `leave it out to use ${DEFAULT_AUDIT_SCHEMA}` },
    );
  }
}

/**
 * The event triggers' names for a schema. Event triggers are global to a database, so the names
 * carry the schema (or, when that would pass PostgreSQL's 63 bytes, a hash of it).
 */
export function auditTriggerNames(schema: string): { ddlEnd: string; sqlDrop: string } {
  const base =
    Buffer.byteLength(schema) <= 50
      ? schema
      : `tend_audit_${createHash('sha256').update(schema).digest('hex').slice(0, 12)}`;
  return { ddlEnd: `${base}_ddl_end`, sqlDrop: `${base}_sql_drop` };
}

/** The columns of the audit table after `id`, with their types (the order of the INSERTs). */
const COLUMNS: readonly (readonly [string, string])[] = [
  ['at', 'timestamptz NOT NULL DEFAULT clock_timestamp()'],
  ['session_user_name', 'text'],
  ['current_user_name', 'text'],
  ['application_name', 'text'],
  ['client_addr', 'inet'],
  ['command_tag', 'text'],
  ['object_type', 'text'],
  ['schema_name', 'text'],
  ['object_identity', 'text'],
  ['statement', 'text'],
  ['tend_actor', 'text'],
  ['tend_actor_kind', 'text'],
  ['tend_intent', 'text'],
  ['tend_motivation', 'text'],
];

/**
 * The statement as stored: `current_query()` with every `PASSWORD '…'` literal (ALTER ROLE, a user
 * mapping's OPTIONS) replaced by `'***'`, since a multi-statement query can carry one next to the
 * DDL it records. Only plain quoted literals are caught (not E'' or dollar-quoted ones).
 */
const STATEMENT = `regexp_replace(current_query(), '(password\\s+)''([^'']|'''')*''', '\\1''***''', 'gi')`;

/**
 * The body of one capture function. It runs as its owner (the superuser who installed it: every
 * role's DDL must be able to write the log, which nobody else may write to), with a fixed
 * search_path, and never makes the user's command fail: each row is written in its own block whose
 * errors are swallowed, and a lock it cannot get within 200 ms (the table locked by someone) is such
 * an error. It never executes dynamic SQL: names and statements are only ever stored as values.
 * `current_user` inside a SECURITY DEFINER function is the owner, so the role in effect is taken
 * from the `role` setting (SET ROLE), else the session user.
 */
function captureFunction(schema: string, name: string, source: string): string {
  const table = `${quoteIdent(schema)}.${quoteIdent(AUDIT_TABLE)}`;
  const settings = AUDIT_SETTINGS.map(
    (s) => `left(nullif(current_setting(${quoteLiteral(s)}, true), ''), ${MAX_SETTING})`,
  ).join(',\n          ');
  const body = `
DECLARE
  r record;
BEGIN
  FOR r IN ${source} LOOP
    BEGIN
      INSERT INTO ${table} (${COLUMNS.slice(1)
        .map(([c]) => c)
        .join(', ')})
      VALUES (
          session_user,
          CASE WHEN current_setting('role', true) IN ('none', '') OR current_setting('role', true) IS NULL
               THEN session_user::text ELSE current_setting('role', true) END,
          left(current_setting('application_name', true), ${MAX_SETTING}),
          inet_client_addr(),
          TG_TAG,
          r.object_type,
          r.schema_name,
          r.object_identity,
          ${STATEMENT},
          ${settings});
    EXCEPTION WHEN OTHERS THEN
      NULL; -- the audit never makes the user's DDL fail
    END;
  END LOOP;
EXCEPTION WHEN OTHERS THEN
  NULL;
END`;
  const t = dollarTag(body);
  return `CREATE OR REPLACE FUNCTION ${quoteIdent(schema)}.${quoteIdent(name)}() RETURNS event_trigger
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp
  SET lock_timeout = '200ms'
AS ${t}${body}${t}`;
}

const DDL_FUNCTION = 'capture_ddl';
const DROP_FUNCTION = 'capture_drop';

/**
 * The statements that install (or bring up to date) the audit objects in `schema`: the schema, the
 * table (readable and writable by its owner only), the two capture functions and the two event
 * triggers, and the version as the table's comment. Idempotent: running them again on any earlier
 * installation leaves the current one. Run them in one transaction, as a superuser (event triggers
 * need one): `installAudit` does.
 */
export function auditInstallStatements(schema: string = DEFAULT_AUDIT_SCHEMA): string[] {
  checkSchema(schema);
  const s = quoteIdent(schema);
  const table = `${s}.${quoteIdent(AUDIT_TABLE)}`;
  const { ddlEnd, sqlDrop } = auditTriggerNames(schema);
  return [
    `CREATE SCHEMA IF NOT EXISTS ${s}`,
    `REVOKE ALL ON SCHEMA ${s} FROM PUBLIC`,
    `CREATE TABLE IF NOT EXISTS ${table} (id bigserial PRIMARY KEY)`,
    ...COLUMNS.map(([c, type]) => `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${c} ${type}`),
    `REVOKE ALL ON ${table} FROM PUBLIC`,
    captureFunction(
      schema,
      DDL_FUNCTION,
      'SELECT object_type, schema_name, object_identity FROM pg_event_trigger_ddl_commands()',
    ),
    captureFunction(
      schema,
      DROP_FUNCTION,
      'SELECT object_type, schema_name, object_identity FROM pg_event_trigger_dropped_objects() WHERE NOT is_temporary',
    ),
    `REVOKE ALL ON FUNCTION ${s}.${quoteIdent(DDL_FUNCTION)}() FROM PUBLIC`,
    `REVOKE ALL ON FUNCTION ${s}.${quoteIdent(DROP_FUNCTION)}() FROM PUBLIC`,
    `DROP EVENT TRIGGER IF EXISTS ${quoteIdent(ddlEnd)}`,
    `DROP EVENT TRIGGER IF EXISTS ${quoteIdent(sqlDrop)}`,
    `CREATE EVENT TRIGGER ${quoteIdent(ddlEnd)} ON ddl_command_end EXECUTE FUNCTION ${s}.${quoteIdent(DDL_FUNCTION)}()`,
    `CREATE EVENT TRIGGER ${quoteIdent(sqlDrop)} ON sql_drop EXECUTE FUNCTION ${s}.${quoteIdent(DROP_FUNCTION)}()`,
    `COMMENT ON TABLE ${table} IS ${quoteLiteral(`tend-audit ${AUDIT_VERSION}`)}`,
  ];
}

/**
 * The statements that remove the audit objects from `schema`: the triggers, the functions and the
 * table (its history with it), then the schema only when nothing else is left in it. Idempotent.
 */
export function auditUninstallStatements(schema: string = DEFAULT_AUDIT_SCHEMA): string[] {
  checkSchema(schema);
  const s = quoteIdent(schema);
  const { ddlEnd, sqlDrop } = auditTriggerNames(schema);
  const drop = `
BEGIN
  EXECUTE format('DROP SCHEMA IF EXISTS %I', ${quoteLiteral(schema)});
EXCEPTION WHEN dependent_objects_still_exist THEN
  NULL; -- the schema holds the user's objects too: keep it
END`;
  const t = dollarTag(drop);
  return [
    `DROP EVENT TRIGGER IF EXISTS ${quoteIdent(ddlEnd)}`,
    `DROP EVENT TRIGGER IF EXISTS ${quoteIdent(sqlDrop)}`,
    `DROP FUNCTION IF EXISTS ${s}.${quoteIdent(DDL_FUNCTION)}()`,
    `DROP FUNCTION IF EXISTS ${s}.${quoteIdent(DROP_FUNCTION)}()`,
    `DROP TABLE IF EXISTS ${s}.${quoteIdent(AUDIT_TABLE)}`,
    `DO ${t}${drop}${t}`,
  ];
}

/** One installed event trigger. */
export interface AuditTrigger {
  readonly name: string;
  readonly event: string;
  /** `O` (origin, the default), `D` (disabled), `R` (replica), `A` (always): pg_event_trigger.evtenabled. */
  readonly enabled: string;
}

/** What of the audit objects exists in a database now. */
export interface AuditInstallation {
  readonly schema: string;
  /** The table, both functions and both triggers exist, enabled, at AUDIT_VERSION. */
  readonly installed: boolean;
  /** Something is there but not all of it, or an older version, or a trigger disabled. */
  readonly needsUpdate: boolean;
  readonly table: boolean;
  readonly functions: readonly string[];
  readonly triggers: readonly AuditTrigger[];
  /** The version the table's comment records (undefined when there is no table or no comment). */
  readonly version?: string;
}

/**
 * Reads what is installed in `schema`: the table and its version, the capture functions, and the
 * event triggers that call them (found by function, whatever their names). Never mutates.
 */
export async function readAuditInstallation(
  client: AuditClient,
  schema: string = DEFAULT_AUDIT_SCHEMA,
): Promise<AuditInstallation> {
  checkSchema(schema);
  const table = `${quoteIdent(schema)}.${quoteIdent(AUDIT_TABLE)}`;
  const { rows } = await client.query(
    `SELECT to_regclass($1) IS NOT NULL AS has_table,
            obj_description(to_regclass($1), 'pg_class') AS comment,
            ARRAY(SELECT p.proname::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                   WHERE n.nspname = $2 AND p.proname IN ($3, $4) ORDER BY 1) AS functions`,
    [table, schema, DDL_FUNCTION, DROP_FUNCTION],
  );
  const head = rows[0] as { has_table: boolean; comment: string | null; functions: string[] };
  const triggers = (
    await client.query(
      `SELECT t.evtname AS name, t.evtevent AS event, t.evtenabled AS enabled
         FROM pg_event_trigger t
         JOIN pg_proc p ON p.oid = t.evtfoid
         JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = $1 AND p.proname IN ($2, $3)
        ORDER BY t.evtevent, t.evtname`,
      [schema, DDL_FUNCTION, DROP_FUNCTION],
    )
  ).rows as AuditTrigger[];
  const match = /^tend-audit (\S+)$/.exec(head.comment ?? '');
  const version = match?.[1];
  const events = new Set(triggers.filter((t) => t.enabled !== 'D').map((t) => t.event));
  const installed =
    head.has_table &&
    head.functions.length === 2 &&
    events.has('ddl_command_end') &&
    events.has('sql_drop') &&
    version === AUDIT_VERSION;
  const anything = head.has_table || head.functions.length > 0 || triggers.length > 0;
  return {
    schema,
    installed,
    needsUpdate: anything && !installed,
    table: head.has_table,
    functions: head.functions,
    triggers,
    ...(version !== undefined ? { version } : {}),
  };
}

/** PostgreSQL's error fields the audit code reads. */
interface PgError {
  readonly code?: string;
  readonly message?: string;
}

async function inTransaction(client: AuditClient, statements: readonly string[]): Promise<void> {
  await client.query('BEGIN');
  try {
    for (const s of statements) await client.query(s);
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  }
}

/**
 * Installs (or updates) the audit objects in one transaction. A refusal for want of privileges
 * becomes `postgres.audit_needs_superuser`, which says that event triggers need a superuser.
 */
export async function installAudit(
  client: AuditClient,
  schema: string = DEFAULT_AUDIT_SCHEMA,
): Promise<void> {
  try {
    await inTransaction(client, auditInstallStatements(schema));
  } catch (e) {
    const err = e as PgError;
    if (err.code === '42501') {
      throw new TendError(
        'postgres.audit_needs_superuser',
        `installing the DDL audit in schema ${quoteIdent(schema)} was refused: event triggers can only be created by a superuser (${err.message ?? 'permission denied'})`,
        {
          hint: 'connect the provider as a superuser to install the audit, or have a superuser install it once and turn the provider option off',
        },
      );
    }
    throw e;
  }
}

/** Removes the audit objects in one transaction (a superuser's job too). */
export async function uninstallAudit(
  client: AuditClient,
  schema: string = DEFAULT_AUDIT_SCHEMA,
): Promise<void> {
  try {
    await inTransaction(client, auditUninstallStatements(schema));
  } catch (e) {
    const err = e as PgError;
    if (err.code === '42501') {
      throw new TendError(
        'postgres.audit_needs_superuser',
        `removing the DDL audit from schema ${quoteIdent(schema)} was refused: event triggers can only be dropped by their owner or a superuser (${err.message ?? 'permission denied'})`,
        { hint: 'connect as a superuser to remove the audit' },
      );
    }
    throw e;
  }
}

/** One row of the audit table, as stored. */
export interface AuditEntry {
  /** The row id, as text (a bigint): the feed's cursor. */
  readonly id: string;
  /** ISO time the command ended. */
  readonly at: string;
  readonly sessionUser: string;
  /** The role in effect (SET ROLE), else the session user. */
  readonly currentUser: string;
  readonly applicationName?: string;
  readonly clientAddr?: string;
  /** `CREATE SCHEMA`, `GRANT`, `ALTER EXTENSION`, `DROP SCHEMA`, … */
  readonly commandTag: string;
  /** `schema`, `table`, `extension`, … (undefined when PostgreSQL reports none). */
  readonly objectType?: string;
  readonly schemaName?: string;
  /** PostgreSQL's identity of the object, quoted as needed (`"Odd ""name"""`). */
  readonly objectIdentity?: string;
  /** The whole text the client sent (every statement of a multi-statement query). */
  readonly statement?: string;
  readonly actor?: string;
  readonly actorKind?: string;
  readonly intent?: string;
  readonly motivation?: string;
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function toEntry(row: Record<string, unknown>): AuditEntry {
  const at = row['at'];
  const opt = (key: keyof AuditEntry, v: unknown) => {
    const t = text(v);
    return t === undefined ? {} : { [key]: t };
  };
  return {
    id: String(row['id']),
    at: at instanceof Date ? at.toISOString() : String(at),
    sessionUser: text(row['session_user_name']) ?? 'unknown',
    currentUser: text(row['current_user_name']) ?? text(row['session_user_name']) ?? 'unknown',
    ...opt('applicationName', row['application_name']),
    ...opt('clientAddr', row['client_addr']),
    commandTag: text(row['command_tag']) ?? '',
    ...opt('objectType', row['object_type']),
    ...opt('schemaName', row['schema_name']),
    ...opt('objectIdentity', row['object_identity']),
    ...opt('statement', row['statement']),
    ...opt('actor', row['tend_actor']),
    ...opt('actorKind', row['tend_actor_kind']),
    ...opt('intent', row['tend_intent']),
    ...opt('motivation', row['tend_motivation']),
  };
}

/** The largest page read at once. */
export const MAX_AUDIT_PAGE = 1000;

function cursorId(cursor: string | undefined): string {
  if (cursor === undefined) return '0';
  if (!/^\d{1,19}$/.test(cursor)) {
    throw new TendError(
      'postgres.audit_cursor',
      `the audit feed cursor must be a row id (digits), got ${JSON.stringify(cursor.slice(0, 40))}`,
      { hint: 'pass the cursor a previous page returned, or none to read from the start' },
    );
  }
  return cursor;
}

/**
 * Reads the audit rows after row id `cursor` (from the first when undefined), oldest first, at most
 * `limit` (default and maximum MAX_AUDIT_PAGE). Never mutates. The table missing is
 * `postgres.audit_missing`.
 */
export async function readAuditEntries(
  client: AuditClient,
  schema: string,
  cursor: string | undefined,
  limit: number = MAX_AUDIT_PAGE,
): Promise<AuditEntry[]> {
  checkSchema(schema);
  const after = cursorId(cursor);
  const n = Math.max(1, Math.min(MAX_AUDIT_PAGE, Math.floor(limit)));
  try {
    const { rows } = await client.query(
      `SELECT * FROM ${quoteIdent(schema)}.${quoteIdent(AUDIT_TABLE)} WHERE id > $1::bigint ORDER BY id LIMIT $2`,
      [after, n],
    );
    return (rows as Record<string, unknown>[]).map(toEntry);
  } catch (e) {
    if ((e as PgError).code === '42P01') {
      throw new TendError(
        'postgres.audit_missing',
        `the DDL audit table ${quoteIdent(schema)}.${AUDIT_TABLE} does not exist`,
        { hint: 'install the audit (the provider option) or turn the audit feed off' },
      );
    }
    throw e;
  }
}

/** What a DDL command tag did to its object. */
export function actionOfTag(tag: string): ObservedChange['action'] {
  const t = tag.trim().toUpperCase();
  if (t.startsWith('CREATE') || t === 'SELECT INTO' || t === 'IMPORT FOREIGN SCHEMA') {
    return 'create';
  }
  if (t.startsWith('DROP')) return 'delete';
  return 'update';
}

/** The provider's type and id of an object the audit names; undefined for objects it does not manage. */
export type AuditObjectMapper = (
  objectType: string,
  identity: string,
  schemaName: string | undefined,
  entry: AuditEntry,
) => { readonly type: string; readonly id: string } | undefined;

/**
 * An audit row as the contract's ObservedChange, or undefined when `mapObject` does not manage its
 * object. The actor is `tend.actor` when the session set it, else the session user (who logged in);
 * the kind is kept only when it is one of ACTOR_KINDS; intent and motivation are the settings' text
 * (the engine parses the motivation, `incident:INC-42; ttl=2h`).
 */
export function toObservedChange(
  entry: AuditEntry,
  mapObject: AuditObjectMapper,
): ObservedChange | undefined {
  const mapped = mapObject(
    entry.objectType ?? '',
    entry.objectIdentity ?? '',
    entry.schemaName,
    entry,
  );
  if (mapped === undefined) return undefined;
  let actorKind: ActorKind | undefined;
  if (entry.actorKind !== undefined) {
    const k = checkActorKind(entry.actorKind.trim());
    if (k.ok) actorKind = k.value;
  }
  const actor = entry.actor?.trim() || entry.sessionUser;
  const intent = entry.intent?.trim();
  const motivation = entry.motivation?.trim();
  return {
    cursor: entry.id,
    time: entry.at,
    actor,
    ...(actorKind !== undefined ? { actorKind } : {}),
    ...(intent ? { intent } : {}),
    ...(motivation ? { motivation } : {}),
    action: actionOfTag(entry.commandTag),
    type: mapped.type,
    id: mapped.id,
  };
}

/** Options of `readAuditFeed`. */
export interface AuditFeedOptions {
  /** Most rows read (default and maximum MAX_AUDIT_PAGE). */
  readonly limit?: number;
  readonly mapObject: AuditObjectMapper;
}

/**
 * A page of the change feed: the audit rows after `cursor` mapped to changes (rows about objects the
 * provider does not manage are skipped). The next cursor is the last row read, mapped or not, so
 * skipped rows are not read again; unchanged (or `0` from the start) when there was nothing new.
 */
export async function readAuditFeed(
  client: AuditClient,
  schema: string,
  cursor: string | undefined,
  options: AuditFeedOptions,
): Promise<ChangesPage> {
  const entries = await readAuditEntries(client, schema, cursor, options.limit);
  const changes: ObservedChange[] = [];
  for (const e of entries) {
    const c = toObservedChange(e, options.mapObject);
    if (c !== undefined) changes.push(c);
  }
  const last = entries.at(-1);
  return { changes, cursor: last?.id ?? cursorId(cursor) };
}

/**
 * The names in an object identity as PostgreSQL quotes it: `"Odd ""name"""` → [`Odd "name"`],
 * `app.t` → [`app`, `t`]. Undefined for what is not a dotted list of identifiers (a function's
 * signature, a default ACL's description): the caller then does not manage the object.
 */
export function identityNames(identity: string): string[] | undefined {
  const names: string[] = [];
  let i = 0;
  while (i < identity.length) {
    let name = '';
    if (identity[i] === '"') {
      i++;
      for (;;) {
        if (i >= identity.length) return undefined;
        const c = identity[i]!;
        if (c === '"') {
          if (identity[i + 1] === '"') {
            name += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        name += c;
        i++;
      }
    } else {
      // PostgreSQL leaves a name unquoted only when it is lower-case letters, digits, _ and $.
      const m = /^[a-z_\u0080-\uffff][a-z0-9_$\u0080-\uffff]*/.exec(identity.slice(i));
      if (!m) return undefined;
      name = m[0];
      i += name.length;
    }
    if (name === '') return undefined;
    names.push(name);
    if (i === identity.length) break;
    if (identity[i] !== '.') return undefined;
    i++;
    if (i === identity.length) return undefined;
  }
  return names.length > 0 ? names : undefined;
}
