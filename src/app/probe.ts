import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { ObservedObject, Redactor, WriteContext } from '../core/index.js';
import {
  createProbeBudget,
  displayUrl,
  minimumBudget,
  PROBE_DEFAULT_BUDGET,
  setKey,
  TendError,
  toTendError,
} from '../core/index.js';
import type {
  DerivedType,
  OpenApiProvider,
  ProbeAnswer,
  ProbeFact,
  ProbeSubject,
  SchemaLocation,
} from '../providers/index.js';
import {
  changedValue,
  compareSentRead,
  createOpenApiProvider,
  fieldOutcome,
  identityFromDuplicate,
  isProbeName,
  loadOpenApiDocument,
  markerFact,
  markerValue,
  normalisationOf,
  platformReason,
  probeName,
  probeOverlay,
  probeSpelling,
  probeSubject,
  quoteAnswer,
  readRawDocument,
} from '../providers/index.js';
import { ProbeJournal } from './probe-journal.js';

/** What `tend providers probe` is asked. */
export interface ProbeRequest {
  readonly spec: string;
  readonly overlay?: string;
  readonly endpoint: string;
  /** The auth header and its value (read from the environment by the caller); never printed. */
  readonly auth?: { readonly header: string; readonly value: string };
  /** Values of path parameters (`zone_id` → a scratch zone): the scope the probe works in. */
  readonly scope: Readonly<Record<string, string>>;
  /** The types to probe; all the probe can when empty. */
  readonly types: readonly string[];
  readonly budget?: number;
  /** The overlay file to write (a new file). */
  readonly out: string;
  /** The probe journal (default: `.tend-probe.sqlite` next to `out`). */
  readonly journal?: string;
  /** The person said yes to objects being created and deleted on the platform. */
  readonly yes: boolean;
  readonly userAgent?: string;
  readonly redactor?: Redactor;
  /** Told about each step of long work (stderr). */
  readonly progress?: (line: string) => void;
  readonly now?: () => Date;
  readonly fetch?: typeof fetch;
}

/** What one type came to. */
export interface ProbedType {
  readonly type: string;
  readonly status: 'probed' | 'skipped' | 'failed' | 'stopped';
  readonly reason?: string;
}

/** An object the probe made or found, by type, name and id. */
export interface ProbeObjectRef {
  readonly type: string;
  readonly name: string;
  readonly id?: string;
}

/** What a probe run learned and did. */
export interface ProbeReport {
  readonly endpoint: string;
  readonly run: string;
  readonly date: string;
  readonly budget: { readonly limit: number; readonly used: number };
  readonly out: string;
  readonly journal: string;
  readonly types: readonly ProbedType[];
  readonly facts: readonly ProbeFact[];
  /** Objects of earlier probe runs found and removed before this one started. */
  readonly removedBefore: readonly ProbeObjectRef[];
  /** Objects this run could not remove (the run failed). */
  readonly leftovers: readonly ProbeObjectRef[];
  /** Why probing stopped early (the budget), when it did. */
  readonly stopped?: string;
}

/** The probe's usage errors (exit 2): nothing was sent to the platform. */
export const PROBE_USAGE_ERRORS: ReadonlySet<string> = new Set([
  'probe.needs_yes',
  'probe.needs_scope',
  'probe.unknown_type',
  'probe.budget_too_small',
  'probe.file_exists',
  'probe.bad_scope',
]);

/** Thrown inside a step when the budget refuses a request: the probe stops and cleans up. */
class BudgetSpent extends Error {}

/** The state of one run, shared by its steps. */
interface Run {
  readonly id: string;
  readonly endpoint: string;
  readonly provider: OpenApiProvider;
  readonly journal: ProbeJournal;
  readonly budget: ReturnType<typeof createProbeBudget>;
  readonly scope: Readonly<Record<string, string>>;
  readonly facts: ProbeFact[];
  readonly progress: (line: string) => void;
  /** The last answer the platform gave (for evidence). */
  last(): ProbeAnswer | undefined;
  /** Objects held now: journal entry → the object. */
  readonly held: Map<number, { type: string; name: string; id?: string }>;
  readonly wctx: WriteContext;
  phase: 'probe' | 'cleanup';
}

/**
 * Learns what a document cannot say by asking the platform (DESIGN §9): per type, creates a probe
 * object and reads it back, tries a second one with the same name, writes a marker into each
 * candidate place, changes each field in place, and compares what was sent with what was read; then
 * deletes everything it made. Every object is journaled before its create is sent, leftovers of a
 * killed run are removed first, and no more than the budget of requests is sent. Writes the facts
 * as an OpenAPI Overlay with their evidence.
 */
