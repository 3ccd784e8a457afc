// The corpus of real OpenAPI documents (test/corpus/README.md): reading the hand-written
// expectations, running `tend providers inspect` on each document under a hard time bound, and
// matching what it derives against what a person expects. Shared by corpus.test.ts and the summary
// it writes into the README (TEND_CORPUS_REPORT=1).
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const CORPUS = resolve(import.meta.dirname);
export const DOCUMENTS = join(CORPUS, 'documents');
export const EXPECTED = join(CORPUS, 'expected');
export const CLI = join(ROOT, 'dist', 'cli', 'main.js');

/**
 * How long one document may take, end to end: starting `tend` (Node and the CLI), reading (and
 * converting) the document, deriving its types and printing the report. The slowest (GitHub, 13 MB)
 * took 5 to 12 s on this project's 2-core machine shared by several test runs (load average 12),
 * of which about 4 s was starting Node; a document still running at the bound is killed and its
 * test fails ("no hang").
 */
export const SECONDS_PER_DOCUMENT = 30;

/** One resource type a person expects the document to offer. */
export interface ExpectedType {
  readonly name: string;
  /** The collection (list) path or the create path, exactly as the document writes it. */
  readonly path: string;
  /** Other paths of the same type that may be reported as its collection or create path. */
  readonly alt: readonly string[];
  /** `safe`: inference must give it an identity; `none`: it must say why it gives none. */
  readonly identity: 'safe' | 'none';
  /** Why (for a person; not compared). */
  readonly why: string;
  /** Found only with the document's overlay (the document cannot say it). */
  readonly overlay: boolean;
  /**
   * The fields a natural key may use: those the document supports as unique (its words, a 409 on
   * a second create, or the field being the item path parameter). A natural key inspect derives on
   * any other field (parent path parameters aside) is a wrong key. Measured on the held-out set.
   */
  readonly key: readonly string[];
  /**
   * A known gap: today's Tend does not meet this expectation, and why (what inspect says, or what
   * inference lacks). The expectation stays the specification; its test checks that the gap is
   * still there, so closing it fails the test until this line is removed (a ratchet, never a
   * weakened expectation).
   */
  readonly gap?: string;
}

/**
 * Which half of the corpus a document is in (test/corpus/README.md, "The split"): `tuned`, the
 * documents the inference rules are tuned on (every expected type is a specification), or
 * `held-out`, the documents that are only measured (their figure is the one the README quotes).
 */
export type CorpusSet = 'tuned' | 'held-out';
export const SETS: readonly CorpusSet[] = ['tuned', 'held-out'];

/** The expectations for one document (test/corpus/expected/<slug>.yaml). */
export interface Expectation {
  readonly slug: string;
  readonly set: CorpusSet;
  /** The file under test/corpus/documents/ (`.gz` is decompressed before loading). */
  readonly document: string;
  /** An overlay (path from the repository root) for the types marked `overlay: true`. */
  readonly overlay?: string;
  /** Set when the document is not usable at all: the TendError code `inspect` must answer with. */
  readonly unusable?: { readonly code: string; readonly why: string };
  readonly types: readonly ExpectedType[];
}

/** A problem in an expectation file, with its place. */
export class ExpectationError extends Error {}

const DOC_KEYS = new Set(['document', 'set', 'overlay', 'unusable', 'types']);
const TYPE_KEYS = new Set(['name', 'path', 'alt', 'identity', 'key', 'why', 'overlay', 'gap']);

/**
 * Parses one expectation file. Anything malformed is an ExpectationError naming the file, line and
 * column and what to write instead: the expectations are the specification, so a typo must not
 * silently drop a type.
 */
