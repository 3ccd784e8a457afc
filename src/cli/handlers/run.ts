import type { RunOptions } from '../commands/run.js';
import type { AppEvent, RunReport } from '../../app/index.js';
import { run } from '../../app/index.js';
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
import { renderPlan } from '../render/plan.js';
import { tuneHeap } from '../heap.js';

/**
 * The exit code of a run: the last pass's (0 converged or blocked only, 1 failed or could not run);
 * 1 when the workspace was taken over by another writer.
 */
export function runExitCode(r: RunReport): number {
  if (r.stoppedBy === 'lease-lost') return EXIT.error;
  if (!r.last) return EXIT.ok;
  return r.last.verdict === 'failed' || r.last.verdict === 'error' ? EXIT.error : EXIT.ok;
}

/** `tend run [dir]`, run: the loop until a signal or --max-passes, events rendered as they come. */
export async function runHandler(dir: string, o: RunOptions): Promise<void> {
  // A command that holds many resources for long: bound the heap's growth (decision 0027).
  tuneHeap();
  const out = output(o.json);
  const stop = stopOnSignals(out);
  let lastPlanShown = '';
  const report = (e: AppEvent) => {
    if (out.json) {
      out.record(eventRecord(e));
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
    const result = await run(cliContext(), {
      ...workspaceOptions(dir, o),
      intervalMs: o.interval * 1000,
      approveDestroy: Boolean(o.approveDestroy),
      prune: o.prune !== false,
      verifyTimeoutMs: o.verifyTimeout,
      lockTimeoutMs: o.lockTimeout * 1000,
      ...(o.maxPasses !== undefined ? { maxPasses: o.maxPasses } : {}),
      report,
      signal: stop.signal,
      crash: crashHookFromEnv(),
      onStart: (info) => {
        if (out.json) return;
        out.line(
          out.style.bold(
            `tend run: workspace ${info.workspace}, ${info.resources} resources in ${dir}; audit feed: ${info.auditFeed ? 'yes' : 'no'}; interval ${o.interval}s. Ctrl-C to stop.`,
          ),
        );
      },
    });
    if (out.json) out.record({ kind: 'run-done', ...result });
    else if (result.stoppedBy === 'lease-lost') {
      out.err(out.style.red('stopped: another tend process took the workspace over.'));
    } else {
      out.line(
        result.stoppedBy === 'signal'
          ? 'stopped cleanly.'
          : `ran ${result.passes} pass${result.passes === 1 ? '' : 'es'}.`,
      );
      const last = result.last;
      if (last && last.verdict !== 'ok') {
        out.line(
          out.style.red(
            `the last pass (${last.pass}) ${last.verdict === 'error' ? 'could not run' : `ended ${last.verdict}`}${last.message ? `: ${last.message}` : ''}`,
          ),
        );
      }
    }
    process.exitCode = runExitCode(result);
  } catch (e) {
    fail(out, e);
  } finally {
    stop.dispose();
  }
}
