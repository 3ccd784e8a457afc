// The `audit` type: Tend's DDL audit (ddl-audit.ts) declared as a resource. Create installs the
// audit table, its functions and event triggers in one transaction (a superuser's job), update
// brings an installation up to date, delete uninstalls it; an older or partial installation is not
// listed, so the plan installs it again. Once one is listed the provider's change feed is on.
import type pg from 'pg';
import type { ObservedObject, ResourceTypeInfo } from '../../core/index.js';
import { TendError } from '../../core/index.js';
import { installAudit, readAuditInstallation, uninstallAudit } from './ddl-audit.js';
import { pgError, sqlstateOf } from './errors.js';
import type { PostgresType } from './postgres-type.js';
import { BASE, NAME } from './postgres-type.js';
import type { PgSession } from './session.js';
import { lendClient } from './session.js';
import { bad, str } from './spec.js';

const INFO: ResourceTypeInfo = {
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

/** The schemas holding a current audit installation (normally one, the declared one). */
async function installations(pool: pg.Pool): Promise<ObservedObject[]> {
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
  return out;
}

/** Installs (or brings up to date) the audit in `schema`; a superuser's job (the error says so). */
async function install(
  s: PgSession,
  schema: string,
  what: string,
  fence: (() => void) | undefined,
): Promise<ObservedObject> {
  const lent = await lendClient(s.pool, what);
  let broken = false;
  try {
    // The last moment before the change is sent (WriteContext.fence, decision 0043).
    fence?.();
    await installAudit(lent.client, schema);
  } catch (e) {
    if (e instanceof TendError) throw e;
    broken = sqlstateOf(e) === undefined;
    throw pgError(e, what, broken);
  } finally {
    lent.release(broken);
  }
  return s.mustRead('audit', schema, what);
}

/** The `audit` type. */
export const AUDIT: PostgresType = {
  info: INFO,
  turnsOnFeed: true,

  list: (s) =>
    s.reading(`reading the DDL audit installation of ${s.database}`, () => installations(s.pool)),

  async create(s, desired, ctx) {
    const schema = str(desired, 'schema');
    if (schema === undefined) {
      throw bad('an audit needs a schema', 'declare spec.schema, e.g. tend_audit');
    }
    return install(
      s,
      schema,
      `installing the DDL audit in schema ${JSON.stringify(schema)}`,
      ctx.fence,
    );
  },

  update: (s, id, _desired, _current, ctx) =>
    install(s, id, `updating audit ${JSON.stringify(id)}`, ctx.fence),

  async delete(s, id, ctx) {
    const what = `deleting audit ${JSON.stringify(id)}`;
    const lent = await lendClient(s.pool, what);
    try {
      ctx.fence?.();
      return await uninstallAudit(lent.client, id);
    } catch (e) {
      if (e instanceof TendError) throw e;
      throw pgError(e, what, false);
    } finally {
      lent.release();
    }
  },
};