export function parseExpectation(file: string, text: string): Expectation {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const where = (node: Node | null | undefined): string => {
    const offset = node?.range?.[0] ?? 0;
    const { line, col } = lines.linePos(offset);
    return `${file}:${line}:${col}`;
  };
  const fail = (node: Node | null | undefined, message: string): never => {
    throw new ExpectationError(`${where(node)}: ${message}`);
  };
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const { line, col } = lines.linePos(e.pos[0]);
    throw new ExpectationError(`${file}:${line}:${col}: not YAML (${e.message.split('\n')[0]})`);
  }
  const root = doc.contents;
  if (!isMap(root)) return fail(root, 'an expectation is a mapping with document and types');
  const text_ = (node: unknown, what: string): string => {
    if (!isScalar(node) || typeof node.value !== 'string' || node.value.trim() === '') {
      return fail(node as Node, `${what} must be a non-empty string`);
    }
    return node.value;
  };
  let document: string | undefined;
  let set: CorpusSet | undefined;
  let overlay: string | undefined;
  let unusable: Expectation['unusable'];
  let types: ExpectedType[] | undefined;
  for (const pair of root.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    if (!DOC_KEYS.has(key)) {
      fail(pair.key, `unknown key "${key}"; write one of ${[...DOC_KEYS].join(', ')}`);
    }
    const value = pair.value as Node | null;
    if (key === 'document') document = text_(value, 'document');
    if (key === 'set') set = parseSet(value, fail);
    if (key === 'overlay') overlay = text_(value, 'overlay');
    if (key === 'unusable') {
      if (!isMap(value)) return fail(value, 'unusable must be a mapping {code, why}');
      const code = text_(value.get('code', true), 'unusable.code');
      const why = text_(value.get('why', true), 'unusable.why');
      unusable = { code, why };
    }
    if (key === 'types') {
      if (!isSeq(value)) return fail(value, 'types must be a list of {name, path, identity, why}');
      types = value.items.map((item) => parseType(item as Node, fail, text_));
    }
  }
  if (document === undefined)
    return fail(root, 'document is missing: name the file under documents/');
  if (set === undefined) {
    return fail(root, 'set is missing: write set: tuned or set: held-out (README, "The split")');
  }
  if (types === undefined) return fail(root, 'types is missing: list the types a person expects');
  if (types.length === 0 && unusable === undefined) {
    return fail(root, 'types is empty: a usable document lists at least one expected type');
  }
  const paths = new Set<string>();
  for (const t of types) {
    if (paths.has(t.path)) fail(root, `two expected types have the path ${t.path}`);
    paths.add(t.path);
  }
  if (types.some((t) => t.overlay) && overlay === undefined) {
    fail(root, 'a type is marked overlay: true but the document names no overlay');
  }
  const slug = basename(file).replace(/\.ya?ml$/, '');
  return {
    slug,
    set,
    document,
    ...(overlay !== undefined ? { overlay } : {}),
    ...(unusable !== undefined ? { unusable } : {}),
    types,
  };
}

function parseSet(
  node: Node | null,
  fail: (node: Node | null | undefined, message: string) => never,
): CorpusSet {
  const value: unknown = isScalar(node) ? node.value : undefined;
  if (value === 'tuned' || value === 'held-out') return value;
  return fail(
    node,
    `set must be tuned or held-out, not ${JSON.stringify(value ?? null)} (README, "The split")`,
  );
}

function parseType(
  item: Node,
  fail: (node: Node | null | undefined, message: string) => never,
  text: (node: unknown, what: string) => string,
): ExpectedType {
  if (!isMap(item)) return fail(item, 'each type is a mapping {name, path, identity, why}');
  for (const pair of item.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    if (!TYPE_KEYS.has(key)) {
      fail(pair.key as Node, `unknown key "${key}"; write one of ${[...TYPE_KEYS].join(', ')}`);
    }
  }
  const name = text(item.get('name', true), 'name');
  const path = text(item.get('path', true), `path of ${name}`);
  if (!path.startsWith('/')) fail(item.get('path', true), `path of ${name} must start with /`);
  const altNode = item.get('alt', true) as Node | undefined;
  let alt: string[] = [];
  if (altNode !== undefined) {
    if (!isSeq(altNode)) return fail(altNode, `alt of ${name} must be a list of paths`);
    alt = altNode.items.map((a) => text(a, `alt of ${name}`));
  }
  const identityNode = item.get('identity', true) as Node | undefined;
  const identity = isScalar(identityNode) ? identityNode.value : undefined;
  if (identity !== 'safe' && identity !== 'none') {
    return fail(identityNode ?? item, `identity of ${name} must be safe or none`);
  }
  const keyNode = item.get('key', true) as Node | undefined;
  let key: string[] = [];
  if (keyNode !== undefined) {
    if (!isSeq(keyNode) || keyNode.items.length === 0) {
      return fail(keyNode, `key of ${name} must be a non-empty list of field names`);
    }
    key = keyNode.items.map((k) => text(k, `key of ${name}`));
  }
  const why = text(item.get('why', true), `why of ${name}`);
  const overlayNode = item.get('overlay', true) as Node | undefined;
  if (
    overlayNode !== undefined &&
    !(isScalar(overlayNode) && typeof overlayNode.value === 'boolean')
  ) {
    return fail(overlayNode, `overlay of ${name} must be true or false`);
  }
  const overlay = isScalar(overlayNode) && overlayNode.value === true;
  const gapNode = item.get('gap', true) as Node | undefined;
  if (gapNode === undefined) return { name, path, alt, identity, key, why, overlay };
  const gap = text(gapNode, `gap of ${name}`);
  return { name, path, alt, identity, key, why, overlay, gap };
}

