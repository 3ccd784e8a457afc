import { open, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve as resolvePath, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import jsYaml from 'js-yaml';
import { LineCounter, parseDocument } from 'yaml';
import {
  TendError,
  YAML_LIMITS,
  checkYamlDocument,
  fetchFollowingRedirects,
  setKey,
  withUserAgent,
} from '../../../core/index.js';
import { loadDereferencer } from './dereference.js';
import { applyOverlay, parseOverlay } from './overlay.js';
import { convertSwagger2 } from './swagger2.js';

/**
 * An OpenAPI 3.x document ready to be read: every resolvable `$ref` replaced by what it points to
 * (recursive schemas become cyclic object graphs, so walkers must guard against cycles). A Swagger
 * 2.0 document arrives here converted to OpenAPI 3.0, with its overlay (if any) already applied.
 */
export interface OpenApiDocument {
  /** Where the document came from (a URL or an absolute file path), with any credentials removed. */
  readonly location: string;
  /** The `openapi` version string, e.g. `3.1.0` (`3.0.0` for a converted Swagger 2.0 document). */
  readonly version: string;
  /** The version the document was written in when it is not the one above (`swagger 2.0`). */
  readonly convertedFrom?: string;
  /** Where the overlay applied to it came from, when one was. */
  readonly overlay?: string;
  /** The dereferenced document. */
  readonly document: Record<string, unknown>;
  /** Problems found while reading it; none of them stopped the load. */
  readonly warnings: readonly string[];
}

/**
 * What reading a document may cost. A document comes from whoever publishes it (a platform, or a
 * man in the middle): every bound is checked before the work it bounds, and exceeding one is a
 * TendError (`openapi.limit_exceeded`), never a hang or a crash.
 */
export interface DocumentLimits {
  /** Bytes of the document and of every file or response its `$ref`s bring in, together. */
  readonly maxBytes: number;
  /** Deepest nesting of objects and arrays in the document and in each file its `$ref`s bring in. */
  readonly maxDepth: number;
  /** `$ref`s in the document and the files they bring in, together. */
  readonly maxRefs: number;
  /** Files or responses external `$ref`s bring in. */
  readonly maxRefTargets: number;
  /** YAML anchors plus aliases in one file. */
  readonly maxAliasNodes: number;
  /** Values the YAML aliases of one file add when written out without them. */
  readonly maxAliasExpansion: number;
}

export const DOCUMENT_LIMITS: DocumentLimits = {
  maxBytes: 64 * 1024 * 1024,
  maxDepth: YAML_LIMITS.maxDepth,
  maxRefs: 500_000,
  maxRefTargets: 1_000,
  maxAliasNodes: YAML_LIMITS.maxAliasNodes,
  maxAliasExpansion: YAML_LIMITS.maxAliasExpansion,
};

/** Options for loading a document over HTTP. */
export interface LoadDocumentOptions {
  /** The fetch to use for http(s) locations (tests inject one). */
  readonly fetch?: typeof fetch;
  /** Headers sent when fetching the document (e.g. an API key); never logged or put in errors. */
  readonly headers?: Record<string, string>;
  /** Sent as User-Agent (core `userAgent`) unless `headers` names one. */
  readonly userAgent?: string;
  /** How long to wait for the document, in milliseconds (default 30000). */
  readonly timeoutMs?: number;
  /**
   * An OpenAPI Overlay 1.0 document (file path or http(s) URL) applied to the document before
   * anything else reads it. Its targets address the document as written (a Swagger 2.0 document's
   * `definitions`, not the converted `components`). Fetched without the document's headers.
   */
  readonly overlay?: string;
  /**
   * Origins besides the document's own that a redirect may lead to (`*`: any); no header of
   * `headers` and no user-info credential is ever sent there. Default: none.
   */
  readonly allowRedirectsTo?: readonly string[];
  /** Tighter (or looser) bounds than DOCUMENT_LIMITS; tests use small ones. */
  readonly limits?: Partial<DocumentLimits>;
}

/** Options for `prepareOpenApiDocument`. */
export interface PrepareDocumentOptions extends Omit<LoadDocumentOptions, 'overlay'> {
  /**
   * Where the document was read from, which decides what its external `$ref`s may reach: for a file
   * path, files inside the file's own directory tree; for an http(s) URL, URLs on the same origin.
   * Without it, external `$ref`s are not resolved (each is a warning and reads as an empty schema).
   */
  readonly base?: string;
}

/** The key under which the files external `$ref`s bring in are kept while dereferencing. */
const BUNDLED = 'x-tend-bundled';

/**
 * Loads an OpenAPI 3.0 or 3.1 document, or a Swagger 2.0 one (converted), from a file path or an
 * http(s) URL, in YAML (merge keys `<<:` included) or JSON, applies the overlay when one is given, and
 * dereferences it. Problems in the document itself (dangling `$ref`s, odd versions, small spec bugs
 * the converter patches, overlay targets that select nothing) become warnings; only a document that
 * cannot be used at all is an error, a TendError whose message says what to do.
 *
 * External `$ref`s are confined: those of a local document reach only files inside the document's
 * own directory tree (after symlinks are resolved), those of a document fetched over HTTP only URLs
 * on its own origin (never `file:`). Any other is refused with an error before anything is read.
 */
export async function loadOpenApiDocument(
  location: string,
  options: LoadDocumentOptions = {},
): Promise<OpenApiDocument> {
  const limits = limitsOf(options);
  const raw = await loadParsed(location, 'document', options, limits);
  const { overlay: overlayLocation, ...prepareOptions } = options;
  const base = raw.isUrl ? location : raw.shown;
  const read = { bytes: raw.bytes };
  const lenient = raw.lenient !== undefined ? [raw.lenient] : [];
  if (overlayLocation === undefined) {
    const prepared = await prepare(raw.value, raw.shown, { ...prepareOptions, base }, read);
    return lenient.length === 0
      ? prepared
      : { ...prepared, warnings: [...lenient, ...prepared.warnings] };
  }
  const { headers: _headers, ...withoutHeaders } = options;
  const overlayRaw = await loadParsed(overlayLocation, 'overlay', withoutHeaders, limits);
  const overlay = parseOverlay(overlayRaw.value, overlayRaw.shown);
  if (raw.value === null || typeof raw.value !== 'object' || Array.isArray(raw.value)) {
    return prepare(raw.value, raw.shown, prepareOptions, read);
  }
  const doc = raw.value as Record<string, unknown>;
  const overlayWarnings = applyOverlay(doc, overlay);
  const prepared = await prepare(doc, raw.shown, { ...prepareOptions, base }, read);
  return {
    ...prepared,
    overlay: overlayRaw.shown,
    warnings: [...lenient, ...overlayWarnings, ...prepared.warnings],
  };
}

/**
 * A document as written: parsed exactly as `loadOpenApiDocument` parses it (JSON, YAML, leniently
 * read YAML; the same limits), with no overlay applied, no `$ref` resolved and no conversion. What
 * the probe's overlay targets address.
 */
export async function readRawDocument(
  location: string,
  options: Omit<LoadDocumentOptions, 'overlay'> = {},
): Promise<unknown> {
  return (await loadParsed(location, 'document', options, limitsOf(options))).value;
}

function limitsOf(options: { readonly limits?: Partial<DocumentLimits> }): DocumentLimits {
  return { ...DOCUMENT_LIMITS, ...options.limits };
}

async function loadParsed(
  location: string,
  what: 'document' | 'overlay',
  options: LoadDocumentOptions,
  limits: DocumentLimits,
): Promise<{ value: unknown; shown: string; isUrl: boolean; bytes: number; lenient?: string }> {
  const isUrl = /^https?:\/\//i.test(location);
  const shown = isUrl ? redactUrl(location) : absoluteFilePath(location);
  const text = isUrl
    ? await fetchText(location, shown, cappedOptions(options, limits.maxBytes, shown, what), what)
    : await readText(shown, what, limits.maxBytes);
  const bytes = Buffer.byteLength(text);
  if (bytes > limits.maxBytes) throw tooLarge(shown, what, limits.maxBytes);
  const parsed = parseText(text, shown, what, limits);
  return {
    value: parsed.value,
    shown,
    isUrl,
    bytes,
    ...(parsed.lenient !== undefined ? { lenient: parsed.lenient } : {}),
  };
}

/**
 * Checks that a parsed value is an OpenAPI 3.x document and dereferences it. `location` is only used
 * in messages; `options.base`, when given, is where external `$ref`s are resolved from (and what
 * confines them).
 */
export async function prepareOpenApiDocument(
  raw: unknown,
  location: string,
  options: PrepareDocumentOptions = {},
): Promise<OpenApiDocument> {
  return prepare(raw, location, options, { bytes: 0 });
}

async function prepare(
  raw: unknown,
  location: string,
  options: PrepareDocumentOptions,
  read: { bytes: number },
): Promise<OpenApiDocument> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new TendError(
      'openapi.not_openapi',
      `${location} is not an OpenAPI document (it is not a mapping); point the provider's spec at an OpenAPI 3.0 or 3.1 document`,
      { phase: 'load' },
    );
  }
  const limits = limitsOf(options);
  const counts = { refs: 0 };
  // A copy (the caller's value is never changed), made without recursion, and bounded: nothing
  // below walks a document deeper than maxDepth.
  let scanned = copyAndScan(raw, location, limits, counts);
  let doc = scanned.copy as Record<string, unknown>;
  const policy = await refPolicy(options.base, location, options);
  // Every external $ref of the document is checked before anything is read.
  const rootTargets = scanned.sites.map((site) => policy.target(site.ref, policy.root));
  const warnings: string[] = [];
  let convertedFrom: string | undefined;
  if (doc['swagger'] !== undefined) {
    const swagger = scalar(doc['swagger']);
    if (!/^2(\.0)?$/.test(swagger)) {
      throw new TendError(
        'openapi.swagger_unsupported',
        `${location} is a Swagger ${swagger} document; Tend reads Swagger 2.0 and OpenAPI 3.0 and 3.1`,
        { phase: 'load' },
      );
    }
    const converted = await convertSwagger2(doc, location);
    for (const w of converted.warnings) warnings.push(w);
    convertedFrom = `swagger ${swagger}`;
    scanned = copyAndScan(converted.document, location, limits, { refs: 0 });
    doc = scanned.copy as Record<string, unknown>;
  }
  const version = doc['openapi'];
  if (typeof version !== 'string' || !/^3\.\d+/.test(version)) {
    const what =
      version === undefined ? 'has no `openapi` field' : `declares openapi ${scalar(version)}`;
    throw new TendError(
      'openapi.not_openapi',
      `${location} ${what}; point the provider's spec at an OpenAPI 3.0 or 3.1 (or Swagger 2.0) document`,
      { phase: 'load' },
    );
  }
  if (!/^3\.[01](\.|$)/.test(version)) {
    warnings.push(`openapi ${version} is newer than 3.1; reading it as 3.1`);
  }
  if (doc['paths'] === undefined || doc['paths'] === null || typeof doc['paths'] !== 'object') {
    warnings.push('the document has no paths, so it offers no resource types');
  }

  if (convertedFrom === undefined) {
    await bundle(doc, scanned.sites, rootTargets, policy, {
      options,
      limits,
      counts,
      read,
      warnings,
    });
  } else {
    // The converter rewrites pointers into a Swagger 2.0 document's shape; the files a 2.0
    // document refers to are not converted, so they are not read.
    const external = scanned.sites.filter((s) => !s.ref.startsWith('#')).length;
    if (external > 0) {
      warnings.push(
        `${external} external $ref(s) of a Swagger 2.0 document are not resolved; they are read as empty schemas (bundle the document to include them)`,
      );
    }
    repairInternal(doc, scanned.sites, warnings);
  }

  let dereferenced: Record<string, unknown>;
  const dereference = await loadDereferencer();
  try {
    // Every $ref left is internal (bundle made the confined external ones internal): nothing
    // outside the document is resolved, and no file and no URL is read.
    dereferenced = await dereference(doc);
  } catch (e) {
    warnings.push(
      `$refs could not be resolved (${shorten(messageOf(e))}); they are read as empty schemas`,
    );
    dereferenced = doc;
  }
  delete dereferenced[BUNDLED];
  return {
    location,
    version,
    ...(convertedFrom !== undefined ? { convertedFrom } : {}),
    document: dereferenced,
    warnings,
  };
}

