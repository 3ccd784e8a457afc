import type { Command } from 'commander';
import type { WriterOptions } from '../flags.js';
import { intOption, lockFlag, workspaceFlags } from '../flags.js';

/** The flags of `tend serve`. */
export interface ServeOptions extends WriterOptions {
  port: number;
  listen: string;
  tokens?: string;
  auth?: boolean;
  metricsPublic?: boolean;
  logFormat: string;
  interval: number;
  prune?: boolean;
  verifyTimeout: number;
  loop?: boolean;
  follow?: boolean;
  fleet?: boolean;
}

/** `tend serve [dir]`: the continuous loop plus the HTTP API (docs/api.md). */
export function registerServeCommand(program: Command): void {
  lockFlag(
    workspaceFlags(
      program
        .command('serve')
        .description(
          'run the continuous loop and serve, on 127.0.0.1, the web page of the twin at / and the HTTP API (status, graph, history, compliance, plan, apply, announce, SSE events, /metrics, /openapi.json)',
        )
        .argument('[dir]', 'intent directory', '.'),
    ),
  )
    .option('--port <n>', 'TCP port', intOption('--port'), 7780)
    .option('--listen <address>', 'address to listen on', '127.0.0.1')
    .option(
      '--tokens <file>',
      'YAML/JSON list of { token | tokenFromEnv, role, name } (also read: TEND_API_TOKENS)',
    )
    .option('--no-auth', 'serve without tokens (refused unless --listen is a loopback address)')
    .option('--metrics-public', 'serve /metrics without a token (for a Prometheus scraper)')
    .option('--log-format <format>', 'text, or json: one JSON object per line on stderr', 'text')
    .option('--interval <seconds>', 'full pass at least this often', intOption('--interval'), 30)
    .option('--no-prune', 'do not delete managed objects removed from the intent')
    .option(
      '--verify-timeout <ms>',
      'how long to wait for observed to match declared',
      intOption('--verify-timeout'),
      15_000,
    )
    .option('--no-loop', 'serve only: do not run the loop (writes take the lease themselves)')
    .option(
      '--no-follow',
      'the loop does not follow edits of the intent: they take effect through POST /plan and POST /apply (the loop loads the intent again when it resumes after an apply or an action)',
    )
    .option(
      '--fleet',
      'serve every workspace registered in the fleet’s store (PostgreSQL: --store or TEND_STORE_URL) under /workspaces/{name}/…, from any node; runs no loop (the workers do), and the writes that need a workspace’s lease become jobs its holder carries out (docs/fleet.md)',
    )
    .action(async (dir: string, o: ServeOptions) =>
      (await import('../handlers/serve.js')).serveHandler(dir, o),
    );
}
