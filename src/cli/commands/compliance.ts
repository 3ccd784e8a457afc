import type { Command } from 'commander';
import { CommanderError, InvalidArgumentError, Option } from 'commander';
import type { CommonOptions } from '../flags.js';
import { intOption, workspaceFlags } from '../flags.js';
import { COMPLIANCE_EXIT } from '../exit-codes.js';

/** The flags of `tend compliance`. */
export interface ComplianceOptions extends CommonOptions {
  format?: 'text' | 'json' | 'sarif';
  since?: string;
  limit: number;
}

/** `intOption`, its refusal a usage error (exit 2) rather than an error thrown past commander. */
function usageInt(flag: string) {
  const parse = intOption(flag);
  return (v: string): number => {
    try {
      return parse(v);
    } catch (e) {
      throw new InvalidArgumentError((e as Error).message);
    }
  };
}

/** `tend compliance [dir]`: open policy violations and failing checks, with the change that introduced each. */
export function registerComplianceCommand(program: Command): void {
  workspaceFlags(
    program
      .command('compliance')
      .description(
        'report every open policy violation and failing check on what the platform holds, with the change that introduced it, and the recent verdicts; exit 1 when a deny or warn result is open',
      )
      .argument('[dir]', 'intent directory', '.')
      .option(
        '--json',
        'machine-readable output: the PolicyReport document (same as --format json)',
      ),
  )
    .addOption(
      new Option('--format <format>', 'text, json (a PolicyReport) or sarif (SARIF 2.1.0)').choices(
        ['text', 'json', 'sarif'],
      ),
    )
    .option(
      '--since <time>',
      'history of verdicts at or after this ISO time, or this long ago',
      '7d',
    )
    .option('--limit <n>', 'at most n history entries (the newest)', usageInt('--limit'), 50)
    .addHelpText(
      'after',
      '\nExit codes:\n  0  no deny or warn result is open\n  1  a deny or warn policy violation, or a failing check, is open\n  2  an error: a bad flag, invalid intent, unreadable store',
    )
    .exitOverride((err) => {
      // 1 means "violations open" here: a usage error is 2.
      throw err.exitCode === 0
        ? err
        : new CommanderError(COMPLIANCE_EXIT.error, err.code, err.message);
    })
    .action(async (dir: string, o: ComplianceOptions) =>
      (await import('../handlers/compliance.js')).complianceHandler(dir, o),
    );
}