/** An object holding a `$ref`, in a copy of a document or of a file it refers to. */
interface RefSite {
  readonly holder: Record<string, unknown>;
  readonly ref: string;
}

/**
 * Copies a parsed document without recursion (sharing and cycles kept, `__proto__` kept as a plain
 * key), checking its depth and counting its `$ref`s on the way.
 */
function copyAndScan(
  value: unknown,
  shown: string,
  limits: DocumentLimits,
  counts: { refs: number },
): { copy: unknown; sites: RefSite[] } {
  const sites: RefSite[] = [];
  if (value === null || typeof value !== 'object') return { copy: value, sites };
  const copies = new Map<object, unknown[] | Record<string, unknown>>();
  const fresh = (v: object): unknown[] | Record<string, unknown> => {
    const c = Array.isArray(v) ? [] : {};
    copies.set(v, c);
    return c;
  };
  const root = fresh(value);
  const stack: { from: object; to: unknown[] | Record<string, unknown>; depth: number }[] = [
    { from: value, to: root, depth: 1 },
  ];
  while (stack.length > 0) {
    const { from, to, depth } = stack.pop()!;
    if (depth > limits.maxDepth) throw tooDeep(shown, limits.maxDepth);
    for (const key of Object.keys(from)) {
      const child = (from as Record<string, unknown>)[key];
      let copied: unknown = child;
      if (child !== null && typeof child === 'object') {
        copied = copies.get(child);
        if (copied === undefined) {
          const c = fresh(child);
          stack.push({ from: child, to: c, depth: depth + 1 });
          copied = c;
        }
      }
      if (key === '__proto__') {
        // Assignment would set the copy's prototype: keep it as the plain key it was in the text.
        Object.defineProperty(to, key, {
          value: copied,
          writable: true,
          enumerable: true,
          configurable: true,
        });
      } else {
        setKey(to as Record<string, unknown>, key, copied);
      }
    }
    if (!Array.isArray(to) && typeof to['$ref'] === 'string') {
      sites.push({ holder: to, ref: to['$ref'] });
      if (++counts.refs > limits.maxRefs) {
        throw new TendError(
          'openapi.limit_exceeded',
          `${shown} has more than ${limits.maxRefs.toLocaleString('en-US')} $refs (with the files they refer to); Tend reads documents up to that size`,
          {
            phase: 'load',
            hint: 'point spec at a smaller document, or cut it down with an overlay',
          },
        );
      }
    }
  }
  return { copy: root, sites };
}