export async function probeProvider(req: ProbeRequest): Promise<ProbeReport> {
  if (!req.yes) {
    throw new TendError(
      'probe.needs_yes',
      'tend providers probe creates and deletes objects on the platform; nothing was sent',
      {
        hint: 'point --endpoint at a platform (and --scope at a scratch parent) you may change, and pass --yes',
      },
    );
  }
  const out = resolve(req.out);
  if (existsSync(out)) {
    throw new TendError(
      'probe.file_exists',
      `${req.out} already exists; the probe does not overwrite it`,
      {
        hint: 'name a new file with --out',
      },
    );
  }
  const endpoint = displayUrl(req.endpoint);
  const limit = req.budget ?? PROBE_DEFAULT_BUDGET;
  const now = (req.now ?? (() => new Date()))();
  const progress = req.progress ?? (() => undefined);
  const budget = createProbeBudget(limit);
  let last: ProbeAnswer | undefined;
  let phase: 'probe' | 'cleanup' = 'probe';
  const counting = countingFetch(
    req.fetch ?? fetch,
    budget,
    () => phase,
    (a) => (last = a),
  );
  const document = await loadOpenApiDocument(req.spec, {
    ...(req.overlay !== undefined ? { overlay: req.overlay } : {}),
    ...(req.userAgent !== undefined ? { userAgent: req.userAgent } : {}),
  });
  const provider = createOpenApiProvider({
    name: 'probe',
    document,
    endpoint: req.endpoint,
    workspace: 'tend-probe',
    parameters: req.scope,
    ...(req.auth ? { auth: req.auth } : {}),
    concurrency: 1,
    maxAttempts: 1,
    circuitThreshold: 0,
    fetch: counting,
    ...(req.userAgent !== undefined ? { userAgent: req.userAgent } : {}),
    ...(req.redactor ? { redactor: req.redactor } : {}),
  });
  const { subjects, skipped } = selectSubjects(provider, document.document, req);
  const need = minimumBudget(subjects.length);
  if (limit < need) {
    throw new TendError(
      'probe.budget_too_small',
      `a budget of ${limit} requests is too small to probe ${subjects.length} type${subjects.length === 1 ? '' : 's'}: at least ${need} are needed (${minimumBudget(1)} per type); nothing was sent`,
      { hint: `pass --budget ${need} or more, or fewer --type` },
    );
  }
  const journalFile = resolve(req.journal ?? join(dirname(out), '.tend-probe.sqlite'));
  const journal = new ProbeJournal(journalFile);
  const run: Run = {
    id: randomBytes(4).toString('hex'),
    endpoint,
    provider,
    journal,
    budget,
    scope: req.scope,
    facts: [],
    progress,
    last: () => last,
    held: new Map(),
    wctx: { actor: { actor: 'tend-probe', actorKind: 'tend', intent: 'probe' } },
    get phase() {
      return phase;
    },
    set phase(p) {
      phase = p;
    },
  };
  progress(`probing ${endpoint} (run ${run.id}, budget ${limit} requests)`);
  const types: ProbedType[] = [...skipped];
  let done: Omit<Probed, 'types'> = { removedBefore: [], leftovers: [] };
  try {
    const probed = await probeAll(run, subjects, limit);
    for (const t of probed.types) types.push(t);
    done = probed;
  } finally {
    run.phase = 'cleanup';
    done = { ...done, leftovers: [...done.leftovers, ...(await removeHeld(run))] };
    journal.close();
  }
  const { removedBefore, leftovers, stopped } = done;
  const locations = new Map<string, SchemaLocation>(
    subjects.map((s) => [s.subject.type, s.subject.location]),
  );
  const overlayText = probeOverlay({
    title: typeof document.document['info'] === 'object' ? titleOf(document.document) : req.spec,
    date: now.toISOString().slice(0, 10),
    endpoint,
    raw: await rawDocument(req.spec, req.userAgent),
    locations,
    facts: run.facts,
  });
  // A secret the platform answered (registered by the provider) never reaches the file.
  writeFileSync(out, req.redactor ? req.redactor.text(overlayText) : overlayText, {
    flag: 'wx',
    mode: 0o644,
  });
  return {
    endpoint,
    run: run.id,
    date: now.toISOString().slice(0, 10),
    budget: { limit, used: budget.used },
    out,
    journal: journalFile,
    types,
    facts: run.facts,
    removedBefore,
    leftovers,
    ...(stopped !== undefined ? { stopped } : {}),
  };
}

/** What probing the types came to, before the last cleanup. */
interface Probed {
  readonly types: ProbedType[];
  readonly removedBefore: ProbeObjectRef[];
  /** Objects of earlier runs that could not be removed (still journaled). */
  readonly leftovers: ProbeObjectRef[];
  readonly stopped?: string;
}

/**
 * Removes what earlier runs left, then probes each type in turn; once the budget refuses a
 * request, the remaining types are not started.
 */
