import type { FieldChange, FoundBy, Plan, PlanStep } from '../../core/index.js';
import { blockedReason, hasChanges, isUnknown } from '../../core/index.js';
import type { Style } from './style.js';

/** A short text for a value in a plan. */
export function showValue(v: unknown): string {
  if (isUnknown(v)) return '(known after apply)';
  if (v === undefined) return '(absent)';
  return JSON.stringify(v);
}

const SYMBOL: Record<PlanStep['kind'], string> = {
  create: '+',
  update: '~',
  replace: '-/+',
  delete: '-',
  move: '→',
  adopt: '<-',
  conflict: '!',
  noop: ' ',
};

function changeLine(c: FieldChange, forced: readonly string[]): string {
  const top = c.path.split('.')[0]!;
  const force = forced.includes(top) || forced.includes(c.path) ? '   # forces replacement' : '';
  // A write-only field's old value cannot be read back: the plan says what it knows instead.
  const before =
    c.before !== null && typeof c.before === 'object' && '$writeOnly' in c.before
      ? '(write-only: as sent on create)'
      : showValue(c.before);
  return `      ${c.path}: ${before} → ${showValue(c.after)}${force}`;
}

/** Marks the lines of write-only fields of a create: sent once, never read back. */
function markWriteOnly(lines: string[], from: number, fields: readonly string[]): void {
  for (let i = from; i < lines.length; i++) {
    const path = lines[i]!.trimStart().split(':')[0]!;
    if (fields.includes(path.split('.')[0]!)) {
      lines[i] += '   # write-only: sent on create, never read back';
    }
  }
}

function flatten(value: unknown, prefix: string, out: string[]): void {
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && !isUnknown(value)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else {
    out.push(`      ${prefix}: ${showValue(value)}`);
  }
}

function blastLine(radius: readonly string[], s: Style): string {
  return radius.length > 0
    ? s.yellow(`      blast radius: ${radius.join(', ')}`)
    : s.dim('      blast radius: none (nothing declared depends on it)');
}

function foundBy(by: FoundBy): string {
  return by === 'marker'
    ? "Tend's marker"
    : by === 'natural-key'
      ? 'its natural key'
      : "Tend's record (its ownership marker was removed or altered: it is put back)";
}

