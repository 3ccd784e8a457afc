import { createHash, timingSafeEqual } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { SandboxError } from './errors.js';
import {
  FaultInjector,
  mergeFaults,
  NO_FAULTS,
  type FaultKind,
  type FaultSettings,
} from './faults.js';
import { buildOpenApiDocument } from './openapi.js';
import {
  RequestLogFile,
  requestLogEntry,
  type ArrivedRequest,
  type RequestLogEntry,
} from './request-log.js';
import { Resources, type Attribution, type OracleObject } from './resources.js';
import { TYPES } from './spec.js';
import { StateFileWriter, readStateFile } from './state-file.js';
import { SandboxState, type AuditEntry } from './store.js';
import { RequestValidator } from './validate.js';

/** How to start a sandbox. Everything is optional: the default is an empty, fault-free platform. */
export interface SandboxOptions {
  /** Faults in force at start and after a reset. */
  readonly faults?: Partial<FaultSettings>;
  /**
   * Whether the sandbox's reads see its writes at once, promised in its OpenAPI document
   * (`x-tend-consistent-reads: true`, so Tend does not wait for objects it created moments ago). A
   * sandbox that promises it refuses the eventual-consistency fault: a client keeps the document it
   * read, and a broken promise would make it create a second object for one that was merely late.
   * Default: true, unless `faults.eventualConsistencyMs` is above 0.
   */
  readonly consistentReads?: boolean;
  /**
   * When set, API routes and the `/_sandbox/*` admin routes require this value in the X-API-Key
   * header (the OpenAPI document stays public). Never logged.
   */
  readonly apiKey?: string;
  /** Where to keep state across restarts (loaded at start if it exists, saved after mutations). */
  readonly stateFile?: string;
  /** The clock, in epoch milliseconds (eventual consistency, the rate limiter, timestamps). */
  readonly now?: () => number;
  /** How injected latency waits (tests pass a recorder instead of really waiting). */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Called with every audit entry as it is recorded (entries never carry secrets). */
  readonly onAudit?: (entry: AuditEntry) => void;
  /**
   * A JSON-lines file to append one line to per API request, written as each is answered
   * (src/sandbox/request-log.ts: method, path, status, User-Agent, time; never a key or a body).
   */
  readonly requestLog?: string;
  /** Called with every API request's log entry as it is answered (the same entries as `requestLog`). */
  readonly onRequest?: (entry: RequestLogEntry) => void;
}

/** Counters of what the sandbox has done since start (or the last reset). */
export interface SandboxStats {
  /** API requests (everything but /_sandbox/*), answered or not. */
  requests: number;
  /** API responses by HTTP status. */
  byStatus: Record<string, number>;
  faults: Record<FaultKind, number>;
  creates: number;
  updates: number;
  deletes: number;
}

/** A sandbox platform, ready to serve: its Hono app and the handles tests and servers need. */
export interface Sandbox {
  /** The HTTP app; usable in-process with `app.request()`. */
  readonly app: Hono;
  readonly state: SandboxState;
  /** Merges partial fault settings (validated; throws a SandboxError naming a bad setting). */
  setFaults(partial: Partial<FaultSettings>): FaultSettings;
  getFaults(): FaultSettings;
  /** Forgets every object, idempotency key, audit entry and counter; faults go back to the options. */
  reset(): void;
  /** Saves pending state to the state file now. */
  flush(): void;
  stats(): SandboxStats;
  /** Answers every long poll now and flushes state; call when shutting down. */
  close(): void;
}

const API_KEY_HEADER = 'X-API-Key';

