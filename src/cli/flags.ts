// The flags several commands share. Loaded to register every command, so for `tend --help` too:
// it imports nothing but commander's types (commands load what they run when they run).
import type { Command } from 'commander';

/** Options every workspace command takes. */
export interface CommonOptions {
  json?: boolean;
  store?: string;
  workspace?: string;
}

/** Options of commands that write (they hold the workspace lease). */
export interface WriterOptions extends CommonOptions {
  /** Seconds to wait for another writer's lease. */
  lockTimeout: number;
}

/** Adds the options every workspace command takes. */
export function workspaceFlags(command: Command): Command {
  return command
    .option(
      '--store <location>',
      'store location: a SQLite path or a postgres:// URL (default $TEND_STORE_URL, else <dir>/.tend/tend.db)',
    )
    .option(
      '--workspace <name>',
      'workspace name carried in ownership markers (default: the intent’s Workspace document, else derived from the folder)',
    );
}

/** Adds --lock-timeout to a writing command. */
export function lockFlag(command: Command): Command {
  return command.option(
    '--lock-timeout <seconds>',
    'wait this long for another tend process holding the workspace (default 0: fail at once, naming it)',
    intOption('--lock-timeout'),
    0,
  );
}

/** Collects a repeatable option that may also be comma-separated (`--target a --target b,c`). */
export function collectList(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), ...value.split(',').filter((v) => v !== '')];
}

/** Parses a positive integer option, with a message naming the flag. */
export function intOption(flag: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0)
      throw new Error(`${flag} must be a non-negative integer, got "${v}"`);
    return n;
  };
}