async function probeAll(
  run: Run,
  subjects: readonly { subject: ProbeSubject; t: DerivedType }[],
  limit: number,
): Promise<Probed> {
  run.phase = 'cleanup';
  const before = await removeLeftovers(run, subjects);
  run.phase = 'probe';
  const types: ProbedType[] = [];
  let stopped: string | undefined;
  for (const { subject, t } of subjects) {
    const unswept = before.failed.get(subject.type);
    if (stopped !== undefined || unswept !== undefined) {
      types.push({
        type: subject.type,
        status: stopped !== undefined ? 'stopped' : 'failed',
        reason: stopped ?? unswept!,
      });
      continue;
    }
    try {
      run.progress(`${subject.type}: probing`);
      await probeType(run, subject, t);
      types.push({ type: subject.type, status: 'probed' });
    } catch (e) {
      if (e instanceof BudgetSpent || run.budget.exhausted) {
        stopped = `the budget of ${limit} requests would have been exceeded; probing stopped and cleaned up`;
        types.push({ type: subject.type, status: 'stopped', reason: stopped });
      } else {
        types.push({ type: subject.type, status: 'failed', reason: toTendError(e).message });
      }
    }
  }
  return {
    types,
    removedBefore: before.removed,
    leftovers: before.stuck,
    ...(stopped !== undefined ? { stopped } : {}),
  };
}

/** A fetch that asks the budget before each request and keeps the last answer as evidence. */
function countingFetch(
  inner: typeof fetch,
  budget: ReturnType<typeof createProbeBudget>,
  phase: () => 'probe' | 'cleanup',
  answered: (a: ProbeAnswer) => void,
): typeof fetch {
  return async (input, init) => {
    if (!budget.take(phase())) throw new BudgetSpent('the probe budget is spent');
    const res = await inner(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    let message: string | undefined;
    if (res.status >= 300) {
      try {
        const text = await headOf(res.clone(), 4000);
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // a text answer is its own message
        }
        message = platformReason(body).message ?? platformReason(body).code;
      } catch {
        // no body to quote
      }
    }
    answered({
      request: `${method} ${url.pathname}`,
      status: res.status,
      ...(message !== undefined ? { message } : {}),
    });
    return res;
  };
}

/**
 * The first `max` bytes of an answer's body, as text: a hostile platform's endless error body is
 * not read past them (this branch of the body is cancelled; the client reads its own, bounded).
 */
async function headOf(res: Response, max: number): Promise<string> {
  const reader = (res.body as ReadableStream<Uint8Array> | null)?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < max) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  await reader.cancel().catch(() => undefined);
  return Buffer.concat(chunks).subarray(0, max).toString('utf8');
}

/**
 * The types to probe and those set aside with the reason. An unknown `--type` and a type whose
 * collection needs a path parameter nobody gave (`--scope`) are usage errors naming what to pass.
 */
function selectSubjects(
  provider: OpenApiProvider,
  document: Record<string, unknown>,
  req: ProbeRequest,
): { subjects: { subject: ProbeSubject; t: DerivedType }[]; skipped: ProbedType[] } {
  const byName = new Map(provider.types.map((t) => [t.info.name, t]));
  const unknown = req.types.filter((n) => !byName.has(n));
  if (unknown.length > 0) {
    throw new TendError(
      'probe.unknown_type',
      `no resource type ${unknown.join(', ')} in this document; its types: ${[...byName.keys()].join(', ')}`,
      { hint: 'see `tend providers inspect <document>` for the types and their names' },
    );
  }
  const chosen = req.types.length > 0 ? req.types.map((n) => byName.get(n)!) : provider.types;
  const subjects: { subject: ProbeSubject; t: DerivedType }[] = [];
  const skipped: ProbedType[] = [];
  const unscoped: string[] = [];
  for (const t of chosen) {
    const found = probeSubject(t, createSchemaOf(document, t));
    const subject = { ...found, missing: found.missing.filter((f) => req.scope[f] === undefined) };
    const reason =
      t.singleton !== undefined
        ? 'one object per owner: there is nothing to create'
        : t.operations.delete === undefined
          ? 'the API offers no DELETE, so the probe could not remove what it made'
          : subject.missing.length > 0
            ? `no value for the required ${subject.missing.join(', ')}: give the create schema an example (example: {...}) in an overlay, or a reference as --scope <field>=<id>`
            : undefined;
    if (reason !== undefined) {
      skipped.push({ type: t.info.name, status: 'skipped', reason });
      continue;
    }
    const missing = subject.scopeParams.filter(
      (p) =>
        req.scope[p.param] === undefined &&
        (p.field === undefined || req.scope[p.field] === undefined),
    );
    if (missing.length > 0) {
      unscoped.push(
        `${t.info.name} (${missing.map((p) => `--scope ${p.param}=<value>`).join(' ')})`,
      );
      continue;
    }
    subjects.push({ subject, t });
  }
  if (unscoped.length > 0) {
    throw new TendError(
      'probe.needs_scope',
      `these types live under a parent the probe must not choose: ${unscoped.join(', ')}; nothing was sent`,
      {
        hint: 'name a scratch parent the probe may create objects in with --scope <param>=<id>, or leave those types out with --type',
      },
    );
  }
  return { subjects, skipped };
}