/** Every expectation file, by slug. */
export function readExpectations(): Expectation[] {
  return readdirSync(EXPECTED)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) =>
      parseExpectation(join('test/corpus/expected', f), readFileSync(join(EXPECTED, f), 'utf8')),
    );
}

/** The corpus documents, as file names under documents/. */
export function documentFiles(): string[] {
  return readdirSync(DOCUMENTS).sort();
}

/**
 * The document as `tend` reads it: the file itself, or for a `.gz` its content written to a
 * temporary directory under the name without `.gz` (the extension tells JSON from YAML).
 */
export function materialize(document: string, scratch: string): string {
  const source = join(DOCUMENTS, document);
  if (!document.endsWith('.gz')) return source;
  const target = join(scratch, document.slice(0, -'.gz'.length));
  writeFileSync(target, gunzipSync(readFileSync(source)));
  return target;
}

export function scratchDir(): string {
  return mkdtempSync(join(tmpdir(), 'tend-corpus-'));
}

/** What `tend providers inspect --json` reports, as far as the corpus reads it. */
export interface InspectedType {
  readonly name: string;
  readonly collectionPath: string;
  readonly itemPath: string;
  readonly create: { readonly method: string; readonly path: string };
  readonly identity: string | null;
  readonly identityReason?: string;
  /** For natural-key identity: the key fields, parents (path parameters) first. */
  readonly naturalKey?: readonly string[];
}

export interface Inspection {
  /** Wall-clock milliseconds, `tend` start to exit. */
  readonly ms: number;
  /** Set when the document loaded. */
  readonly report?: {
    readonly version: string;
    readonly convertedFrom?: string;
    readonly types: readonly InspectedType[];
    readonly unmapped: readonly { readonly path: string; readonly reason: string }[];
    readonly warnings: readonly string[];
  };
  /** Set when `tend` refused the document with an error it chose (a TendError). */
  readonly refused?: { readonly code: string; readonly message: string };
  /** Set when it crashed, hung or printed something that is not its JSON report. */
  readonly crashed?: string;
}

/** Codes that mean a bug in Tend rather than a refusal of the document. */
const CRASH_CODES = new Set(['internal', 'inspect.failed']);

/** Runs `tend providers inspect <file> --json [--overlay <overlay>]`, killed at the bound. */
export function inspect(
  file: string,
  overlay?: string,
  runner: { readonly cli: string; readonly seconds: number } = {
    cli: CLI,
    seconds: SECONDS_PER_DOCUMENT,
  },
): Promise<Inspection> {
  const args = [runner.cli, 'providers', 'inspect', file, '--json'];
  if (overlay !== undefined) args.push('--overlay', resolve(ROOT, overlay));
  const started = performance.now();
  return new Promise((done) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let err = '';
    let killed = false;
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, runner.seconds * 1000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const ms = Math.round(performance.now() - started);
      if (killed) {
        done({ ms, crashed: `did not finish within ${runner.seconds} s (killed)` });
        return;
      }
      const stdout = Buffer.concat(out).toString();
      let parsed: unknown;
      try {
        parsed = JSON.parse(stdout);
      } catch {
        done({
          ms,
          crashed: `exit ${code ?? signal}, output is not a JSON report: ${(stdout + err).slice(0, 500)}`,
        });
        return;
      }
      const value = parsed as {
        ok?: boolean;
        error?: { code?: string; message?: string };
      } & NonNullable<Inspection['report']>;
      if (value.ok === true && Array.isArray(value.types)) {
        done({ ms, report: value });
      } else if (value.ok === false && typeof value.error?.code === 'string') {
        const refusal = { code: value.error.code, message: value.error.message ?? '' };
        if (CRASH_CODES.has(refusal.code)) {
          done({ ms, crashed: `${refusal.code}: ${refusal.message}` });
        } else {
          done({ ms, refused: refusal });
        }
      } else {
        done({ ms, crashed: `exit ${code ?? signal}, unexpected report: ${stdout.slice(0, 500)}` });
      }
    });
  });
}

/** The inspected type that is the expected one: same collection or create path. */
export function findType(
  expected: ExpectedType,
  types: readonly InspectedType[],
): InspectedType | undefined {
  const paths = new Set([expected.path, ...expected.alt]);
  const matches = types.filter((t) => paths.has(t.collectionPath) || paths.has(t.create.path));
  return matches.find((t) => t.identity !== null) ?? matches[0];
}

/** Whether an inspected type meets the expectation's identity, and if not why. */
export function identityVerdict(
  expected: ExpectedType,
  found: InspectedType,
): { readonly ok: boolean; readonly problem?: string } {
  if (expected.identity === 'safe') {
    return found.identity !== null
      ? { ok: true }
      : { ok: false, problem: `no identity: ${found.identityReason ?? '(no reason given)'}` };
  }
  if (found.identity !== null) {
    return {
      ok: false,
      problem: `identity ${found.identity} where a person sees none that is safe (${expected.why})`,
    };
  }
  if ((found.identityReason ?? '').trim() === '') {
    return { ok: false, problem: 'no identity and no reason given' };
  }
  return { ok: true };
}

