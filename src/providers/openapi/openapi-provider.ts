import type {
  ActorContext,
  ChangesPage,
  LifecycleEvaluation,
  Marker,
  ObservedChange,
  ObservedObject,
  Provider,
  ProviderDescription,
  WriteContext,
} from '../../core/index.js';
import {
  TendError,
  diffDeclared,
  isMarkerTag,
  markerTags,
  readMarker,
  toTendError,
  topLevelFields,
} from '../../core/index.js';
import type { DerivedType, UnmappedPath } from './derive-types.js';
import { deriveTypes } from './derive-types.js';
import type { HttpClient, HttpClientHealth } from './http-client.js';
import { createHttpClient } from './http-client.js';
import type { OpenApiDocument } from './load-document.js';
import { loadOpenApiDocument } from './load-document.js';
import { isObject } from './schema-view.js';
import type { Clock, Sleep } from './timing.js';

/** How to connect the generic provider to one API. */
export interface OpenApiProviderOptions {
  /** The provider's name in intent (`sb` in `sb.volumes/data`). */
  readonly name: string;
  readonly document: OpenApiDocument;
  /** Base URL of the API. */
  readonly endpoint: string;
  /** The Tend workspace this provider works for (the workspace of the markers it writes). */
  readonly workspace: string;
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
  /** Attempts per request, the first included (default 4). */
  readonly maxAttempts?: number;
  readonly fetch?: typeof fetch;
  readonly clock?: Clock;
  /** Unix milliseconds, for the times health reports (default Date.now). */
  readonly wallClock?: Clock;
  readonly sleep?: Sleep;
  readonly random?: () => number;
}

/** The generic provider, plus what it derived from the document (for `tend validate` and tests). */
export interface OpenApiProvider extends Provider {
  readonly workspace: string;
  readonly types: readonly DerivedType[];
  readonly unmapped: readonly UnmappedPath[];
  /** The HTTP client's circuit and adapted rate limit (always available for this provider). */
  health(): HttpClientHealth;
}

const REPLACE_HINT =
  'if this change needs a replacement, declare the field create-only (x-tend-immutable) in an overlay; Tend never guesses a replace';

/**
 * Manages any REST API from its OpenAPI document: resource types come from `deriveTypes`, calls go
 * through one HTTP client per provider (so the concurrency bound and rate limit cover every call).
 */