/** The create body's schema of a type in the dereferenced document (for its `example`). */
function createSchemaOf(document: Record<string, unknown>, t: DerivedType): unknown {
  const paths = document['paths'] as Record<string, Record<string, unknown>> | undefined;
  if (t.embedded) {
    const get = paths?.[t.itemPath]?.['get'] as Record<string, unknown> | undefined;
    const ok = (get?.['responses'] as Record<string, Record<string, unknown>> | undefined)?.['200'];
    const content = ok?.['content'] as
      Record<string, { schema?: Record<string, unknown> }> | undefined;
    const schema = content ? Object.values(content)[0]?.schema : undefined;
    const field = (schema?.['properties'] as Record<string, Record<string, unknown>> | undefined)?.[
      t.embedded.field
    ];
    return field?.['items'];
  }
  const op = paths?.[t.operations.create.path]?.[t.operations.create.method.toLowerCase()] as
    Record<string, unknown> | undefined;
  const content = (op?.['requestBody'] as Record<string, unknown> | undefined)?.['content'] as
    Record<string, { schema?: unknown }> | undefined;
  return content ? Object.values(content)[0]?.schema : undefined;
}

/** Probes one type; the facts go to `run.facts`, the objects are deleted before it returns. */
async function probeType(run: Run, subject: ProbeSubject, t: DerivedType): Promise<void> {
  const name = probeName(
    run.id,
    subject.nameField !== undefined ? subject.sample[subject.nameField] : undefined,
  );
  const desired: Record<string, unknown> = { ...subject.sample };
  if (subject.nameField !== undefined) setKey(desired, subject.nameField, name);
  for (const p of subject.scopeParams) {
    if (p.field !== undefined) setKey(desired, p.field, run.scope[p.param] ?? run.scope[p.field]);
  }
  // A --scope value named like a field of the body is that field's value (a reference to a scratch
  // object the person made: `--scope network_id=net-1234`).
  for (const [k, v] of Object.entries(run.scope)) {
    if (Object.hasOwn((t.info.schema as Record<string, unknown>)['properties'] ?? {}, k))
      setKey(desired, k, v);
  }
  for (const m of subject.markerPlaces) setKey(desired, m.field, markerValue(m.kind, run.id));
  const { object, sent } = await createFirst(run, subject, t, name, desired);
  const read = await readBackCreated(run, subject, object);
  const listed = subject.scopeParams.every((p) => p.field === undefined)
    ? await checkListed(run, subject, t, read)
    : undefined;
  learnFromReadBack(run, subject, t, sent, read, listed);
  if (subject.nameField !== undefined && subject.embeddedKey === undefined) {
    await checkDuplicate(run, subject, t, name, sent, object);
  }
  // Changed from what the platform accepted (a PUT sends the whole object: the name as created).
  await changeFields(run, subject, t, sent, read);
}

/**
 * The probe's spelling of a body: a name in mixed case (without its final dot unless `keepDot`),
 * IPv6 addresses written out, and (with `lowerCodes`) short upper-case codes (`AAAA`) in lower case.
 */
function respelled(
  desired: Record<string, unknown>,
  nameField: string | undefined,
  opts: { readonly keepDot: boolean; readonly lowerCodes: boolean },
): Record<string, unknown> {
  const walk = (v: unknown, isName: boolean): unknown => {
    if (typeof v === 'string') {
      if (!isName && opts.lowerCodes && /^[A-Z][A-Z0-9]{0,9}$/.test(v)) return v.toLowerCase();
      return probeSpelling(v, isName, opts.keepDot) ?? v;
    }
    if (Array.isArray(v)) return v.map((x) => walk(x, false));
    if (typeof v === 'object' && v !== null) {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, false)]));
    }
    return v;
  };
  return Object.fromEntries(Object.entries(desired).map(([k, v]) => [k, walk(v, k === nameField)]));
}

/**
 * Creates the probe object, journaled first: in the probe's spelling (a name in mixed case without
 * its final dot), and when the platform refuses that, with the final dot, and last as the example
 * writes it. A name refused without its final dot and accepted with it is a fact too: Tend must
 * send the dot (`trailing-dot`).
 */
