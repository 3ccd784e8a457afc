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
 * change, why, and how Tend knows.
 */
export function describeChanger(a: Attribution & { readonly source: ChangeSource }): string {
  const why = describeWhy(a);
  return `${describeActor(a)}${why ? `, ${why}` : ''} (${describeSource(a.source)})`;
}

/** `enforce by rule default#3: <reason>; until <time>, then escalate`. */
export function describeDecision(
  d: Pick<Decision, 'decision' | 'rule' | 'reason' | 'until' | 'then'>,
): string {
  const until = d.until ? `; until ${d.until}${d.then ? `, then ${d.then}` : ''}` : '';
  return `${d.decision} by rule ${d.rule}: ${d.reason}${until}`;
}