/** Builds a sandbox platform (no network: serve `app` with startSandbox, or call `app.request()`). */
export function createSandbox(options: SandboxOptions = {}): Sandbox {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const initialFaults = mergeFaults(NO_FAULTS, options.faults ?? {});
  const consistentReads = options.consistentReads ?? initialFaults.eventualConsistencyMs === 0;
  if (consistentReads && initialFaults.eventualConsistencyMs > 0) {
    throw new SandboxError(
      400,
      'invalid',
      'eventualConsistencyMs must be 0 on a sandbox that promises consistent reads (consistentReads: true)',
      'eventualConsistencyMs',
    );
  }
  const state = new SandboxState(options.stateFile ? readStateFile(options.stateFile) : undefined);
  const writer = options.stateFile
    ? new StateFileWriter(options.stateFile, () => state.snapshot())
    : undefined;
  if (writer) state.onChange = () => writer.schedule();
  const faults = new FaultInjector(initialFaults, now);
  let stats = emptyStats();
  const resources = new Resources({
    state,
    validator: sharedValidator(),
    now,
    consistencyMs: () => faults.settings.eventualConsistencyMs,
    onAudit: (entry) => {
      stats[COUNTER[entry.action]]++;
      options.onAudit?.(entry);
    },
  });
  const keyDigest = options.apiKey === undefined ? undefined : sha256(options.apiKey);
  const requestLog = options.requestLog ? new RequestLogFile(options.requestLog) : undefined;
  const logRequest = (request: ArrivedRequest, status: number | null, injected: boolean) => {
    if (!requestLog && !options.onRequest) return;
    const entry = requestLogEntry(request, status, now(), injected);
    requestLog?.write(entry);
    options.onRequest?.(entry);
  };
  const document = buildOpenApiDocument({ consistentReads });

  const app = new Hono();
  app.onError((error, c) => {
    const e =
      error instanceof SandboxError
        ? error
        : new SandboxError(500, 'internal', `unexpected error: ${error.message}`);
    return c.json(e.body(), e.status);
  });
  app.notFound((c) =>
    c.json({ code: 'not_found', message: `no route ${c.req.method} ${c.req.path}` }, 404),
  );

  // The oracle and admin routes: never counted, never faulted; behind the API key when there is one
  // (they reset the platform and read every object, secrets' digests included).
  app.use('/_sandbox/*', async (c, next) => {
    if (keyDigest && !matches(keyDigest, c.req.header(API_KEY_HEADER))) {
      return c.json(
        { code: 'unauthorized', message: `missing or wrong ${API_KEY_HEADER} header` },
        401,
      );
    }
    return next();
  });
  app.get('/_sandbox/objects', (c) =>
    c.json({ objects: resources.oracle() satisfies OracleObject[] }),
  );
  app.get('/_sandbox/faults', (c) => c.json(faults.settings));
  app.put('/_sandbox/faults', async (c) =>
    c.json(setFaults((await readJson(c)) as Partial<FaultSettings>)),
  );
  app.post('/_sandbox/reset', (c) => {
    reset();
    return c.body(null, 204);
  });
  app.get('/_sandbox/stats', (c) => c.json(statsNow()));
  app.get('/openapi.json', (c) => c.json(document));

  // Everything else is the API: counted, behind the key, faulted.
  app.use('*', async (c, next) => {
    const path = c.req.path;
    if (path.startsWith('/_sandbox/') || path === '/openapi.json') return next();
    stats.requests++;
    const arrived: ArrivedRequest = {
      method: c.req.method,
      path,
      userAgent: c.req.header('User-Agent'),
      at: now(),
    };
    const count = (response: Response, injected = false) => {
      const status = String(response.status);
      stats.byStatus[status] = (stats.byStatus[status] ?? 0) + 1;
      logRequest(arrived, response.status, injected);
      return response;
    };
    if (keyDigest && !matches(keyDigest, c.req.header(API_KEY_HEADER))) {
      return count(
        c.json({ code: 'unauthorized', message: `missing or wrong ${API_KEY_HEADER} header` }, 401),
      );
    }
    const mutation = c.req.method !== 'GET' && path !== '/lifecycle/evaluate';
    const decision = faults.decide(c.req.method, mutation);
    if (decision.delayMs > 0) await sleep(decision.delayMs);
    if (decision.kind === 'reject') {
      const headers: Record<string, string> =
        decision.retryAfterSeconds === undefined
          ? {}
          : { 'Retry-After': String(decision.retryAfterSeconds) };
      return count(c.json(decision.error.body(), decision.error.status, headers), true);
    }
    await next();
    if (decision.hangAfterCommit && c.res.status < 400) {
      faults.counts.timeoutAfterSuccess++;
      logRequest(arrived, null, true);
      // The mutation is committed; the client never hears so (a timeout after success). Over HTTP
      // the socket stays open until the client gives up or the server closes; the promise is
      // never settled and is collected with the request.
      return new Promise<never>(() => {});
    }
    count(c.res);
  });

  app.get('/audit', async (c) => {
    const afterText = c.req.query('after');
    const after = queryInteger('after', afterText, 0, Number.MAX_SAFE_INTEGER, 0);
    const limit = queryInteger('limit', c.req.query('limit'), 1, 1000, 500);
    const wait = queryInteger('wait', c.req.query('wait'), 0, 30_000, 0);
    let entries = state.auditAfter(after, limit);
    if (entries.length === 0 && wait > 0) {
      await state.waitForAudit(wait, c.req.raw.signal);
      entries = state.auditAfter(after, limit);
    }
    const last = entries[entries.length - 1];
    return c.json({ entries, cursor: last ? String(last.seq) : (afterText ?? '0') });
  });

  app.post('/lifecycle/evaluate', async (c) => c.json(resources.evaluate(await readJson(c))));

  for (const spec of TYPES) {
    const collection = `/${spec.name}`;
    const item = `/${spec.name}/:id`;
    app.get(collection, (c) => c.json(resources.list(spec)));
    app.post(collection, async (c) => {
      const key = c.req.header('Idempotency-Key');
      if (key !== undefined && (key.length === 0 || key.length > 255)) {
        throw new SandboxError(
          400,
          'invalid',
          'Idempotency-Key must be 1 to 255 characters',
          'Idempotency-Key',
        );
      }
      const result = resources.create(spec, await readJson(c), attribution(c), key);
      if (result.replayed) c.header('Idempotent-Replayed', 'true');
      return c.json(result.object, 201);
    });
    app.get(item, (c) => c.json(resources.get(spec, idOf(c))));
    app.patch(item, async (c) =>
      c.json(resources.update(spec, idOf(c), await readJson(c), attribution(c))),
    );
    app.put(item, async (c) =>
      c.json(resources.replace(spec, idOf(c), await readJson(c), attribution(c))),
    );
    app.delete(item, (c) => {
      resources.delete(spec, idOf(c), attribution(c));
      return c.body(null, 204);
    });
  }

  function setFaults(partial: Partial<FaultSettings>): FaultSettings {
    const merged = mergeFaults(faults.settings, partial);
    if (consistentReads && merged.eventualConsistencyMs > 0) {
      // Clients hold the document that promised read-your-writes; it cannot be taken back.
      throw new SandboxError(
        409,
        'conflict',
        'this sandbox promises consistent reads in its OpenAPI document (x-tend-consistent-reads: true), so eventualConsistencyMs must stay 0; start it with --eventual-consistency <ms> (0 to start without lag) to switch eventual consistency on later',
        'eventualConsistencyMs',
      );
    }
    faults.set(merged);
    return faults.settings;
  }

  function reset(): void {
    state.clear();
    faults.reset(initialFaults);
    stats = emptyStats();
  }

  function statsNow(): SandboxStats {
    return { ...stats, byStatus: { ...stats.byStatus }, faults: { ...faults.counts } };
  }

  return {
    app,
    state,
    setFaults,
    getFaults: () => faults.settings,
    reset,
    flush: () => writer?.flush(),
    stats: statsNow,
    close: () => {
      state.wakeAll();
      writer?.flush();
      requestLog?.close();
    },
  };
}