async function createFirst(
  run: Run,
  subject: ProbeSubject,
  t: DerivedType,
  name: string,
  desired: Record<string, unknown>,
): Promise<{ object: ObservedObject; sent: Record<string, unknown> }> {
  const attempts: Record<string, unknown>[] = [];
  for (const body of [
    respelled(desired, subject.nameField, { keepDot: false, lowerCodes: true }),
    respelled(desired, subject.nameField, { keepDot: true, lowerCodes: true }),
    respelled(desired, subject.nameField, { keepDot: true, lowerCodes: false }),
    desired,
  ]) {
    if (!attempts.some((a) => JSON.stringify(a) === JSON.stringify(body))) attempts.push(body);
  }
  let lastError: unknown;
  let refused: { body: Record<string, unknown>; answer: ProbeAnswer } | undefined;
  for (const body of attempts) {
    const seq = journaled(run, subject, name);
    try {
      const object = await unlessUnsent(run, seq, () =>
        call(run, () => run.provider.create(subject.type, body, run.wctx)),
      );
      run.journal.created(seq, object.id);
      run.held.set(seq, { type: subject.type, name, id: object.id });
      run.progress(`${subject.type}: created ${name} (${object.id})`);
      if (refused !== undefined) dotRefused(run, subject, t, refused, body);
      return { object, sent: body };
    } catch (e) {
      if (e instanceof BudgetSpent) throw e;
      lastError = e;
      const answer = run.last();
      // A refusal made nothing; an unknown outcome (a 5xx, no answer) stays journaled for the
      // cleanup to look up, and no other spelling is tried: the first may have been made.
      if (answer === undefined || answer.status < 400 || answer.status >= 500) break;
      run.journal.done(seq);
      run.held.delete(seq);
      refused = { body, answer };
      run.progress(`${subject.type}: refused (${quoteAnswer(answer)}); trying another spelling`);
    }
  }
  throw toTendError(lastError);
}

/** A name refused without its final dot and accepted with it: the platform wants the dot. */
function dotRefused(
  run: Run,
  subject: ProbeSubject,
  t: DerivedType,
  refused: { body: Record<string, unknown>; answer: ProbeAnswer },
  accepted: Record<string, unknown>,
): void {
  const field = subject.nameField;
  if (field === undefined) return;
  const without = refused.body[field];
  const withDot = accepted[field];
  if (typeof without !== 'string' || typeof withDot !== 'string' || `${without}.` !== withDot)
    return;
  run.facts.push({
    kind: 'normalize',
    type: subject.type,
    path: field,
    ops: ['trailing-dot'],
    evidence: `${t.operations.create.method} ${t.operations.create.path} with ${field} ${JSON.stringify(without)} → ${quoteAnswer(refused.answer)}; with ${JSON.stringify(withDot)} accepted, so the final dot must be sent`,
  });
}

/** Journals an object about to be created and holds budget for its removal. */
function journaled(run: Run, subject: ProbeSubject, name: string): number {
  const seq = run.journal.intend({
    run: run.id,
    endpoint: run.endpoint,
    type: subject.type,
    name,
    scope: run.scope,
  });
  run.held.set(seq, { type: subject.type, name });
  run.budget.hold(run.held.size);
  return seq;
}

/**
 * Runs a create of the journaled object `seq`; when it fails before any request was sent (the
 * budget refused it), nothing can have been made: the entry is struck off, not left for the
 * cleanup to look for as a create whose outcome is unknown.
 */
async function unlessUnsent<T>(run: Run, seq: number, f: () => Promise<T>): Promise<T> {
  const before = run.budget.used;
  try {
    return await f();
  } catch (e) {
    if (run.budget.used === before) {
      run.journal.done(seq);
      run.held.delete(seq);
      run.budget.hold(run.held.size);
    }
    throw e;
  }
}

/** Runs a provider call; a request the budget refused becomes `BudgetSpent`. */
async function call<T>(run: Run, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (run.phase === 'probe' && run.budget.exhausted) throw new BudgetSpent('budget');
    throw e;
  }
}

/**
 * The new object as read back: by the id the create gave, else (a platform that stored the name
 * in another spelling than the one sent, so that the id Tend composed from it names nothing) found
 * by name in the list; the journal follows the id it was found by.
 */
async function readBackCreated(
  run: Run,
  subject: ProbeSubject,
  object: ObservedObject,
): Promise<ObservedObject> {
  const direct = await call(run, () => run.provider.read(subject.type, object.id));
  if (direct !== undefined) return direct;
  const name = subject.nameField !== undefined ? object.fields[subject.nameField] : undefined;
  if (typeof name !== 'string') return object;
  const [id] = await call(run, () => idsByName(run, subject.type, name, run.id));
  if (id === undefined) return object;
  renamed(run, subject, object.id, id);
  return (await call(run, () => run.provider.read(subject.type, id))) ?? object;
}

