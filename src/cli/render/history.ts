import type { Change } from '../../core/index.js';
import { CHECK_POLICY_PREFIX, causeText, isCheckFinding } from '../../core/index.js';
import { describeActor, describeDecision, describeWhy } from './attribution.js';
import { describeFieldChanges } from './field-changes.js';
import type { Style } from './style.js';

/**
 * One ledger entry as `tend history` prints it: a line with seq, time, actor (kind), source, action,
 * address, the fields as `before → after` and the intent and motivation; then, indented, what Tend
 * decided about it (decision, rule, reason) when it decided anything.
 */
export function renderChange(c: Change, s: Style, indent = ''): string[] {
  const why = describeWhy(c);
  const fields = describeFieldChanges(c);
  const head = [
    `${indent}${String(c.seq).padStart(4)} ${c.time}`,
    s.bold(describeActor(c)),
    s.dim(c.source),
    c.action,
    c.address ?? `${c.type} ${c.objectId}`,
  ].join('  ');
  const lines = [`${head}${fields ? `  ${fields}` : ''}${why ? s.dim(`  (${why})`) : ''}`];
  if (c.decision) {
    const on = c.decision.fields.length > 0 ? ` [${c.decision.fields.join(', ')}]` : '';
    lines.push(
      `${indent}       ${decisionColor(c.decision.decision, s)(`↳ ${describeDecision(c.decision)}`)}${s.dim(on)}`,
    );
  }
  if (c.compliance) {
    const v = c.compliance;
    const check = isCheckFinding(v);
    const rule = check
      ? `check ${v.policy.slice(CHECK_POLICY_PREFIX.length)} (${v.actions.join(', ')})`
      : `policy ${v.policy} (${v.actions.join(', ')}) rule ${v.rule + 1}`;
    const gone = check ? 'passes again' : 'no longer broken';
    const broken = check ? 'failing' : v.result === 'error' ? 'failed' : 'broken';
    const cause = !check
      ? `introduced by ${causeText(v.cause)}`
      : v.cause
        ? `after ${causeText(v.cause)}`
        : 'no change before it in the ledger';
    lines.push(
      v.result === 'pass'
        ? `${indent}       ${s.green(`↳ ${rule} ${gone}`)}${v.found !== undefined ? s.dim(` (found in entry ${v.found})`) : ''}`
        : `${indent}       ${(v.actions.includes('deny') ? s.red : s.yellow)(`↳ ${rule} ${broken}: ${v.message}`)}${s.dim(` — ${cause}`)}`,
    );
  }
  if (c.origin) {
    lines.push(
      `${indent}       ${s.dim(`planned from commit ${c.origin.commit.slice(0, 12)} of ${c.origin.url} (${c.origin.ref})`)}`,
    );
  }
  return lines;
}

/** The colour of a decision: green when the intent wins, yellow when an actor keeps its value, red for a human. */
export function decisionColor(decision: string, s: Style): (text: string) => string {
  return decision === 'enforce' ? s.green : decision === 'escalate' ? s.red : s.yellow;
}
