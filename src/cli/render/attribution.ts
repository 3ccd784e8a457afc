import type { Attribution, ChangeSource, Decision } from '../../core/index.js';
import { formatMotivation } from '../../core/index.js';

/** `hpa (controller)`, or the actor alone when its kind is not known. */
export function describeActor(a: Pick<Attribution, 'actor' | 'actorKind'>): string {
  return a.actorKind ? `${a.actor} (${a.actorKind})` : a.actor;
}

/** `intent availability, motivation traffic:spike; expires=…`, or '' when neither is known. */
export function describeWhy(a: Pick<Attribution, 'intent' | 'motivation'>): string {
  return [
    a.intent && `intent ${a.intent}`,
    a.motivation && `motivation ${formatMotivation(a.motivation)}`,
  ]
    .filter(Boolean)
    .join(', ');
}

/** How Tend learned of a change, in words. */
export function describeSource(source: ChangeSource): string {
  switch (source) {
    case 'tend':
      return 'made by Tend';
    case 'audit':
      return 'from the audit feed';
    case 'announcement':
      return 'announced';
    case 'unknown':
      return 'nothing says who';
  }
}

/**
 * `hpa (controller), intent availability, motivation traffic:spike (from the audit feed)`: who made a
 * change, why, and how Tend knows. `recorded`: the attribution comes from a decision an earlier pass
 * recorded (a claim), not from a new sign of the change.
 */
export function describeChanger(
  a: Attribution & { readonly source: ChangeSource },
  recorded = false,
): string {
  const why = describeWhy(a);
  const how = recorded ? 'as recorded when it was decided' : describeSource(a.source);
  return `${describeActor(a)}${why ? `, ${why}` : ''} (${how})`;
}

/**
 * `enforce: <reason>`, naming the rule after the reason when the reason does not (the policy's
 * reasons name their rule and, for a hold, until when; the JSON output carries both as fields).
 */
export function describeDecision(d: Pick<Decision, 'decision' | 'rule' | 'reason'>): string {
  const rule = d.reason.includes(d.rule) ? '' : ` (rule ${d.rule})`;
  return `${d.decision}: ${d.reason}${rule}`;
}