/**
 * Read-after-write: is the new object in the list read right after its create (by its id, or by its
 * name in another spelling)? Returns the listed entry.
 */
async function checkListed(
  run: Run,
  subject: ProbeSubject,
  t: DerivedType,
  object: ObservedObject,
): Promise<ObservedObject | undefined> {
  // As answered: an entry completed from its item read would show what the list does not.
  const listed = await call(run, () => run.provider.listAnswered(subject.type));
  const field = subject.nameField;
  const name = field !== undefined ? flatName(object.fields[field]) : undefined;
  const entry =
    listed.find((o) => o.id === object.id) ??
    (field !== undefined && name !== undefined
      ? listed.find((o) => flatName(o.fields[field]) === name)
      : undefined);
  const found = entry !== undefined;
  run.facts.push({
    kind: 'consistent-reads',
    type: subject.type,
    listedAtOnce: found,
    evidence: `GET ${t.operations.list.path} right after the create ${found ? 'listed' : 'did not list'} the new object`,
  });
  return entry;
}

/** A name as compared when looking for it: lower-case, without a final dot. */
function flatName(v: unknown): string | undefined {
  return typeof v === 'string' ? v.toLowerCase().replace(/\.$/, '') : undefined;
}

/** Normalisations, write-only fields, defaults and marker places, from the read-back. */
function learnFromReadBack(
  run: Run,
  subject: ProbeSubject,
  t: DerivedType,
  sent: Record<string, unknown>,
  read: ObservedObject,
  listed: ObservedObject | undefined,
): void {
  const places = new Map(subject.markerPlaces.map((m) => [m.field, m]));
  const body = Object.fromEntries(
    Object.entries(sent).filter(([k]) => !t.parentFields.includes(k) && !places.has(k)),
  );
  const readAt = `GET ${t.operations.read.path}`;
  // The read may echo what was sent where the list shows what was stored (PowerDNS's TSIG keys
  // read back by the id the create answered): a change the list shows counts too.
  const fromList = (listed ? compareSentRead(body, listed.fields) : []).filter(
    (d) => d.kind === 'changed',
  );
  const diffs = compareSentRead(body, read.fields);
  for (const d of fromList) {
    if (!diffs.some((x) => x.path === d.path)) diffs.push(d);
  }
  for (const d of diffs) {
    if (d.kind === 'changed') {
      const ops = normalisationOf(d.sent, d.read);
      const at = fromList.includes(d) ? `GET ${t.operations.list.path}` : readAt;
      if (ops !== undefined && ops.length > 0) {
        run.facts.push({
          kind: 'normalize',
          type: subject.type,
          path: d.path,
          ops,
          evidence: `${d.path} sent as ${JSON.stringify(d.sent)}, ${at} answered ${JSON.stringify(d.read)} (${ops.join(', ')})`,
        });
      }
    } else if (d.kind === 'missing') {
      run.facts.push({
        kind: 'write-only',
        type: subject.type,
        field: d.path,
        evidence: `${d.path} sent on create, ${readAt} answered without it`,
      });
    } else {
      run.facts.push({
        kind: 'default',
        type: subject.type,
        path: d.path,
        value: d.read,
        evidence: `${d.path} left out, ${readAt} answered ${JSON.stringify(d.read)}`,
      });
    }
  }
  for (const m of subject.markerPlaces) {
    run.facts.push(
      markerFact({
        type: subject.type,
        field: m.field,
        kind: m.kind,
        run: run.id,
        wrote: sent[m.field],
        read: { at: readAt, value: read.fields[m.field] },
        ...(listed !== undefined
          ? { listed: { at: `GET ${t.operations.list.path}`, value: listed.fields[m.field] } }
          : {}),
      }),
    );
  }
}

/** Identity: a second create with the same name, refused or accepted (and then removed). */
async function checkDuplicate(
  run: Run,
  subject: ProbeSubject,
  t: DerivedType,
  name: string,
  desired: Record<string, unknown>,
  first: ObservedObject,
): Promise<void> {
  const field = subject.nameField!;
  const createdAt = `${t.operations.create.method} ${t.operations.create.path}`;
  const seq = journaled(run, subject, name);
  const tried = await unlessUnsent(run, seq, () =>
    attempt(run, () => run.provider.create(subject.type, desired, run.wctx)),
  );
  if ('refusal' in tried) {
    const answer = tried.refusal;
    const fact = identityFromDuplicate(subject.type, field, { ...answer, request: createdAt });
    // Refused as a duplicate, or any 4xx: nothing was made; else the cleanup looks it up by name.
    if (fact !== undefined || answer.status < 500) {
      run.journal.done(seq);
      run.held.delete(seq);
    }
    if (fact !== undefined) run.facts.push(fact);
    else
      run.progress(
        `${subject.type}: the second create was refused for another reason (${quoteAnswer(answer)}); identity not decided`,
      );
    return;
  }
  const copy = tried.value;
  // Answered with the object that exists (Podman's volumes)? Then the list must still show one:
  // the copy's journal entry is struck off, and only the first object is ever deleted.
  const listed =
    copy.id === first.id ? await call(run, () => idsByName(run, subject.type, name, run.id)) : [];
  const fact = identityFromDuplicate(
    subject.type,
    field,
    { request: createdAt, status: tried.status },
    { sameId: copy.id === first.id, listed: listed.length },
  );
  // The copy to remove: the other object, never the first (deleted once, by its own entry); none
  // when the copy answered is the first object.
  const other = copy.id === first.id ? listed.find((id) => id !== first.id) : copy.id;
  if ((fact?.kind === 'identity' && fact.unique) || other === undefined) {
    run.journal.done(seq);
    run.held.delete(seq);
    if (fact) run.facts.push(fact);
    return;
  }
  run.journal.created(seq, other);
  run.held.set(seq, { type: subject.type, name, id: other });
  if (fact) run.facts.push(fact);
  await removeOne(run, seq);
}

