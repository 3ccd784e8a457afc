import type { SandboxClient, SandboxReply } from './client.js';
import type { AuditEntry } from './store.js';

// Scripted actors: small deterministic programs that change the sandbox the way the other writers of
// a real platform do (an autoscaler, a cost optimiser, a vulnerability scanner, a person in a web
// console), each saying who it is and why in the attribution headers. Demos and tests use them to
// make the attributed changes Tend has to notice, record and arbitrate. Like the rest of the sandbox
// they know nothing of Tend: actor kinds and motivation text are written here the way any client of
// a platform would write them (docs/sandbox.md, "Scripted actors").
//
// Each actor is a pure `plan…` function (the service as read, the options, the time → what it would
// send and why) and a function that reads the service, plans, sends the PATCH and finds the audit
// entry it produced. Nothing waits: time comes from the injected clock, and an actor acts once per
// call.

/** The scripted actors, by the name the CLI takes (`tend sandbox actor <name>`). */
export const SCRIPTED_ACTORS = ['autoscaler', 'cost-optimiser', 'scanner', 'console'] as const;
export type ScriptedActor = (typeof SCRIPTED_ACTORS)[number];

/** A service as the sandbox returns it (`id`, `name`, `image`, `replicas`, `tags`, …). */
export type ServiceObject = Readonly<Record<string, unknown>>;

/** What an actor would do to one service, decided from what it read: frozen data. */
export interface ActorPlan {
  readonly actor: ScriptedActor;
  /** The service's id. */
  readonly service: string;
  /** When the actor decided (ISO time, from its clock). */
  readonly at: string;
  /** The merge patch it sends; empty when there is nothing to do (and then nothing is sent). */
  readonly patch: Readonly<Record<string, unknown>>;
  /** The attribution headers it sends with the patch (none at all for an anonymous console user). */
  readonly headers: Readonly<Record<string, string>>;
  /** Why it acts, or why it does not, in one sentence. */
  readonly reason: string;
}

/** What one action of an actor did. */
export interface ActorResult {
  readonly plan: ActorPlan;
  /** False when the plan had nothing to do: nothing was sent. */
  readonly acted: boolean;
  /** The service as the actor read it. */
  readonly before: ServiceObject;
  /** The service as the PATCH answered it (the same as `before` when nothing was sent). */
  readonly after: ServiceObject;
  /** The audit entry the change produced; absent when nothing was sent or nothing changed. */
  readonly audit?: AuditEntry;
}

/** Options every actor takes. */
export interface ActorOptions {
  /** The name the actor goes by (X-Tend-Actor); each actor has a default but the console. */
  readonly actor?: string;
  /** The clock, in epoch milliseconds (default Date.now): the decision time and default references. */
  readonly now?: () => number;
  readonly signal?: AbortSignal;
}

/** The autoscaler: scales a service up to what its load needs (it never scales down). */
export interface AutoscalerOptions extends ActorOptions {
  /** The load signal now (e.g. requests per second); a number >= 0. */
  readonly load: number;
  /** The load one replica carries (default 100). */
  readonly perReplica?: number;
  /** The most replicas it asks for, 1 to 100 (default 10). */
  readonly max?: number;
  /** The motivation's reference (default `load <load> at <time>`). */
  readonly ref?: string;
  /** How long the reason holds, e.g. `15m`, `2h` (default 15m): a spike passes. */
  readonly ttl?: string;
}

/** The cost optimiser: lowers a service's replicas toward what the budget pays for. */
export interface CostOptimiserOptions extends ActorOptions {
  /** The replicas the budget pays for, 0 to 100. */
  readonly target: number;
  /** At most this many replicas fewer per action (default: straight to the target). */
  readonly step?: number;
  /** The motivation's reference (default the budget month, `YYYY-MM`, from the clock). */
  readonly ref?: string;
}

