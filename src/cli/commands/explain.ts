import type { Command } from 'commander';
import { EXPLAIN_ENTRIES, explain, UNKNOWN_TARGET_CODES } from '../../app/index.js';
import { toTendError } from '../../core/index.js';
import type { CommonOptions } from '../common.js';
import {
  cliContext,
  fail,
  intOption,
  output,
  workspaceFlags,
  workspaceOptions,
} from '../common.js';
import { EXIT } from '../exit-codes.js';
import { renderExplain } from '../render/explain.js';

interface ExplainOptions extends CommonOptions {
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
    .option('--limit <n>', 'ledger entries shown per field', intOption('--limit'), EXPLAIN_ENTRIES)
    .addHelpText(
      'after',
      '\nExit codes: 0 explained; 2 the address or field names nothing (near matches are suggested); 1 any other error.',
    )
    .action(async (target: string, dir: string, o: ExplainOptions) => {
      const out = output(o.json);
      try {
        const r = await explain(cliContext(), {
          ...workspaceOptions(dir, o),
          target,
          limit: o.limit,
        });
        if (out.json) out.data(r);
        else for (const line of renderExplain(r, out.style)) out.line(line);
        process.exitCode = EXIT.ok;
      } catch (e) {
        fail(out, e);
        if (UNKNOWN_TARGET_CODES.includes(toTendError(e).code)) {
          process.exitCode = EXIT.unknownTarget;
        }
      }
    });
}
