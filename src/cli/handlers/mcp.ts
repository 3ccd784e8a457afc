import { readFileSync } from 'node:fs';
import type { AppContext, FleetWorkspaces } from '../../app/index.js';
import { openFleetWorkspaces, storeFlag } from '../../app/index.js';
import { TendError } from '../../core/index.js';
import type { McpServerOptions } from '../../mcp/index.js';
import type { McpOptions } from '../commands/mcp.js';
import { serveHttp, serveStdio } from '../../mcp/index.js';
import type { Output } from '../common.js';
import { cliContext, fail, output, workspaceOptions } from '../common.js';
import { EXIT } from '../exit-codes.js';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/**
 * `tend mcp [dir]`, run: serves until stdin closes (stdio) or a stop signal (HTTP). In stdio mode
 * stdout carries the protocol only: what Tend has to say goes to stderr. `--fleet`: every workspace
 * registered in the fleet's store (refused, before serving, without a PostgreSQL store).
 */
export async function mcpHandler(dir: string, o: McpOptions): Promise<void> {
  const ctx = cliContext();
  const out = output(false);
  const common = {
    allowApply: Boolean(o.allowApply),
    version: pkg.version,
    lockTimeoutMs: o.lockTimeout * 1000,
  };
  let fleet: FleetWorkspaces | undefined;
  try {
    if (o.fleet) fleet = await openFleet(ctx, o);
    const options: McpServerOptions = fleet
      ? { ...common, fleet }
      : { ...common, selection: workspaceOptions(dir, o) };
    if (!o.http) {
      await serveStdio(ctx, options);
      process.exitCode = EXIT.ok;
      return;
    }
    await serveOverHttp(ctx, options, o.port, out);
    process.exitCode = EXIT.ok;
  } catch (e) {
    fail(out, e);
  } finally {
    await fleet?.close();
  }
}

/** `tend mcp --fleet`: the flags that do not go with it refused, the fleet's registry opened. */
async function openFleet(ctx: AppContext, o: McpOptions): Promise<FleetWorkspaces> {
  if (o.workspace) {
    throw new TendError(
      'mcp.bad_flag',
      '--fleet serves every workspace registered in the fleet’s store: --workspace does not go with it',
      { hint: 'drop --workspace; each tool takes the workspace it is about (workspace argument)' },
    );
  }
  if (o.allowApply) {
    throw new TendError(
      'mcp.bad_flag',
      '--allow-apply does not go with --fleet: in a fleet, the worker holding a workspace carries out its intent',
      {
        hint: 'drop --allow-apply; propose_change writes a saved plan and a patch for a human, who applies the patch in the intent directory',
      },
    );
  }
  return openFleetWorkspaces(ctx, o.store ? { store: storeFlag(o.store) } : {}, {
    listHint: 'the list_workspaces tool',
    server: 'tend mcp --fleet',
  });
}

async function serveOverHttp(
  ctx: AppContext,
  options: McpServerOptions,
  port: number,
  out: Output,
): Promise<void> {
  const running = await serveHttp(ctx, options, { port });
  // The first line says where to connect (tests and scripts read it).
  out.line(`tend mcp listening on ${running.url}`);
  if (options.allowApply)
    out.err('propose_change may apply proposals without destructive steps (--allow-apply)');
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await running.close();
}