/** Renders a plan like Terraform does: a symbol per resource, changed fields, blast radius, summary. */
export function renderPlan(plan: Plan, s: Style): string {
  const lines: string[] = [];
  const color = (k: PlanStep['kind']) =>
    k === 'create' || k === 'adopt'
      ? s.green
      : k === 'update' || k === 'move'
        ? s.yellow
        : k === 'noop'
          ? s.dim
          : s.red;
  for (const step of plan.steps) {
    if (step.kind === 'noop') continue;
    const c = color(step.kind);
    const sym = SYMBOL[step.kind].padStart(3);
    switch (step.kind) {
      case 'create': {
        lines.push(c(`${sym} ${step.address}`) + s.dim('  will be created'));
        const first = lines.length;
        flatten(step.desired, '', lines);
        if (step.writeOnly) markWriteOnly(lines, first, step.writeOnly);
        break;
      }
      case 'update':
        lines.push(
          c(`${sym} ${step.address}`) + s.dim(`  will be updated in place (${step.objectId})`),
        );
        for (const ch of step.changes) lines.push(changeLine(ch, []));
        break;
      case 'replace': {
        const by =
          step.decidedBy === 'platform'
            ? "the platform's lifecycle endpoint"
            : 'a create-only annotation';
        lines.push(
          c(`${sym} ${step.address}`) +
            s.dim(
              `  must be replaced (${step.objectId}); decided by ${by}${step.reason ? `: ${step.reason}` : ''}`,
            ),
        );
        if (step.movedFrom) lines.push(`      moved from ${step.movedFrom}`);
        if (step.adopted) {
          lines.push(`      adopted: Tend had no record of it (found by ${foundBy(step.adopted)})`);
        }
        for (const ch of step.changes) lines.push(changeLine(ch, step.forcedBy));
        lines.push(
          `      strategy: ${step.strategy === 'create-before-destroy' ? 'create the new object, repoint dependents, verify, then delete the old one' : 'delete the old object, then create the new one (the platform cannot hold both)'}`,
        );
        lines.push(blastLine(step.blastRadius, s));
        if (step.blocked !== undefined) lines.push(s.red(`      blocked: ${step.blocked}`));
        if (step.gated)
          lines.push(
            s.red(`      gated: ${step.gate ?? 'stateful resource'}; needs --approve-destroy`),
          );
        break;
      }
      case 'delete':
        lines.push(
          c(`${sym} ${step.address}`) +
            s.dim(
              step.blocked !== undefined
                ? `  cannot be deleted (${step.objectId}; removed from the intent)`
                : `  will be deleted (${step.objectId}; removed from the intent)`,
            ),
        );
        lines.push(blastLine(step.blastRadius, s));
        if (step.blocked !== undefined) lines.push(s.red(`      blocked: ${step.blocked}`));
        if (step.gated)
          lines.push(
            s.red(`      gated: ${step.gate ?? 'stateful resource'}; needs --approve-destroy`),
          );
        break;
      case 'move':
        lines.push(
          c(`${sym} ${step.address}`) +
            s.dim(
              ` (moved from ${step.from})  re-recorded under the new address and its marker rewritten (${step.objectId}); nothing is deleted`,
            ),
        );
        if (step.changes.length > 0) lines.push(s.dim('      then updated in place:'));
        for (const ch of step.changes) lines.push(changeLine(ch, []));
        break;
      case 'adopt':
        lines.push(
          c(`${sym} ${step.address}`) +
            s.dim(
              step.foundBy === 'record'
                ? `  its ownership marker was removed or altered: it is put back (${step.objectId})`
                : `  will be adopted (${step.objectId}): found by ${foundBy(step.foundBy)}, Tend had no record of it`,
            ),
        );
        if (step.changes.length > 0) lines.push(s.dim('      then updated in place:'));
        for (const ch of step.changes) lines.push(changeLine(ch, []));
        break;
      case 'conflict':
        lines.push(
          c(`${sym} ${step.address}`) +
            s.dim(
              `  conflict: ${step.objectId} has this resource's natural key but belongs to workspace \`${step.owner}\`; it is never taken over (apply fails for this resource)`,
            ),
        );
        break;
    }
    lines.push('');
  }
  const n = plan.counts;
  if (!hasChanges(plan)) {
    lines.push(
      s.green(`No changes. ${n.noop} resource${n.noop === 1 ? '' : 's'} match the intent.`),
    );
  } else {
    // The four classic counts always; moves, adoptions and conflicts only when there are some.
    const more = [
      n.move > 0 && `${n.move} to move`,
      n.adopt > 0 && `${n.adopt} to adopt`,
      n.conflict > 0 && `${n.conflict} in conflict`,
    ].filter(Boolean);
    lines.push(
      s.bold(
        `Plan: ${n.create} to create, ${n.update} to update, ${n.replace} to replace, ${n.delete} to delete, ${more.map((m) => `${m}, `).join('')}${n.noop} unchanged.`,
      ),
    );
    if (plan.blastRadius.length > 0)
      lines.push(s.yellow(`Blast radius: ${plan.blastRadius.join(', ')}`));
    if (plan.gated.length > 0) {
      // A removed stateful resource's subtree is gated with it: name the roots, count the rest.
      const under = new Set(
        plan.steps.flatMap((st) => (st.kind === 'delete' && st.gatedBy ? [st.address] : [])),
      );
      const roots = plan.gated.filter((a) => !under.has(a));
      const tail =
        under.size > 0
          ? ` (and ${under.size} resources under ${roots.length === 1 ? 'it' : 'them'})`
          : '';
      lines.push(
        s.red(`Gated (destructive): ${roots.join(', ')}${tail}; re-run with --approve-destroy.`),
      );
    }
    const blocked = plan.steps.filter((st) => blockedReason(st) !== undefined);
    if (blocked.length > 0) {
      lines.push(
        s.red(
          `Blocked (cannot happen): ${blocked.map((st) => st.address).join(', ')}; apply leaves ${blocked.length === 1 ? 'it' : 'them'} as ${blocked.length === 1 ? 'it is' : 'they are'} and exits 3.`,
        ),
      );
    }
  }
  return lines.join('\n');
}
