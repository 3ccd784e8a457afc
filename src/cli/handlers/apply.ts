import type { ApplyOptions } from '../commands/apply.js';
import { createInterface } from 'node:readline/promises';
import type { ApplyReport, AppEvent } from '../../app/index.js';
import { apply, applyChangeset, isChangesetPath, planStepsView } from '../../app/index.js';
import type { Address, Plan } from '../../core/index.js';
import { blockedReason } from '../../core/index.js';
import {
  cliContext,
  crashHookFromEnv,
  fail,
  output,
  stopOnSignals,
  workspaceOptions,
} from '../common.js';
import type { Output } from '../common.js';
import { EXIT } from '../exit-codes.js';
import { eventRecord, renderEvent } from '../render/events.js';
import { renderLiveFindings } from '../render/live.js';
import { renderPlan } from '../render/plan.js';
import { tuneHeap } from '../heap.js';

async function askYes(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(question)).trim() === 'yes';
  } finally {
    rl.close();
  }
}

/** The exit code of an apply: 0 done, 1 anything failed, 3 only gates held steps back, 130 signal. */
export function applyExitCode(verdict: ApplyReport['verdict']): number {
  switch (verdict) {
    case 'ok':
      return EXIT.ok;
    case 'blocked':
      return EXIT.blocked;
    case 'interrupted':
      return EXIT.interrupted;
    case 'failed':
    case 'cancelled':
    case 'refused':
      return EXIT.error;
  }
}

/** The closing lines of an apply: what did not converge, and one summary line. */
function renderSummary(out: Output, r: ApplyReport): void {
  if (r.refused) {
    out.err(out.style.red(`error: ${r.refused.message}`));
    if (r.refused.hint) out.err(`  hint: ${r.refused.hint}`);
    return;
  }
  if (!r.applied) {
    out.line(out.style.yellow('Apply cancelled: nothing was changed.'));
    return;
  }
  const n = (k: number, one: string, many = `${one}s`) => `${k} ${k === 1 ? one : many}`;
  const c = r.counts;
  const parts = [
    `${c.converged} converged`,
    c.failing && n(c.failing, 'failing a check', 'failing checks'),
    c.blocked && `${c.blocked} blocked`,
    c.error && n(c.error, 'error'),
    c.pending && `${c.pending} pending`,
  ].filter(Boolean);
  for (const p of r.problems) {
    out.line(`  ${p.state.padEnd(9)} ${p.address}${p.message ? `: ${p.message}` : ''}`);
  }
  for (const a of r.accepted) {
    if (a.outcome === 'patched') {
      out.line(
        `Accepted ${a.address}.${a.field} into code — the patch (write it with tend accept ${a.address} ${a.field} --write):`,
      );
      out.line(a.diff.trimEnd());
    } else if (a.outcome === 'elsewhere') {
      out.line(
        `Accepted ${a.address}.${a.field}, but it belongs elsewhere: ${a.elsewhere?.reason ?? ''}`,
      );
    }
  }
  const live = renderLiveFindings(r, out.style);
  if (live) out.line(live);
  const style =
    r.verdict === 'failed'
      ? out.style.red
      : r.verdict === 'ok'
        ? out.style.green
        : out.style.yellow;
  const head =
    r.verdict === 'failed'
      ? 'Apply failed'
      : r.verdict === 'interrupted'
        ? 'Apply interrupted'
        : 'Apply complete';
  out.line(style(`${head}: ${parts.join(', ')}.`));
}

/** `tend apply [dir]`, run: plan, confirm destructive steps, execute, render the outcome. */
export async function applyHandler(dir: string, o: ApplyOptions): Promise<void> {
  // A command that holds many resources for long: bound the heap's growth (decision 0027).
  tuneHeap();
  const out = output(o.json);
  const stop = stopOnSignals(out);
  try {
    const report = (e: AppEvent) => {
      if (out.json) {
        if (e.kind !== 'plan') out.record(eventRecord(e));
        return;
      }
      if (e.kind === 'plan') out.line(renderPlan(e.plan, out.style) + '\n');
      const text = renderEvent(e, out.style, true);
      if (text) out.line(text);
    };
    const confirm = async (plan: Plan): Promise<boolean> => {
      if (o.yes) return true;
      // Blocked steps never run: nothing to confirm for them.
      const n =
        plan.counts.replace +
        plan.counts.delete -
        plan.steps.filter((st) => blockedReason(st) !== undefined).length;
      if (!process.stdin.isTTY) {
        out.err(
          out.style.red(
            `refusing ${n} destructive step${n === 1 ? '' : 's'} without confirmation: re-run with --yes (stdin is not a terminal)`,
          ),
        );
        return false;
      }
      return askYes(
        `Apply ${n} destructive step${n === 1 ? '' : 's'} (replace/delete)? Only 'yes' proceeds: `,
      );
    };
    const common = {
      runChecks: o.checks !== false,
      verifyTimeoutMs: o.verifyTimeout,
      lockTimeoutMs: o.lockTimeout * 1000,
      confirm,
      report,
      crash: crashHookFromEnv(),
      signal: stop.signal,
    };
    const saved = await isChangesetPath(dir);
    if (saved && (o.target || o.approveDestroy || o.prune === false)) {
      throw new Error(
        'a changeset carries its own --target, --approve-destroy and --no-prune: plan again with them instead',
      );
    }
    const result = saved
      ? await applyChangeset(cliContext(), {
          ...workspaceOptions('.', o),
          ...common,
          changeset: dir,
        })
      : await apply(cliContext(), {
          ...workspaceOptions(dir, o),
          ...common,
          approveDestroy: Boolean(o.approveDestroy),
          prune: o.prune !== false,
          ...(o.target ? { targets: o.target as Address[] } : {}),
        });
    if (out.json) {
      out.data({
        verdict: result.verdict,
        applied: result.applied,
        ...(result.refused ? { refused: result.refused } : {}),
        workspace: result.workspace,
        epoch: result.epoch,
        plan: planStepsView(result.plan),
        resources: result.outcomes,
        converged: result.counts.converged,
        failing: result.counts.failing,
        blocked: result.counts.blocked,
        errors: result.counts.error,
        pending: result.counts.pending,
        problems: result.problems,
        orphans: result.orphans,
        duplicates: result.duplicates,
        replacing: result.replacing,
      });
    } else renderSummary(out, result);
    process.exitCode = stop.interrupted() ? EXIT.interrupted : applyExitCode(result.verdict);
  } catch (e) {
    fail(out, e);
  } finally {
    stop.dispose();
  }
}
