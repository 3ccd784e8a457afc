#!/usr/bin/env node
// Registers every command (flags and help text only) and parses: a command loads what it runs when
// it runs (its handler in src/cli/handlers), so `tend --help` and `tend <command> --help` load
// commander and nothing of Tend's engine. `src/cli/start.test.ts` holds that.
import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { registerAcceptCommand } from './commands/accept.js';
import { registerActionCommand } from './commands/action.js';
import { registerAnnounceCommand } from './commands/announce.js';
import { registerApplyCommand } from './commands/apply.js';
import { registerComplianceCommand } from './commands/compliance.js';
import { registerDriftCommand } from './commands/drift.js';
import { registerExplainCommand } from './commands/explain.js';
import { registerHistoryCommand } from './commands/history.js';
import { registerImportCommand } from './commands/import.js';
import { registerLedgerCommand } from './commands/ledger.js';
import { registerMcpCommand } from './commands/mcp.js';
import { registerPauseCommands } from './commands/pause.js';
import { registerPlanCommand } from './commands/plan.js';
import { registerProvidersCommand } from './commands/providers.js';
import { registerPruneCommand } from './commands/prune.js';
import { registerRunCommand } from './commands/run.js';
import { registerSandboxCommand } from './commands/sandbox.js';
import { registerServeCommand } from './commands/serve.js';
import { registerStatusCommand } from './commands/status.js';
import { registerStoreCommand } from './commands/store.js';
import { registerValidateCommand } from './commands/validate.js';
import { registerWorkerCommand } from './commands/worker.js';
import { registerFleetCommand, registerWorkspaceCommand } from './commands/workspace.js';
import { EXIT } from './exit-codes.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

const program = new Command()
  .name('tend')
  .description(
    'Keeps infrastructure correct after the deploy: observe, compare, act, verify, again.',
  )
  .version(pkg.version)
  .showHelpAfterError()
  .exitOverride();

registerValidateCommand(program);
registerPlanCommand(program);
registerApplyCommand(program);
registerRunCommand(program);
registerStatusCommand(program);
registerDriftCommand(program);
registerExplainCommand(program);
registerHistoryCommand(program);
registerComplianceCommand(program);
registerAnnounceCommand(program);
registerAcceptCommand(program);
registerPauseCommands(program);
registerActionCommand(program);
registerLedgerCommand(program);
registerImportCommand(program);
registerPruneCommand(program);
registerStoreCommand(program);
registerWorkspaceCommand(program);
registerWorkerCommand(program);
registerFleetCommand(program);
registerServeCommand(program);
registerSandboxCommand(program);
registerProvidersCommand(program);
registerMcpCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    // Commander's own errors are 1; a command that gives 1 another meaning (drift) sets its own.
    process.exitCode = e.exitCode === 0 ? EXIT.ok : e.exitCode || EXIT.error;
  } else {
    const message = e instanceof Error ? e.message : String(e);
    const { cliContext } = await import('./common.js');
    process.stderr.write(`error: ${cliContext().redactor.text(message)}\n`);
    process.exitCode = EXIT.error;
  }
}
