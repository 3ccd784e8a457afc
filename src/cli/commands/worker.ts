import type { Command } from 'commander';
import { intOption } from '../flags.js';

/** The flags of `tend worker`. */
export interface WorkerOptions {
  store?: string;
  id?: string;
  maxWorkspaces?: number;
  interval: number;
  leaseTtl: number;
  approveDestroy?: boolean;
  prune?: boolean;
  verifyTimeout: number;
  listen?: string;
  cacheDir?: string;
  json?: boolean;
}

/**
 * `tend worker`: one worker of a fleet — runs the continuous loop for its share of the workspaces
 * registered in the shared store. SIGINT/SIGTERM: in-flight operations settle, leases are released.
 */
export function registerWorkerCommand(program: Command): void {
  program
    .command('worker')
    .description(
      'run the continuous loop for this worker’s share of the workspaces registered in a shared store (a fleet); SIGTERM releases them',
    )
    .option('--store <location>', 'the fleet’s store: a postgres:// URL (default $TEND_STORE_URL)')
    .option('--id <id>', 'this worker’s id (default <host>-<pid>-<random>)')
    .option(
      '--max-workspaces <n>',
      'never hold more workspaces than this',
      intOption('--max-workspaces'),
    )
    .option(
      '--interval <seconds>',
      'a full pass of each workspace at least this often',
      intOption('--interval'),
      30,
    )
    .option(
      '--lease-ttl <seconds>',
      'how long a workspace’s lease outlives a dead worker; heartbeats every third of it',
      intOption('--lease-ttl'),
      30,
    )
    .option(
      '--approve-destroy',
      'allow destructive steps on stateful resources (otherwise they are blocked)',
    )
    .option('--no-prune', 'do not delete managed objects removed from the intent')
    .option(
      '--verify-timeout <ms>',
      'how long to wait for observed to match declared',
      intOption('--verify-timeout'),
      15_000,
    )
    .option(
      '--listen <[host:]port>',
      'serve GET /healthz, /readyz and /metrics there (host default 127.0.0.1; off by default)',
    )
    .option(
      '--cache-dir <dir>',
      'where git workspaces are fetched, one folder each (default $XDG_CACHE_HOME/tend/git, else ~/.cache/tend/git)',
    )
    .option('--json', 'one JSON line per event')
    .action(async (o: WorkerOptions) => (await import('../handlers/worker.js')).workerHandler(o));
}
