import { access } from 'node:fs/promises';
import { dirname, extname, join } from 'node:path';
import { readFileSync } from 'node:fs';
import type {
  OpenApiProviderDecl,
  PostgresProviderDecl,
  Provider,
  ProviderDecl,
  Redactor,
} from '../core/index.js';
import {
  displayUrl,
  fetchFollowingRedirects,
  formatBytes,
  readBoundedText,
  TendError,
  toTendError,
  withUserAgent,
} from '../core/index.js';
import { readSecret } from '../engine/index.js';
import type { HttpCall } from '../providers/index.js';
import { DOCUMENT_LIMITS, loadOpenApiProvider, resolveConnection } from '../providers/index.js';
import { ensurePrivateDir } from '../store/index.js';
import { writePrivateFileAtomic } from './write-file-atomic.js';

/** What connecting one declared provider needs. */
export interface ProviderRequest {
  readonly decl: ProviderDecl;
  /** The workspace whose markers the provider writes. */
  readonly workspace: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The intent directory (secrets `fromFile` and cached documents are relative to it). */
  readonly dir: string;
  /**
   * The process's redactor: a provider registers every credential it resolves and every secret field
   * a platform returns, and redacts what a platform says before putting it in an error.
   */
  readonly redactor: Redactor;
  /** Told about every HTTP call to the platform (metrics; `AppContext.apiCalls`). */
  readonly apiCalls?: ApiCallObserver;
  /** The User-Agent of every request to the platform (`processUserAgent`). */
  readonly userAgent?: string;
}

/** One HTTP attempt to a platform, named by the provider that made it (metrics). */
export interface ApiCall extends HttpCall {
  readonly provider: string;
}

/** Receives API calls; must not throw. */
export type ApiCallObserver = (call: ApiCall) => void;

/** Connects one declared provider: loads what it needs and returns it ready to describe and use. */
export type ProviderFactory = (request: ProviderRequest) => Promise<Provider>;

/** Provider factories keyed by provider type (`type: openapi` in a Provider document). */
export type ProviderRegistry = ReadonlyMap<string, ProviderFactory>;

/** The built-in provider types. */
export const defaultProviders: ProviderRegistry = new Map<string, ProviderFactory>([
  ['openapi', connectOpenApiProvider],
  ['postgres', connectPostgresProvider],
]);

/** Connects a provider through the registry; an unregistered type is a clear error. */
export function connectProvider(
  registry: ProviderRegistry,
  request: ProviderRequest,
): Promise<Provider> {
  const factory = registry.get(request.decl.type);
  if (!factory) {
    return Promise.reject(
      new TendError(
        'provider.unknown_provider_type',
        `no provider of type ${request.decl.type} is available; known: ${[...registry.keys()].join(', ')}`,
      ),
    );
  }
  return factory(request);
}

/** The generic OpenAPI provider, with credentials read from the environment or a file now. */
export async function connectOpenApiProvider(request: ProviderRequest): Promise<Provider> {
  const { env, dir, workspace, redactor } = request;
  const decl = request.decl as OpenApiProviderDecl;
  // Credentials written into a URL (`https://user:pass@host`) are secrets too.
  for (const url of [decl.spec, decl.endpoint, decl.overlay]) {
    if (url !== undefined) redactor.addUrlCredentials(url);
  }
  const auth = decl.auth
    ? {
        header: decl.auth.header,
        value: (decl.auth.prefix ?? '') + readSecret(decl.auth, env, dir, redactor),
      }
    : undefined;
  const spec = await cachedSpec(decl, dir, { auth, userAgent: request.userAgent }, redactor);
  return loadOpenApiProvider({
    name: decl.name,
    spec,
    ...(decl.overlay ? { overlay: decl.overlay } : {}),
    endpoint: decl.endpoint,
    workspace,
    ...(auth ? { auth } : {}),
    concurrency: decl.concurrency,
    rateLimit: decl.rateLimit,
    timeoutMs: decl.timeoutMs,
    maxResponseBytes: decl.maxResponseBytes,
    ...(request.userAgent !== undefined ? { userAgent: request.userAgent } : {}),
    redactor,
    ...(request.apiCalls
      ? { observer: (call: HttpCall) => request.apiCalls?.({ provider: decl.name, ...call }) }
      : {}),
    ...(decl.allowRedirectsTo ? { allowRedirectsTo: decl.allowRedirectsTo } : {}),
    ...(decl.parameters ? { parameters: decl.parameters } : {}),
  });
}

/**
 * The native PostgreSQL provider: the connection URL read now from its secret reference (or the
 * libpq variables), its password registered with the redactor before anything else. Nothing is
 * sent to the server until the first observe. The `pg` driver is loaded here, by the first
 * PostgreSQL provider a command connects (docs/decisions/0033-lazy-modules.md).
 */