export function createOpenApiProvider(options: OpenApiProviderOptions): OpenApiProvider {
  const derived = deriveTypes(options.document.document);
  const byName = new Map(derived.types.map((t) => [t.info.name, t]));
  const timeoutMs = options.timeoutMs ?? 10_000;
  const http: HttpClient = createHttpClient({
    baseUrl: options.endpoint,
    timeoutMs,
    concurrency: options.concurrency ?? 8,
    rateLimit: options.rateLimit ?? 0,
    ...(options.auth ? { auth: options.auth } : {}),
    ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
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
  });
  const description: ProviderDescription = {
    types: derived.types.map((t) => t.info),
    auditFeed: derived.audit !== undefined,
    warnings: [
      ...options.document.warnings,
      ...derived.warnings,
      ...derived.unmapped.map((u) => `${u.path} is not managed: ${u.reason}`),
    ],
  };

  const typeOf = (type: string): DerivedType => {
    const t = byName.get(type);
    if (t) return t;
    const known = [...byName.keys()];
    throw new TendError(
      'provider.unknown_type',
      `provider ${options.name} has no resource type "${type}"; known types: ${known.length > 0 ? known.join(', ') : '(none)'}`,
      {
        hint: 'a type is a collection path with POST and GET plus an item path with GET and DELETE; see the provider warnings for paths that are not managed',
      },
    );
  };

  const read = async (
    t: DerivedType,
    id: string,
    signal?: AbortSignal,
  ): Promise<ObservedObject | undefined> => {
    try {
      const r = await http.request({
        method: 'GET',
        path: itemPath(t, id),
        ...(signal ? { signal } : {}),
      });
      if (!isObject(r.body)) {
        throw badResponse(`GET ${itemPath(t, id)}`, 'an object', r.body);
      }
      return observed(t, r.body, id);
    } catch (e) {
      if (e instanceof TendError && e.code === 'http.not_found') return undefined;
      throw e;
    }
  };

  const list = async (t: DerivedType, signal?: AbortSignal): Promise<ObservedObject[]> => {
    const r = await http.request({
      method: 'GET',
      path: t.collectionPath,
      ...(signal ? { signal } : {}),
    });
    const items = listItems(t, r.body);
    if (items === undefined) {
      throw badResponse(`GET ${t.collectionPath}`, 'a list of objects', r.body);
    }
    const out: ObservedObject[] = [];
    // An entry without an id cannot be addressed; it is not something Tend can manage.
    for (const item of items) {
      if (!isObject(item)) continue;
      const o = observed(t, item);
      if (o) out.push(o);
    }
    return out;
  };

  /**
   * What a write leads to when its answer is not the object: a read-back by id, or, for an
   * eventually consistent API that does not show the object yet, what was sent and answered.
   */
  const readBack = async (
    t: DerivedType,
    id: string,
    sent: Record<string, unknown>,
    answer: unknown,
    signal?: AbortSignal,
  ): Promise<ObservedObject> =>
    (await read(t, id, signal)) ??
    observed(t, { ...sent, ...(isObject(answer) ? answer : {}), [t.info.idField]: id }, id)!;

  const provider: OpenApiProvider = {
    name: options.name,
    workspace: options.workspace,
    types: derived.types,
    unmapped: derived.unmapped,

    describe: () => description,

    list: async (type, signal) => list(typeOf(type), signal),

    read: async (type, id, signal) => read(typeOf(type), id, signal),

    async create(type: string, desired: Record<string, unknown>, ctx: WriteContext) {
      const t = typeOf(type);
      const body = withMarker(t, desired, undefined, ctx.marker);
      const headers = actorHeaders(ctx.actor);
      if (ctx.idempotencyKey !== undefined && t.idempotencyHeader !== undefined) {
        headers[t.idempotencyHeader] = ctx.idempotencyKey;
      }
      const what = `POST ${t.collectionPath}`;
      const r = await http.request({
        method: 'POST',
        path: t.collectionPath,
        body,
        ...(t.operations.create.contentType
          ? { contentType: t.operations.create.contentType }
          : {}),
        headers,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
      const naturalId =
        t.info.naturalKey !== undefined && desired[t.info.naturalKey] !== undefined
          ? scalarId(desired[t.info.naturalKey])
          : undefined;
      const id = naturalId ?? locationId(r.headers.get('location'));
      const created =
        answeredObject(t, r.body) ??
        (id !== undefined ? await readBack(t, id, body, r.body, ctx.signal) : undefined) ??
        (ctx.marker ? await find(t, ctx.marker, ctx.signal) : undefined);
      if (created) return created;
      throw new TendError(
        'provider.create_unconfirmed',
        `${what} succeeded but answered with no object carrying ${t.info.idField}, and the object could not be found; the journal will look it up`,
        { outcomeUnknown: true, retryable: true },
      );
    },

    async update(
      type: string,
      id: string,
      desired: Record<string, unknown>,
      current: ObservedObject,
      ctx: WriteContext,
    ) {
      const t = typeOf(type);
      const op = t.operations.update;
      if (!op) {
        throw new TendError(
          'provider.no_update',
          `${type} objects cannot change in place: the API has no PUT or PATCH on ${t.itemPath}; the change needs a replacement`,
        );
      }
      const path = itemPath(t, id);
      const body =
        op.method === 'PATCH'
          ? withMarker(t, desired, current, ctx.marker)
          : withMarker(t, { ...writableOf(t, current.fields), ...desired }, current, ctx.marker);
      let r;
      try {
        r = await http.request({
          method: op.method,
          path,
          body,
          ...(op.contentType ? { contentType: op.contentType } : {}),
          headers: actorHeaders(ctx.actor),
          ...(ctx.signal ? { signal: ctx.signal } : {}),
        });
      } catch (e) {
        throw refusalWithHint(e);
      }
      return answeredObject(t, r.body) ?? readBack(t, id, body, r.body, ctx.signal);
    },

    async delete(type: string, id: string, ctx: WriteContext) {
      const t = typeOf(type);
      try {
        await http.request({
          method: 'DELETE',
          path: itemPath(t, id),
          headers: actorHeaders(ctx.actor),
          ...(ctx.signal ? { signal: ctx.signal } : {}),
        });
      } catch (e) {
        if (e instanceof TendError && e.code === 'http.not_found') return;
        throw e;
      }
    },

    async evaluate(type: string, current: ObservedObject, desired: Record<string, unknown>) {
      const t = typeOf(type);
      const compared: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(desired)) {
        if (!t.info.sensitive.includes(k)) compared[k] = v;
      }
      if (derived.lifecycle) {
        return evaluateOnPlatform(derived.lifecycle.path, t, current, compared);
      }
      return evaluateByAnnotations(t, current, compared);
    },

    find: async (type, marker, signal) => find(typeOf(type), marker, signal),

    health: () => http.health(),
  };

  async function find(
    t: DerivedType,
    marker: Marker,
    signal?: AbortSignal,
  ): Promise<ObservedObject | undefined> {
    if (t.info.markerField === undefined) return undefined;
    const all = await list(t, signal);
    return all.find(
      (o) =>
        o.marker !== undefined &&
        o.marker.workspace === marker.workspace &&
        o.marker.address === marker.address &&
        (marker.op === undefined || o.marker.op === marker.op),
    );
  }

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
    const auditPath = derived.audit.path;
    provider.changes = async (cursor, opts = {}): Promise<ChangesPage> => {
      const waitMs = opts.waitMs ?? 0;
      const r = await http.request({
        method: 'GET',
        path: auditPath,
        query: {
          after: cursor === '' ? undefined : cursor,
          wait: waitMs > 0 ? waitMs : undefined,
        },
        // A long poll may legitimately take waitMs before answering.
        timeoutMs: waitMs + timeoutMs,
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      const b = r.body;
      if (!isObject(b) || !Array.isArray(b['entries'])) {
        throw badResponse(`GET ${auditPath}`, 'an object with entries', b);
      }
      const changes: ObservedChange[] = [];
      for (const entry of b['entries']) {
        const change = toChange(entry);
        if (change) changes.push(change);
      }
      const next =
        typeof b['cursor'] === 'string' || typeof b['cursor'] === 'number'
          ? String(b['cursor'])
          : (changes.at(-1)?.cursor ?? cursor ?? '');
      return { changes, cursor: next };
    };
  }

  return provider;
}

/** Options for `loadOpenApiProvider`: the provider options with a document location instead. */
export type LoadOpenApiProviderOptions = Omit<OpenApiProviderOptions, 'document'> & {
  /** File path or http(s) URL of the OpenAPI document. */
  readonly spec: string;
};

/**
 * Loads the document at `spec` and creates the provider. The auth header is sent with the document
 * request only when the document lives on the same origin as the endpoint (never to a third party).
 */
export async function loadOpenApiProvider(
  options: LoadOpenApiProviderOptions,
): Promise<OpenApiProvider> {
  const { spec, ...rest } = options;
  const headers =
    options.auth && sameOrigin(spec, options.endpoint)
      ? { [options.auth.header]: options.auth.value }
      : undefined;
  const document = await loadOpenApiDocument(spec, {
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(headers ? { headers } : {}),
  });
  return createOpenApiProvider({ ...rest, document });
}

function evaluateByAnnotations(
  t: DerivedType,
  current: ObservedObject,
  desired: Record<string, unknown>,
): LifecycleEvaluation {
  const changed = topLevelFields(diffDeclared(desired, current.fields));
  if (changed.length === 0) return { action: 'none', fields: [], source: 'default' };
  const forced = changed.filter((f) => t.info.createOnly.includes(f));
  if (forced.length > 0) {
    const reason = t.operations.update
      ? `${forced.join(', ')} ${forced.length === 1 ? 'is' : 'are'} create-only (annotated in the OpenAPI document)`
      : `the API has no PUT or PATCH on ${t.itemPath}: nothing changes in place`;
    return { action: 'replace', fields: forced, source: 'annotation', reason };
  }
  return { action: 'update', fields: changed, source: 'default' };
}

/**
 * A body with Tend's marker in the marker field: the declared tags, the marker tags the object
 * already carries (a later marker never erases the op of the create), then the given marker.
 * Nothing is added when the type has no marker field, or when an update would not change the tags.
 */
function withMarker(
  t: DerivedType,
  body: Record<string, unknown>,
  current: ObservedObject | undefined,
  marker: Marker | undefined,
): Record<string, unknown> {
  const field = t.info.markerField;
  if (field === undefined) return body;
  const add = marker ? markerTags(marker) : {};
  const currentTags = current && isObject(current.fields[field]) ? current.fields[field] : {};
  const kept = Object.fromEntries(Object.entries(currentTags).filter(([k]) => isMarkerTag(k)));
  const declared = body[field];
  if (declared === undefined) {
    if (current === undefined) {
      return Object.keys(add).length > 0 ? { ...body, [field]: add } : body;
    }
    // Tags are not being changed: send them only to put a missing marker on the object.
    const missing = Object.entries(add).some(([k, v]) => currentTags[k] !== v);
    return missing ? { ...body, [field]: { ...currentTags, ...add } } : body;
  }
  if (!isObject(declared)) return body;
  return { ...body, [field]: { ...declared, ...kept, ...add } };
}

/** The fields of an observed object a client may send back (for a PUT). */
function writableOf(
  t: DerivedType,
  fields: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    const writable =
      t.writableFields.length > 0
        ? t.writableFields.includes(k)
        : !t.info.outputOnly.includes(k) && k !== t.info.idField;
    if (writable) out[k] = v;
  }
  return out;
}

/** The object a write answered with, when the answer is one (it carries the id field). */
function answeredObject(t: DerivedType, body: unknown): ObservedObject | undefined {
  return isObject(body) ? observed(t, body) : undefined;
}

function observed(
  t: DerivedType,
  fields: Record<string, unknown>,
  fallbackId?: string,
): ObservedObject | undefined {
  const id = scalarId(fields[t.info.idField]) ?? fallbackId;
  if (id === undefined) return undefined;
  const marker = t.info.markerField ? readMarker(fields[t.info.markerField]) : undefined;
  // Observed fields end up in the store and the ledger, where secrets never go: a sensitive field
  // is dropped even if the platform echoes it (or it comes from what was sent, in a read-back).
  const kept = t.info.sensitive.some((k) => k in fields)
    ? Object.fromEntries(Object.entries(fields).filter(([k]) => !t.info.sensitive.includes(k)))
    : fields;
  return { type: t.info.name, id, fields: kept, ...(marker ? { marker } : {}) };
}

function listItems(t: DerivedType, body: unknown): unknown[] | undefined {
  if (Array.isArray(body)) return body as unknown[];
  if (!isObject(body)) return undefined;
  if (t.listShape.kind === 'wrapped') {
    const inner = body[t.listShape.field];
    if (Array.isArray(inner)) return inner as unknown[];
  }
  // Tolerate a wrapper the document did not declare, when it is unambiguous.
  const arrays = Object.values(body).filter(Array.isArray);
  return arrays.length === 1 ? arrays[0] : undefined;
}

function itemPath(t: DerivedType, id: string): string {
  return t.itemPath.replace(`{${t.idParam}}`, encodeURIComponent(id));
}

function scalarId(v: unknown): string | undefined {
  return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
}

function locationId(location: string | null): string | undefined {
  if (!location) return undefined;
  const last = location.split('?')[0]!.split('/').filter(Boolean).at(-1);
  return last === undefined ? undefined : decodeURIComponent(last);
}

/**
 * The attribution headers of a mutation. Empty values are omitted; values a header cannot carry
 * (line breaks, characters beyond Latin-1) are percent-encoded rather than dropped.
 */
export function actorHeaders(actor: ActorContext): Record<string, string> {
  const out: Record<string, string> = {};
  const put = (name: string, value: string | undefined) => {
    if (value === undefined || value.trim() === '') return;
    out[name] = /^[\x20-\x7e\x80-\xff]*$/.test(value) ? value : encodeURIComponent(value);
  };
  put('X-Tend-Actor', actor.actor);
  put('X-Tend-Intent', actor.intent);
  put('X-Tend-Motivation', actor.motivation);
  return out;
}

function toChange(entry: unknown): ObservedChange | undefined {
  if (!isObject(entry)) return undefined;
  const action = entry['action'];
  const type = entry['type'];
  const id = scalarId(entry['id']);
  const cursor = scalarId(entry['cursor']) ?? scalarId(entry['seq']);
  // An entry that does not say what changed cannot be attributed to anything Tend observes.
  if (action !== 'create' && action !== 'update' && action !== 'delete') return undefined;
  if (typeof type !== 'string' || id === undefined || cursor === undefined) return undefined;
  const text = (v: unknown): string | undefined =>
    typeof v === 'string' && v !== '' ? v : undefined;
  const intent = text(entry['intent']);
  const motivation = text(entry['motivation']);
  const before = entry['before'];
  const after = entry['after'];
  return {
    cursor,
    time: text(entry['time']) ?? '',
    actor: text(entry['actor']) ?? 'unknown',
    ...(intent !== undefined ? { intent } : {}),
    ...(motivation !== undefined ? { motivation } : {}),
    action,
    type,
    id,
    ...(isObject(before) ? { before } : {}),
    ...(isObject(after) ? { after } : {}),
  };
}

function refusalWithHint(e: unknown): TendError {
  const err = toTendError(e);
  if (err.code !== 'platform.refused') return err;
  return new TendError('platform.refused', `${err.message}; ${REPLACE_HINT}`, {
    retryable: false,
    ...(err.status !== undefined ? { status: err.status } : {}),
    hint: REPLACE_HINT,
    cause: err,
  });
}

function badResponse(what: string, expected: string, body: unknown): TendError {
  const got = body === undefined ? 'an empty body' : Array.isArray(body) ? 'an array' : typeof body;
  return new TendError(
    'provider.bad_response',
    `${what} answered with ${got}, not ${expected}; the API does not behave as its OpenAPI document says`,
    { retryable: false },
  );
}

function sameOrigin(spec: string, endpoint: string): boolean {
  try {
    return new URL(spec).origin === new URL(endpoint).origin;
  } catch {
    return false;
  }
}
