import type { Command } from 'commander';

/** The flags of `tend store migrate`. */
export interface StoreMigrateOptions {
  store?: string;
  json?: boolean;
}

/**
 * `tend store migrate [dir]`: brings the store's schema to the version this Tend expects. A
 * PostgreSQL store is migrated only by this command (or set up when its database has no Tend schema
 * yet); a SQLite store migrates whenever it is opened.
 */
export function registerStoreCommand(program: Command): void {
  const store = program.command('store').description('Tend’s own store: its schema');
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
}
