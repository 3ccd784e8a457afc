import type { Command } from 'commander';
import type { EngineEvent } from '../../engine/index.js';
import { openWorkspace, runContinuously, systemClock, tendActor } from '../../engine/index.js';
import type { CommonOptions } from '../common.js';
import {
  crashHookFromEnv,
  fail,
  intOption,
  output,
  stopOnSignals,
  workspaceOptions,
} from '../common.js';
import { eventJson, renderEvent } from '../render/events.js';
import { renderPlan } from '../render/plan.js';

interface RunOptions extends CommonOptions {
  interval: number;
  approveDestroy?: boolean;
  prune?: boolean;
  verifyTimeout: number;
  maxPasses?: number;
  quiet?: boolean;
}

/** `tend run [dir]`: the continuous loop. SIGINT/SIGTERM stop it cleanly; a second signal exits at once. */
export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description(
      'keep the platform matching the intent: reconcile on audit-feed events and every interval',
    )
    .argument('[dir]', 'intent directory', '.')
    .option('--json', 'JSON lines of events')
    .option('--store <path>', 'store location (default <dir>/.tend/tend.db)')
    .option('--workspace <name>', 'workspace name carried in ownership markers')
    .option('--interval <seconds>', 'full pass at least this often', intOption('--interval'), 30)
    .option(
      '--approve-destroy',
      'allow destructive steps on stateful resources (otherwise they are blocked)',
    )
    .option('--no-prune', 'do not delete managed objects removed from the intent')
    .option(
      '--verify-timeout <ms>',
      'how long to wait for observed to match declared',
      intOption('--verify-timeout'),
      15_000,
    )
    .option('--max-passes <n>', 'stop after n passes', intOption('--max-passes'))
    .option('-q, --quiet', 'print changes and problems only, not every pass')
    .action(async (dir: string, o: RunOptions) => {
      const out = output(o.json);
      try {
        const ws = await openWorkspace(workspaceOptions(dir, o));
        const stop = stopOnSignals(out);
        if (!out.json) {
          out.line(
            out.style.bold(
              `tend run: ${ws.intent.resources.length} resources in ${dir}; audit feed: ${[...ws.providers.values()].some((p) => p.changes !== undefined) ? 'yes' : 'no'}; interval ${o.interval}s. Ctrl-C to stop.`,
            ),
          );
        }
        let lastPlanShown = '';
        const report = (e: EngineEvent) => {
          if (out.json) {
            out.line(eventJson(e));
            return;
          }
          if (e.kind === 'plan') {
            const hasWork = e.plan.steps.some((s) => s.kind !== 'noop');
            const text = renderPlan(e.plan, out.style);
            if (hasWork && text !== lastPlanShown) out.line(text);
            lastPlanShown = hasWork ? text : '';
            return;
          }
          const text = renderEvent(e, out.style, !o.quiet);
          if (text) out.line(text);
        };
        try {
          await runContinuously(
            ws,
            {
              approveDestroy: Boolean(o.approveDestroy),
              prune: o.prune !== false,
              actor: tendActor('drift'),
              clock: systemClock,
              report,
              crash: crashHookFromEnv(),
              verifyTimeoutMs: o.verifyTimeout,
              visibilityWindowMs: 10_000,
              runChecks: true,
              intervalMs: o.interval * 1000,
              feedWaitMs: 1000,
              ...(o.maxPasses !== undefined ? { maxPasses: o.maxPasses } : {}),
            },
            stop.signal,
          );
          if (!out.json) out.line('stopped cleanly.');
        } finally {
          stop.dispose();
          await ws.close();
        }
      } catch (e) {
        fail(out, e);
      }
    });
}