/** Where a `$ref` leads: a file or URL (by its canonical key), or nowhere Tend resolves. */
interface Target {
  /** The file path (lexical, absolute) or URL to read; '' for the document itself. */
  readonly location: string;
  /** As shown in messages (a URL without credentials). */
  readonly shown: string;
}

/** What external `$ref`s may reach from a document, decided by where the document came from. */
interface RefPolicy {
  /** The document itself, as the base its own relative `$ref`s resolve from. */
  readonly root: Target;
  /**
   * Where the part of `ref` before `#` leads, relative to `from`; undefined for an internal `$ref`
   * and, without a base, for every `$ref`. Throws a TendError for a `$ref` outside what is allowed.
   */
  target(ref: string, from: Target): Target | undefined;
  /**
   * The canonical key of a target (a real path, a URL without fragment), or undefined when it does
   * not exist. Throws when it resolves outside what is allowed (a symlink out of the directory).
   */
  key(target: Target, ref: string, from: Target): Promise<string | undefined>;
  /** Reads a target, within `maxBytes`; undefined when it does not exist. */
  read(target: Target, maxBytes: number): Promise<string | undefined>;
}

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

async function refPolicy(
  base: string | undefined,
  location: string,
  options: PrepareDocumentOptions,
): Promise<RefPolicy> {
  if (base === undefined) {
    return {
      root: { location: '', shown: location },
      target: () => undefined,
      key: () => Promise.resolve(undefined),
      read: () => Promise.resolve(undefined),
    };
  }
  return /^https?:\/\//i.test(base) ? urlPolicy(base, options) : filePolicy(absoluteFilePath(base));
}

