import { displayUrl } from '../core/index.js';
import { migrateStore } from '../store/index.js';
import type { AppContext } from './context.js';
import type { WorkspaceSelection } from './workspace.js';
import { isSharedStore, storeLocation } from './workspace.js';

/** What `tend store migrate` is asked: the store of a directory, `--store`, or `TEND_STORE_URL`. */
export type StoreMigrateRequest = Pick<WorkspaceSelection, 'dir' | 'store'>;

/** What `tend store migrate` did. */
export interface StoreMigrateReport {
  /** `sqlite` or `postgres`. */
  readonly kind: 'sqlite' | 'postgres';
  /** The store as it may be shown: a path, or a URL without its user-info. */
  readonly store: string;
  /** The schema version before, and after (equal: nothing to do). */
  readonly from: number;
  readonly to: number;
  readonly verdict: 'migrated' | 'up-to-date';
}

/**
 * Brings a store's schema to the version this Tend expects (`tend store migrate`): on PostgreSQL,
 * applies the pending migrations in one transaction (other commands refuse an older schema, except a
 * database that has none yet); on SQLite, which migrates whenever it is opened, opens it. Refuses a
 * store whose schema is newer than this Tend knows.
 */
export async function migrateStoreSchema(
  ctx: AppContext,
  request: StoreMigrateRequest,
): Promise<StoreMigrateReport> {
  const location = storeLocation(ctx, request);
  // A database URL may carry a password: registered before anything can print it.
  ctx.redactor.addUrlCredentials(location);
  const { from, to } = await migrateStore(location, {
    redactor: ctx.redactor,
    env: ctx.env,
    ...(ctx.notice ? { notice: ctx.notice } : {}),
  });
  return {
    kind: isSharedStore(location) ? 'postgres' : 'sqlite',
    store: displayUrl(location),
    from,
    to,
    verdict: from === to ? 'up-to-date' : 'migrated',
  };
}
