import type { Command } from 'commander';

/** The flags of `tend store migrate`. */
export interface StoreMigrateOptions {
  store?: string;
  json?: boolean;
}

/** The flags of `tend store copy`. */
export interface StoreCopyOptions {
  workspace?: string;
  force?: boolean;
  json?: boolean;
}

/**
 * `tend store migrate [dir]`: brings the store's schema to the version this Tend expects. A
 * PostgreSQL store is migrated only by this command (or set up when its database has no Tend schema
 * yet); a SQLite store migrates whenever it is opened. `tend store copy <from> <to>`: moves one
 * workspace's memory to another store (docs/store.md).
 */
export function registerStoreCommand(program: Command): void {
  const store = program
    .command('store')
    .description('Tend’s own store: its schema, and copying a workspace to another store');
  store
    .command('migrate')
    .description(
      'apply the pending schema migrations of the store (PostgreSQL: all in one transaction; other commands refuse an older schema)',
    )
    .argument('[dir]', 'intent directory (its store: <dir>/.tend/tend.db)', '.')
    .option(
      '--store <location>',
      'store location: a SQLite path or a postgres:// URL (default $TEND_STORE_URL, else <dir>/.tend/tend.db)',
    )
    .option('--json', 'machine-readable output')
    .action(async (dir: string, o: StoreMigrateOptions) =>
      (await import('../handlers/store.js')).storeMigrateHandler(dir, o),
    );
  store
    .command('copy')
    .description(
      'copy one workspace’s whole memory (twin, journal, ledger with its chain as stored, claims, announcements, cursors, statuses, settings, action runs; not the lease) to another store, in one transaction',
    )
    .argument(
      '<from>',
      'the store to read: a SQLite path (e.g. infra/.tend/tend.db) or a postgres:// URL',
    )
    .argument('<to>', 'the store to write: a SQLite path or a postgres:// URL')
    .option(
      '--workspace <name>',
      'the workspace (needed for a PostgreSQL side unless the SQLite side remembers its name)',
    )
    .option('--force', 'replace the workspace’s memory in the target when it holds some')
    .option('--json', 'machine-readable output')
    .action(async (from: string, to: string, o: StoreCopyOptions) =>
      (await import('../handlers/store.js')).storeCopyHandler(from, to, o),
    );
}
