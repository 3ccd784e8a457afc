import { TendError } from '../core/index.js';
import type { PostgresStoreOptions } from './postgres/postgres-store.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { SqliteStoreOptions } from './sqlite/sqlite-store.js';
import type { FleetJobs } from './jobs.js';
import type { FleetRegistry } from './registry.js';
import type { Store } from './store.js';

/**
 * Options for whichever store a location selects. `workspace` is what a shared database (PostgreSQL)
 * scopes the store by; a SQLite file is one workspace's and ignores it. `env` is where the libpq
 * variables are read (PostgreSQL only). `now` differs: SQLite stamps records with it; PostgreSQL
 * stamps them with the database's time and takes `now` only as a test clock for leases.
 */
export type StoreOptions = SqliteStoreOptions &
  Pick<PostgresStoreOptions, 'workspace' | 'env' | 'poolSize'>;

/** What kind of store a location names: a SQLite file (one workspace) or a shared database. */
export type StoreKind = 'sqlite' | 'postgres';

/**
 * The kind of store a location names, or undefined for an unknown scheme (which `openStore` refuses).
 * A database location is shared by many workspaces: it is opened for one, named before it is opened.
 */
export function storeKind(location: string): StoreKind | undefined {
  if (/^sqlite:/i.test(location)) return 'sqlite';
  const scheme = SCHEME.exec(location)?.[1]?.toLowerCase();
  if (scheme === undefined) return 'sqlite';
  return scheme === 'postgres' || scheme === 'postgresql' ? 'postgres' : undefined;
}

/** The schema versions before and after `migrateStore`. */
export interface StoreMigration {
  readonly from: number;
  readonly to: number;
}

/**
 * Brings the store a location names to the schema this Tend expects (`tend store migrate`). SQLite
 * migrates whenever it is opened, so this only opens it; PostgreSQL is migrated only here, or when a
 * database has no Tend schema yet (docs/decisions/0037-postgres-store.md).
 */
export async function migrateStore(
  location: string,
  options: StoreOptions = {},
): Promise<StoreMigration> {
  if (storeKind(location) === 'postgres') {
    const { migratePostgresStore } = await import('./postgres/postgres-store.js');
    return migratePostgresStore(location, options);
  }
  const store = await openStore(location, options);
  const { migration } = store as Store & { migration: StoreMigration };
  await store.close();
  return migration;
}

// A URL scheme is only recognised with `//` after it (`sqlite:` excepted), so a file name with a
// colon in it is still a path.
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;

/**
 * Opens the store a location names: a plain path, `:memory:`, `sqlite:<path>` or `sqlite://<path>`
 * opens SQLite; `postgres://…` (or `postgresql://…`) opens PostgreSQL for `options.workspace`, loading
 * the driver only then. Error messages never repeat the location, which for a database URL may hold a
 * password.
 */
export async function openStore(location: string, options: StoreOptions = {}): Promise<Store> {
  const hint =
    'give a SQLite file path (e.g. .tend/state.db or sqlite:.tend/state.db) or a postgres:// URL';
  if (location.trim() === '') {
    return Promise.reject(
      new TendError('store.invalid-location', 'the store location is empty', {
        phase: 'store',
        hint,
      }),
    );
  }
  const scheme = /^sqlite:/i.test(location) ? 'sqlite' : SCHEME.exec(location)?.[1]?.toLowerCase();
  if (scheme === undefined) return openSqliteStore(location, options);
  if (scheme === 'sqlite') {
    const path = location.slice('sqlite:'.length).replace(/^\/\//, '');
    if (path === '') {
      return Promise.reject(
        new TendError('store.invalid-location', 'the sqlite: location has no path', {
          phase: 'store',
          hint,
        }),
      );
    }
    return openSqliteStore(path, options);
  }
  if (scheme === 'postgres' || scheme === 'postgresql') {
    const { openPostgresStore } = await import('./postgres/postgres-store.js');
    return openPostgresStore(location, options);
  }
  return Promise.reject(
    new TendError('store.unsupported', `unknown store location scheme ${scheme}:`, {
      phase: 'store',
      hint,
    }),
  );
}

/**
 * Opens the fleet's registry (registered workspaces, workers, every lease: docs/fleet.md) of a shared
 * store. Only a database shared by a fleet has one: any other location is refused, saying so.
 */
export async function openRegistry(
  location: string,
  options: Pick<PostgresStoreOptions, 'env' | 'redactor'> = {},
): Promise<FleetRegistry> {
  if (storeKind(location) !== 'postgres') {
    throw new TendError(
      'fleet.shared-store-required',
      'a workspace registry needs a shared store: --store postgres://… or TEND_STORE_URL',
      {
        phase: 'store',
        hint: 'a fleet of workers shares one PostgreSQL database (docs/fleet.md); a SQLite file is one workspace’s',
      },
    );
  }
  const { openPostgresRegistry } = await import('./postgres/postgres-registry.js');
  return openPostgresRegistry(location, options);
}

/**
 * Opens the fleet's job table and event channel (docs/fleet.md, decision 0045) of a shared store;
 * any other location is refused as `openRegistry` refuses it.
 */
export async function openFleetJobs(
  location: string,
  options: Pick<PostgresStoreOptions, 'env' | 'redactor'> = {},
): Promise<FleetJobs> {
  if (storeKind(location) !== 'postgres') {
    throw new TendError(
      'fleet.shared-store-required',
      'the fleet’s job table needs a shared store: --store postgres://… or TEND_STORE_URL',
      {
        phase: 'store',
        hint: 'a fleet of workers shares one PostgreSQL database (docs/fleet.md); a SQLite file is one workspace’s',
      },
    );
  }
  const { openPostgresJobs } = await import('./postgres/postgres-jobs.js');
  return openPostgresJobs(location, options);
}
