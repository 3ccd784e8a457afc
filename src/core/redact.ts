// One redactor for every output (docs/architecture.md, "Secrets in output"). Pure: it holds the
// secret values it was told about and rewrites text and plain data; it reads nothing itself.
import { defineKey } from './safe-keys.js';

/** What a registered secret is replaced with in every output. */
export const REDACTED = '«redacted»';

/**
 * The marker for the rare secret that is itself part of `REDACTED` (say `acted`): replacing it with
 * `REDACTED` would put it right back. The two markers share no run of 4 characters.
 */
export const REDACTED_ALT = '«secret»';

/**
 * Secrets shorter than this are not registered: replacing every `on` or `42` in every message would
 * make output unreadable while protecting nothing (a secret that short is guessed, not stolen). Such
 * a secret is still never stored or logged by Tend itself; it is only not searched for in text that
 * a platform sends back.
 */
export const MIN_SECRET_LENGTH = 4;

/** Where a resolved secret value is registered, so that no output carries it. */
export interface SecretRegistry {
  /**
   * Registers a secret: a string (with its common encodings), or every string inside an array or
   * object (a secret field the platform returned). Strings shorter than MIN_SECRET_LENGTH and
   * non-string scalars are ignored.
   */
  add(secret: unknown): void;
}

// `scheme://user:password@` as it appears in free text: the user-info part runs up to the last `@`
// before anything that ends an authority or a token in a message (space, quote, `/`, `?`, `#`).
const USERINFO_IN_TEXT = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#"'<>\\`]*@/gi;
const USERINFO_AT_START = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i;

/**
 * A URL as Tend shows it: without its user-info (`https://user:pass@host/x` → `https://host/x`),
 * otherwise exactly as given. Every URL Tend prints or stores goes through this (or through a
 * Redactor, which does the same to every URL in a text).
 */
export function displayUrl(url: string): string {
  return url.replace(USERINFO_AT_START, '$1');
}

/** The user and password a URL carries in its user-info, decoded; undefined without a password. */
export function urlCredentials(url: string): { user: string; password: string } | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.password === '') return undefined;
  return { user: safeDecode(u.username), password: safeDecode(u.password) };
}

/**
 * The one redactor of a process: every secret value Tend resolves is registered with it (`add`), and
 * every output passes through it (`text`, `value`): what the CLI prints, `--json` output, what the
 * store writes, changeset files, HTTP error messages. A registered secret is replaced with
 * `REDACTED` in the forms it is commonly sent or echoed in: as is, URL-encoded (component and form
 * style, and `encodeURI`), JSON-escaped, and base64 (standard and URL-safe, unpadded); and any
 * `scheme://user:password@` is shown without its user-info. What it cannot catch: a secret a
 * platform echoes transformed (truncated, upper-cased, hashed) or shorter than MIN_SECRET_LENGTH.
 *
 * Guarantee (tested as a property): the output of `text` never contains a registered secret of
 * MIN_SECRET_LENGTH characters or more, nor any of its encodings listed above.
 */
export class Redactor implements SecretRegistry {
  /** Every form searched for → the marker it is replaced with. */
  readonly #forms = new Map<string, string>();
  #pattern: RegExp | undefined;

  /** Registers a secret (see SecretRegistry.add). */
  add(secret: unknown): void {
    if (typeof secret === 'string') {
      if (secret.length < MIN_SECRET_LENGTH) return;
      for (const form of encodings(secret)) this.#addForm(form);
      return;
    }
    if (Array.isArray(secret)) {
      for (const v of secret) this.add(v);
    } else if (secret !== null && typeof secret === 'object') {
      for (const v of Object.values(secret)) this.add(v);
    }
  }

  /**
   * Registers the credentials a URL carries (`https://user:pass@host`): the password, and the
   * `user:pass` pair whose base64 form is what a Basic authorization header sends.
   */
  addUrlCredentials(url: string): void {
    const creds = urlCredentials(url);
    if (!creds) return;
    this.add(creds.password);
    this.add(`${creds.user}:${creds.password}`);
  }

  /** How many forms are searched for (registered secrets times their distinct encodings). */
  get size(): number {
    return this.#forms.size;
  }

