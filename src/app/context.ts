import { hostname } from 'node:os';
import { Redactor } from '../core/index.js';
import type { Clock } from '../engine/index.js';
import { systemClock } from '../engine/index.js';
import type { LedgerKey, Store } from '../store/index.js';
import { openStore } from '../store/index.js';
import type { LedgerKeyUse } from './ledger-key.js';
import { resolveLedgerKey } from './ledger-key.js';
import type { ApiCallObserver, ProviderRegistry } from './providers.js';
import { defaultProviders } from './providers.js';

/** This process, as a lease holder names it. */
export interface ProcessInfo {
  readonly pid: number;
  readonly host: string;
  /** When this process started (ISO time). */
  readonly startedAt: string;
  /** Whether a process with this pid runs on this host (a dead holder's lease is taken over). */
  isAlive(pid: number): boolean;
}

/**
 * The composition root: everything the application layer takes from the outside world — the
 * environment (secrets come from it), the clock, this process, how providers are connected (a
 * registry keyed by provider type), how stores are opened, and the one redactor of the process. The
 * CLI, the HTTP API and tests each build one; nothing below `src/app` reaches for globals.
 */
export interface AppContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly clock: Clock;
  readonly process: ProcessInfo;
  readonly providers: ProviderRegistry;
  /**
   * Opens a store; with `ledgerKey` it signs the change ledger (commands that record changes), and
   * without one it can read the ledger but not append to it.
   */
  readonly openStore: (location: string, options?: StoreOpenOptions) => Promise<Store>;
  /**
   * The key that signs the change ledger (src/app/ledger-key.ts): from TEND_LEDGER_KEY,
   * TEND_LEDGER_KEY_FILE or the per-user key file, which `sign` creates when missing and `verify`
   * never does (an error instead). `storeDir` is where the store it signs for lives (a key file
   * there earns a warning). Resolved once per process; never stored, never printed.
   */
  readonly ledgerKey: (use: LedgerKeyUse, storeDir?: string) => LedgerKey;
  /**
   * The process's one redactor: every secret Tend resolves is registered with it (secret references,
   * provider credentials, secret fields a platform returns, URL user-info), and every output passes
   * through it — what an adapter prints, what the store writes, changeset files. The default
   * `openStore` writes through it; an adapter must pass its output through `redactor.text`.
   */
  readonly redactor: Redactor;
  /**
   * Told, one sentence each, about Tend's own files found open to others and tightened (`.tend/`,
   * the store); a real process prints them on stderr. Default: nobody is told.
   */
  readonly notice?: (message: string) => void;
  /** Told about every HTTP call a provider makes to its platform (`tend serve`'s metrics). */
  readonly apiCalls?: ApiCallObserver;
}

/** What `AppContext.openStore` is told besides the location. */
export interface StoreOpenOptions {
  readonly ledgerKey?: LedgerKey;
  /**
   * The workspace a database shared by many (PostgreSQL) is opened for; every read and write of the
   * store is scoped by it. A SQLite file is one workspace's and ignores it.
   */
  readonly workspace?: string;
}

/** Whether `pid` is a live process on this host (signal 0 tests without sending anything). */
function pidAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const startedAt = new Date().toISOString();

/**
 * The context of a real process: process.env, the system clock, built-in providers, SQLite written
 * through a new redactor (or the one given).
 */
export function defaultContext(overrides: Partial<AppContext> = {}): AppContext {
  const redactor = overrides.redactor ?? new Redactor();
  const env = overrides.env ?? process.env;
  // Notices go to stderr (they are not part of any command's output), through the redactor too.
  const printNotice = (message: string) => {
    process.stderr.write(`tend: ${redactor.text(message)}\n`);
  };
  const notice = overrides.notice ?? printNotice;
  let key: LedgerKey | undefined;
  return {
    env,
    clock: systemClock,
    process: { pid: process.pid, host: hostname(), startedAt, isAlive: pidAlive },
    providers: defaultProviders,
    openStore: (location, options = {}) => {
      // A database URL may carry a password (`postgres://user:pass@host/db`).
      redactor.addUrlCredentials(location);
      // Tend's files found open to others are tightened when the store opens; the user is told.
      // A database URL's missing parts come from this context's libpq variables (PGHOST, …).
      return openStore(location, { redactor, notice, env, ...options });
    },
    ledgerKey: (use, storeDir) => {
      if (key) return key;
      // The material is registered with the redactor: no output can carry it.
      const resolved = resolveLedgerKey({
        env,
        use,
        secrets: redactor,
        ...(storeDir !== undefined ? { storeDir } : {}),
      });
      for (const n of resolved.notices) notice(n);
      return (key = resolved.key);
    },
    notice: printNotice,
    ...overrides,
    redactor,
  };
}
