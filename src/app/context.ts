import { hostname } from 'node:os';
import { Redactor } from '../core/index.js';
import type { Clock } from '../engine/index.js';
import { systemClock } from '../engine/index.js';
import type { Store } from '../store/index.js';
import { openStore } from '../store/index.js';
import type { ProviderRegistry } from './providers.js';
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
  readonly openStore: (location: string) => Promise<Store>;
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
  // Notices go to stderr (they are not part of any command's output), through the redactor too.
  const printNotice = (message: string) => {
    process.stderr.write(`tend: ${redactor.text(message)}\n`);
  };
  return {
    env: process.env,
    clock: systemClock,
    process: { pid: process.pid, host: hostname(), startedAt, isAlive: pidAlive },
    providers: defaultProviders,
    openStore: (location) => {
      // A database URL may carry a password (`postgres://user:pass@host/db`).
      redactor.addUrlCredentials(location);
      // Tend's files found open to others are tightened when the store opens; the user is told.
      return openStore(location, { redactor, notice: printNotice });
    },
    notice: printNotice,
    ...overrides,
    redactor,
  };
}