  /** A text with every registered secret replaced and every URL shown without its user-info. */
  text(input: string): string {
    let out = input.includes('@') ? input.replace(USERINFO_IN_TEXT, '$1') : input;
    const pattern = this.#compiled();
    if (!pattern) return out;
    // A replacement next to leftover text can spell a secret again (`ted»` + `x` for the secret
    // `ted»x`), so repeat until clean; past a few passes the input is adversarial: give a marker only.
    for (let pass = 0; pass < 4; pass++) {
      if (!found(pattern, out)) return out;
      out = out.replace(pattern, (m) => this.#forms.get(m) ?? REDACTED);
    }
    if (!found(pattern, out)) return out;
    for (const marker of [REDACTED, REDACTED_ALT]) if (!found(pattern, marker)) return marker;
    return '';
  }

  /**
   * Plain data (what is stored or printed as JSON) with `text` applied to every string, keys
   * included. Arrays and plain objects are copied only where something changed; other objects are
   * returned as they are.
   */
  value<T>(input: T): T {
    return walk(input, (s) => this.text(s)) as T;
  }

  /**
   * `value` serialised as JSON (`indent` as JSON.stringify's), redacted value by value: every string,
   * key and number whose text holds a registered secret or a URL's user-info is replaced before it
   * is written, so a secret that would cut through the JSON text (`","b":"`) can neither survive nor
   * break the document. A number that holds a secret is written as the marker string. Output is
   * always valid JSON; when the text of the plain serialisation holds nothing to redact (the common
   * case), that text is returned as it is.
   */
  json(input: unknown, indent?: number): string {
    const plain = JSON.stringify(input, null, indent);
    if (plain === undefined) return 'null';
    const pattern = this.#compiled();
    if (!plain.includes('@') && (!pattern || !found(pattern, plain))) return plain;
    const text = (s: string) => this.text(s);
    return JSON.stringify(
      input,
      function (this: unknown, _key: string, v: unknown): unknown {
        if (typeof v === 'string') return text(v);
        if (typeof v === 'number') {
          const t = String(v);
          return text(t) === t ? v : text(t);
        }
        if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
        const entries = Object.entries(v);
        if (entries.every(([k]) => text(k) === k)) return v;
        // A redacted key: a copy with own data properties (`__proto__` stays a key, never a prototype).
        const copy = Object.create(null) as Record<string, unknown>;
        for (const [k, x] of entries) defineKey(copy, text(k), x);
        return copy;
      },
      indent,
    );
  }

  #addForm(form: string): void {
    if (this.#forms.has(form)) return;
    // A form that two markers in a row would spell is replaced with the other marker.
    const marker = (REDACTED + REDACTED).includes(form) ? REDACTED_ALT : REDACTED;
    this.#forms.set(form, marker);
    this.#pattern = undefined;
  }

  #compiled(): RegExp | undefined {
    if (this.#forms.size === 0) return undefined;
    // Longest first: a secret that contains another is replaced whole.
    this.#pattern ??= new RegExp(
      [...this.#forms.keys()]
        .sort((a, b) => b.length - a.length)
        .map(escapeRegExp)
        .join('|'),
      'g',
    );
    return this.#pattern;
  }
}

/** The forms a secret is commonly sent or echoed in; each is searched for. */
function encodings(secret: string): string[] {
  const forms = [secret];
  try {
    forms.push(encodeURIComponent(secret), encodeURI(secret));
  } catch {
    // A lone surrogate cannot be URL-encoded; then it is not sent URL-encoded either.
  }
  forms.push(new URLSearchParams({ s: secret }).toString().slice(2));
  forms.push(JSON.stringify(secret).slice(1, -1));
  const b64 = base64(secret).replace(/=+$/, '');
  forms.push(b64, b64.replace(/\+/g, '-').replace(/\//g, '_'));
  return [...new Set(forms)].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

function base64(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function found(pattern: RegExp, text: string): boolean {
  pattern.lastIndex = 0;
  const hit = pattern.test(text);
  pattern.lastIndex = 0;
  return hit;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function walk(v: unknown, f: (s: string) => string): unknown {
  if (typeof v === 'string') return f(v);
  // Nothing is allocated until something changes (most values hold no secret): the copy starts at
  // the first changed item or member, with the unchanged ones before it.
  if (Array.isArray(v)) {
    const items = v as unknown[];
    let out: unknown[] | undefined;
    for (let i = 0; i < items.length; i++) {
      if (!(i in items)) {
        // A hole stays a hole, as `map` keeps it.
        if (out !== undefined) out.length = i + 1;
        continue;
      }
      const x = items[i];
      const y = walk(x, f);
      if (out === undefined && y !== x) out = items.slice(0, i);
      if (out !== undefined) out[i] = y;
    }
    return out ?? v;
  }
  if (v === null || typeof v !== 'object') return v;
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return v;
  const record = v as Record<string, unknown>;
  const keys = Object.keys(record);
  let entries: (readonly [string, unknown])[] | undefined;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const x = record[k];
    const key = f(k);
    const y = walk(x, f);
    if (entries === undefined && (key !== k || y !== x)) {
      entries = keys.slice(0, i).map((j) => [j, record[j]] as const);
    }
    if (entries !== undefined) entries.push([key, y]);
  }
  if (entries === undefined) return v;
  // fromEntries defines own properties, so a `__proto__` key stays data and never a prototype.
  const out = Object.fromEntries(entries) as Record<string, unknown>;
  if (proto !== null) return out;
  const bare = Object.create(null) as Record<string, unknown>;
  for (const [k, x] of entries) defineKey(bare, k, x);
  return bare;
}
