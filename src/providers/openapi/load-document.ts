import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dereference } from '@readme/openapi-parser';
import { parse as parseYaml } from 'yaml';
import { TendError, fetchFollowingRedirects } from '../../core/index.js';
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

/** Options for loading a document over HTTP. */
export interface LoadDocumentOptions {
  /** The fetch to use for http(s) locations (tests inject one). */
  readonly fetch?: typeof fetch;
  /** Headers sent when fetching the document (e.g. an API key); never logged or put in errors. */
  readonly headers?: Record<string, string>;
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
}

/**
 * Loads an OpenAPI 3.0 or 3.1 document, or a Swagger 2.0 one (converted), from a file path or an
 * http(s) URL, in YAML (merge keys `<<:` included) or JSON, applies the overlay when one is given, and
 * dereferences it. Problems in the document itself (dangling `$ref`s, odd versions, small spec bugs
 * the converter patches, overlay targets that select nothing) become warnings; only a document that
 * cannot be used at all is an error, a TendError whose message says what to do.
 */
export async function loadOpenApiDocument(
  location: string,
  options: LoadDocumentOptions = {},
): Promise<OpenApiDocument> {
  const raw = await loadParsed(location, 'document', options);
  if (options.overlay === undefined) {
    return prepareOpenApiDocument(raw.value, raw.shown, raw.isUrl ? undefined : raw.shown);
  }
  const { headers: _headers, ...withoutHeaders } = options;
  const overlayRaw = await loadParsed(options.overlay, 'overlay', withoutHeaders);
  const overlay = parseOverlay(overlayRaw.value, overlayRaw.shown);
  if (raw.value === null || typeof raw.value !== 'object' || Array.isArray(raw.value)) {
    return prepareOpenApiDocument(raw.value, raw.shown);
  }
  const doc = raw.value as Record<string, unknown>;
  const overlayWarnings = applyOverlay(doc, overlay);
  const prepared = await prepareOpenApiDocument(doc, raw.shown);
  return {
    ...prepared,
    overlay: overlayRaw.shown,
    warnings: [...overlayWarnings, ...prepared.warnings],
  };
}

async function loadParsed(
  location: string,
  what: 'document' | 'overlay',
  options: LoadDocumentOptions,
): Promise<{ value: unknown; shown: string; isUrl: boolean }> {
  const isUrl = /^https?:\/\//i.test(location);
  const shown = isUrl ? redactUrl(location) : absoluteFilePath(location);
  const text = isUrl
    ? await fetchText(location, shown, options, what)
    : await readText(shown, what);
  return { value: parseText(text, shown, what), shown, isUrl };
}

/**
 * Checks that a parsed value is an OpenAPI 3.x document and dereferences it. `location` is only used
 * in messages; `filePath`, when given, is where relative external `$ref`s are resolved from.
 */
export async function prepareOpenApiDocument(
  raw: unknown,
  location: string,
  filePath?: string,
): Promise<OpenApiDocument> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new TendError(
      'openapi.not_openapi',
      `${location} is not an OpenAPI document (it is not a mapping); point the provider's spec at an OpenAPI 3.0 or 3.1 document`,
      { phase: 'load' },
    );
  }
  let doc = raw as Record<string, unknown>;
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
    doc = converted.document;
    warnings.push(...converted.warnings);
    convertedFrom = `swagger ${swagger}`;
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

  // Dangling internal pointers would make the parser give up on the whole document: replace each
  // with an empty schema and say so, so that one bad $ref costs one field, not the provider.
  const copy = structuredClone(doc);
  const external = repairRefs(copy, warnings);

  let dereferenced: Record<string, unknown> | undefined;
  if (external > 0 && filePath && convertedFrom === undefined) {
    try {
      // The parser reads the file again itself so that relative external $refs resolve from it.
      const fromFile = (await dereference(filePath, { resolve: { file: true } })) as unknown;
      dereferenced = fromFile as Record<string, unknown>;
    } catch (e) {
      warnings.push(
        `external $refs could not be resolved (${messageOf(e)}); they are read as empty schemas`,
      );
    }
  } else if (external > 0) {
    warnings.push(
      `${external} external $ref(s) are not resolved for documents fetched over HTTP; they are read as empty schemas (bundle the document to include them)`,
    );
  }
  if (!dereferenced) {
    try {
      const result = (await dereference(copy as never, {
        resolve: { external: false },
      })) as unknown;
      dereferenced = result as Record<string, unknown>;
    } catch (e) {
      warnings.push(
        `$refs could not be resolved (${messageOf(e)}); they are read as empty schemas`,
      );
      dereferenced = copy;
    }
  }
  return {
    location,
    version,
    ...(convertedFrom !== undefined ? { convertedFrom } : {}),
    document: dereferenced,
    warnings,
  };
}

async function readText(path: string, what: 'document' | 'overlay'): Promise<string> {
  const noun = what === 'document' ? 'OpenAPI document' : 'overlay';
  const key = what === 'document' ? 'spec' : 'overlay';
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
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
        headers: {
          accept: 'application/json, application/yaml, text/yaml, */*',
          ...(basic ? { authorization: basic } : {}),
          ...options.headers,
        },
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

function parseText(text: string, location: string, what: 'document' | 'overlay'): unknown {
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
  try {
    // JSON is YAML, but the JSON parser is much faster on the large documents real APIs publish.
    return JSON.parse(text) as unknown;
  } catch {
    // Not JSON: try YAML below.
  }
  try {
    // Merge keys (`<<: *anchor`) are YAML 1.1, but real documents (PowerDNS's) rely on them.
    return parseYaml(text, { maxAliasCount: -1, merge: true }) as unknown;
  } catch (e) {
    const first = messageOf(e).split('\n')[0] ?? '';
    throw new TendError(
      code,
      `${location} is neither JSON nor YAML (${first}); fix the ${what} or point ${what === 'document' ? 'spec' : 'overlay'} at the right file`,
      { phase: 'load' },
    );
  }
}

/**
 * Replaces every internal `$ref` whose target does not exist by an empty schema (recording a
 * warning) and returns how many external `$ref`s there are.
 */
function repairRefs(root: unknown, warnings: string[]): number {
  let external = 0;
  const seen = new Set<unknown>();
  const walk = (value: unknown): void => {
    if (value === null || typeof value !== 'object' || seen.has(value)) return;
    seen.add(value);
    if (Array.isArray(value)) {
      value.forEach(walk);
      return;
    }
    const obj = value as Record<string, unknown>;
    for (const [key, child] of Object.entries(obj)) {
      if (child !== null && typeof child === 'object' && !Array.isArray(child)) {
        const ref = (child as Record<string, unknown>)['$ref'];
        if (typeof ref === 'string') {
          if (!ref.startsWith('#')) {
            external++;
          } else if (resolvePointer(root, ref) === undefined) {
            warnings.push(`$ref ${ref} points at nothing; it is read as an empty schema`);
            obj[key] = {};
            continue;
          }
        }
      }
      walk(child);
    }
  };
  walk(root);
  return external;
}

function resolvePointer(root: unknown, ref: string): unknown {
  const pointer = decodeURIComponent(ref.slice(1));
  if (pointer === '') return root;
  let cur: unknown = root;
  for (const raw of pointer.split('/').slice(1)) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object') return undefined;
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