/** The scanner: moves a service to the image tag that fixes a CVE. */
export interface ScannerOptions extends ActorOptions {
  /** The patched tag (`1.25.4`, keeping the repository) or a whole image (`nginx:1.25.4`). */
  readonly image: string;
  /** The vulnerability fixed, e.g. `CVE-2030-1234` (the motivation's reference). */
  readonly cve: string;
  /** A rule-following scanner is a `controller` (the default); an AI remediation bot an `agent`. */
  readonly actorKind?: 'controller' | 'agent';
}

/** A person in the platform's web console: changes fields, says why only when asked. */
export interface ConsoleOptions extends ActorOptions {
  /** The fields to set (top-level fields; the sandbox's PATCH replaces each one given). */
  readonly patch: Readonly<Record<string, unknown>>;
  /** X-Tend-Intent; absent sends no such header (a console does not ask). */
  readonly intent?: string;
  /** X-Tend-Motivation; absent sends no such header. */
  readonly motivation?: string;
}

/** A bad option or a refusal by the sandbox; `option` names the option at fault, when one is. */
export class ActorError extends Error {
  constructor(
    message: string,
    readonly option?: string,
  ) {
    super(message);
    this.name = 'ActorError';
  }
}

// ---- plans (pure) ----

/**
 * The autoscaler's decision: `ceil(load / perReplica)` replicas, at least 1 and at most `max`, if
 * that is more than the service has. Actor `hpa`, kind controller, intent availability, motivation
 * `traffic:<ref>; ttl=<ttl>`.
 */
export function planAutoscaler(
  service: ServiceObject,
  options: AutoscalerOptions,
  at: Date,
): ActorPlan {
  const { load } = options;
  if (!Number.isFinite(load) || load < 0) fail('load', `load must be a number >= 0, got ${load}`);
  const perReplica = options.perReplica ?? 100;
  if (!Number.isFinite(perReplica) || perReplica <= 0) {
    fail('perReplica', `perReplica must be a number > 0, got ${perReplica}`);
  }
  const max = integerOption('max', options.max ?? 10, 1, MAX_REPLICAS);
  const ttl = options.ttl ?? '15m';
  if (!isDuration(ttl)) {
    fail('ttl', `ttl "${ttl}" is not a duration: write a number and a unit, e.g. 30s, 15m, 2h`);
  }
  const ref = reference('ref', options.ref ?? `load ${load} at ${at.toISOString()}`);
  const current = replicasOf(service);
  const needed = Math.max(1, Math.ceil(load / perReplica));
  const wanted = Math.min(needed, max);
  const why =
    `load ${load} needs ${needed} replica${needed === 1 ? '' : 's'} at ${perReplica} per replica` +
    (wanted < needed ? `, capped at ${max}` : '');
  const raise = wanted > current;
  return plan('autoscaler', service, at, raise ? { replicas: wanted } : {}, {
    reason: raise
      ? `${why}: raising replicas ${current} → ${wanted}`
      : `${why}: it has ${current}, enough (the autoscaler only scales up)`,
    headers: attribution(options.actor ?? 'hpa', 'controller', {
      intent: 'availability',
      motivation: `traffic:${ref}; ttl=${ttl}`,
    }),
  });
}

/**
 * The cost optimiser's decision: fewer replicas, down to `target` (by at most `step`), when the
 * service has more. Actor `cost-optimiser`, kind controller, intent cost, motivation `budget:<ref>`.
 */
export function planCostOptimiser(
  service: ServiceObject,
  options: CostOptimiserOptions,
  at: Date,
): ActorPlan {
  const target = integerOption('target', options.target, 0, MAX_REPLICAS);
  const step =
    options.step === undefined ? undefined : integerOption('step', options.step, 1, MAX_REPLICAS);
  const ref = reference('ref', options.ref ?? at.toISOString().slice(0, 7));
  const current = replicasOf(service);
  const next = step === undefined ? target : Math.max(target, current - step);
  const lower = current > target;
  return plan('cost-optimiser', service, at, lower ? { replicas: next } : {}, {
    reason: lower
      ? `the budget pays for ${target} replica${target === 1 ? '' : 's'}: lowering replicas ${current} → ${next}` +
        (next > target ? ` (at most ${step} fewer per step)` : '')
      : `it has ${current} replica${current === 1 ? '' : 's'}, within the budget of ${target}`,
    headers: attribution(options.actor ?? 'cost-optimiser', 'controller', {
      intent: 'cost',
      motivation: `budget:${ref}`,
    }),
  });
}