/** A local document's `$ref`s reach files inside its own directory tree, and nothing else. */
async function filePolicy(path: string): Promise<RefPolicy> {
  const dir = dirname(path);
  const realDir = await realpath(dir).catch(() => dir);
  const rootKey = await realpath(path).catch(() => path);
  const refuse = (ref: string, from: Target, why: string): TendError =>
    new TendError(
      'openapi.ref_refused',
      `$ref ${show(ref)} in ${from.shown} ${why}; a local document's $refs may only name files inside its own directory ${dir}`,
      {
        phase: 'load',
        hint: `move the referenced file into ${dir} (or below), or bundle the document into one file (e.g. \`npx @redocly/cli bundle\`)`,
      },
    );
  return {
    root: { location: path, shown: path },
    target(ref, from) {
      const hash = ref.indexOf('#');
      const part = hash < 0 ? ref : ref.slice(0, hash);
      if (part === '') return undefined;
      let file: string;
      if (SCHEME.test(part)) {
        if (!/^file:/i.test(part)) throw refuse(ref, from, 'is a URL');
        try {
          file = fileURLToPath(part);
        } catch {
          throw refuse(ref, from, 'is not a local file URL');
        }
      } else {
        try {
          file = resolvePath(dirname(from.location), decodeURIComponent(part));
        } catch {
          throw refuse(ref, from, 'is not a valid file reference');
        }
      }
      if (!inside(dir, file)) throw refuse(ref, from, 'points outside that directory');
      return { location: file, shown: file };
    },
    async key(target, ref, from) {
      let real: string;
      try {
        real = await realpath(target.location);
      } catch {
        return undefined;
      }
      if (!inside(realDir, real)) {
        throw refuse(
          ref,
          from,
          `leads (through a symbolic link) to ${real}, outside that directory`,
        );
      }
      return real === rootKey ? '' : real;
    },
    async read(target, maxBytes) {
      try {
        return await readBounded(target.location, maxBytes);
      } catch (e) {
        if (e instanceof TendError) throw e;
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return undefined;
        throw new TendError(
          'openapi.unreadable',
          `cannot read ${target.shown}, which a $ref of the OpenAPI document names (${code ?? messageOf(e)}); check that it is a readable file`,
          { phase: 'load' },
        );
      }
    },
  };
}

/** A fetched document's `$ref`s reach http(s) URLs on its own origin, and nothing else. */
function urlPolicy(base: string, options: PrepareDocumentOptions): RefPolicy {
  const rootUrl = new URL(base);
  const origin = rootUrl.origin;
  const refuse = (ref: string, from: Target, why: string): TendError =>
    new TendError(
      'openapi.ref_refused',
      `$ref ${show(ref)} in ${from.shown} ${why}; a document fetched over HTTP may only refer to http(s) URLs on its own origin ${origin}`,
      {
        phase: 'load',
        hint: 'bundle the document into one file (e.g. `npx @redocly/cli bundle`), or serve what it refers to from the same origin',
      },
    );
  return {
    root: { location: base, shown: redactUrl(base) },
    target(ref, from) {
      const hash = ref.indexOf('#');
      const part = hash < 0 ? ref : ref.slice(0, hash);
      if (part === '') return undefined;
      let url: URL;
      try {
        url = new URL(part, from.location);
      } catch {
        throw refuse(ref, from, 'is not a valid URL');
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw refuse(ref, from, `is a ${url.protocol} URL`);
      }
      if (url.origin !== origin) throw refuse(ref, from, `is on another origin (${url.origin})`);
      url.hash = '';
      return { location: url.href, shown: redactUrl(url.href) };
    },
    key(target) {
      const key = new URL(target.shown);
      const root = new URL(redactUrl(base));
      root.hash = '';
      return Promise.resolve(key.href === root.href ? '' : key.href);
    },
    async read(target, maxBytes) {
      try {
        return await fetchText(
          target.location,
          target.shown,
          cappedOptions(options, maxBytes, target.shown, 'document'),
          'document',
        );
      } catch (e) {
        if (e instanceof TendError && e.status === 404) return undefined;
        throw e;
      }
    },
  };
}

