import type { Address } from './address.js';
import { parseAddress } from './address.js';
import { WORKSPACE_NAME } from './intent.js';

/**
 * The ownership marker Tend puts on everything it creates (as tags, where the platform has them).
 * It is how Tend rediscovers its objects when its store is lost, and how it tells its own objects
 * from everyone else's: Tend deletes only objects that carry its marker.
 */
export interface Marker {
  /** Which Tend workspace owns the object (several intents may share one platform). */
  readonly workspace: string;
  readonly address: Address;
  /** The idempotency key of the operation that created the object (tells old from new in a replace). */
  readonly op?: string;
}

export const MARKER_WORKSPACE_TAG = 'tend.workspace';
export const MARKER_ADDRESS_TAG = 'tend.address';
export const MARKER_OP_TAG = 'tend.op';

/** The tags that carry a marker. */
export function markerTags(marker: Marker): Record<string, string> {
  const tags: Record<string, string> = {
    [MARKER_WORKSPACE_TAG]: marker.workspace,
    [MARKER_ADDRESS_TAG]: marker.address,
  };
  if (marker.op) tags[MARKER_OP_TAG] = marker.op;
  return tags;
}

/** Reads a marker back from tags; undefined when the object carries none. */
export function readMarker(tags: unknown): Marker | undefined {
  if (tags === null || typeof tags !== 'object') return undefined;
  const t = tags as Record<string, unknown>;
  const workspace = t[MARKER_WORKSPACE_TAG];
  const address = t[MARKER_ADDRESS_TAG];
  if (typeof workspace !== 'string' || typeof address !== 'string' || !address.includes('/')) {
    return undefined;
  }
  const op = t[MARKER_OP_TAG];
  return typeof op === 'string'
    ? { workspace, address: address as Address, op }
    : { workspace, address: address as Address };
}

/** True when a tag key is one of Tend's marker keys (they are never drift, never the user's). */
export function isMarkerTag(key: string): boolean {
  return key === MARKER_WORKSPACE_TAG || key === MARKER_ADDRESS_TAG || key === MARKER_OP_TAG;
}

/**
 * Where a type's objects carry the marker (`ResourceTypeInfo.markerKind`):
 * - `map`: marker keys in a map of strings (`tags`, `labels`, `metadata.labels`);
 * - `list`: marker entries in a list of strings (`tags: ["web", "tend:workspace=prod", …]`);
 * - `text`: one token at the end of a free-text field (`comment: "db upgrade [tend:prod/am.silences/db]"`),
 *   the last resort for platforms with nothing better.
 */
export type MarkerKind = 'map' | 'list' | 'text';

/** The marker kinds, best first: inference picks the first a type offers. */
export const MARKER_KINDS: readonly MarkerKind[] = ['map', 'list', 'text'];

const ENTRY_PREFIX = 'tend:';
const ENTRY_KEYS = { workspace: 'workspace', address: 'address', op: 'op' } as const;

/** The list entries that carry a marker: `tend:workspace=<w>`, `tend:address=<a>`, `tend:op=<op>`. */
export function markerEntries(marker: Marker): string[] {
  const out = [
    `${ENTRY_PREFIX}${ENTRY_KEYS.workspace}=${marker.workspace}`,
    `${ENTRY_PREFIX}${ENTRY_KEYS.address}=${marker.address}`,
  ];
  if (marker.op) out.push(`${ENTRY_PREFIX}${ENTRY_KEYS.op}=${marker.op}`);
  return out;
}

/** True when a list entry is one of Tend's marker entries (never drift, never the user's). */
export function isMarkerEntry(entry: unknown): boolean {
  if (typeof entry !== 'string' || !entry.startsWith(ENTRY_PREFIX)) return false;
  const eq = entry.indexOf('=');
  const key = entry.slice(ENTRY_PREFIX.length, eq);
  return eq > 0 && (key === 'workspace' || key === 'address' || key === 'op');
}

