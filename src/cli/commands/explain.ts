import type { Command } from 'commander';
import type { CommonOptions } from '../flags.js';
import { intOption, workspaceFlags } from '../flags.js';

/**
 * The ledger entries shown per field unless --limit says otherwise: the application's default
 * (`EXPLAIN_ENTRIES`, which a test holds this to), written here so that `tend explain --help` shows
 * it without loading the application.
 */
export const EXPLAIN_LIMIT = 5;

/** The flags of `tend explain`. */
export interface ExplainOptions extends CommonOptions {
  limit: number;
}

/** `tend explain <address>[.<field>] [dir]`: a resource field by field: values, owner, history, decision. */
export function registerExplainCommand(program: Command): void {
  workspaceFlags(
    program
      .command('explain')
      .description(
        'explain a resource or one field of it: declared and observed values, who owns each field, the ledger entries and decisions behind it, announcements, and what the policy decides now (read-only)',
      )
      .argument('<address>', 'provider.type/name, optionally .field (sb.services/api.replicas)')
      .argument('[dir]', 'intent directory', '.')
      .option('--json', 'machine-readable output'),
  )
    .option('--limit <n>', 'ledger entries shown per field', intOption('--limit'), EXPLAIN_LIMIT)
    .addHelpText(
      'after',
      '\nExit codes: 0 explained; 2 the address or field names nothing (near matches are suggested); 1 any other error.',
    )
    .action(async (target: string, dir: string, o: ExplainOptions) =>
      (await import('../handlers/explain.js')).explainHandler(target, dir, o),
    );
}