/**
 * Runs one provider call whose refusal is evidence: its value and the status it was answered with,
 * or the platform's answer refusing it. A failure without an answer (the platform unreachable)
 * and a request the budget refused are thrown.
 */
async function attempt<T>(
  run: Run,
  f: () => Promise<T>,
): Promise<{ value: T; status: number } | { refusal: ProbeAnswer }> {
  const before = run.budget.used;
  try {
    const value = await call(run, f);
    return { value, status: run.last()?.status ?? 200 };
  } catch (e) {
    const answer = run.last();
    if (e instanceof BudgetSpent || answer === undefined || run.budget.used === before) throw e;
    if (answer.status < 400) throw e;
    return { refusal: answer };
  }
}

/** Each changeable field changed in place: accepted and read back, refused, or ignored. */
async function changeFields(
  run: Run,
  subject: ProbeSubject,
  t: DerivedType,
  desired: Record<string, unknown>,
  start: ObservedObject,
): Promise<void> {
  let current = start;
  const base = { ...desired };
  const props = ((t.info.schema as Record<string, unknown>)['properties'] ?? {}) as Record<
    string,
    Record<string, unknown>
  >;
  const update = t.operations.update;
  for (const field of subject.changeable) {
    const before = current.fields[field];
    const next = changedValue(base[field] ?? before, props[field] ?? {});
    if (next === undefined || update === undefined) continue;
    const at = `${update.method} ${update.path} changing ${field} to ${JSON.stringify(next)}`;
    const changed = { ...base };
    setKey(changed, field, next);
    const tried = await attempt(run, () =>
      run.provider.update(subject.type, current.id, changed, current, run.wctx),
    );
    if ('refusal' in tried) {
      const outcome = fieldOutcome({ before, sent: next, after: before, refusal: tried.refusal });
      const why =
        outcome === 'invalid'
          ? ": refused for a reason that decides nothing (the probe's value, or a failure)"
          : '';
      run.facts.push({
        kind: 'field',
        type: subject.type,
        field,
        outcome,
        evidence: `${at} → ${quoteAnswer(tried.refusal)}${why}`,
      });
      continue;
    }
    const again =
      (await call(run, () => run.provider.read(subject.type, tried.value.id))) ?? tried.value;
    if (again.id !== current.id) renamed(run, subject, current.id, again.id);
    const after = again.fields[field];
    const outcome = fieldOutcome({ before, sent: next, after });
    run.facts.push({
      kind: 'field',
      type: subject.type,
      field,
      outcome,
      evidence:
        outcome === 'updatable'
          ? `${at} was accepted and read back`
          : outcome === 'ignored'
            ? `${at} answered ${tried.status} but the object still has ${JSON.stringify(after)}: ignored, so create-only`
            : `${at} read back ${JSON.stringify(after)}`,
    });
    if (outcome === 'updatable') setKey(base, field, next);
    current = again;
  }
}

/** The object changed its id (a rename that went through): the journal follows it. */
function renamed(run: Run, subject: ProbeSubject, from: string, to: string): void {
  for (const [seq, h] of run.held) {
    if (h.type === subject.type && h.id === from) {
      run.journal.created(seq, to);
      run.held.set(seq, { ...h, id: to });
    }
  }
}

