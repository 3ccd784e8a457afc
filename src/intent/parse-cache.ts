import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import type { FastDocument } from './fast-yaml.js';
import { plainData } from './fast-yaml.js';

/**
 * A cache of the fast reading of intent files, by content (issue 13, item 2; decision 0013). Reading
 * an unchanged file again costs a JSON.parse of what js-yaml made of it the last time, several times
 * less than parsing the YAML. An entry is one file in the cache directory, named by the SHA-256 of
 * the intent file's text and the reader's version: a changed file (or a new Tend that reads YAML
 * differently) simply misses. Only what the fast reading accepted is cached — files with a problem
 * to point at are parsed again each time, by the position-keeping parser, and their diagnostics are
 * exact as ever; positions of a cached file come from parsing it again when a diagnostic needs one.
 *
 * The directory sits beside the store (`.tend/cache/intent/`, 0700, files 0600) and has the store's
 * trust: whoever can write there can write the store. Still, an entry is used only when it reads
 * back as what the fast reading gives — a list of documents with plain values, no key that could
 * reach a prototype, nesting no deeper than the reading allows — and anything else is a miss (the
 * file is parsed, and the entry rewritten). Values JSON cannot carry exactly (NaN, ±Infinity, -0)
 * keep their file out of the cache, and so do a Provider document (its endpoint and document URL may
 * hold credentials) and a URL with a password anywhere: the cache never copies a secret out of the
 * intent into Tend's directory.
 *
 * Beside the entries, `validated.json` names the files (by key) whose documents were all Resource
 * documents that validated with no diagnostic and read no secret, under one fingerprint of
 * everything else validation depends on (Tend's version, the providers' descriptions): the loader
 * reads such a file's documents without checking them against their schemas again (decision 0029).
 * It has the same trust as the entries: whoever can write it could have a spec skip its schema
 * check, as whoever can write the store could have Tend act on anything.
 */

/** Bumped whenever the fast reading (fast-yaml.ts) could give other values for the same text. */
export const PARSE_CACHE_VERSION = 1;

/** The cache key of a file's text. */
export function parseCacheKey(text: string): string {
  return createHash('sha256')
    .update(`tend-fast-yaml-v${PARSE_CACHE_VERSION}\u0000`)
    .update(text)
    .digest('hex');
}

const ENTRY = /^[0-9a-f]{64}\.json$/;

/** `scheme://user:password@` anywhere in a text. */
const URL_WITH_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/[^\s/@"]*:[^\s/@"]*@/i;

function isProviderDoc(value: unknown): boolean {
  return (
    value !== null &&
    typeof value === 'object' &&
    (value as Record<string, unknown>)['kind'] === 'Provider'
  );
}

/** What the loader asks of a cache; `undefined` everywhere means "no cache". */
export interface ParseCache {
  /**
   * The cache's directory, made ready to be written (created private) — for a worker thread that
   * parses files and writes their entries itself (`writeEntry`); undefined when it cannot be made.
   */
  directory(): string | undefined;
  /** The documents cached for `key`, or undefined (missing, unreadable or not trusted). */
  get(key: string): FastDocument[] | undefined;
  /** Remembers a file's documents (best effort: a failed write only costs a later parse). */
  put(key: string, documents: readonly FastDocument[]): void;
  /** Removes entries whose key is not in `keep` (files changed or gone). */
  prune(keep: ReadonlySet<string>): void;
  /**
   * The keys of the files whose documents were read and validated with no diagnostic at all, the
   * last time, under `fingerprint` (what validation depended on besides the files: see
   * load-intent.ts); empty when the record is missing, unreadable or of another fingerprint.
   */
  validated(fingerprint: string): ReadonlySet<string>;
  /** Remembers the files that validated clean under `fingerprint` (best effort, like `put`). */
  setValidated(fingerprint: string, keys: Iterable<string>): void;
}

/** True when every number in `value` survives JSON (no NaN, ±Infinity or -0). */
function jsonExact(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'number') {
      if (!Number.isFinite(v) || Object.is(v, -0)) return false;
    } else if (v !== null && typeof v === 'object') {
      for (const item of Array.isArray(v) ? v : Object.values(v)) stack.push(item);
    }
  }
  return true;
}

function isPosInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

