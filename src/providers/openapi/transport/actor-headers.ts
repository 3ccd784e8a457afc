import type { ActorContext } from '../../../core/index.js';

type AttributionHeader =
  'X-Tend-Actor' | 'X-Tend-Actor-Kind' | 'X-Tend-Intent' | 'X-Tend-Motivation';

/**
 * The attribution headers of a mutation: X-Tend-Actor, X-Tend-Actor-Kind, X-Tend-Intent and
 * X-Tend-Motivation, from the context's fields of those names. Absent and empty values are omitted;
 * values a header cannot carry (line breaks, characters beyond Latin-1) are percent-encoded rather
 * than dropped.
 */
export function actorHeaders(actor: ActorContext): Record<string, string> {
  const out: Record<string, string> = {};
  const put = (name: AttributionHeader, value?: string) => {
    if (value === undefined || value.trim() === '') return;
    out[name] = /^[\x20-\x7e\x80-\xff]*$/.test(value) ? value : encodeURIComponent(value);
  };
  put('X-Tend-Actor', actor.actor);
  put('X-Tend-Actor-Kind', actor.actorKind);
  put('X-Tend-Intent', actor.intent);
  put('X-Tend-Motivation', actor.motivation);
  return out;
}
