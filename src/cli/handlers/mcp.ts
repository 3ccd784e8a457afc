import { readFileSync } from 'node:fs';
import type { McpOptions } from '../commands/mcp.js';
import { serveHttp, serveStdio } from '../../mcp/index.js';
import { cliContext, fail, output, workspaceOptions } from '../common.js';
import { EXIT } from '../exit-codes.js';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/**
 * `tend mcp [dir]`, run: serves until stdin closes (stdio) or a stop signal (HTTP). In stdio mode
 * stdout carries the protocol only: what Tend has to say goes to stderr.
 */
export async function mcpHandler(dir: string, o: McpOptions): Promise<void> {
  const ctx = cliContext();
  const options = {
    selection: workspaceOptions(dir, o),
    allowApply: Boolean(o.allowApply),
    version: pkg.version,
    lockTimeoutMs: o.lockTimeout * 1000,
  };
  if (!o.http) {
    await serveStdio(ctx, options);
    process.exitCode = EXIT.ok;
    return;
  }
  const out = output(false);
  try {
    const running = await serveHttp(ctx, options, { port: o.port });
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
    process.exitCode = EXIT.ok;
  } catch (e) {
    fail(out, e);
  }
}
