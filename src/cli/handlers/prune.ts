import type { PruneOptions } from '../commands/prune.js';
import { createInterface } from 'node:readline/promises';
import type { PruneReport } from '../../app/index.js';
import { prune } from '../../app/index.js';
import {
  cliContext,
  crashHookFromEnv,
  fail,
  output,
  stopOnSignals,
  workspaceOptions,
} from '../common.js';
import { EXIT } from '../exit-codes.js';
import { eventRecord, renderEvent } from '../render/events.js';

/** The exit code of a prune: 0 done (or nothing to do), 1 failed or not confirmed, 3 held back. */
export function pruneExitCode(verdict: PruneReport['verdict']): number {
  switch (verdict) {
    case 'ok':
      return EXIT.ok;
    case 'blocked':
      return EXIT.blocked;
    case 'failed':
    case 'cancelled':
      return EXIT.error;
  }
}

/** `tend prune [dir]`, run: lists the orphans, asks, deletes. */
export async function pruneHandler(dir: string, o: PruneOptions): Promise<void> {
  const out = output(o.json);
  const stop = stopOnSignals(out);
  try {
    const r = await prune(cliContext(), {
      ...workspaceOptions(dir, o),
      approveDestroy: Boolean(o.approveDestroy),
      lockTimeoutMs: o.lockTimeout * 1000,
      signal: stop.signal,
      crash: crashHookFromEnv(),
      report: (e) => {
        if (out.json) out.recordErr(eventRecord(e));
        else {
          const text = renderEvent(e, out.style, false);
          if (text) out.line(text);
        }
      },
      confirm: async (plan) => {
        if (!out.json) {
          out.line(
            out.style.bold(
              `${plan.toDelete.length} object${plan.toDelete.length === 1 ? '' : 's'} to delete:`,
            ),
          );
          for (const t of plan.toDelete) {
            out.line(out.style.red(`  - ${t.type} ${t.id}  (was ${t.address})`));
          }
        }
        if (o.yes) return true;
        if (!process.stdin.isTTY) {
          out.err(
            out.style.red(
              'refusing to delete without confirmation: re-run with --yes (stdin is not a terminal)',
            ),
          );
          return false;
        }
        const rl = createInterface({ input: process.stdin, output: process.stderr });
        try {
          return (await rl.question("Delete them? Only 'yes' proceeds: ")).trim() === 'yes';
        } finally {
          rl.close();
        }
      },
    });
    if (out.json) out.data(r);
    else {
      for (const g of r.result?.gated ?? r.plan.gated) {
        out.line(out.style.yellow(`  kept ${g.target.type} ${g.target.id}: ${g.reason}`));
      }
      for (const f of r.result?.failed ?? []) {
        out.line(out.style.red(`  ✗ ${f.target.type} ${f.target.id}: ${f.message}`));
      }
      const n = r.result?.deleted.length ?? 0;
      out.line(
        r.verdict === 'cancelled'
          ? out.style.yellow('Prune cancelled: nothing was deleted.')
          : r.plan.toDelete.length === 0 && r.plan.gated.length === 0
            ? 'No orphans: nothing to prune.'
            : `Prune ${r.verdict === 'failed' ? 'failed' : 'complete'}: ${n} deleted, ${r.result?.gated.length ?? r.plan.gated.length} kept, ${r.result?.failed.length ?? 0} failed.`,
      );
    }
    process.exitCode = pruneExitCode(r.verdict);
  } catch (e) {
    fail(out, e);
  } finally {
    stop.dispose();
  }
}
