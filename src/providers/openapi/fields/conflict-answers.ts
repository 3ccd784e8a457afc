import type { ObjectView } from './schema-view.js';
import { escapeRegExp, isObject, isWritableScalar } from './schema-view.js';

/**
 * A create's refusal of a second object, read from the answers the document declares for it: a
 * `409`, `400` or `422` whose description says the object "already exists" (or the value is "already
 * in use", "taken", a "duplicate", "conflicts with an existing" one). The platform then keeps the
 * value unique, and the field it names (or, when it names none, the create body's one required
 * name-like field) is a natural key, with the answer quoted as the evidence.
 *
 * A bare `409` ("Conflict", or no description) is not enough: documents give it to creates for any
 * conflict (a merge conflict, a transfer in progress, a visibility setting), and a wrong natural key
 * makes Tend adopt someone else's object. It only adds a hint to the "no identity" reason.
 */

/** An answer of a create that speaks of a duplicate: its status and description. */
export interface ConflictAnswer {
  readonly status: string;
  readonly description: string;
}

/** A key the answers show, with the evidence; or a note for the "no identity" reason. */
export interface ConflictKey {
  readonly found?: { readonly field: string; readonly why: string };
  readonly note?: string;
  /** A bare 409: a hint added to whatever reason there is for no identity. */
  readonly hint?: string;
}

const STATUSES = ['409', '400', '422'];

/** The words of a refused duplicate ("already exists", "is already in use", "taken"); the probe reads answers with it too. */
export const DUPLICATE =
  /\balready\s+(exists?|in\s+use|taken|registered|used|assigned)\b|\b(is|are|been|was)\s+(already\s+)?taken\b|\bduplicated?\b|\bconflicts?\s+with\s+an?\s+existing\b|\bsame\s+\w+\s+already\b/i;

/** A 409 that says nothing of the conflict ("Conflict", "Response", no description). */
const BARE = /^((a\s+)?conflict|response|409)?\.?$/i;

/** The answers of a create (an operation object) that say a duplicate is refused, in status order. */
export function duplicateAnswers(create: unknown): {
  readonly refusals: readonly ConflictAnswer[];
  /** A 409 that says nothing of what conflicts (one that names another conflict is no hint). */
  readonly bareConflict: boolean;
} {
  const responses = isObject(create) ? create['responses'] : undefined;
  if (!isObject(responses)) return { refusals: [], bareConflict: false };
  const refusals: ConflictAnswer[] = [];
  let bareConflict = false;
  for (const status of STATUSES) {
    const answer = responses[status];
    if (!isObject(answer)) continue;
    const description =
      typeof answer['description'] === 'string' ? answer['description'].trim() : '';
    if (DUPLICATE.test(description)) refusals.push({ status, description });
    else if (status === '409' && BARE.test(description)) bareConflict = true;
  }
  return { refusals, bareConflict };
}

/**
 * The natural key a create's refusals show. `keyable`: the writable fields of the create body that
 * may be keys (not the parents' path parameters, which are the key's scope, never its only field);
 * `nameLike`: the names that may be a key without being named by the answer, best first.
 */
export function conflictKey(input: {
  readonly create: ObjectView;
  readonly keyable: readonly string[];
  readonly required: (field: string) => boolean;
  readonly nameLike: readonly string[];
  readonly isIdLike: (field: string) => boolean;
  readonly refusals: readonly ConflictAnswer[];
  readonly bareConflict: boolean;
  readonly where: string;
}): ConflictKey {
  const { create, refusals } = input;
  const fields = input.keyable.filter(
    (f) => !input.isIdLike(f) && isWritableScalar(create.properties[f]),
  );
  for (const answer of refusals) {
    const quoted = where(input.where, answer);
    // The field the answer names ("with the provided hostname", "the slug is already in use").
    const named = fields.filter((f) => names(answer.description, f, input.nameLike));
    if (named.length === 1) {
      const f = named[0]!;
      return {
        found: {
          field: f,
          why: `natural key ${f}: ${fieldWords(f, input.required)}, and ${quoted}`,
        },
      };
    }
    if (named.length > 1) {
      return {
        note: `${quoted}, naming ${named.join(' and ')}: the key may be their pair; declare x-tend-identity: natural-key and x-tend-natural-key`,
      };
    }
    // Naming another field (an id, a parent's parameter): that one conflicts, not a name.
    const other = Object.keys(create.properties).find(
      (f) => !fields.includes(f) && names(answer.description, f, input.nameLike),
    );
    if (other !== undefined) {
      return {
        note: `${quoted}, naming ${other}, which Tend cannot key by alone (an id, or the parent's parameter: the key's scope)`,
      };
    }
    // Naming none: the one required name-like field.
    const nameFields = input.nameLike.flatMap((n) =>
      fields.filter((f) => f.toLowerCase() === n && input.required(f)),
    );
    if (nameFields.length === 1) {
      const f = nameFields[0]!;
      return {
        found: {
          field: f,
          why: `natural key ${f}: the one required name-like field of the create body, and ${quoted}`,
        },
      };
    }
  }
  if (refusals.length > 0) {
    return {
      note: `${where(input.where, refusals[0]!)}, but names no field of the create body Tend could key by; declare x-tend-identity: natural-key and x-tend-natural-key`,
    };
  }
  if (input.bareConflict) {
    return {
      hint: `${input.where} may answer 409 without saying why: if that is a second object with the same value of a field, declare that field with x-tend-identity: natural-key and x-tend-natural-key`,
    };
  }
  return {};
}

/** `POST /x answers 409 "…"` (the description cut at 80 characters). */
function where(at: string, answer: ConflictAnswer): string {
  const text =
    answer.description.length > 80 ? `${answer.description.slice(0, 79)}…` : answer.description;
  return `${at} answers ${answer.status} "${text.replace(/\s+/g, ' ')}"`;
}

function fieldWords(field: string, required: (f: string) => boolean): string {
  return required(field)
    ? 'a required field of the create body'
    : 'a field of the create body (optional in the document; Tend requires it)';
}

/**
 * True when a description names the field as the value that conflicts: "with the provided hostname",
 * "the slug is already in use", "name conflicts with …"; a name-like field (`name`, `key`) also by
 * the word alone ("An item with this name"). A word inside another word is not the field
 * (`display_name` is also read as "display name").
 */
function names(description: string, field: string, nameLike: readonly string[]): boolean {
  const spelled = [field, field.replace(/[_-]/g, ' '), field.replace(/([a-z])([A-Z])/g, '$1 $2')];
  return [...new Set(spelled)].some((s) => {
    const f = escapeRegExp(s);
    if (nameLike.includes(field.toLowerCase())) {
      return new RegExp(`(^|[^\\w-])${f}($|[^\\w-])`, 'i').test(description);
    }
    return (
      new RegExp(
        `\\b(with|by|for)\\s+(the\\s+|this\\s+|that\\s+|an?\\s+)?(provided\\s+|same\\s+|given\\s+|specified\\s+|requested\\s+)?${f}($|[^\\w-])`,
        'i',
      ).test(description) ||
      new RegExp(
        `(^|[^\\w-])${f}\\s+(is\\s+|was\\s+|has\\s+been\\s+)?(already|taken|conflicts|in\\s+use)\\b`,
        'i',
      ).test(description)
    );
  });
}
