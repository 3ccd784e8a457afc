import type {
  ChangesPage,
  LifecycleEvaluation,
  ObservedObject,
  Provider,
  ProviderDescription,
  Redactor,
  WriteContext,
} from '../../core/index.js';
import {
  TendError,
  assertNoForbiddenKeys,
  diffDeclared,
  setKey,
  topLevelFields,
} from '../../core/index.js';
import type { DerivedType, UnmappedPath } from './derive-types.js';
import { deriveTypes } from './derive-types.js';
import type { HttpCallObserver, HttpClient, HttpClientHealth } from './transport/http-client.js';
import { createHttpClient } from './transport/http-client.js';
import type { OpenApiDocument } from './document/load-document.js';
import { loadOpenApiDocument } from './document/load-document.js';
import { badResponse } from './access/answers.js';
import { createObjectAccess } from './object-access.js';
import { applyProviderParameters } from './provider-parameters.js';
import { isObject } from './fields/schema-view.js';
import type { Clock, Sleep } from './transport/timing.js';
import { realClock, realSleep } from './transport/timing.js';
import type { AuditFeed } from './audit-feed.js';
import { pageOf } from './audit-feed.js';

/** How often a feed that cannot wait (no wait parameter) is read while Tend waits for news. */
const FEED_POLL_MS = 2000;

/** How to connect the generic provider to one API. */
export interface OpenApiProviderOptions {
  /** The provider's name in intent (`sb` in `sb.volumes/data`). */
  readonly name: string;
  readonly document: OpenApiDocument;
  /** Base URL of the API. */
  readonly endpoint: string;
  /** The Tend workspace this provider works for (the workspace of the markers it writes). */
  readonly workspace: string;
  /**
   * Values of path parameters that are neither fixed by the overlay nor the id of a managed parent
   * (the Provider document's `parameters:`); a type needing one without a value is not offered.
   */
  readonly parameters?: Readonly<Record<string, string>>;
  /** The resolved auth header; the engine resolves the secret. Never logged. */
  readonly auth?: { readonly header: string; readonly value: string };
  /** Most requests in flight at once (default 8). */
  readonly concurrency?: number;
  /** Requests per second at most (adapting below on 429s); 0 for no configured limit (default 0). */
  readonly rateLimit?: number;
  /** Consecutive "platform down" failures that open the circuit (default 5); 0 never opens it. */
  readonly circuitThreshold?: number;
  /** How long an open circuit fails fast before a probe, in ms (default 5000, doubling to 60000). */
  readonly circuitCooldownMs?: number;
  /** Per-request timeout in milliseconds (default 10000). */
  readonly timeoutMs?: number;
  /**
   * Origins besides the endpoint's that redirects may lead to (`*`: any); the auth header and
   * request bodies never go there. Default: redirects stay within the endpoint's origin.
   */
  readonly allowRedirectsTo?: readonly string[];
  /** Attempts per request, the first included (default 4). */
  readonly maxAttempts?: number;
  /**
   * The most bytes of one answer (each page of a list, an error's body) read from the platform
   * (default 16 MiB); past it the connection is closed and the request fails.
   */
  readonly maxResponseBytes?: number;
  /** The User-Agent of every request (core `userAgent`: Tend's version and this process). */
  readonly userAgent?: string;
  readonly fetch?: typeof fetch;
  readonly clock?: Clock;
  /** Unix milliseconds, for the times health reports (default Date.now). */
  readonly wallClock?: Clock;
  readonly sleep?: Sleep;
  readonly random?: () => number;
  /**
   * The process's redactor: secret fields the platform returns are registered with it, and what the
   * platform says in an error body passes through it before it becomes part of an error message.
   */
  readonly redactor?: Redactor;
  /** Told about every HTTP attempt to the platform (metrics); see `HttpClientOptions.observer`. */
  readonly observer?: HttpCallObserver;
}

/** The generic provider, plus what it derived from the document (for `tend validate` and tests). */
export interface OpenApiProvider extends Provider {
  readonly workspace: string;
  readonly types: readonly DerivedType[];
  readonly unmapped: readonly UnmappedPath[];
  /** The HTTP client's circuit and adapted rate limit (always available for this provider). */
  health(): HttpClientHealth;
  /**
   * A type's list as the platform answered it, its entries not completed from item reads (what
   * the probe checks a marker against: the list is where Tend finds its objects again).
   */
  listAnswered(type: string, signal?: AbortSignal): Promise<ObservedObject[]>;
}

