import type { Address, FieldChange, ResourceTypeInfo } from '../core/index.js';
import { containsUnknown, hashValue, TendError } from '../core/index.js';

/**
 * The hashes of the write-only values a create sends (fields the platform accepts on create and never
 * returns), to be remembered with the object: undefined when the type has none or none is declared.
 */
export function sentHashes(
  info: Pick<ResourceTypeInfo, 'writeOnly'>,
  desired: Readonly<Record<string, unknown>>,
): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  let any = false;
  for (const f of info.writeOnly ?? []) {
    const v = desired[f];
    if (v === undefined || containsUnknown(v)) continue;
    Object.defineProperty(out, f, { value: hashValue(v), enumerable: true, writable: true });
    any = true;
  }
  return any ? out : undefined;
}

/**
 * The write-only fields whose declared value differs from the one Tend sent (they cannot be compared
 * with the platform, which never returns them). A field Tend has no record of sending (an adopted
 * object) or no longer declared is not a change.
 */
export function writeOnlyChanged(
  info: Pick<ResourceTypeInfo, 'writeOnly'>,
  desired: Readonly<Record<string, unknown>>,
  sent: Readonly<Record<string, string>> | undefined,
): string[] {
  if (!sent) return [];
  return (info.writeOnly ?? []).filter((f) => {
    const v = desired[f];
    const was = Object.hasOwn(sent, f) ? sent[f] : undefined;
    return v !== undefined && !containsUnknown(v) && was !== undefined && hashValue(v) !== was;
  });
}

/** What the plan shows for a write-only field's old value: it cannot be read back. */
export const WRITE_ONLY_BEFORE = { $writeOnly: 'as sent on create; not readable' } as const;

/** The changes of write-only, create-only fields, which force a replacement. */
export function writeOnlyReplacements(
  fields: readonly string[],
  desired: Readonly<Record<string, unknown>>,
): FieldChange[] {
  return fields.map((f) => ({ path: f, before: WRITE_ONLY_BEFORE, after: desired[f] }));
}

/**
 * The refusal of a change to write-only fields that are not create-only: the platform takes them on
 * create only, so an update would send them to no effect, and Tend never guesses a replace.
 */
export function writeOnlyRefusal(
  address: Address,
  type: string,
  fields: readonly string[],
): TendError {
  const what = fields.join(', ');
  const many = fields.length > 1;
  return new TendError(
    'plan.write_only_changed',
    `${address}: ${what} ${many ? 'are' : 'is'} write-only (sent on create, never returned by the platform) and ${many ? 'have' : 'has'} changed in the intent since Tend created the object; an update cannot change ${many ? 'them' : 'it'}`,
    {
      address,
      phase: 'plan',
      hint: `put back the value the object was created with, or declare ${what} create-only (x-tend-immutable) in the overlay of ${type.split('.')[0]!} so that a change replaces the object`,
    },
  );
}
