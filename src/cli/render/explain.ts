import type { ExplainReport, FieldOwner, FieldReport } from '../../app/index.js';
import type { Announcement, Change } from '../../core/index.js';
import { describeActor, describeChanger, describeDecision, describeWhy } from './attribution.js';
import { decisionColor, renderChange } from './history.js';
import { showValue } from './plan.js';
import type { Style } from './style.js';

/** A field's value as shown: `(secret)` for secrets, never a value. */
function valueText(f: Pick<FieldReport, 'secret'>, v: unknown): string {
  return f.secret ? '(secret)' : showValue(v);
}

/** The declared value as written, and what a reference in it stands for now. */
export function declaredText(f: FieldReport): string {
  if (!f.declared) return '(not declared)';
  const written = valueText(f, f.declared.written);
  return 'resolved' in f.declared ? `${written} → ${showValue(f.declared.resolved)}` : written;
}

/** Who owns a field, in words. */
export function ownerText(owner: FieldOwner): string {
  switch (owner.kind) {
    case 'intent':
      return 'the intent';
    case 'unowned':
      return 'nobody: the intent does not declare it, so Tend leaves it alone';
    case 'marker':
      return 'Tend: its ownership marker (always put back)';
    case 'actor': {
      const c = owner.claim;
      const why = describeWhy(c);
      const until = c.until ? ` until ${c.until}${c.then ? `, then ${c.then}` : ''}` : '';
      return `${describeActor(c)}${why ? ` (${why})` : ''}: ${c.decision} by rule ${c.rule} since ${c.since}${until}`;
    }
  }
}

function announcementLine(a: Announcement, f: FieldReport): string {
  const why = describeWhy(a);
  return `${describeActor(a)} sets ${a.field} to ${valueText(f, a.value)} until ${a.expiresAt}${why ? ` (${why})` : ''}${a.note ? `: ${a.note}` : ''}`;
}

const STATE_TEXT: Record<FieldReport['state'], string> = {
  'as-declared': 'as declared',
  drifted: 'drifted',
  pending: 'known after apply',
  absent: 'no object',
  secret: 'secret: never read back nor compared',
  undeclared: 'not declared',
};

/** Entries about the whole object (its create, move or delete), shown once for a whole resource. */
const isLifecycle = (c: Change) => c.action !== 'update';

/**
 * The full block of one field: values, owner, decision now, history, announcements. With
 * `lifecycleShown`, the object's create, move and delete entries are left to the resource's header.
 */
export function renderField(f: FieldReport, s: Style, lifecycleShown = false): string[] {
  const state = f.state === 'drifted' ? s.yellow(STATE_TEXT[f.state]) : s.dim(STATE_TEXT[f.state]);
  const lines = [`${s.bold(f.field)}  ${state}`];
  const row = (label: string, text: string) => lines.push(`  ${label.padEnd(10)} ${text}`);
  if (f.declared) row('declared', declaredText(f));
  row('observed', 'observed' in f ? valueText(f, f.observed) : '(absent)');
  row('owner', ownerText(f.owner));
  if (f.decisionNow) {
    const d = f.decisionNow;
    row('changed by', describeChanger(d.changedBy, !d.fresh));
    row(
      'decision',
      decisionColor(d.decision.decision, s)(describeDecision(d.decision)) +
        (d.fresh ? '' : s.dim(' (decided earlier, kept)')),
    );
  } else if (f.state === 'drifted') {
    row(
      'decision',
      s.dim(
        'none: nothing shows anyone changed it on the platform (the intent changed, or it was never applied); apply sets the declared value',
      ),
    );
  }
  for (const a of f.announcements) row('announced', announcementLine(a, f));
  const entries = lifecycleShown ? f.entries.filter((c) => !isLifecycle(c)) : f.entries;
  if (entries.length > 0) {
    lines.push('  history');
    for (const c of entries) for (const line of renderChange(c, s, '    ')) lines.push(line);
  }
  return lines;
}

/**
 * `tend explain` for people: the resource (object, where its values come from, its state, the
 * policy), then each declared field in full; the fields the intent does not declare are listed
 * after, with their values (in full when one was asked about).
 */
export function renderExplain(r: ExplainReport, s: Style): string[] {
  const from =
    r.observedFrom === 'platform'
      ? `object ${r.objectId}, read now`
      : r.observedFrom === 'store'
        ? `object ${r.objectId}, as recorded at ${r.recordedAt}`
        : 'no object';
  const lines = [`${s.bold(r.address)}  ${s.dim(`${r.type}, ${from}`)}`];
  if (r.status) {
    lines.push(
      `  status   ${r.status.state}${r.status.message ? `: ${r.status.message}` : ''}${s.dim(` (since the pass at ${r.status.updatedAt})`)}`,
    );
  }
  lines.push(
    `  policy   ${r.policy === 'default' ? 'the default (the intent has no Arbitration document)' : "the intent's Arbitration documents"}`,
  );
  for (const n of r.notes) lines.push(s.yellow(`  note: ${n}`));
  // For a whole resource, the object's create, move and delete entries touch every field: shown once.
  const whole = r.field === undefined;
  const lifecycle = new Map<number, Change>();
  for (const f of whole ? r.fields : []) {
    for (const c of f.entries) if (isLifecycle(c)) lifecycle.set(c.seq, c);
  }
  if (lifecycle.size > 0) {
    lines.push('  object');
    for (const c of [...lifecycle.values()].sort((a, b) => a.seq - b.seq)) {
      for (const line of renderChange(c, s, '    ')) lines.push(line);
    }
  }
  const declared = r.fields.filter((f) => f.owner.kind !== 'unowned' && f.owner.kind !== 'marker');
  const others = r.fields.filter((f) => f.owner.kind === 'unowned' || f.owner.kind === 'marker');
  for (const f of declared) {
    lines.push('');
    for (const line of renderField(f, s, whole)) lines.push(line);
  }
  if (others.length === 0) return lines;
  if (r.field !== undefined) {
    for (const f of others) {
      lines.push('');
      for (const line of renderField(f, s)) lines.push(line);
    }
    return lines;
  }
  lines.push('', s.bold('not declared (nobody owns them; Tend leaves them alone):'));
  const w = others.reduce((max, f) => Math.max(max, f.field.length), 0);
  for (const f of others) {
    const value = 'observed' in f ? valueText(f, f.observed) : '(absent)';
    lines.push(
      `  ${f.field.padEnd(w)}  ${value}${f.owner.kind === 'marker' ? s.dim("  (Tend's ownership marker)") : ''}`,
    );
  }
  return lines;
}