/** Reads a marker back from list entries; undefined when the list carries none. */
export function readMarkerEntries(list: unknown): Marker | undefined {
  if (!Array.isArray(list)) return undefined;
  const tags: Record<string, string> = {};
  for (const e of list) {
    if (!isMarkerEntry(e)) continue;
    const s = e as string;
    const eq = s.indexOf('=');
    const key = s.slice(ENTRY_PREFIX.length, eq);
    const value = s.slice(eq + 1);
    const tag =
      key === 'workspace'
        ? MARKER_WORKSPACE_TAG
        : key === 'address'
          ? MARKER_ADDRESS_TAG
          : MARKER_OP_TAG;
    // The first entry of each key wins: a second one is someone's copy, not Tend's marker.
    if (!(tag in tags)) tags[tag] = value;
  }
  return readMarker(tags);
}

/**
 * The token that carries a marker in free text: `[tend:<workspace>/<address>]`, with `#<op>` before
 * the bracket when the marker has an op. A workspace has no `/` and an address exactly one, so the
 * token splits back unambiguously.
 */
export function markerToken(marker: Marker): string {
  return `[tend:${marker.workspace}/${marker.address}${marker.op ? `#${marker.op}` : ''}]`;
}

/** A marker token at the very end of a text, optionally after one space. */
const TOKEN_AT_END =
  /(^|\s)\[tend:([a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?)\/([^\s/#[\]]+\/[^\s/#[\]]+)(?:#([^\s#[\]]+))?\]$/;

/**
 * A free text with a marker token appended: `text [tend:…]` (one space between), or the token alone
 * when the text is empty. `splitMarkerText` gives back exactly `text` and `marker`.
 */
export function withMarkerText(text: string, marker: Marker): string {
  return text === '' ? markerToken(marker) : `${text} ${markerToken(marker)}`;
}

/**
 * Splits a free text into the user's text and the marker token at its end (one token: the last);
 * the text is returned whole, and no marker, when it does not end with a well-formed token.
 */
export function splitMarkerText(value: string): {
  readonly text: string;
  readonly marker?: Marker;
} {
  const m = TOKEN_AT_END.exec(value);
  if (m === null) return { text: value };
  const workspace = m[2]!;
  const address = m[3]!;
  if (!WORKSPACE_NAME.test(workspace) || parseAddress(address) === undefined) {
    return { text: value };
  }
  // The space before the token is the separator withMarkerText puts there; any other white space
  // before it is the user's.
  const text = value.slice(0, m[1] === ' ' ? m.index : m.index + m[1]!.length);
  const op = m[4];
  const addr = address as Address;
  return {
    text,
    marker: op !== undefined ? { workspace, address: addr, op } : { workspace, address: addr },
  };
}

/** The marker an object carries at its marker location (`value` is the field's value). */
export function readMarkerIn(kind: MarkerKind | undefined, value: unknown): Marker | undefined {
  if (kind === 'list') return readMarkerEntries(value);
  if (kind === 'text') return typeof value === 'string' ? splitMarkerText(value).marker : undefined;
  return readMarker(value);
}

/**
 * The user's part of a marker field's value, for comparing and importing: a map without marker
 * keys, a list without marker entries, a text without the marker tokens at its end (all of them,
 * so that a declared text that itself ends like a token compares equal to what was sent).
 */
export function withoutMarkerIn(kind: MarkerKind | undefined, value: unknown): unknown {
  if (kind === 'list') return Array.isArray(value) ? value.filter((e) => !isMarkerEntry(e)) : value;
  if (kind === 'text') {
    if (typeof value !== 'string') return value;
    let text = value;
    for (
      let split = splitMarkerText(text);
      split.marker !== undefined;
      split = splitMarkerText(text)
    ) {
      text = split.text;
    }
    return text;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => !isMarkerTag(k)));
}
