import type { ActorContext } from '../../core/index.js';

/**
 * The attribution headers of a mutation. Empty values are omitted; values a header cannot carry
 * (line breaks, characters beyond Latin-1) are percent-encoded rather than dropped.
 */
export function actorHeaders(actor: ActorContext): Record<string, string> {
  const out: Record<string, string> = {};
  const put = (name: 'X-Tend-Actor' | 'X-Tend-Intent' | 'X-Tend-Motivation', value?: string) => {
    if (value === undefined || value.trim() === '') return;
    out[name] = /^[\x20-\x7e\x80-\xff]*$/.test(value) ? value : encodeURIComponent(value);
  };
  put('X-Tend-Actor', actor.actor);
  put('X-Tend-Intent', actor.intent);
  put('X-Tend-Motivation', actor.motivation);
  return out;
}