/** The documents of an entry when it has exactly the shape the fast reading produces. */
function asDocuments(parsed: unknown): FastDocument[] | undefined {
  if (!Array.isArray(parsed)) return undefined;
  for (const d of parsed as unknown[]) {
    if (d === null || typeof d !== 'object' || Array.isArray(d)) return undefined;
    const r = d as Record<string, unknown>;
    if (!isPosInt(r['index']) || !isPosInt(r['offset'])) return undefined;
    if (!isPosInt(r['line']) || !isPosInt(r['column']) || r['line'] < 1 || r['column'] < 1) {
      return undefined;
    }
    if (r['value'] === undefined || r['value'] === null) return undefined;
    // The fast reading's own test: no key that could reach a prototype (whatever escapes spelled it
    // in the JSON), nothing nested deeper than the intent may be. JSON.parse itself does not recurse.
    if (!plainData(r['value'])) return undefined;
  }
  return parsed as FastDocument[];
}

/**
 * Writes one entry into a cache directory that exists (best effort: a failed write only costs a later
 * parse). Values JSON cannot carry exactly keep the file out of the cache.
 */
export function writeEntry(dir: string, key: string, documents: readonly FastDocument[]): void {
  if (!documents.every((d) => jsonExact(d.value))) return;
  // Provider documents carry endpoints and document URLs that may hold credentials: a file with one
  // is never copied into Tend's directory (it is small; parsing it again costs nothing).
  if (documents.some((d) => isProviderDoc(d.value))) return;
  try {
    const text = JSON.stringify(documents);
    // Nor is a file holding a URL with a password (`scheme://user:password@host`) anywhere.
    if (URL_WITH_PASSWORD.test(text)) return;
    const file = join(dir, `${key}.json`);
    // Unique per process and thread: a worker and the main thread may write entries at once.
    const tmp = `${file}.${process.pid}.${threadId}.tmp`;
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // A cache that cannot be written is a slower next run, nothing more.
  }
}

/** The file, in the cache's directory, naming the files whose documents validated clean. */
const VALIDATED = 'validated.json';

const KEY = /^[0-9a-f]{64}$/;

/** The keys of a validated-files record when it has exactly the shape `setValidated` writes. */
function asValidated(parsed: unknown, fingerprint: string): Set<string> {
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return new Set();
  const r = parsed as Record<string, unknown>;
  const keys = r['keys'];
  if (r['fingerprint'] !== fingerprint || !Array.isArray(keys)) return new Set();
  if (!keys.every((k): k is string => typeof k === 'string' && KEY.test(k))) return new Set();
  return new Set(keys);
}

/**
 * A cache in `dir` (created on the first write, with `ensureDir`, which makes Tend's private
 * directories).
 */
export function directoryParseCache(dir: string, ensureDir: (dir: string) => void): ParseCache {
  let made = false;
  return {
    validated(fingerprint) {
      try {
        return asValidated(JSON.parse(readFileSync(join(dir, VALIDATED), 'utf8')), fingerprint);
      } catch {
        return new Set();
      }
    },
    setValidated(fingerprint, keys) {
      const ready = this.directory();
      if (ready === undefined) return;
      try {
        const file = join(ready, VALIDATED);
        const tmp = `${file}.${process.pid}.${threadId}.tmp`;
        writeFileSync(tmp, JSON.stringify({ fingerprint, keys: [...keys].sort() }), {
          mode: 0o600,
        });
        renameSync(tmp, file);
      } catch {
        // Not remembered: the next load validates these files again, nothing more.
      }
    },
    get(key) {
      let text: string;
      try {
        text = readFileSync(join(dir, `${key}.json`), 'utf8');
      } catch {
        return undefined;
      }
      try {
        return asDocuments(JSON.parse(text));
      } catch {
        return undefined;
      }
    },
    directory() {
      if (!made) {
        try {
          ensureDir(dir);
          made = true;
        } catch {
          return undefined;
        }
      }
      return dir;
    },
    put(key, documents) {
      const ready = this.directory();
      if (ready !== undefined) writeEntry(ready, key, documents);
    },
    prune(keep) {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return;
      }
      for (const name of names) {
        const stale = ENTRY.test(name) ? !keep.has(name.slice(0, 64)) : name.endsWith('.tmp');
        if (stale) rmSync(join(dir, name), { force: true });
      }
    },
  };
}
