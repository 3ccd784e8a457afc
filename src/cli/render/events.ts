import type { AppEvent } from '../../app/index.js';
import { formatDiagnostic, formatMotivation } from '../../core/index.js';
import { describeFieldChanges } from './field-changes.js';
import type { Style } from './style.js';

function time(): string {
  return new Date().toISOString().slice(11, 19);
}

/** One human line (or none) for an engine event. Plans are rendered separately. */
export function renderEvent(e: AppEvent, s: Style, verbose: boolean): string | undefined {
  switch (e.kind) {
    case 'pass-start':
      return verbose ? s.dim(`[${time()}] pass ${e.pass} (${e.trigger})`) : undefined;
    case 'observed':
      return verbose
        ? s.dim(
            `  observed ${e.objects} managed object${e.objects === 1 ? '' : 's'}${e.focused ? ' (focused: what the audit feed named, and what it references)' : ''} in ${e.ms} ms`,
          )
        : undefined;
    case 'plan':
      return undefined;
    case 'recovered':
      return s.yellow(`  ↺ ${e.address}  journal ${e.opId}: ${e.outcome}`);
    case 'op-start':
      return undefined;
    case 'op-done': {
      const sym =
        e.action === 'create' ? s.green('+') : e.action === 'update' ? s.yellow('~') : s.red('-');
      return `  ${sym} ${e.address}  ${e.action}d ${e.objectId} (${e.ms} ms)`;
    }
    case 'op-failed':
      return (
        s.red(`  ✗ ${e.address}  ${e.action} failed: ${e.error.message}`) +
        (e.error.hint ? s.dim(`\n      hint: ${e.error.hint}`) : '')
      );
    case 'blocked':
      return s.red(`  ⏸ ${e.address}  blocked: ${e.reason}`);
    case 'skipped':
      return s.yellow(`  … ${e.address}  ${e.reason}`);
    case 'verified':
      return verbose
        ? s.dim(`  ✓ ${e.address}  verified: observed matches declared (${e.ms} ms)`)
        : undefined;
    case 'check':
      if (e.result.ok) return s.green(`  ✓ ${e.address}  check ${e.result.name} passed`);
      // Still working, not for long (a certificate expiring within minDaysLeft): a warning.
      if (e.result.severity === 'warning') {
        return s.yellow(`  ! ${e.address}  check ${e.result.name} warning: ${e.result.message}`);
      }
      return s.red(`  ✗ ${e.address}  check ${e.result.name} failed: ${e.result.message}`);
    case 'change-observed': {
      const c = e.change;
      const why = [
        c.intent && `intent: ${c.intent}`,
        c.motivation && `motivation: ${formatMotivation(c.motivation)}`,
      ]
        .filter(Boolean)
        .join(', ');
      const fields = describeFieldChanges(c);
      const by = c.actorKind ? `${c.actor} (${c.actorKind})` : c.actor;
      const line = s.cyan(
        `[${time()}] ! ${c.address ?? c.objectId}  ${c.action === 'move' ? 'moved' : `${c.action}d`} by ${by}${why ? ` (${why})` : ''}: ${fields}`,
      );
      if (!c.decision) return line;
      return `${line}\n${s.magenta(`      → ${c.decision.decision}: ${c.decision.reason}`)}`;
    }
    case 'drift':
      return s.yellow(`  ~ ${e.address}  drift on ${e.fields.join(', ')}: correcting`);
    case 'pass-done': {
      const parts = Object.entries(e.states)
        .filter(([, n]) => n > 0)
        .map(([k, n]) => `${n} ${k}`);
      return s.dim(
        `[${time()}] pass ${e.pass} done in ${e.ms} ms: ${parts.join(', ') || 'nothing declared'}`,
      );
    }
    case 'warning':
      return s.yellow(`  warning: ${e.message}`);
    case 'error':
      return (
        s.red(`  error${e.error.address ? ` ${e.error.address}` : ''}: ${e.error.message}`) +
        (e.error.hint ? s.dim(`\n      hint: ${e.error.hint}`) : '')
      );
    case 'lease':
      return verbose
        ? s.dim(
            `  holding workspace ${e.workspace} (lease epoch ${e.epoch})` +
              (e.tookOver
                ? `; took it over from ${e.tookOver.command} (pid ${e.tookOver.pid} on ${e.tookOver.host}), which is gone or expired`
                : ''),
          )
        : undefined;
    case 'intent-reloaded':
      return s.cyan(
        `[${time()}] intent changed: reloaded (${e.resources} resource${e.resources === 1 ? '' : 's'})`,
      );
    case 'intent-invalid':
      return s.red(
        [
          `[${time()}] the intent on disk does not load; the last valid intent stays in force (nothing is pruned):`,
          ...e.diagnostics
            .filter((d) => d.severity === 'error')
            .map((d) => `    ${formatDiagnostic(d)}`),
        ].join('\n'),
      );
  }
}

/** An event as one `--json` line's value: the event with the time it is printed. */
export function eventRecord(e: AppEvent): Record<string, unknown> {
  return { time: new Date().toISOString(), ...e };
}