/** Whether an expectation is met by a report: found, with the identity a person expects; else why not. */
export function meets(
  expected: ExpectedType,
  report: NonNullable<Inspection['report']>,
): { readonly ok: boolean; readonly problem?: string; readonly found?: InspectedType } {
  const found = findType(expected, report.types);
  if (found === undefined)
    return { ok: false, problem: `not found; inspect says ${whyMissing(expected, report)}` };
  const verdict = identityVerdict(expected, found);
  return verdict.ok
    ? { ok: true, found }
    : { ok: false, found, problem: `found as ${found.name}, but ${verdict.problem}` };
}

/**
 * A natural key on a field the document does not support: the key's fields that are neither in the
 * expectation's `key` list nor a parameter of the paths inspect reports for the type (a parent
 * scope). Undefined when the key is supported, or when there is no natural key.
 */
export function wrongKey(expected: ExpectedType, found: InspectedType): string[] | undefined {
  if (found.identity !== 'natural-key' || found.naturalKey === undefined) return undefined;
  const params = new Set(
    [found.collectionPath, found.create.path].flatMap((p) =>
      [...p.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!),
    ),
  );
  const bad = found.naturalKey.filter((f) => !expected.key.includes(f) && !params.has(f));
  return bad.length > 0 ? bad : undefined;
}

/** What one document scores: recall, identity agreement, wrong keys, and every miss with why. */
export interface Score {
  readonly expected: number;
  readonly found: number;
  /** Found with the identity the expectation gives. */
  readonly identity: number;
  /** `type: field, …` for each type keyed by a field the document does not support. */
  readonly wrongKeys: readonly string[];
  /** One line per expected type not found or found without the expected identity. */
  readonly misses: readonly string[];
}

/** Scores a document's inspection against its expectations (the plain run, overlay types aside). */
export function score(e: Expectation, inspection: Inspection): Score {
  const types = e.types.filter((t) => !t.overlay);
  const report = inspection.report;
  if (report === undefined) {
    const why = inspection.crashed ?? `refused: ${inspection.refused?.code ?? '?'}`;
    return {
      expected: types.length,
      found: 0,
      identity: 0,
      wrongKeys: [],
      misses: types.map((t) => `${t.name} (${t.path}): the document did not load (${why})`),
    };
  }
  let found = 0;
  let identity = 0;
  const wrongKeys: string[] = [];
  const misses: string[] = [];
  for (const t of types) {
    const verdict = meets(t, report);
    if (verdict.found === undefined) {
      misses.push(`${t.name} (${t.path}): ${verdict.problem ?? 'not found'}`);
      continue;
    }
    found += 1;
    if (verdict.ok) identity += 1;
    else misses.push(`${t.name} (${t.path}): ${verdict.problem ?? ''}`);
    const bad = wrongKey(t, verdict.found);
    if (bad !== undefined) wrongKeys.push(`${t.name}: ${bad.join(', ')}`);
  }
  return { expected: types.length, found, identity, wrongKeys, misses };
}

/** Why an expected type was not found, as far as `inspect` says (its unmapped paths). */
export function whyMissing(
  expected: ExpectedType,
  report: NonNullable<Inspection['report']>,
): string {
  const reasons = [expected.path, ...expected.alt].map((p) => {
    const u = report.unmapped.find((x) => x.path === p);
    return u ? `${p}: ${u.reason}` : `${p}: not listed by inspect (neither a type nor unmapped)`;
  });
  return reasons.join('; ');
}

/** True when the built CLI is missing or older than a source file (tests would measure old code). */
export function staleBuild(): string | undefined {
  if (!existsSync(CLI)) return `${CLI} does not exist: run npm run build first`;
  const built = statSync(CLI).mtimeMs;
  const newer = newestSource(join(ROOT, 'src'));
  if (newer !== undefined && newer.mtime > built) {
    return `dist/ is older than ${newer.file.slice(ROOT.length + 1)}: run npm run build first`;
  }
  return undefined;
}

function newestSource(dir: string): { file: string; mtime: number } | undefined {
  let best: { file: string; mtime: number } | undefined;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    const found = entry.isDirectory()
      ? newestSource(full)
      : /\.ts$/.test(entry.name) && !/\.test\.ts$/.test(entry.name)
        ? { file: full, mtime: statSync(full).mtimeMs }
        : undefined;
    if (found !== undefined && (best === undefined || found.mtime > best.mtime)) best = found;
  }
  return best;
}
