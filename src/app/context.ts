import { hostname } from 'node:os';
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
 * registry keyed by provider type) and how stores are opened. The CLI, the HTTP API and tests each
 * build one; nothing below `src/app` reaches for globals.
 */
export interface AppContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly clock: Clock;
  readonly process: ProcessInfo;
  readonly providers: ProviderRegistry;
  readonly openStore: (location: string) => Promise<Store>;
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

/** Tells the user on stderr (notices are not part of any command's output). */
function printNotice(message: string): void {
  process.stderr.write(`tend: ${message}\n`);
}

/** The context of a real process: process.env, the system clock, built-in providers, SQLite. */
export function defaultContext(overrides: Partial<AppContext> = {}): AppContext {
  return {
    env: process.env,
    clock: systemClock,
    process: { pid: process.pid, host: hostname(), startedAt, isAlive: pidAlive },
    providers: defaultProviders,
    // Tend's files found open to others are tightened when the store opens; the user is told.
    openStore: (location) => openStore(location, { notice: printNotice }),
    notice: printNotice,
    ...overrides,
  };
}