let validator: RequestValidator | undefined;

/** Compiling the schemas takes a while; they never change, so every sandbox shares one validator. */
function sharedValidator(): RequestValidator {
  return (validator ??= new RequestValidator());
}

const COUNTER = { create: 'creates', update: 'updates', delete: 'deletes' } as const;

function emptyStats(): SandboxStats {
  return {
    requests: 0,
    byStatus: {},
    faults: { ...NO_FAULT_COUNTS },
    creates: 0,
    updates: 0,
    deletes: 0,
  };
}

const NO_FAULT_COUNTS: Record<FaultKind, number> = {
  latency: 0,
  error: 0,
  rate429: 0,
  rateLimit: 0,
  timeoutAfterSuccess: 0,
};

/** The id (or name) in an item path; routes under `/T/:id` always have one. */
function idOf(c: Context): string {
  return c.req.param('id') ?? '';
}

function attribution(c: Context): Attribution {
  return {
    actor: c.req.header('X-Tend-Actor') || 'anonymous',
    actorKind: c.req.header('X-Tend-Actor-Kind') || null,
    intent: c.req.header('X-Tend-Intent') || null,
    motivation: c.req.header('X-Tend-Motivation') || null,
  };
}

async function readJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '')
    throw new SandboxError(400, 'invalid', 'the request body is empty: send a JSON object');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new SandboxError(400, 'invalid', 'the request body is not valid JSON');
  }
}

function queryInteger(
  name: string,
  text: string | undefined,
  min: number,
  max: number,
  fallback: number,
): number {
  if (text === undefined) return fallback;
  const value = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new SandboxError(
      400,
      'invalid',
      `${name} must be an integer from ${min} to ${max}`,
      name,
    );
  }
  return value;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Compares a presented key with the expected digest in constant time. */
function matches(expected: Buffer, presented: string | undefined): boolean {
  return presented !== undefined && timingSafeEqual(expected, sha256(presented));
}