export async function connectPostgresProvider(request: ProviderRequest): Promise<Provider> {
  const { env, dir, redactor } = request;
  const decl = request.decl as PostgresProviderDecl;
  const url =
    decl.connection === undefined ? undefined : readSecret(decl.connection, env, dir, redactor);
  if (url !== undefined) redactor.addUrlCredentials(url);
  const connection = resolveConnection(
    {
      ...(url !== undefined && { url }),
      ...(decl.sslMode !== undefined && { sslMode: decl.sslMode }),
      ...(decl.sslRootCert !== undefined && {
        sslRootCert: readFileSync(decl.sslRootCert, 'utf8'),
      }),
      statementTimeoutMs: decl.statementTimeoutMs,
      lockTimeoutMs: decl.lockTimeoutMs,
      connectTimeoutMs: decl.connectTimeoutMs,
    },
    env,
    redactor,
  );
  const { createPostgresProvider } = await import('../providers/postgres/index.js');
  return createPostgresProvider({
    name: decl.name,
    connection,
    ...(decl.database !== undefined && { database: decl.database }),
  });
}

/**
 * A document served by the platform itself is kept in `<dir>/.tend/cache/`, so that Tend can still
 * load its intent (and `tend status` can say what is wrong) while the platform is down. Returns the
 * location to load: the fresh copy when the platform answers, else the cached one.
 */
async function cachedSpec(
  decl: OpenApiProviderDecl,
  dir: string,
  send: {
    readonly auth: { header: string; value: string } | undefined;
    readonly userAgent: string | undefined;
  },
  redactor: Redactor,
): Promise<string> {
  const { auth } = send;
  if (!/^https?:\/\//.test(decl.spec)) return decl.spec;
  const file = join(
    dir,
    '.tend',
    'cache',
    `${decl.name}.openapi${extname(new URL(decl.spec).pathname) || '.json'}`,
  );
  try {
    const sameOrigin = new URL(decl.spec).origin === new URL(decl.endpoint).origin;
    // Redirects stay within the spec's origin unless the provider allows others; the auth header
    // never leaves it.
    const { response: res } = await fetchFollowingRedirects(
      fetch,
      decl.spec,
      {
        method: 'GET',
        headers: withUserAgent(
          sameOrigin && auth ? { [auth.header]: auth.value } : {},
          send.userAgent,
        ),
        signal: AbortSignal.timeout(decl.timeoutMs),
      },
      {
        what: `cannot fetch ${withoutUserInfo(decl.spec)}`,
        credentialHeaders: auth ? [auth.header] : [],
        optIn: `provider ${decl.name}'s allowRedirectsTo`,
        urlSetting: `provider ${decl.name}'s spec`,
        ...(decl.allowRedirectsTo ? { allowOrigins: decl.allowRedirectsTo } : {}),
      },
    );
    if (!res.ok) return decl.spec; // let the loader report the status the way it does
    // Counted as it streams in, within the loader's own limit for documents.
    const read = await readBoundedText(res, DOCUMENT_LIMITS.maxBytes);
    if (!read.ok) throw documentTooLarge(decl);
    const text = read.text;
    // Tend's own files are private: .tend/ and .tend/cache/ 0700, the copy 0600.
    ensurePrivateDir(dirname(dirname(file)), true);
    ensurePrivateDir(dirname(file), true);
    // Written to a temporary file of its own and renamed into place (left alone when unchanged):
    // whoever reads the copy at the same moment — another request of `tend serve`, a second
    // `tend apply` started together — sees the old copy or a new one, never a half-written one.
    await writePrivateFileAtomic(file, text);
    return file;
  } catch (e) {
    // A refused redirect is the platform's answer, not an outage: no stale copy stands in for it.
    // Nor does a document too large to read.
    if (
      e instanceof TendError &&
      (e.code.startsWith('http.') || e.code === 'openapi.limit_exceeded')
    )
      throw e;
    if (await exists(file)) return file;
    throw new TendError(
      'provider.spec_unreachable',
      // fetch's own message repeats the URL, user-info included.
      redactor.text(`cannot fetch ${displayUrl(decl.spec)}: ${toTendError(e).message}`),
      {
        hint: 'is the platform up? Tend keeps a copy of a served document after the first successful load',
      },
    );
  }
}

function documentTooLarge(decl: OpenApiProviderDecl): TendError {
  return new TendError(
    'openapi.limit_exceeded',
    `provider ${decl.name}: the OpenAPI document ${withoutQuery(decl.spec)} is larger than ${formatBytes(DOCUMENT_LIMITS.maxBytes)}; Tend reads OpenAPI documents up to that size, so reading stopped and the connection was closed`,
    {
      phase: 'load',
      hint: 'point at a smaller document, or cut the document down to the paths you manage',
    },
  );
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** A URL without its user:password part and its query (which may carry a key), fit for a message. */
function withoutQuery(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}

/** A URL without its user:password part, fit for a message. */
function withoutUserInfo(url: string): string {
  const u = new URL(url);
  u.username = '';
  u.password = '';
  return u.toString();
}