/** The attribution headers of a mutation (re-exported: the provider's public surface). */
export { actorHeaders } from './transport/actor-headers.js';

/**
 * Manages any REST API from its OpenAPI document: resource types come from `deriveTypes`, calls go
 * through one HTTP client per provider (so the concurrency bound and rate limit cover every call).
 */
export function createOpenApiProvider(options: OpenApiProviderOptions): OpenApiProvider {
  // Nothing downstream copies a key that could reach a prototype: the document is refused whole.
  assertNoForbiddenKeys(
    options.document.document,
    `the OpenAPI document ${options.document.location}`,
  );
  const derivedAll = deriveTypes(options.document.document);
  const parameterized = applyProviderParameters(
    options.name,
    derivedAll.types,
    options.parameters ?? {},
  );
  const derived = { ...derivedAll, types: parameterized.types };
  const byName = new Map(derived.types.map((t) => [t.info.name, t]));
  const timeoutMs = options.timeoutMs ?? 10_000;
  const http = clientFor(options, timeoutMs);
  // Live: disagreements between the platform and its document found while calling it are added.
  const warnings: string[] = [
    ...options.document.warnings,
    ...derived.warnings,
    ...parameterized.warnings,
    ...derived.unmapped.map((u) => `${u.path} is not managed: ${u.reason}`),
  ];
  const description: ProviderDescription = {
    types: derived.types.map((t) => t.info),
    auditFeed: derived.audit !== undefined,
    consistentReads: derived.consistentReads,
    warnings,
  };
  const access = createObjectAccess({
    http,
    baseUrl: options.endpoint,
    types: byName,
    warn: (m) => warnings.push(m),
    ...(options.redactor ? { secrets: options.redactor } : {}),
    ...(options.wallClock ? { now: options.wallClock } : {}),
  });

  const typeOf = typeLookup(options.name, byName, parameterized.missing);

  const provider: OpenApiProvider = {
    name: options.name,
    workspace: options.workspace,
    types: derived.types,
    unmapped: derived.unmapped,

    describe: () => description,

    list: async (type, signal) => access.list(typeOf(type), signal),

    listAnswered: async (type, signal) => access.listAnswered(typeOf(type), signal),

    read: async (type, id, signal) => access.read(typeOf(type), id, signal),

    create: async (type: string, desired: Record<string, unknown>, ctx: WriteContext) =>
      access.create(typeOf(type), desired, ctx),

    update: async (
      type: string,
      id: string,
      desired: Record<string, unknown>,
      current: ObservedObject,
      ctx: WriteContext,
    ) => access.update(typeOf(type), id, desired, current, ctx),

    delete: async (type: string, id: string, ctx: WriteContext) =>
      access.remove(typeOf(type), id, ctx),

    normalize: (
      type: string,
      path: string,
      value: unknown,
      object?: Readonly<Record<string, unknown>>,
    ) => access.normalize(typeOf(type), path, value, object),

    async evaluate(type: string, current: ObservedObject, desired: Record<string, unknown>) {
      const t = typeOf(type);
      const compared: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(desired)) {
        if (!t.info.sensitive.includes(k)) setKey(compared, k, v);
      }
      if (derived.lifecycle) {
        return evaluateOnPlatform(derived.lifecycle.path, t, current, compared);
      }
      return evaluateByAnnotations(t, current, compared, (p, v) => access.normalize(t, p, v));
    },

    find: async (type, marker, signal) => access.find(typeOf(type), marker, signal),

    health: () => http.health(),
  };

  async function evaluateOnPlatform(
    path: string,
    t: DerivedType,
    current: ObservedObject,
    desired: Record<string, unknown>,
  ): Promise<LifecycleEvaluation> {
    const what = `POST ${path}`;
    const r = await http.request({
      method: 'POST',
      path,
      body: { type: t.info.name, current: current.fields, desired },
      safe: true,
    });
    const b = r.body;
    const action = isObject(b) ? b['action'] : undefined;
    if (action !== 'none' && action !== 'update' && action !== 'replace') {
      throw badResponse(what, 'an action of none, update or replace', b);
    }
    const body = b as Record<string, unknown>;
    const fields = Array.isArray(body['fields'])
      ? body['fields'].filter((f): f is string => typeof f === 'string')
      : [];
    const reason = typeof body['reason'] === 'string' ? body['reason'] : undefined;
    return { action, fields, source: 'platform', ...(reason !== undefined ? { reason } : {}) };
  }

  if (derived.audit) {
    provider.changes = feedChanges(derived.audit, http, {
      timeoutMs,
      sleep: options.sleep ?? realSleep,
      clock: options.clock ?? realClock,
    });
  }

  return provider;
}