/**
 * The scanner's decision: the patched image, when the service runs another. Actor `scanner`, kind
 * controller (or agent), intent security, motivation `cve:<CVE id>; urgency=high`.
 */
export function planScanner(service: ServiceObject, options: ScannerOptions, at: Date): ActorPlan {
  if (options.cve.trim() === '') {
    fail('cve', 'cve must name the vulnerability the new image fixes, e.g. CVE-2030-1234');
  }
  const cve = reference('cve', options.cve);
  const kind = options.actorKind ?? 'controller';
  if (kind !== 'controller' && kind !== 'agent') {
    fail('actorKind', `a scanner is a controller or an agent, got "${String(kind)}"`);
  }
  const current = service['image'];
  if (typeof current !== 'string') {
    throw new ActorError(`service ${idOf(service)} has no image to patch`);
  }
  const patched = patchedImage(current, options.image);
  const bump = patched !== current;
  return plan('scanner', service, at, bump ? { image: patched } : {}, {
    reason: bump
      ? `${cve} is fixed in ${patched}: bumping image ${current} → ${patched}`
      : `it already runs ${patched}, which fixes ${cve}`,
    headers: attribution(options.actor ?? 'scanner', kind, {
      intent: 'security',
      motivation: `cve:${cve}; urgency=high`,
    }),
  });
}

/**
 * A console user's edit: the given fields, when any differs from what the service has. Kind human;
 * intent and motivation only when given, and no header at all when no actor is given either (an
 * anonymous click, which the feed records as "anonymous").
 */
export function planConsole(service: ServiceObject, options: ConsoleOptions, at: Date): ActorPlan {
  const fields = Object.keys(options.patch);
  if (fields.length === 0) fail('patch', 'say which field to set (and its value)');
  const changed = fields.filter((f) => canonical(service[f]) !== canonical(options.patch[f]));
  const who = options.actor ?? 'someone';
  const headers: Record<string, string> =
    options.actor === undefined ? {} : attribution(options.actor, 'human', {});
  if (options.intent !== undefined)
    headers['X-Tend-Intent'] = headerValue('intent', options.intent);
  if (options.motivation !== undefined) {
    headers['X-Tend-Motivation'] = headerValue('motivation', options.motivation);
  }
  return plan('console', service, at, changed.length > 0 ? { ...options.patch } : {}, {
    reason:
      changed.length > 0
        ? `${who} sets ${changed.map((f) => `${f} ${show(service[f])} → ${show(options.patch[f])}`).join(', ')} in the console`
        : `${fields.join(', ')} already ${fields.length === 1 ? 'has' : 'have'} that value: nothing to save`,
    headers,
  });
}

// ---- acting (one HTTP action each) ----

/** Reads the service, raises its replicas if the load needs more, and returns what happened. */
export function autoscaler(
  client: SandboxClient,
  service: string,
  options: AutoscalerOptions,
): Promise<ActorResult> {
  return act(client, service, options, (s, at) => planAutoscaler(s, options, at));
}

/** Reads the service, lowers its replicas toward the budget target, and returns what happened. */
export function costOptimiser(
  client: SandboxClient,
  service: string,
  options: CostOptimiserOptions,
): Promise<ActorResult> {
  return act(client, service, options, (s, at) => planCostOptimiser(s, options, at));
}

/** Reads the service, moves it to the patched image, and returns what happened. */
export function scanner(
  client: SandboxClient,
  service: string,
  options: ScannerOptions,
): Promise<ActorResult> {
  return act(client, service, options, (s, at) => planScanner(s, options, at));
}