/** Deletes one held object and strikes it off the journal; false when it is still there. */
async function removeOne(run: Run, seq: number): Promise<boolean> {
  const h = run.held.get(seq);
  if (h === undefined) return true;
  const ids = h.id !== undefined ? [h.id] : await idsByName(run, h.type, h.name, run.id);
  if (ids.length === 0) {
    // A create whose outcome is unknown, and a list that does not show it: it may exist where the
    // list cannot see it. It stays journaled and is reported; the next run looks again.
    run.progress(
      `${h.type}: ${h.name} was not found in the list after a create whose outcome is unknown; it may exist`,
    );
    return false;
  }
  for (const id of ids) {
    await run.provider.delete(h.type, id, run.wctx);
    if ((await run.provider.read(h.type, id)) !== undefined) return false;
  }
  run.journal.done(seq);
  run.held.delete(seq);
  run.budget.hold(run.held.size);
  run.progress(`${h.type}: removed ${h.name} (${ids.join(', ')})`);
  return true;
}

/**
 * The ids of the objects of a type named `name` (spelled as the platform may have stored it), or
 * carrying the id of run `runId` anywhere (its marker: a type without a name field).
 */
async function idsByName(run: Run, type: string, name: string, runId: string): Promise<string[]> {
  const want = flatName(name);
  const all = await run.provider.list(type);
  return all
    .filter(
      (o) =>
        Object.values(o.fields).some((v) => flatName(v) === want) ||
        JSON.stringify(o.fields).includes(runId),
    )
    .map((o) => o.id);
}

/** Removes every object this run still holds; what cannot be removed is returned. */
async function removeHeld(run: Run): Promise<ProbeObjectRef[]> {
  const left: ProbeObjectRef[] = [];
  for (const [seq, h] of [...run.held]) {
    try {
      if (!(await removeOne(run, seq))) left.push(h);
    } catch (e) {
      run.progress(`${h.type}: could not remove ${h.name}: ${toTendError(e).message}`);
      left.push(h);
    }
  }
  return left;
}

/**
 * Before probing: removes what earlier runs left behind, found by the journal (by id, else by
 * name in a list) and by the probe's name prefix in the list of each type that needs no scope.
 */
async function removeLeftovers(
  run: Run,
  subjects: readonly { subject: ProbeSubject; t: DerivedType }[],
): Promise<{
  removed: ProbeObjectRef[];
  failed: ReadonlyMap<string, string>;
  stuck: ProbeObjectRef[];
}> {
  const removed: ProbeObjectRef[] = [];
  const known = new Set(run.provider.types.map((t) => t.info.name));
  const stuck: ProbeObjectRef[] = [];
  for (const e of run.journal.open(run.endpoint)) {
    if (!known.has(e.type)) continue;
    try {
      const ids = e.id !== undefined ? [e.id] : await idsByName(run, e.type, e.name, e.run);
      for (const id of ids) await run.provider.delete(e.type, id, run.wctx);
      run.journal.done(e.seq);
      if (ids.length === 0) {
        // Looked for twice, by two runs: taken as never created.
        run.progress(
          `${e.type}: ${e.name} of probe run ${e.run} was not found again; taken as never created`,
        );
        continue;
      }
      removed.push({ type: e.type, name: e.name, ...(e.id !== undefined ? { id: e.id } : {}) });
      run.progress(`${e.type}: removed ${e.name} left by probe run ${e.run}`);
    } catch (e2) {
      // Still there, and still journaled: reported with this run's leftovers (exit 1).
      stuck.push({ type: e.type, name: e.name, ...(e.id !== undefined ? { id: e.id } : {}) });
      run.progress(
        `${e.type}: could not remove ${e.name} left by probe run ${e.run}: ${toTendError(e2).message}`,
      );
    }
  }
  const failed = new Map<string, string>();
  for (const { subject } of subjects) {
    const field = subject.nameField;
    if (field === undefined || subject.scopeParams.some((p) => p.field !== undefined)) continue;
    try {
      for (const o of await run.provider.list(subject.type)) {
        if (!isProbeName(o.fields[field])) continue;
        await run.provider.delete(subject.type, o.id, run.wctx);
        removed.push({ type: subject.type, name: String(o.fields[field]), id: o.id });
        run.progress(
          `${subject.type}: removed ${String(o.fields[field])} (${o.id}), a probe object of an earlier run`,
        );
      }
    } catch (e) {
      // A type whose leftovers cannot be looked for is not probed; the others are.
      failed.set(subject.type, `could not look for leftovers: ${toTendError(e).message}`);
    }
  }
  return { removed, failed, stuck };
}

function titleOf(document: Record<string, unknown>): string {
  const info = document['info'] as Record<string, unknown>;
  return typeof info['title'] === 'string' ? info['title'] : 'the document';
}

/**
 * The document as written, for the overlay's targets (which address it before `$ref`s are
 * resolved), parsed as the loader parses it (Docker Engine's document is read leniently);
 * undefined when it cannot be read again (then every fact is written as a note).
 */
async function rawDocument(spec: string, userAgent: string | undefined): Promise<unknown> {
  try {
    return await readRawDocument(spec, userAgent !== undefined ? { userAgent } : {});
  } catch {
    return undefined;
  }
}
