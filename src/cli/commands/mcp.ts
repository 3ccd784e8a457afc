import type { Command } from 'commander';
import type { CommonOptions } from '../flags.js';
import { intOption, lockFlag, workspaceFlags } from '../flags.js';

/** The flags of `tend mcp`. */
export interface McpOptions extends CommonOptions {
  http?: boolean;
  port: number;
  allowApply?: boolean;
  lockTimeout: number;
  fleet?: boolean;
}

/**
 * `tend mcp [dir]`: an MCP server for AI agents over one workspace (docs/mcp.md): stdio by default,
 * `--http` for streamable HTTP on 127.0.0.1. `--fleet`: over every workspace registered in the
 * fleet's store, each tool taking the workspace it is about.
 */
export function registerMcpCommand(program: Command): void {
  lockFlag(
    workspaceFlags(
      program
        .command('mcp')
        .description(
          'serve the workspace to AI agents over the Model Context Protocol (tools: status, plan, explain, history, compliance, announce, propose_change); stdio by default',
        )
        .argument('[dir]', 'intent directory', '.'),
    ),
  )
    .option('--http', 'serve streamable HTTP on 127.0.0.1 (POST /mcp) instead of stdio')
    .option(
      '--port <port>',
      'with --http: the port (0 picks a free one)',
      intOption('--port'),
      7782,
    )
    .option(
      '--allow-apply',
      'let propose_change apply a proposal that has no destructive step (off: agents only write saved plans and patches)',
    )
    .option(
      '--fleet',
      'serve every workspace registered in the fleet’s store (PostgreSQL: --store or TEND_STORE_URL): a list_workspaces tool, and every tool takes the workspace it is about (docs/mcp.md)',
    )
    .action(async (dir: string, o: McpOptions) =>
      (await import('../handlers/mcp.js')).mcpHandler(dir, o),
    );
}