interface BundleContext {
  readonly options: PrepareDocumentOptions;
  readonly limits: DocumentLimits;
  readonly counts: { refs: number };
  readonly read: { bytes: number };
  readonly warnings: string[];
}

/**
 * Makes every external `$ref` internal: each file (or URL) they reach, within the policy, is read
 * once, copied under `x-tend-bundled` in the document, and the `$ref`s into it rewritten to point
 * there. `$ref`s that lead nowhere (a missing file, a pointer to nothing) become empty schemas, each
 * with a warning. Nothing outside the policy is ever read: a `$ref` that would leave it is refused
 * (see RefPolicy) before the file that holds it has any of its targets read.
 */
async function bundle(
  root: Record<string, unknown>,
  rootSites: readonly RefSite[],
  rootTargets: readonly (Target | undefined)[],
  policy: RefPolicy,
  ctx: BundleContext,
): Promise<void> {
  if (policy.root.location === '') {
    const external = rootSites.filter((s) => !s.ref.startsWith('#')).length;
    if (external > 0) {
      ctx.warnings.push(
        `${external} external $ref(s) are not resolved (the document has no location to resolve them from); they are read as empty schemas`,
      );
    }
    repairInternal(root, rootSites, ctx.warnings);
    return;
  }
  const { limits } = ctx;
  // Index of each file read (by canonical key) in the bundle; '' is the document itself.
  const index = new Map<string, number | 'missing'>([['', -1]]);
  const bundled: unknown[] = [];
  /** Each `$ref` with the pointer it gets, and where it was written (for warnings). */
  const rewritten: { site: RefSite; pointer: string; where: string }[] = [];
  const queue: {
    sites: readonly RefSite[];
    targets: readonly (Target | undefined)[];
    from: Target;
    at: number;
  }[] = [{ sites: rootSites, targets: rootTargets, from: policy.root, at: -1 }];
  for (let q = 0; q < queue.length; q++) {
    const { sites, targets, from, at } = queue[q]!;
    for (let i = 0; i < sites.length; i++) {
      const site = sites[i]!;
      const target = targets[i];
      const hash = site.ref.indexOf('#');
      const fragment = hash < 0 ? '' : site.ref.slice(hash + 1);
      const where = at === -1 ? '' : ` in ${from.shown}`;
      if (fragment !== '' && !fragment.startsWith('/')) {
        emptySchema(site.holder);
        ctx.warnings.push(
          `$ref ${show(site.ref)}${where} is not a JSON pointer (#/…); it is read as an empty schema`,
        );
        continue;
      }
      let into = at;
      if (target !== undefined) {
        const key = await policy.key(target, site.ref, from);
        let found = key === undefined ? 'missing' : index.get(key);
        if (found === undefined && key !== undefined) {
          if (bundled.length >= limits.maxRefTargets) {
            throw new TendError(
              'openapi.limit_exceeded',
              `${policy.root.shown} refers to more than ${limits.maxRefTargets} files; Tend reads documents up to that many`,
              { phase: 'load', hint: 'bundle the document into one file' },
            );
          }
          const text = await policy
            .read(target, Math.max(0, limits.maxBytes - ctx.read.bytes))
            .catch((e: unknown) => {
              // The bound is on the document and its files together: say so about the document.
              if (e instanceof TendError && e.code === 'openapi.limit_exceeded') {
                throw tooLarge(policy.root.shown, 'document', limits.maxBytes);
              }
              throw e;
            });
          if (text === undefined) {
            found = 'missing';
          } else {
            ctx.read.bytes += Buffer.byteLength(text);
            if (ctx.read.bytes > limits.maxBytes) {
              throw tooLarge(policy.root.shown, 'document', limits.maxBytes);
            }
            const parsed = parseText(text, target.shown, 'document', limits);
            if (parsed.lenient !== undefined) ctx.warnings.push(parsed.lenient);
            const value = parsed.value;
            const scanned = copyAndScan(value, target.shown, limits, ctx.counts);
            found = bundled.length;
            bundled.push(scanned.copy);
            // Every $ref of the new file is checked before any of its targets is read.
            const fileTarget: Target = target;
            queue.push({
              sites: scanned.sites,
              targets: scanned.sites.map((s) => policy.target(s.ref, fileTarget)),
              from: fileTarget,
              at: found,
            });
          }
          index.set(key, found);
        }
        if (found === 'missing' || found === undefined) {
          emptySchema(site.holder);
          ctx.warnings.push(
            `$ref ${show(site.ref)}${where}: ${target.shown} does not exist; it is read as an empty schema`,
          );
          continue;
        }
        into = found;
      }
      const pointer = `#${into === -1 ? '' : `/${BUNDLED}/${into}`}${fragment}`;
      if (site.holder['$ref'] !== pointer) site.holder['$ref'] = pointer;
      rewritten.push({ site, pointer, where });
    }
  }
  if (bundled.length > 0) root[BUNDLED] = bundled;
  for (const { site, pointer, where } of rewritten) {
    if (resolvePointer(root, pointer) !== undefined) continue;
    emptySchema(site.holder);
    ctx.warnings.push(
      `$ref ${show(site.ref)}${where} points at nothing; it is read as an empty schema`,
    );
  }
}

