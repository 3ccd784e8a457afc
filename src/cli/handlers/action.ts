import type { ActionActor } from '../../core/index.js';
import { checkActorKind, checkIntentWord, parseMotivation, toTendError } from '../../core/index.js';
import type { ActionEvent, ActionReport } from '../../app/index.js';
import {
  ACTION_USAGE_CODES,
  actionCrashHookFrom,
  ActionUsageError,
  listActions,
  runAction,
} from '../../app/index.js';
import type { ActionOptions } from '../commands/action.js';
import { cliContext, fail, output, stopOnSignals, workspaceOptions } from '../common.js';
import type { Output } from '../common.js';
import { EXIT } from '../exit-codes.js';

/** The exit code of a run: 0 done, 1 a step failed, 130 interrupted (running again resumes it). */
export function actionExitCode(state: ActionReport['state']): number {
  return state === 'done' ? EXIT.ok : state === 'interrupted' ? EXIT.interrupted : EXIT.error;
}

/** Who runs the action, from the flags; a bad flag is a usage error naming it. */
function actorOf(o: ActionOptions, now: Date): ActionActor | undefined {
  if (!o.actor && !o.actorKind && !o.intent && !o.motivation) return undefined;
  const problems: string[] = [];
  let actorKind;
  if (o.actorKind !== undefined) {
    const k = checkActorKind(o.actorKind);
    if (k.ok) actorKind = k.value;
    else problems.push(`--actor-kind: ${k.error}`);
  }
  if (o.intent !== undefined) {
    const i = checkIntentWord(o.intent);
    if (!i.ok) problems.push(`--intent: ${i.error}`);
  }
  let motivation;
  if (o.motivation !== undefined) {
    const m = parseMotivation(o.motivation, now);
    if (m.ok) motivation = m.value;
    else problems.push(`--motivation: ${m.error}`);
  }
  if (problems.length > 0) {
    throw new ActionUsageError('action.invalid_params', problems, 'nothing was run');
  }
  return {
    actor: o.actor ?? 'tend',
    actorKind: actorKind ?? (o.actor ? 'human' : 'tend'),
    ...(o.intent ? { intent: o.intent } : {}),
    ...(motivation ? { motivation } : {}),
  };
}

function progressLine(e: ActionEvent): string {
  switch (e.kind) {
    case 'action-step-start':
      return `[${e.index + 1}/${e.of}] ${e.step}${e.attempt > 1 ? ` (attempt ${e.attempt})` : ''}…`;
    case 'action-step-verify-first':
      return `[${e.index + 1}] ${e.step}: interrupted last time; verifying before anything else`;
    case 'action-step-redo':
      return `  ${e.step}: not done (${e.reason}); doing it again`;
    case 'action-step-done':
      return `  ${e.step}: settled in ${e.ms} ms — ${e.message}`;
    case 'action-step-failed':
      return `  ${e.step}: FAILED — ${e.message}`;
    case 'action-progress':
      return `  ${e.step}: ${e.message}`;
  }
}

function renderReport(out: Output, r: ActionReport): void {
  const head = `${r.action} on ${r.address} (run ${r.runId}${r.resumed ? ', resumed' : ''})`;
  for (const s of r.steps) {
    out.line(`  ${s.state.padEnd(8)} ${s.name}${s.message ? `: ${s.message}` : ''}`);
  }
  if (r.state === 'done') out.line(out.style.green(`Done: ${head}.`));
  else if (r.state === 'interrupted') {
    out.line(out.style.yellow(`Interrupted: ${head}; run the same action again to resume it.`));
  } else out.line(out.style.red(`Failed: ${head}: ${r.error ?? ''}`));
}

/** `tend action <address> <name> [dir]` and `tend action <address> --list [dir]`, run. */
export async function actionHandler(
  address: string,
  name: string | undefined,
  dir: string | undefined,
  o: ActionOptions,
): Promise<void> {
  const out = output(o.json);
  const stop = stopOnSignals(out);
  try {
    if (o.list) {
      if (dir !== undefined)
        throw new Error('--list takes the address and a directory, not an action name');
      const list = await listActions(cliContext(), {
        ...workspaceOptions(name ?? '.', o),
        address,
      });
      if (out.json) out.data(list);
      else if (list.actions.length === 0) out.line(`${list.type} offers no actions.`);
      else {
        for (const a of list.actions) {
          out.line(`${a.name} — ${a.description}`);
          for (const p of a.params) {
            out.line(
              `  --param ${p.name}=…  ${p.description}${p.required ? ' (required)' : p.default !== undefined ? ` (default ${p.default})` : ''}`,
            );
          }
          out.line(`  steps: ${a.steps.map((s) => s.name).join(' → ')}`);
        }
      }
      return;
    }
    if (name === undefined) {
      throw new ActionUsageError(
        'action.unknown',
        ['<name>: missing; name the action to run'],
        `tend action ${address} --list shows what it offers`,
      );
    }
    const ctx = cliContext();
    const actor = actorOf(o, ctx.clock.now());
    const report = await runAction(ctx, {
      ...workspaceOptions(dir ?? '.', o),
      address,
      action: name,
      params: o.param ?? [],
      ...(actor ? { actor } : {}),
      lockTimeoutMs: o.lockTimeout * 1000,
      report: (e) => (out.json ? out.recordErr(e) : out.err(progressLine(e))),
      signal: stop.signal,
      crash: actionCrashHookFrom(
        process.env['TEND_ACTION_CRASH_AT'],
        () => process.kill(process.pid, 'SIGKILL') as never,
      ),
    });
    if (out.json) out.data(report);
    else renderReport(out, report);
    process.exitCode = actionExitCode(report.state);
  } catch (e) {
    const err = toTendError(e);
    if ((ACTION_USAGE_CODES as readonly string[]).includes(err.code)) {
      const errors = e instanceof ActionUsageError ? e.errors : [err.message];
      if (out.json) out.data({ ok: false, error: { ...err.toJSON(), errors } });
      else {
        for (const line of errors) out.err(out.style.red(`error: ${line}`));
        if (err.hint) out.err(`  hint: ${err.hint}`);
      }
      process.exitCode = EXIT.usage;
    } else fail(out, e);
  } finally {
    stop.dispose();
  }
}
