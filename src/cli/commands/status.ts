import type { Command } from 'commander';
import { openWorkspace, observe, systemClock } from '../../engine/index.js';
import type { ResourceStatus } from '../../core/index.js';
import { toTendError } from '../../core/index.js';
import type { CommonOptions } from '../common.js';
import { fail, output, workspaceOptions } from '../common.js';
import { EXIT } from '../exit-codes.js';

interface StatusOptions extends CommonOptions {
  offline?: boolean;
}

/** `tend status [dir]`: each resource's state after the last pass, plus orphans found live. */
export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description(
      'show each resource’s state after the last pass, and objects carrying Tend’s marker that no intent declares',
    )
    .argument('[dir]', 'intent directory', '.')
    .option('--json', 'machine-readable output')
    .option('--store <path>', 'store location (default <dir>/.tend/tend.db)')
    .option('--workspace <name>', 'workspace name carried in ownership markers')
    .option('--offline', 'do not contact the platform (no orphan listing)')
    .action(async (dir: string, o: StatusOptions) => {
      const out = output(o.json);
      try {
        const ws = await openWorkspace(workspaceOptions(dir, o));
        try {
          const stored = new Map((await ws.store.listStatus()).map((s) => [s.address, s] as const));
          const resources: ResourceStatus[] = ws.intent.resources.map(
            (r) =>
              stored.get(r.address) ?? {
                address: r.address,
                state: 'pending',
                message: 'never applied',
                checks: [],
                updatedAt: '',
              },
          );
          let orphans: { type: string; id: string }[] = [];
          let duplicates: { address: string; objectIds: string[] }[] = [];
          let replacing: { address: string; oldObjectId: string }[] = [];
          let platformError: string | undefined;
          if (!o.offline) {
            try {
              const obs = await observe(ws, { visibilityWindowMs: 10_000, now: systemClock.now() });
              orphans = obs.orphans.map((x) => ({
                type: x.type,
                id: x.object.id,
                address: x.object.marker?.address,
              }));
              duplicates = obs.duplicates;
              replacing = obs.leftovers.map((l) => ({ address: l.address, oldObjectId: l.old.id }));
            } catch (e) {
              platformError = toTendError(e).message;
            }
          }
          if (out.json) {
            out.data({
              resources,
              orphans,
              duplicates,
              replacing,
              ...(platformError ? { platformError } : {}),
            });
          } else {
            const s = out.style;
            const color = (st: string) =>
              st === 'converged' ? s.green : st === 'failing' || st === 'error' ? s.red : s.yellow;
            const w = Math.max(8, ...resources.map((r) => r.address.length));
            out.line(
              s.bold(
                `${'RESOURCE'.padEnd(w)}  ${'STATE'.padEnd(9)}  ${'OBJECT'.padEnd(14)}  CHECKS  DETAIL`,
              ),
            );
            for (const r of resources) {
              const passed = r.checks.filter((c) => c.ok).length;
              const checks = r.checks.length ? `${passed}/${r.checks.length}` : '-';
              out.line(
                `${r.address.padEnd(w)}  ${color(r.state)(r.state.padEnd(9))}  ${(r.objectId ?? '-').padEnd(14)}  ${checks.padEnd(6)}  ${r.message ?? ''}`,
              );
            }
            if (orphans.length > 0) {
              out.line(
                s.yellow(
                  `\n${orphans.length} orphan${orphans.length === 1 ? '' : 's'} (carry Tend's marker, declared by no intent; never deleted automatically):`,
                ),
              );
              for (const x of orphans) out.line(`  ${x.type} ${x.id}`);
            }
            for (const r of replacing) {
              out.line(
                s.yellow(
                  `replace in progress for ${r.address}: old object ${r.oldObjectId} is deleted by the next apply or run pass`,
                ),
              );
            }
            for (const d of duplicates)
              out.line(s.red(`duplicate objects for ${d.address}: ${d.objectIds.join(', ')}`));
            if (platformError)
              out.line(s.yellow(`platform not reachable, orphans not listed: ${platformError}`));
          }
          const bad = resources.some((r) => r.state === 'error' || r.state === 'failing');
          process.exitCode = bad ? EXIT.error : EXIT.ok;
        } finally {
          await ws.close();
        }
      } catch (e) {
        fail(out, e);
      }
    });
}