/** Reads the service, saves the console user's edit, and returns what happened. */
export function consoleEdit(
  client: SandboxClient,
  service: string,
  options: ConsoleOptions,
): Promise<ActorResult> {
  return act(client, service, options, (s, at) => planConsole(s, options, at));
}

/**
 * Finds a service by id or, failing that, by name (a name two services share is refused: give the
 * id). Throws an ActorError saying what to do.
 */
export async function findService(
  client: SandboxClient,
  idOrName: string,
  signal?: AbortSignal,
): Promise<ServiceObject> {
  if (idOrName.trim() === '') fail('service', 'say which service: its id (svc-…) or its name');
  const options = signal ? { signal } : {};
  const byId = await client.get(`/services/${encodeURIComponent(idOrName)}`, options);
  if (byId.status === 200) return byId.body as ServiceObject;
  if (byId.status !== 404) refused(`GET /services/${idOrName}`, byId);
  const all = await client.get('/services', options);
  if (all.status !== 200) refused('GET /services', all);
  const named = (all.body as ServiceObject[]).filter((s) => s['name'] === idOrName);
  if (named.length === 1) return named[0]!;
  if (named.length === 0) {
    throw new ActorError(
      `no service has the id or name "${idOrName}" (a service created a moment ago may not be visible yet)`,
      'service',
    );
  }
  throw new ActorError(
    `${named.length} services are named "${idOrName}" (${named.map(idOf).join(', ')}): give the id`,
    'service',
  );
}

async function act(
  client: SandboxClient,
  target: string,
  options: ActorOptions,
  decide: (service: ServiceObject, at: Date) => ActorPlan,
): Promise<ActorResult> {
  const at = new Date((options.now ?? Date.now)());
  const signal = options.signal ? { signal: options.signal } : {};
  const before = await findService(client, target, options.signal);
  const decided = decide(before, at);
  if (Object.keys(decided.patch).length === 0) {
    return { plan: decided, acted: false, before, after: before };
  }
  const cursor = await auditEnd(client, options.signal);
  const path = `/services/${encodeURIComponent(decided.service)}`;
  const reply = await client.patch(path, decided.patch, { headers: decided.headers, ...signal });
  if (reply.status !== 200) refused(`PATCH ${path}`, reply);
  const actor = decided.headers['X-Tend-Actor'] ?? 'anonymous';
  const audit = await auditEntry(
    client,
    cursor,
    (e) => e.type === 'services' && e.id === decided.service && e.actor === actor,
    options.signal,
  );
  return {
    plan: decided,
    acted: true,
    before,
    after: reply.body as ServiceObject,
    ...(audit ? { audit } : {}),
  };
}

const PAGE = 1000;

/** The cursor after the newest audit entry (pages through the feed). */
async function auditEnd(client: SandboxClient, signal?: AbortSignal): Promise<string> {
  let cursor = '0';
  for (;;) {
    const page = await client.get(`/audit?after=${cursor}&limit=${PAGE}`, signal ? { signal } : {});
    if (page.status !== 200) refused('GET /audit', page);
    const body = page.body as { entries: AuditEntry[]; cursor: string };
    cursor = body.cursor;
    if (body.entries.length < PAGE) return cursor;
  }
}

/** The first audit entry after `cursor` that `matches`. */
async function auditEntry(
  client: SandboxClient,
  cursor: string,
  matches: (entry: AuditEntry) => boolean,
  signal?: AbortSignal,
): Promise<AuditEntry | undefined> {
  for (;;) {
    const page = await client.get(`/audit?after=${cursor}&limit=${PAGE}`, signal ? { signal } : {});
    if (page.status !== 200) refused('GET /audit', page);
    const body = page.body as { entries: AuditEntry[]; cursor: string };
    const found = body.entries.find(matches);
    if (found || body.entries.length < PAGE) return found;
    cursor = body.cursor;
  }
}

// ---- helpers ----

/** The sandbox's limit on replicas (spec.ts). */
const MAX_REPLICAS = 100;

