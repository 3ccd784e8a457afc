import type {
  ActionContext,
  ActionDefinition,
  ActionRun,
  ActionStep,
  StepReport,
} from '../../core/index.js';
import { nextMove, runDone, stepEnded, stepStarted, toTendError } from '../../core/index.js';
import type { Store } from '../../store/index.js';
import type { Clock } from '../clock.js';
import type { ActionCrashHook } from './crash.js';
import { noActionCrash } from './crash.js';

/** What a run reports as it goes (progress on stderr, JSON lines for machines). */
export type ActionEvent =
  | {
      readonly kind: 'action-step-start';
      readonly step: string;
      readonly index: number;
      readonly of: number;
      readonly attempt: number;
    }
  | { readonly kind: 'action-step-verify-first'; readonly step: string; readonly index: number }
  | { readonly kind: 'action-step-redo'; readonly step: string; readonly reason: string }
  | {
      readonly kind: 'action-step-done';
      readonly step: string;
      readonly ms: number;
      readonly message: string;
    }
  | { readonly kind: 'action-step-failed'; readonly step: string; readonly message: string }
  | { readonly kind: 'action-progress'; readonly step: string; readonly message: string };

/** What carrying out a run needs. */
export interface CarryOutOptions {
  readonly store: Store;
  readonly definition: ActionDefinition;
  /** The context handed to every step (its `progress` is the runner's). */
  readonly context: Omit<ActionContext, 'progress'>;
  readonly clock: Clock;
  readonly report?: (event: ActionEvent) => void;
  /** Aborting lets the step in flight settle and starts no new one (the run stays resumable). */
  readonly signal?: AbortSignal;
  /** Test hook at every crash point (engine/actions/crash.ts). */
  readonly crash?: ActionCrashHook;
}

/** The run as it ended (or stopped), and whether it stopped early because of `signal`. */
export interface CarryOutResult {
  readonly run: ActionRun;
  readonly interrupted: boolean;
}

/**
 * Carries a recorded run forward to its end, from wherever it stands (core/action.ts `nextMove`):
 * each step is journaled as started before its work, and settled only after its verification holds;
 * a step found started (a crash: outcome unknown) is verified first, then settled or redone. Every
 * transition is written to the store before the next begins, so a crash at any point leaves a run
 * that resumes from its last settled step. A failing step or verification fails the run (no later
 * step runs); the store's lease fence stops a writer that lost the workspace.
 */
export async function carryOutRun(
  initial: ActionRun,
  options: CarryOutOptions,
): Promise<CarryOutResult> {
  const { store, definition, clock } = options;
  const crash = options.crash ?? noActionCrash;
  const report = options.report ?? (() => {});
  const names = definition.steps.map((s) => s.name);
  const now = () => clock.now().toISOString();
  let run = initial;
  let current = '';
  const ctx: ActionContext = {
    ...options.context,
    progress: (message) => report({ kind: 'action-progress', step: current, message }),
  };
  const save = async (next: ActionRun) => {
    await store.putActionRun(next);
    run = next;
  };
  const verify = async (step: ActionStep): Promise<StepReport> => {
    try {
      return await step.verify(ctx);
    } catch (e) {
      return { ok: false, message: `verification failed: ${toTendError(e).message}` };
    }
  };
  const doStep = async (index: number, step: ActionStep): Promise<void> => {
    await save(stepStarted(run, index, step.name, now()));
    const attempt = run.steps[index]!.attempts;
    report({ kind: 'action-step-start', step: step.name, index, of: names.length, attempt });
    crash('started', step.name);
    const t0 = clock.now().getTime();
    let evidence: string;
    try {
      ctx.fence?.();
      evidence = await step.run(ctx);
    } catch (e) {
      const err = toTendError(e);
      const message = err.hint ? `${err.message}; ${err.hint}` : err.message;
      await save(stepEnded(run, index, 'failed', message, now()));
      report({ kind: 'action-step-failed', step: step.name, message });
      return;
    }
    crash('ran', step.name);
    const checked = await verify(step);
    if (!checked.ok) {
      const message = `its verification does not hold: ${checked.message}`;
      await save(stepEnded(run, index, 'failed', message, now()));
      report({ kind: 'action-step-failed', step: step.name, message });
      return;
    }
    const message = evidence === '' ? checked.message : `${evidence}; ${checked.message}`;
    await save(stepEnded(run, index, 'settled', message, now()));
    report({ kind: 'action-step-done', step: step.name, ms: clock.now().getTime() - t0, message });
    crash('settled', step.name);
  };

  for (;;) {
    const move = nextMove(run, names);
    if (move.kind === 'finished') return { run, interrupted: false };
    if (move.kind === 'complete') {
      await save(runDone(run, now()));
      return { run, interrupted: false };
    }
    if (options.signal?.aborted) return { run, interrupted: true };
    const step = definition.steps[move.index]!;
    current = step.name;
    if (move.kind === 'verify-first') {
      report({ kind: 'action-step-verify-first', step: step.name, index: move.index });
      const t0 = clock.now().getTime();
      const checked = await verify(step);
      if (checked.ok) {
        const message = `verified after an interruption: ${checked.message}`;
        await save(stepEnded(run, move.index, 'settled', message, now()));
        report({
          kind: 'action-step-done',
          step: step.name,
          ms: clock.now().getTime() - t0,
          message,
        });
        crash('settled', step.name);
        continue;
      }
      report({ kind: 'action-step-redo', step: step.name, reason: checked.message });
    }
    await doStep(move.index, step);
  }
}
