import type { DriftedField, DriftReport, FieldDecision, MissingResource } from '../../app/index.js';
import type { FieldClaim } from '../../core/index.js';
import { describeActor, describeChanger, describeDecision, describeWhy } from './attribution.js';
import { decisionColor } from './history.js';
import { showValue } from './plan.js';
import type { Style } from './style.js';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The lines of one drifted field: the values, who changed it, and what the policy decides. */
export function renderDriftedField(f: DriftedField, s: Style): string[] {
  const lines = [
    `  ${s.yellow('~')} ${s.bold(f.field)}  declared ${showValue(f.declared)}, observed ${showValue(f.observed)}`,
  ];
  if (!f.changedBy || !f.decision) {
    lines.push(
      s.dim(
        '      nothing shows anyone changed it on the platform (the intent changed, or it was never applied): apply sets the declared value',
      ),
    );
    return lines;
  }
  lines.push(`      changed by ${describeChanger(f.changedBy, f.fresh === false)}`);
  const kept = f.fresh === false ? s.dim(' (decided earlier, kept)') : '';
  lines.push(
    `      ${decisionColor(f.decision.decision, s)(`↳ ${describeDecision(f.decision)}`)}${kept}`,
  );
  return lines;
}

function missingLine(m: MissingResource, s: Style): string {
  const by = m.deletedBy ? ` by ${describeChanger(m.deletedBy)}` : '';
  const text =
    m.reason === 'deleted'
      ? `deleted${by}; apply creates it again`
      : m.reason === 'conflict'
        ? "its natural key is taken by another workspace's object; Tend will not touch it"
        : 'not created yet; apply creates it';
  return `  ${s.red('-')} ${s.bold('no object')}: ${text}`;
}

/** One claim: the field, the value the actor holds, the decision and since when. */
export function claimLine(c: FieldClaim, s: Style): string {
  const until = c.until ? ` until ${c.until}${c.then ? `, then ${c.then}` : ''}` : '';
  const why = describeWhy(c);
  return `  ${c.address}.${c.field}  ${showValue(c.value)}  ${decisionColor(c.decision, s)(c.decision)} for ${describeActor(c)}${why ? ` (${why})` : ''}, rule ${c.rule}, since ${c.since}${until}`;
}

/**
 * `tend drift` for people: per resource its drifted fields (declared and observed values, who
 * changed each, the decision with its rule and reason) and whether it has no object; then the
 * fields actors hold; then a summary line.
 */
export function renderDrift(r: DriftReport, s: Style): string[] {
  const lines: string[] = [s.dim(`workspace ${r.workspace.name} (${r.workspace.source})`)];
  for (const w of r.warnings) lines.push(s.yellow(`warning: ${w}`));
  const addresses = [
    ...new Set([...r.missing.map((m) => m.address), ...r.fields.map((f) => f.address)]),
  ];
  for (const address of addresses) {
    lines.push(s.bold(address));
    for (const m of r.missing) if (m.address === address) lines.push(missingLine(m, s));
    for (const f of r.fields) {
      if (f.address === address) for (const line of renderDriftedField(f, s)) lines.push(line);
    }
  }
  if (r.claims.length > 0) {
    lines.push(s.bold('held by actors (decisions in their favour):'));
    for (const c of r.claims) lines.push(claimLine(c, s));
  }
  const yielded = r.fields.filter((f) => f.decision?.decision === 'yield').length;
  const counted = r.fields.length - yielded;
  const resources = new Set(r.fields.map((f) => f.address)).size;
  if (!r.drifted) {
    lines.push(
      s.green(
        yielded > 0
          ? `no drift Tend manages: ${plural(yielded, 'field')} yielded to actors`
          : 'no drift: every declared field is as declared',
      ),
    );
  } else {
    const parts = [
      counted > 0 ? `${plural(counted, 'drifted field')} on ${plural(resources, 'resource')}` : '',
      r.missing.length > 0 ? `${plural(r.missing.length, 'resource')} without an object` : '',
      yielded > 0 ? `${plural(yielded, 'field')} yielded to actors` : '',
    ].filter(Boolean);
    lines.push(s.yellow(parts.join(', ')));
  }
  return lines;
}

/**
 * The decisions a pass would make, above a plan: per drifted field, who changed it and what the
 * policy decides (a plan records none of them). Empty when nothing drifted on the platform.
 */
export function renderDecisions(decisions: readonly FieldDecision[], s: Style): string {
  if (decisions.length === 0) return '';
  const lines = [s.bold('Changes made by others, and what the arbitration policy decides:')];
  for (const d of decisions) {
    const kept = d.fresh ? '' : s.dim(' (decided earlier, kept)');
    lines.push(
      `  ${s.yellow('~')} ${d.address}.${d.field}  declared ${showValue(d.declared)}, observed ${showValue(d.observed)}; changed by ${describeChanger(d.by, !d.fresh)}`,
    );
    lines.push(
      `      ${decisionColor(d.decision.decision, s)(`↳ ${describeDecision(d.decision)}`)}${kept}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
