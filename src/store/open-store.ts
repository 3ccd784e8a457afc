import { TendError } from '../core/index.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { SqliteStoreOptions } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

/** Options for whichever store a location selects. */
export type StoreOptions = SqliteStoreOptions;

// A URL scheme is only recognised with `//` after it (`sqlite:` excepted), so a file name with a
// colon in it is still a path.
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;

/**
 * Opens the store a location names: a plain path, `:memory:`, `sqlite:<path>` or `sqlite://<path>`
 * opens SQLite. `postgres://…` is refused until PostgreSQL storage exists. Error messages never repeat
 * the location, which for a database URL may hold a password.
 */
export function openStore(location: string, options: StoreOptions = {}): Promise<Store> {
  const hint = 'give a SQLite file path, e.g. .tend/state.db or sqlite:.tend/state.db';
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
    return Promise.reject(
      new TendError(
        'store.unsupported',
        'PostgreSQL storage is not implemented yet; use a SQLite path',
        { phase: 'store', hint },
      ),
    );
  }
  return Promise.reject(
    new TendError('store.unsupported', `unknown store location scheme ${scheme}:`, {
      phase: 'store',
      hint,
    }),
  );
}