/**
 * The provider's HTTP client: one per provider (so the concurrency bound and rate limit cover every
 * call), every answer checked for keys that could reach a prototype.
 */
function clientFor(options: OpenApiProviderOptions, timeoutMs: number): HttpClient {
  return checkedAnswers(
    createHttpClient({
      baseUrl: options.endpoint,
      provider: options.name,
      timeoutMs,
      concurrency: options.concurrency ?? 8,
      rateLimit: options.rateLimit ?? 0,
      ...(options.auth ? { auth: options.auth } : {}),
      ...(options.allowRedirectsTo
        ? { redirects: { allowOrigins: options.allowRedirectsTo } }
        : {}),
      ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
      ...(options.maxResponseBytes !== undefined
        ? { maxResponseBytes: options.maxResponseBytes }
        : {}),
      ...(options.userAgent !== undefined ? { userAgent: options.userAgent } : {}),
      ...(options.circuitThreshold !== undefined
        ? { circuitThreshold: options.circuitThreshold }
        : {}),
      ...(options.circuitCooldownMs !== undefined
        ? { circuitCooldownMs: options.circuitCooldownMs }
        : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.wallClock ? { wallClock: options.wallClock } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
      ...(options.random ? { random: options.random } : {}),
      ...(options.redactor ? { redactor: options.redactor } : {}),
      ...(options.observer ? { observer: options.observer } : {}),
    }),
  );
}

/**
 * The derived type of a name; a type left out for a provider parameter without a value, or one the
 * document does not have, is an error saying what to declare.
 */
function typeLookup(
  provider: string,
  byName: ReadonlyMap<string, DerivedType>,
  missing: ReadonlyMap<string, readonly string[]>,
): (type: string) => DerivedType {
  return (type) => {
    const t = byName.get(type);
    if (t) return t;
    const lacking = missing.get(type);
    if (lacking !== undefined) {
      throw new TendError(
        'provider.missing_parameter',
        `provider ${provider}: type "${type}" lives under ${lacking.map((p) => `{${p}}`).join(', ')}, which ${lacking.length === 1 ? 'has' : 'have'} no value`,
        {
          hint: `add parameters: {${lacking.map((p) => `${p}: <value>`).join(', ')}} to the Provider document ${provider}`,
        },
      );
    }
    const known = [...byName.keys()];
    throw new TendError(
      'provider.unknown_type',
      `provider ${provider} has no resource type "${type}"; known types: ${known.length > 0 ? known.join(', ') : '(none)'}`,
      {
        hint: 'a type is a collection path with POST and GET plus an item path with GET and DELETE; see the provider warnings for paths that are not managed',
      },
    );
  };
}

/**
 * `Provider.changes` over the platform's audit feed: one page from a cursor, long-polled when the
 * feed has a wait parameter, else polled every FEED_POLL_MS until something is new or the wait is
 * over.
 */
function feedChanges(
  feed: AuditFeed,
  http: HttpClient,
  timing: { readonly timeoutMs: number; readonly sleep: Sleep; readonly clock: Clock },
): NonNullable<Provider['changes']> {
  const { timeoutMs, sleep, clock } = timing;
  const readPage = async (
    cursor: string | undefined,
    waitMs: number,
    signal: AbortSignal | undefined,
  ): Promise<ChangesPage> => {
    const waiting = feed.waitParam !== undefined && waitMs > 0;
    const r = await http.request({
      method: 'GET',
      path: feed.path,
      query: {
        ...(feed.cursorParam !== undefined
          ? { [feed.cursorParam]: cursor === '' ? undefined : cursor }
          : {}),
        ...(waiting ? { [feed.waitParam]: waitMs } : {}),
      },
      // A long poll may legitimately take waitMs before answering.
      timeoutMs: (waiting ? waitMs : 0) + timeoutMs,
      ...(signal ? { signal } : {}),
    });
    const page = pageOf(feed, r.body, cursor);
    if (!page) {
      throw badResponse(
        `GET ${feed.path}`,
        `an object with the array of entries at ${feed.entries.join('.')}`,
        r.body,
      );
    }
    return page;
  };
  return async (cursor, opts = {}): Promise<ChangesPage> => {
    const waitMs = opts.waitMs ?? 0;
    const signal = opts.signal;
    if (feed.waitParam !== undefined || waitMs <= 0) return readPage(cursor, waitMs, signal);
    // A feed that cannot wait is polled until something is new or the wait is over.
    const until = clock() + waitMs;
    for (;;) {
      const page = await readPage(cursor, 0, signal);
      const left = until - clock();
      if (page.changes.length > 0 || left <= 0) return page;
      cursor = page.cursor;
      await sleep(Math.min(FEED_POLL_MS, left), signal);
    }
  };
}

/** Options for `loadOpenApiProvider`: the provider options with a document location instead. */
export type LoadOpenApiProviderOptions = Omit<OpenApiProviderOptions, 'document'> & {
  /** File path or http(s) URL of the OpenAPI document. */
  readonly spec: string;
  /** File path or http(s) URL of an OpenAPI Overlay 1.0 document applied to it. */
  readonly overlay?: string;
};

/**
 * Loads the document at `spec` and creates the provider. The auth header is sent with the document
 * request only when the document lives on the same origin as the endpoint (never to a third party).
 */
export async function loadOpenApiProvider(
  options: LoadOpenApiProviderOptions,
): Promise<OpenApiProvider> {
  const { spec, overlay, ...rest } = options;
  const headers =
    options.auth && sameOrigin(spec, options.endpoint)
      ? { [options.auth.header]: options.auth.value }
      : undefined;
  const document = await loadOpenApiDocument(spec, {
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(headers ? { headers } : {}),
    ...(options.userAgent !== undefined ? { userAgent: options.userAgent } : {}),
    ...(overlay !== undefined ? { overlay } : {}),
    ...(options.allowRedirectsTo ? { allowRedirectsTo: options.allowRedirectsTo } : {}),
  });
  return createOpenApiProvider({ ...rest, document });
}

function evaluateByAnnotations(
  t: DerivedType,
  current: ObservedObject,
  desired: Record<string, unknown>,
  normalize: (path: string, value: unknown) => unknown,
): LifecycleEvaluation {
  const changed = topLevelFields(diffDeclared(desired, current.fields, { normalize }));
  if (changed.length === 0) return { action: 'none', fields: [], source: 'default' };
  const forced = changed.filter((f) => t.info.createOnly.includes(f));
  if (forced.length > 0) {
    const notTaken = forced.filter(
      (f) => t.updateFields !== undefined && !t.updateFields.includes(f),
    );
    const op = t.operations.update;
    const reason = !op
      ? `the API has no PUT or PATCH on ${(t.operations.delete ?? t.operations.read).path}: nothing changes in place`
      : notTaken.length > 0
        ? `${notTaken.join(', ')} ${notTaken.length === 1 ? 'is' : 'are'} not among the fields ${op.method} ${op.path} takes: ${notTaken.length === 1 ? 'it cannot' : 'they cannot'} change in place`
        : `${forced.join(', ')} ${forced.length === 1 ? 'is' : 'are'} create-only (annotated in the OpenAPI document)`;
    return { action: 'replace', fields: forced, source: 'annotation', reason };
  }
  return { action: 'update', fields: changed, source: 'default' };
}

/**
 * The client with every answer checked before anything reads it: a body holding `__proto__`,
 * `constructor` or `prototype` as a key anywhere is refused (`input.forbidden_key`, not retried).
 */
function checkedAnswers(http: HttpClient): HttpClient {
  return {
    async request(req) {
      const r = await http.request(req);
      assertNoForbiddenKeys(r.body, `the answer to ${req.method} ${req.path}`);
      return r;
    },
    health: () => http.health(),
  };
}

function sameOrigin(spec: string, endpoint: string): boolean {
  try {
    return new URL(spec).origin === new URL(endpoint).origin;
  } catch {
    return false;
  }
}