/**
 * For a document whose external `$ref`s are not resolved: internal `$ref`s to nothing become empty
 * schemas, each with a warning (the parser would otherwise give up on the whole document).
 */
function repairInternal(root: unknown, sites: readonly RefSite[], warnings: string[]): void {
  for (const site of sites) {
    if (!site.ref.startsWith('#')) continue;
    if (site.ref !== '#' && !site.ref.startsWith('#/')) {
      emptySchema(site.holder);
      warnings.push(
        `$ref ${show(site.ref)} is not a JSON pointer (#/…); it is read as an empty schema`,
      );
      continue;
    }
    if (resolvePointer(root, site.ref) !== undefined) continue;
    emptySchema(site.holder);
    warnings.push(`$ref ${show(site.ref)} points at nothing; it is read as an empty schema`);
  }
}

/** Turns an object holding a `$ref` into an empty schema, wherever it is used. */
function emptySchema(holder: Record<string, unknown>): void {
  for (const key of Object.keys(holder)) delete holder[key];
}

function inside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** A `$ref` as written, for a message: control characters escaped, at most 200 characters. */
function show(ref: string): string {
  const text = JSON.stringify(ref.length > 200 ? `${ref.slice(0, 200)}…` : ref);
  return text.slice(1, -1);
}

function shorten(message: string): string {
  const first = message.split('\n')[0] ?? message;
  return first.length > 300 ? `${first.slice(0, 300)}…` : first;
}

function tooLarge(shown: string, what: 'document' | 'overlay', maxBytes: number): TendError {
  const size =
    maxBytes >= 1024 * 1024
      ? `${Math.round((maxBytes / 1024 / 1024) * 10) / 10} MiB`
      : `${Math.round((maxBytes / 1024) * 10) / 10} KiB`;
  return new TendError(
    `${what === 'document' ? 'openapi' : 'overlay'}.limit_exceeded`,
    `${shown} is larger than ${size}${what === 'document' ? ' (with the files its $refs name)' : ''}; Tend reads ${what === 'document' ? 'OpenAPI documents' : 'overlays'} up to that size`,
    {
      phase: 'load',
      hint: 'point at a smaller document, or cut the document down to the paths you manage',
    },
  );
}

function tooDeep(shown: string, maxDepth: number): TendError {
  return new TendError(
    'openapi.limit_exceeded',
    `${shown} is nested more than ${maxDepth} levels deep; Tend reads documents up to that depth`,
    {
      phase: 'load',
      hint: 'flatten the document (move nested schemas to components and $ref them)',
    },
  );
}

/** Options whose fetch reads at most `maxBytes` of a body (the rest is never downloaded). */
function cappedOptions(
  options: LoadDocumentOptions,
  maxBytes: number,
  shown: string,
  what: 'document' | 'overlay',
): LoadDocumentOptions {
  const inner = options.fetch ?? globalThis.fetch;
  const capped = async (...args: Parameters<typeof fetch>): Promise<Response> => {
    const response = await inner(...args);
    const body = (response as Partial<Response>).body;
    if (body === undefined || body === null) return response;
    const text = async (): Promise<string> => {
      const declared = Number(response.headers.get('content-length') ?? Number.NaN);
      if (declared > maxBytes) {
        await body.cancel().catch(() => undefined);
        throw tooLarge(shown, what, maxBytes);
      }
      const reader = (body as ReadableStream<Uint8Array>).getReader();
      const chunks: Uint8Array[] = [];
      let total = 0;
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        const value = chunk.value;
        total += value.byteLength;
        if (total > maxBytes) {
          await reader.cancel().catch(() => undefined);
          throw tooLarge(shown, what, maxBytes);
        }
        chunks.push(value);
      }
      return new TextDecoder().decode(Buffer.concat(chunks));
    };
    Object.defineProperty(response, 'text', { value: text, configurable: true });
    return response;
  };
  return { ...options, fetch: capped };
}

/** Reads a file of at most `maxBytes` (a larger one is refused before it is read). */
async function readBounded(path: string, maxBytes: number): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const size = (await handle.stat()).size;
    if (size > maxBytes) throw tooLarge(path, 'document', maxBytes);
    // Read in chunks rather than trusting the size: a pipe or a growing file has none.
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buffer = Buffer.alloc(Math.min(1 << 20, maxBytes - total + 1));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) throw tooLarge(path, 'document', maxBytes);
      chunks.push(buffer.subarray(0, bytesRead));
    }
    return new TextDecoder().decode(Buffer.concat(chunks));
  } finally {
    await handle.close();
  }
}