function plan(
  actor: ScriptedActor,
  service: ServiceObject,
  at: Date,
  patch: Record<string, unknown>,
  rest: { reason: string; headers: Record<string, string> },
): ActorPlan {
  return Object.freeze({
    actor,
    service: idOf(service),
    at: at.toISOString(),
    patch: Object.freeze(patch),
    headers: Object.freeze(rest.headers),
    reason: rest.reason,
  });
}

function attribution(
  actor: string,
  kind: string,
  why: { intent?: string; motivation?: string },
): Record<string, string> {
  return {
    'X-Tend-Actor': headerValue('actor', actor),
    'X-Tend-Actor-Kind': kind,
    ...(why.intent === undefined ? {} : { 'X-Tend-Intent': headerValue('intent', why.intent) }),
    ...(why.motivation === undefined
      ? {}
      : { 'X-Tend-Motivation': headerValue('motivation', why.motivation) }),
  };
}

/** A value a header can carry as is: printable, no line breaks, Latin-1. */
function headerValue(option: string, value: string): string {
  if (value.trim() === '') fail(option, `${option} is empty: leave it out or give a value`);
  if (!/^[\x20-\x7e\xa0-\xff]*$/.test(value)) {
    fail(option, `${option} "${value}" has a character an HTTP header cannot carry`);
  }
  return value.trim();
}

/**
 * A motivation's reference: not empty, at most 200 characters, no `;` (which starts the motivation's
 * options: `kind[:ref][; urgency=…][; ttl=…]`).
 */
function reference(option: string, text: string): string {
  const ref = headerValue(option, text);
  if (ref.includes(';')) fail(option, `${option} "${text}" may not contain ";"`);
  if (ref.length > 200) fail(option, `${option} is longer than 200 characters`);
  return ref;
}

/** A duration as motivations write it: `90s`, `15m`, `2h`, `1h30m`, `7d`; not zero. */
function isDuration(text: string): boolean {
  return /^(?:\d{1,9}(?:ms|s|m|h|d|w))+$/.test(text) && /[1-9]/.test(text);
}

function integerOption(option: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    fail(option, `${option} must be an integer from ${min} to ${max}, got ${value}`);
  }
  return value;
}

function replicasOf(service: ServiceObject): number {
  const replicas = service['replicas'];
  if (typeof replicas !== 'number') {
    throw new ActorError(`service ${idOf(service)} reports no replica count`);
  }
  return replicas;
}

/** The image to run: a tag keeps the current repository; an image with `:`, `/` or `@` is whole. */
function patchedImage(current: string, wanted: string): string {
  const image = wanted.trim();
  if (/[:/@]/.test(image)) return image;
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(image)) {
    fail('image', `image "${wanted}" is neither a tag (1.25.4) nor an image (nginx:1.25.4)`);
  }
  const withoutDigest = current.split('@')[0]!;
  const colon = withoutDigest.lastIndexOf(':');
  const repository =
    colon > withoutDigest.lastIndexOf('/') ? withoutDigest.slice(0, colon) : withoutDigest;
  return `${repository}:${image}`;
}

function idOf(service: ServiceObject): string {
  const id = service['id'];
  if (typeof id !== 'string') throw new ActorError('the sandbox returned a service without an id');
  return id;
}

/** JSON with sorted keys: equal values, equal text. */
function canonical(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v: unknown) =>
      v !== null && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
        : v,
    ) ?? 'undefined'
  );
}

function show(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '(unset)');
}

function fail(option: string, message: string): never {
  throw new ActorError(message, option);
}

function refused(call: string, reply: SandboxReply): never {
  const body = reply.body as { code?: unknown; message?: unknown } | undefined;
  const detail =
    typeof body?.message === 'string'
      ? `${body.message}${typeof body.code === 'string' ? ` (${body.code})` : ''}`
      : 'no explanation';
  throw new ActorError(`${call} answered ${reply.status}: ${detail}`);
}
