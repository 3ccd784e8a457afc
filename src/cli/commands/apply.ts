import type { Command } from 'commander';
import { createInterface } from 'node:readline/promises';
import type { Plan } from '../../core/index.js';
import type { EngineEvent } from '../../engine/index.js';
import { openWorkspace, reconcilePass, systemClock, tendActor } from '../../engine/index.js';
import type { CommonOptions } from '../common.js';
import {
  crashHookFromEnv,
  fail,
  intOption,
  output,
  stopOnSignals,
  workspaceOptions,
} from '../common.js';
import { EXIT } from '../exit-codes.js';
import { eventJson, renderEvent } from '../render/events.js';
import { planJson, renderPlan } from '../render/plan.js';

interface ApplyOptions extends CommonOptions {
  yes?: boolean;
  approveDestroy?: boolean;
  prune?: boolean;
  verifyTimeout: number;
  checks?: boolean;
}

async function askYes(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(question)).trim() === 'yes';
  } finally {
    rl.close();
  }
}

/** `tend apply [dir]`: one pass of the loop: plan, execute with the journal, verify, check. */
export function registerApplyCommand(program: Command): void {
  program
    .command('apply')
    .description(
      'make the platform match the intent once: plan, execute (journaled), verify, run checks',
    )
    .argument('[dir]', 'intent directory', '.')
    .option('--json', 'machine-readable output (JSON lines of events, then a summary)')
    .option('--store <path>', 'store location (default <dir>/.tend/tend.db)')
    .option('--workspace <name>', 'workspace name carried in ownership markers')
    .option('-y, --yes', 'do not ask before destructive steps (replace, delete)')
    .option('--approve-destroy', 'allow destructive steps on resources marked lifecycle.stateful')
    .option('--no-prune', 'do not delete managed objects removed from the intent')
    .option('--no-checks', 'skip checks after verification')
    .option(
      '--verify-timeout <ms>',
      'how long to wait for observed to match declared',
      intOption('--verify-timeout'),
      15_000,
    )
    .action(async (dir: string, o: ApplyOptions) => {
      const out = output(o.json);
      try {
        const ws = await openWorkspace(workspaceOptions(dir, o));
        const stop = stopOnSignals(out);
        try {
          const report = (e: EngineEvent) => {
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
            const n = plan.counts.replace + plan.counts.delete;
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
          const result = await reconcilePass(ws, {
            mode: 'apply',
            approveDestroy: Boolean(o.approveDestroy),
            prune: o.prune !== false,
            actor: tendActor('apply'),
            clock: systemClock,
            report,
            crash: crashHookFromEnv(),
            verifyTimeoutMs: o.verifyTimeout,
            visibilityWindowMs: 10_000,
            runChecks: o.checks !== false,
            confirm,
            signal: stop.signal,
          });
          const outcomes = [...result.outcomes.entries()];
          const count = (state: string) => outcomes.filter(([, x]) => x.state === state).length;
          const summary = {
            applied: result.applied,
            plan: planJson(result.plan),
            resources: Object.fromEntries(outcomes),
            converged: count('converged'),
            failing: count('failing'),
            blocked: count('blocked'),
            errors: count('error'),
            pending: count('pending'),
          };
          if (out.json) out.data(summary);
          else if (!result.applied)
            out.line(out.style.yellow('Apply cancelled: nothing was changed.'));
          else {
            const n = (k: number, one: string, many = `${one}s`) => `${k} ${k === 1 ? one : many}`;
            const parts = [
              `${summary.converged} converged`,
              summary.failing && n(summary.failing, 'failing a check', 'failing checks'),
              summary.blocked && `${summary.blocked} blocked`,
              summary.errors && n(summary.errors, 'error'),
              summary.pending && `${summary.pending} pending`,
            ].filter(Boolean);
            for (const [address, o] of outcomes) {
              if (o.state === 'converged') continue;
              out.line(`  ${o.state.padEnd(9)} ${address}${o.message ? `: ${o.message}` : ''}`);
            }
            const style =
              summary.errors || summary.failing
                ? out.style.red
                : summary.blocked
                  ? out.style.yellow
                  : out.style.green;
            out.line(style(`Apply complete: ${parts.join(', ')}.`));
          }
          process.exitCode = stop.interrupted()
            ? EXIT.interrupted
            : !result.applied
              ? EXIT.error
              : summary.errors || summary.failing
                ? EXIT.error
                : summary.blocked
                  ? EXIT.blocked
                  : EXIT.ok;
        } finally {
          stop.dispose();
          await ws.close();
        }
      } catch (e) {
        fail(out, e);
      }
    });
}