async function readText(
  path: string,
  what: 'document' | 'overlay',
  maxBytes: number,
): Promise<string> {
  const noun = what === 'document' ? 'OpenAPI document' : 'overlay';
  const key = what === 'document' ? 'spec' : 'overlay';
  try {
    return await readBounded(path, maxBytes);
  } catch (e) {
    if (e instanceof TendError) throw what === 'document' ? e : tooLarge(path, what, maxBytes);
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new TendError(
        `${what === 'document' ? 'openapi' : 'overlay'}.not_found`,
        `${noun} ${path} does not exist; check the provider's ${key} path (relative paths are resolved from the intent directory)`,
        { phase: 'load' },
      );
    }
    throw new TendError(
      `${what === 'document' ? 'openapi' : 'overlay'}.unreadable`,
      `cannot read ${noun} ${path} (${code ?? messageOf(e)}); check that it is a readable file`,
      { phase: 'load' },
    );
  }
}

async function fetchText(
  url: string,
  shown: string,
  options: LoadDocumentOptions,
  what: 'document' | 'overlay',
): Promise<string> {
  const noun = what === 'document' ? 'OpenAPI document' : 'overlay';
  const code = what === 'document' ? 'openapi.fetch_failed' : 'overlay.fetch_failed';
  const doFetch = options.fetch ?? globalThis.fetch;
  const { plainUrl, basic } = splitCredentials(url);
  let response: Response;
  try {
    // Redirects are followed within the document's origin (or to an allowed one); the credentials
    // (user-info, the provider's auth header) never go to another origin.
    ({ response } = await fetchFollowingRedirects(
      doFetch,
      plainUrl,
      {
        method: 'GET',
        headers: withUserAgent(
          {
            accept: 'application/json, application/yaml, text/yaml, */*',
            ...(basic ? { authorization: basic } : {}),
            ...options.headers,
          },
          options.userAgent,
        ),
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      },
      {
        what: `cannot fetch ${noun} ${shown}`,
        credentialHeaders: Object.keys(options.headers ?? {}),
        optIn: "the provider's allowRedirectsTo",
        urlSetting: `the provider's ${what === 'document' ? 'spec' : 'overlay'}`,
        ...(options.allowRedirectsTo ? { allowOrigins: options.allowRedirectsTo } : {}),
      },
    ));
  } catch (e) {
    if (e instanceof TendError) {
      // A refused redirect: as it is, in the load phase.
      throw new TendError(e.code, e.message, {
        phase: 'load',
        ...(e.hint !== undefined ? { hint: e.hint } : {}),
        ...(e.status !== undefined ? { status: e.status } : {}),
      });
    }
    throw new TendError(
      code,
      `cannot fetch ${noun} ${shown} (${describeFetchFailure(e).split(url).join(shown)}); check that the URL is right and the server is up`,
      { phase: 'load', retryable: true },
    );
  }
  if (!response.ok) {
    const hint =
      response.status === 401 || response.status === 403
        ? 'the server wants credentials: check the provider auth'
        : 'check the URL';
    throw new TendError(code, `cannot fetch ${noun} ${shown}: HTTP ${response.status}; ${hint}`, {
      phase: 'load',
      status: response.status,
      retryable: response.status >= 500,
    });
  }
  return response.text();
}

/**
 * Parses a document or overlay: JSON first, then YAML (the `yaml` package, with positions). A YAML
 * document that package refuses is read again by js-yaml, which accepts what most OpenAPI tools
 * accept (a quoted scalar continued on a line indented no deeper than its key, as in Docker
 * Engine's published swagger.yaml); `lenient` then says so, to be shown as a warning. Overlays are
 * Tend's own input and get no second chance.
 */
