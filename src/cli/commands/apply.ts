import type { Command } from 'commander';
import { createInterface } from 'node:readline/promises';
import type { ApplyReport, AppEvent } from '../../app/index.js';
import { apply, applyChangeset, isChangesetPath } from '../../app/index.js';
import type { Address, Plan } from '../../core/index.js';
import { blockedReason } from '../../core/index.js';
import type { WriterOptions } from '../common.js';
import {
  cliContext,
  collectList,
  crashHookFromEnv,
  fail,
  intOption,
  lockFlag,
  output,
  stopOnSignals,
  workspaceFlags,
  workspaceOptions,
} from '../common.js';
import type { Output } from '../common.js';
import { EXIT } from '../exit-codes.js';
import { eventJson, renderEvent } from '../render/events.js';
import { renderLiveFindings } from '../render/live.js';
import { planJson, renderPlan } from '../render/plan.js';

interface ApplyOptions extends WriterOptions {
  yes?: boolean;
  approveDestroy?: boolean;
  prune?: boolean;
  verifyTimeout: number;
  checks?: boolean;
  target?: string[];
}

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

/** `tend apply [dir]`: one pass of the loop: plan, execute (journaled), verify, check. */
export function registerApplyCommand(program: Command): void {
  lockFlag(
    workspaceFlags(
      program
        .command('apply')
        .description(
          'make the platform match the intent once: plan, execute (journaled), verify, run checks (exit 0 done, 1 anything failed, 3 waiting for --approve-destroy)',
        )
        .argument(
          '[dir]',
          'intent directory, or a changeset file written by tend plan --out (carried out exactly)',
          '.',
        )
        .option('--json', 'machine-readable output (JSON lines of events, then a summary)'),
    ),
  )
    .option('-y, --yes', 'do not ask before destructive steps (replace, delete)')
    .option('--approve-destroy', 'allow destructive steps on resources marked lifecycle.stateful')
    .option('--no-prune', 'do not delete managed objects removed from the intent')
    .option('--no-checks', 'skip checks after verification')
    .option(
      '--target <address>',
      'only this resource and what it depends on (repeatable)',
      collectList,
    )
    .option(
      '--verify-timeout <ms>',
      'how long to wait for observed to match declared',
      intOption('--verify-timeout'),
      15_000,
    )
    .action(async (dir: string, o: ApplyOptions) => {
      const out = output(o.json);
      const stop = stopOnSignals(out);
      try {
        const report = (e: AppEvent) => {
          if (out.json) {
            if (e.kind !== 'plan') out.line(eventJson(e));
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
            plan: planJson(result.plan),
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
    });
}
