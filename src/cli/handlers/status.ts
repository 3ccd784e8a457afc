import type { StatusOptions } from '../commands/status.js';
import { status } from '../../app/index.js';
import { cliContext, fail, output, workspaceOptions } from '../common.js';
import { EXIT } from '../exit-codes.js';
import { renderFindingLines } from '../render/compliance.js';
import { renderLiveFindings } from '../render/live.js';

/** `tend status [dir]`, run: exit 1 when a resource or provider is in error. */
export async function statusHandler(dir: string, o: StatusOptions): Promise<void> {
  const out = output(o.json);
  try {
    const r = await status(cliContext(), {
      ...workspaceOptions(dir, o),
      offline: Boolean(o.offline),
    });
    if (out.json) out.data(r);
    else {
      const s = out.style;
      const color = (st: string) =>
        st === 'converged' ? s.green : st === 'failing' || st === 'error' ? s.red : s.yellow;
      out.line(s.dim(`workspace ${r.workspace.name} (${r.workspace.source})`));
      if (r.lease) {
        const h = r.lease.holder;
        out.line(
          s.dim(`held by ${h.command} (pid ${h.pid} on ${h.host}) since ${r.lease.acquiredAt}`),
        );
      }
      if (r.gitSource) {
        const g = r.gitSource;
        out.line(
          s.dim(
            `intent from git ${g.url} ${g.ref}${g.path ? ` path ${g.path}` : ''}: ${g.commit ? `last pass planned from commit ${g.commit}${g.lastPassAt ? ` at ${g.lastPassAt}` : ''}` : 'no pass yet'}`,
          ),
        );
      }
      for (const p of r.providers) {
        if (p.state !== 'ok') {
          out.line(s.red(`provider ${p.name}: ${p.state}${p.message ? ` — ${p.message}` : ''}`));
        }
      }
      const w = r.resources.reduce((max, x) => Math.max(max, x.address.length), 8);
      out.line(
        s.bold(
          `${'RESOURCE'.padEnd(w)}  ${'STATE'.padEnd(9)}  ${'OBJECT'.padEnd(14)}  CHECKS  DETAIL`,
        ),
      );
      for (const x of r.resources) {
        const passed = x.checks.filter((c) => c.ok).length;
        // A check that failed only as a warning (a certificate expiring soon) is counted apart.
        const warned = x.checks.filter((c) => !c.ok && c.severity === 'warning').length;
        const checks = x.checks.length
          ? `${passed}/${x.checks.length}${warned > 0 ? ` (${warned} warning${warned === 1 ? '' : 's'})` : ''}`
          : '-';
        out.line(
          `${x.address.padEnd(w)}  ${color(x.state)(x.state.padEnd(9))}  ${(x.objectId ?? '-').padEnd(14)}  ${checks.padEnd(6)}  ${x.message ?? ''}`,
        );
        for (const line of renderFindingLines(x, s)) out.line(line);
      }
      for (const p of r.paused) {
        out.line(
          s.yellow(
            `paused: ${p.address} — reconciling stopped by ${p.by} at ${p.since}${p.reason ? ` (${p.reason})` : ''}; tend resume ${p.address}`,
          ),
        );
      }
      const live = renderLiveFindings(r, s);
      if (live) out.line(`\n${live}`);
      if (r.platformError)
        out.line(s.yellow(`platform not reachable, orphans not listed: ${r.platformError}`));
    }
    const bad =
      r.resources.some((x) => x.state === 'error' || x.state === 'failing') ||
      r.providers.some((p) => p.state !== 'ok');
    process.exitCode = bad ? EXIT.error : EXIT.ok;
  } catch (e) {
    fail(out, e);
  }
}