function parseText(
  text: string,
  location: string,
  what: 'document' | 'overlay',
  limits: DocumentLimits,
): { value: unknown; lenient?: string } {
  const code = what === 'document' ? 'openapi.parse_failed' : 'overlay.parse_failed';
  if (text.trim() === '') {
    throw new TendError(
      code,
      what === 'document'
        ? `${location} is empty; point the provider's spec at an OpenAPI document`
        : `${location} is empty; point the provider's overlay at an OpenAPI Overlay 1.0 document`,
      { phase: 'load' },
    );
  }
  const limitCode = what === 'document' ? 'openapi.limit_exceeded' : 'overlay.limit_exceeded';
  let json: unknown;
  try {
    // JSON is YAML, but the JSON parser is much faster on the large documents real APIs publish.
    json = JSON.parse(text) as unknown;
  } catch {
    json = undefined;
  }
  if (json !== undefined) {
    if (deeperThan(json, limits.maxDepth)) {
      throw new TendError(
        limitCode,
        `${location} is nested more than ${limits.maxDepth} levels deep; Tend reads ${what === 'document' ? 'documents' : 'overlays'} up to that depth`,
        { phase: 'load', hint: 'flatten it (move nested schemas to components and $ref them)' },
      );
    }
    return { value: json };
  }
  const neither = (detail: string): TendError =>
    new TendError(
      code,
      `${location} is neither JSON nor YAML (${detail}); fix the ${what} or point ${what === 'document' ? 'spec' : 'overlay'} at the right file`,
      { phase: 'load' },
    );
  // Merge keys (`<<: *anchor`) are YAML 1.1, but real documents (PowerDNS's) rely on them. The
  // package's duplicate-key check is quadratic in a mapping's size: checkYamlDocument does it.
  const lineCounter = new LineCounter();
  // logLevel: warnings would go to stderr; the document's problems are errors or warnings of our own.
  const doc = parseDocument(text, {
    merge: true,
    uniqueKeys: false,
    lineCounter,
    logLevel: 'error',
  });
  const error = doc.errors[0];
  if (error !== undefined) {
    const first = messageOf(error).split('\n')[0] ?? '';
    if (/call stack/i.test(first)) {
      throw new TendError(
        limitCode,
        `${location} is nested too deeply to read; Tend reads ${what === 'document' ? 'documents' : 'overlays'} up to ${limits.maxDepth} levels deep`,
        { phase: 'load', hint: 'flatten it (move nested schemas to components and $ref them)' },
      );
    }
    if (what === 'document') {
      const value = lenientYaml(text, limits);
      if (value !== undefined) {
        return {
          value,
          lenient: `${location}: not strict YAML (${first.replace(/\.$/, '')}); read leniently, as most OpenAPI tools read it`,
        };
      }
    }
    throw neither(first);
  }
  const problem = checkYamlDocument(doc, limits)[0];
  if (problem !== undefined) {
    const pos = lineCounter.linePos(problem.offset);
    if (problem.kind === 'duplicate-key') {
      throw neither(`${problem.message} at line ${pos.line}, column ${pos.col}`);
    }
    throw new TendError(
      limitCode,
      `${location}:${pos.line}:${pos.col}: the ${what} is refused: ${problem.message}`,
      {
        phase: 'load',
        hint:
          problem.kind === 'too-deep'
            ? 'flatten it (move nested schemas to components and $ref them)'
            : 'write the values out instead of using so many YAML anchors and aliases (or convert it to JSON)',
      },
    );
  }
  // Aliases are bounded above; the package's own bound (maxAliasCount) costs time quadratic in them.
  try {
    return { value: doc.toJS({ maxAliasCount: -1 }) as unknown };
  } catch (e) {
    // What the parser accepts but cannot turn into data (a merge key `<<` on a scalar, found by
    // fuzzing) is a broken document, never a crash.
    throw neither((messageOf(e).split('\n')[0] ?? '').replace(/\.$/, ''));
  }
}

/**
 * A YAML document as js-yaml reads it, or undefined when it cannot read it either, or when what it
 * reads breaks the bounds the strict path enforces: nesting deeper than `maxDepth`, or aliases
 * (shared objects in js-yaml's result) that would add more than `maxAliasExpansion` values once
 * written out. js-yaml keeps `__proto__` as a plain key; the loader refuses such keys later.
 */
function lenientYaml(text: string, limits: DocumentLimits): unknown {
  let value: unknown;
  try {
    value = jsYaml.load(text, { json: false });
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  // Walk the value as a tree: every visit of an object seen before is what an alias adds.
  const seen = new Set<object>();
  let added = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (seen.has(v)) {
      added += 1;
      if (added > limits.maxAliasExpansion) return undefined;
    } else {
      seen.add(v);
    }
    for (const child of Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push(child);
    }
  }
  // Depth last: with the expansion bounded, walking the value as a tree is bounded too.
  return deeperThan(value, limits.maxDepth) ? undefined : value;
}

/** Whether a tree of plain data (a JSON value) nests deeper than `max`; no recursion. */
function deeperThan(value: unknown, max: number): boolean {
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 1 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push({ v: child, depth: depth + 1 });
    }
  }
  return false;
}

/** The value a local JSON pointer (`#/a/b`) points at in `root`, or undefined. */
function resolvePointer(root: unknown, ref: string): unknown {
  let pointer: string;
  try {
    pointer = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  if (pointer === '') return root;
  let cur: unknown = root;
  for (const raw of pointer.split('/').slice(1)) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, token)) return undefined;
    cur = (cur as Record<string, unknown>)[token];
  }
  return cur;
}

function absoluteFilePath(location: string): string {
  const path = location.startsWith('file://') ? fileURLToPath(location) : location;
  return isAbsolute(path) ? path : resolvePath(path);
}

/**
 * Moves `user:password@` out of a URL into a Basic authorization header: fetch refuses URLs with
 * credentials, and its error would repeat them.
 */
function splitCredentials(url: string): { plainUrl: string; basic?: string } {
  const u = new URL(url);
  if (!u.username && !u.password) return { plainUrl: url };
  const pair = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
  return { plainUrl: redactUrl(url), basic: `Basic ${Buffer.from(pair).toString('base64')}` };
}

/** A URL with any user:password part removed, safe to show in messages. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username || u.password) {
      u.username = '';
      u.password = '';
    }
    return u.toString();
  } catch {
    return url;
  }
}

function describeFetchFailure(e: unknown): string {
  if (e instanceof Error && e.name === 'TimeoutError') return 'timed out';
  const cause = e instanceof Error ? (e.cause as { code?: string } | undefined) : undefined;
  return cause?.code ?? messageOf(e);
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A scalar as written (strings unquoted), anything else as JSON. */
function scalar(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number'
    ? String(value)
    : JSON.stringify(value);
}
