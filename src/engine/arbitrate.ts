import type {
  Address,
  ArbitrationPolicy,
  Attribution,
  Change,
  ChangeSource,
  Decision,
  DecisionKind,
  FieldChange,
  Marker,
  FieldClaim,
  NewChange,
  ObservedChange,
  ObservedObject,
  ResourceDecl,
} from '../core/index.js';
import {
  canonicalJson,
  containsUnknown,
  DEFAULT_POLICY,
  decide,
  diffDeclared,
  getPath,
  hashValue,
  matchesDrift,
  motivationRank,
  parseMotivation,
  policyOf,
  readMarkerIn,
  setKey,
  toTendError,
} from '../core/index.js';
import type { Announcement } from '../core/index.js';
import type { Observation } from './observe.js';
import { changedFields, redact } from './operator.js';
import { diffOptionsFor, resolveDesired } from './planner.js';
import type { Workspace } from './workspace.js';
import { secretFields } from './workspace.js';

/** One audit-feed entry about an object Tend manages. */
export interface FeedEvent {
  readonly provider: string;
  readonly address: Address;
  /** `provider.resourceType`. */
  readonly type: string;
  readonly change: ObservedChange;
}

/** What the feeds brought since the stored cursors, and the cursors to store once it is recorded. */
export interface FeedBatch {
  readonly events: readonly FeedEvent[];
  /** Entries about objects Tend does not manage are counted, never recorded. */
  readonly ignored: number;
  readonly cursors: ReadonlyMap<string, string>;
}

/** Most feed pages read in one pass (per provider); the rest waits for the next pass. */
const MAX_FEED_PAGES = 50;

/**
 * Reads every provider's audit feed from its stored cursor, without waiting and without advancing the
 * cursor (see `commitFeeds`): the entries about managed objects by actors other than `ownActor`.
 */
export async function readFeeds(
  ws: Workspace,
  ownActor: string,
  signal?: AbortSignal,
): Promise<FeedBatch> {
  const events: FeedEvent[] = [];
  const cursors = new Map<string, string>();
  let ignored = 0;
  const twin = await ws.store.listTwin();
  const byObject = new Map(twin.map((t) => [`${t.type}\u0000${t.objectId}`, t.address] as const));
  for (const [name, provider] of ws.providers) {
    if (!provider.changes) continue;
    const stored = await ws.store.getCursor(name);
    let cursor = stored;
    for (let page = 0; page < MAX_FEED_PAGES; page++) {
      const got = await provider.changes(cursor, { waitMs: 0, ...(signal ? { signal } : {}) });
      for (const c of got.changes) {
        if (c.actor === ownActor) continue;
        const type = `${name}.${c.type}`;
        const marker = markerOfChange(ws, type, c.after ?? c.before);
        const address =
          byObject.get(`${type}\u0000${c.id}`) ??
          (marker?.workspace === ws.name ? marker.address : undefined);
        if (address === undefined) ignored++;
        else events.push({ provider: name, address, type, change: c });
      }
      if (got.cursor === cursor || got.changes.length === 0) break;
      cursor = got.cursor;
    }
    if (cursor !== undefined && cursor !== stored) cursors.set(name, cursor);
  }
  return { events, ignored, cursors };
}

/** The marker in the fields an audit entry shows, read where the type keeps it. */
function markerOfChange(
  ws: Workspace,
  type: string,
  fields: Readonly<Record<string, unknown>> | undefined,
): Marker | undefined {
  if (!fields) return undefined;
  let info;
  try {
    info = ws.typeOf(type).info;
  } catch {
    return undefined; // a type this workspace does not know: not Tend's
  }
  if (info.markerField === undefined) return undefined;
  return readMarkerIn(info.markerKind, getPath(fields, info.markerField));
}

/** Stores the cursors of a batch once its entries are in the ledger. */
export async function commitFeeds(ws: Workspace, batch: FeedBatch): Promise<void> {
  for (const [name, cursor] of batch.cursors) await ws.store.setCursor(name, cursor);
}

/**
 * The feeds' news since the stored cursors, or — when a feed cannot be read — nothing, with the
 * reason given to `warn`: changes are then attributed from what Tend last saw.
 */
export async function readFeedsOrNothing(
  ws: Workspace,
  ownActor: string,
  warn: (message: string) => void,
  signal?: AbortSignal,
): Promise<FeedBatch> {
  try {
    return await readFeeds(ws, ownActor, signal);
  } catch (e) {
    warn(`audit feed: ${toTendError(e).message}; changes are attributed from what Tend last saw`);
    return { events: [], ignored: 0, cursors: new Map() };
  }
}

/**
 * The drifted declared fields of one resource against the fields of its object, as the arbitrate
 * step sees them: references resolved against `known`, the provider's normalisation applied, secrets
 * and fields whose declared value is not known yet (a reference to something not created) left out.
 */
export function declaredDrift(
  ws: Workspace,
  decl: ResourceDecl,
  fields: Readonly<Record<string, unknown>>,
  known: (address: Address) => ObservedObject | undefined,
): { readonly desired: Record<string, unknown>; readonly drift: FieldChange[] } {
  const { provider, info } = ws.typeOf(decl.type);
  const desired = resolveDesired(decl, known);
  const hidden = secretFields(ws, decl.type, decl.address);
  const drift = diffDeclared(desired, fields, diffOptionsFor(provider, info)).filter(
    (c) => !containsUnknown(c.after) && !hidden.includes(c.path.split('.')[0]!),
  );
  return { desired, drift };
}

/** A field value the plan should want instead of the declared one. */
export interface FieldOverride {
  readonly path: string;
  readonly value: unknown;
}

/** What arbitration decided about one drifted field. */
export interface FieldDecision {
  readonly address: Address;
  readonly field: string;
  readonly observed: unknown;
  readonly declared: unknown;
  readonly by: Attribution & { readonly source: ChangeSource };
  readonly decision: Decision;
  /** False when an earlier pass decided it and this pass only keeps to it. */
  readonly fresh: boolean;
}

/** The result of arbitrating one pass. */
export interface ArbitrationOutcome {
  /** Per address, the values the plan wants instead of the declared ones. */
  readonly overrides: ReadonlyMap<Address, readonly FieldOverride[]>;
  /** Per address, the state a decision gives it when nothing else is wrong, and why. */
  readonly notes: ReadonlyMap<
    Address,
    { readonly state: 'drifted' | 'blocked'; readonly message: string }
  >;
  readonly decisions: readonly FieldDecision[];
  /** Ledger entries written (none in plan mode). */
  readonly recorded: readonly Change[];
}

/** The workspace's policy: its Arbitration documents, else the default. */
export function policyOfWorkspace(ws: Workspace): ArbitrationPolicy {
  const docs = ws.intent.arbitration ?? [];
  return docs.length > 0 ? policyOf(docs) : DEFAULT_POLICY;
}

/** The meta key marking an announcement as used to explain a change (`announcement-used:<id>`). */
const USED = (id: string) => `announcement-used:${id}`;

/** The attribution an audit entry carries (its motivation parsed; an unparsable one kept as a ref). */
export function attributionOf(c: ObservedChange): Attribution {
  const at = Number.isNaN(Date.parse(c.time)) ? new Date(0) : new Date(c.time);
  const parsed = c.motivation ? parseMotivation(c.motivation, at) : undefined;
  const motivation = parsed?.ok
    ? parsed.value
    : c.motivation
      ? { kind: 'unparsed', ref: c.motivation.slice(0, 200) }
      : undefined;
  return {
    actor: c.actor,
    ...(c.actorKind ? { actorKind: c.actorKind } : {}),
    ...(c.intent ? { intent: c.intent } : {}),
    ...(motivation ? { motivation } : {}),
  };
}

interface Explanation {
  readonly by: Attribution & { readonly source: ChangeSource };
  readonly at: string;
  /** The feed entry, when one explains it. */
  readonly event?: FeedEvent;
  readonly announcement?: Announcement;
}

/**
 * The arbitrate step of the loop (DESIGN.md §4): for every declared field whose observed value
 * differs from the declared one because someone changed it on the platform (an audit-feed entry, an
 * announcement, or a difference from what Tend last saw), find who changed it and why, ask the policy
 * (`decide`, pure) and keep to the decision: the claims of actors whose change was accepted, yielded
 * to, held or escalated are remembered (field ownership), and the plan wants their values instead of
 * the declared ones. With `record`, decisions and every change of a managed object go to the ledger,
 * deletions included; without it (a plan) nothing is written.
 */
export async function arbitrate(
  ws: Workspace,
  observation: Observation,
  options: {
    readonly now: Date;
    readonly record: boolean;
    readonly feed: FeedBatch;
    /** Arbitrate only these resources (a focused pass observed only them). */
    readonly only?: ReadonlySet<Address>;
  },
): Promise<ArbitrationOutcome> {
  const { now, record } = options;
  const nowIso = now.toISOString();
  const policy = policyOfWorkspace(ws);
  const overrides = new Map<Address, FieldOverride[]>();
  const notes = new Map<Address, { state: 'drifted' | 'blocked'; message: string }>();
  const decisions: FieldDecision[] = [];
  const recorded: Change[] = [];

  const claims = new Map<Address, Map<string, FieldClaim>>();
  const stored = options.only
    ? (await Promise.all([...options.only].map((a) => ws.store.claims(a)))).flat()
    : await ws.store.claims();
  for (const c of stored) {
    let m = claims.get(c.address);
    if (!m) claims.set(c.address, (m = new Map<string, FieldClaim>()));
    m.set(c.field, c);
  }
  const active: Announcement[] = [];
  for (const a of await ws.store.announcements({ activeAt: nowIso })) {
    if ((await ws.store.getMeta(USED(a.id))) === undefined) active.push(a);
  }
  const eventsOf = new Map<Address, FeedEvent[]>();
  for (const e of options.feed.events) {
    const l = eventsOf.get(e.address);
    if (l) l.push(e);
    else eventsOf.set(e.address, [e]);
  }
  const failedTypes = new Set(observation.failures.map((f) => f.type));
  const explained = new Set<FeedEvent>();
  const append = async (entry: NewChange): Promise<void> => {
    if (record) recorded.push(await ws.store.appendChange(entry));
  };

  for (const decl of ws.intent.resources) {
    const address = decl.address;
    if (options.only && !options.only.has(address)) continue;
    const obj = observation.objects.get(address);
    const twin = observation.twin.get(address);
    const events = eventsOf.get(address) ?? [];
    const hidden = secretFields(ws, decl.type, address);
    if (!obj) {
      const event = events.find(
        (e) => e.change.action === 'delete' && e.change.id === twin?.objectId,
      );
      // The platform's own feed saying the object was deleted outweighs waiting for a create that
      // settled moments ago to become visible: it was visible, and it is gone.
      if (event) observation.pendingVisibility.delete(address);
      const gone =
        twin !== undefined &&
        !observation.pendingVisibility.has(address) &&
        !failedTypes.has(decl.type) &&
        !observation.conflicts.has(address);
      if (!gone) continue;
      if (event) explained.add(event);
      const by = event
        ? { ...attributionOf(event.change), source: 'audit' as const }
        : { actor: 'unknown', source: 'unknown' as const };
      const who =
        by.actor === 'unknown' ? 'someone (no audit entry or announcement says who)' : by.actor;
      await append({
        time: event?.change.time || nowIso,
        ...by,
        address,
        type: decl.type,
        objectId: twin.objectId,
        action: 'delete',
        fields: [],
        before: redact(hidden, twin.fields, ws.secrets),
        decision: {
          decision: 'enforce',
          rule: 'declared',
          reason: `${address} was deleted by ${who}; the intent still declares it, so Tend creates it again`,
          restore: 'declared',
          fields: [],
        },
      });
      if (record) {
        await ws.store.deleteTwin(address);
        for (const field of claims.get(address)?.keys() ?? [])
          await ws.store.deleteClaim(address, field);
      }
      continue;
    }

    const { provider, info } = ws.typeOf(decl.type);
    const diffOptions = diffOptionsFor(provider, info);
    const norm = diffOptions.normalize ?? ((_p: string, v: unknown) => v);
    const same = (path: string, a: unknown, b: unknown): boolean =>
      a === b || canonicalJson(norm(path, a) ?? null) === canonicalJson(norm(path, b) ?? null);
    const { desired, drift } = declaredDrift(ws, decl, obj.fields, (a) =>
      observation.objects.get(a),
    );
    const drifted = new Set(drift.map((c) => c.path));
    const mine = claims.get(address) ?? new Map<string, FieldClaim>();
    // A claim on a field that is no longer drifted (the platform went back, or the intent now says
    // the same): the intent owns the field again.
    for (const [field] of mine) {
      if (drifted.has(field)) continue;
      mine.delete(field);
      if (record) await ws.store.deleteClaim(address, field);
    }

    /** Entries to write for this object, keyed by who explains them and what was decided. */
    const groups = new Map<
      string,
      { explanation: Explanation; decision?: Decision; fields: string[] }
    >();
    const group = (explanation: Explanation, decision: Decision | undefined, field: string) => {
      const key = `${explanation.event?.change.cursor ?? ''}\u0000${explanation.announcement?.id ?? ''}\u0000${explanation.by.actor}\u0000${decision?.decision ?? ''}\u0000${decision?.rule ?? ''}`;
      const g = groups.get(key);
      if (g) g.fields.push(field);
      else groups.set(key, { explanation, ...(decision ? { decision } : {}), fields: [field] });
    };

    let platformChanged = false;
    for (const change of drift) {
      const path = change.path;
      const observed = change.before;
      const declared = change.after;
      let claim = mine.get(path);
      if (
        claim &&
        claim.declaredHash !== undefined &&
        claim.declaredHash !== hashValue(declared ?? null)
      ) {
        // The intent now declares another value: its author took the field back.
        mine.delete(path);
        if (record) await ws.store.deleteClaim(address, path);
        claim = undefined;
      }
      const seen = twin === undefined ? undefined : getPath(twin.fields, path);
      const changedHere = twin !== undefined && !same(path, seen, observed);
      if (changedHere) platformChanged = true;
      const explanation = explain(
        policy,
        address,
        path,
        observed,
        events,
        active,
        // A field an actor holds that no longer has the actor's value was changed by someone, even
        // when Tend already saw that value (a pass whose correction failed).
        changedHere || (claim !== undefined && !same(path, claim.value, observed)),
        same,
        nowIso,
      );
      if (explanation?.event) explained.add(explanation.event);

      let decision: Decision;
      let fresh = true;
      const keepsClaim = claim !== undefined && same(path, claim.value, observed);
      if (keepsClaim && (!explanation || explanation.by.source === 'unknown')) {
        // Nothing new happened to a field an actor holds: keep to the decision made, unless a hold ended.
        const ended =
          claim!.decision === 'hold' && claim!.until !== undefined && claim!.until <= nowIso;
        if (!ended) {
          keep(address, claim!.decision, claim!.value, path);
          decisions.push({
            address,
            field: path,
            observed,
            declared,
            by: { ...claimAttribution(claim!), source: 'tend' },
            decision: { decision: claim!.decision, rule: claim!.rule, reason: claimReason(claim!) },
            fresh: false,
          });
          continue;
        }
        decision = decide(
          policy,
          factsOf(decl, path, declared, observed, claimAsChange(claim!), claim, nowIso),
        );
        fresh = true;
        group({ by: { ...claimAttribution(claim!), source: 'tend' }, at: nowIso }, decision, path);
      } else if (!explanation) {
        // No sign that anyone changed the platform (the intent changed, or the field never matched):
        // the plan makes it as declared, as always.
        continue;
      } else {
        decision = decide(
          policy,
          factsOf(
            decl,
            path,
            declared,
            observed,
            { ...explanation.by, at: explanation.at },
            claim,
            nowIso,
          ),
        );
        group(explanation, decision, path);
      }
      decisions.push({
        address,
        field: path,
        observed,
        declared,
        by: explanation?.by ?? { actor: 'unknown', source: 'unknown' },
        decision,
        fresh,
      });

      if (decision.decision === 'enforce') {
        if (decision.restore === 'claim' && claim) {
          setOverride(address, path, claim.value);
        } else if (claim) {
          mine.delete(path);
          if (record) await ws.store.deleteClaim(address, path);
        }
        continue;
      }
      keep(address, decision.decision, observed, path);
      if (record) {
        const by = explanation?.by ?? claimAttribution(claim!);
        const next: FieldClaim = {
          address,
          field: path,
          value: observed,
          actor: by.actor,
          ...(by.actorKind ? { actorKind: by.actorKind } : {}),
          ...(by.intent ? { intent: by.intent } : {}),
          ...(by.motivation ? { motivation: by.motivation } : {}),
          decision: decision.decision,
          rule: decision.rule,
          since: nowIso,
          ...(decision.until ? { until: decision.until } : {}),
          ...(decision.then ? { then: decision.then } : {}),
          declaredHash: hashValue(declared ?? null),
        };
        await ws.store.putClaim(next);
      }
    }

    if (observation.adoptions.get(address) === 'record' && info.markerField !== undefined) {
      // The ownership marker was removed or altered: always put back (the plan adopts the object
      // again by Tend's record), whoever did it and whatever the policy says about other fields.
      const field = info.markerField;
      // The feed entry that changed the marker (it may also have explained a drifted field).
      const event = [...events]
        .reverse()
        .find(
          (e) =>
            e.change.action === 'update' &&
            canonicalJson(getPath(e.change.before, field) ?? null) !==
              canonicalJson(getPath(e.change.after, field) ?? null),
        );
      if (event) explained.add(event);
      const by = event
        ? { ...attributionOf(event.change), source: 'audit' as const }
        : { actor: 'unknown', source: 'unknown' as const };
      platformChanged = true;
      group(
        { by, at: event?.change.time || nowIso, ...(event ? { event } : {}) },
        {
          decision: 'enforce',
          rule: 'marker',
          reason: `the ownership marker on ${address} was removed or altered by ${by.actor}: Tend always puts it back`,
          restore: 'declared',
        },
        field,
      );
    }

    // Entries that explain nothing drifted are history too: changes to fields the intent does not
    // declare, or to declared fields that are as declared again.
    for (const e of events) {
      if (explained.has(e)) continue;
      explained.add(e);
      group(
        { by: { ...attributionOf(e.change), source: 'audit' }, at: e.change.time, event: e },
        undefined,
        '',
      );
    }
    if (!provider.changes && twin !== undefined && events.length === 0) {
      // No feed: changes to declared fields seen since the last pass, actor unknown.
      for (const c of diffDeclared(pickDeclared(twin.fields, desired), obj.fields, diffOptions)) {
        if (drifted.has(c.path) || hidden.includes(c.path.split('.')[0]!)) continue;
        platformChanged = true;
        group({ by: { actor: 'unknown', source: 'unknown' }, at: nowIso }, undefined, c.path);
      }
    }

    for (const g of groups.values()) {
      const e = g.explanation.event?.change;
      const fields = g.fields.filter((f) => f !== '');
      const before = e?.before
        ? redact(hidden, e.before, ws.secrets)
        : twin
          ? pick(redact(hidden, twin.fields, ws.secrets), fields)
          : undefined;
      const after = e?.after
        ? redact(hidden, e.after, ws.secrets)
        : pick(redact(hidden, obj.fields, ws.secrets), fields);
      const action = e?.action ?? 'update';
      await append({
        time: g.explanation.at || nowIso,
        ...g.explanation.by,
        address,
        type: decl.type,
        objectId: obj.id,
        action,
        // Everything the platform's entry changed, and the decided paths (the decision names its own).
        fields: e ? withoutNested([...changedFields(before, after), ...fields]) : fields,
        ...(before ? { before } : {}),
        ...(after ? { after } : {}),
        ...(g.decision ? { decision: { ...g.decision, fields } } : {}),
      });
      if (record && g.explanation.announcement) {
        await ws.store.setMeta(USED(g.explanation.announcement.id), nowIso);
      }
    }
    if (record && twin && (platformChanged || groups.size > 0)) {
      await ws.store.putTwin({
        ...twin,
        objectId: obj.id,
        fields: redact(hidden, obj.fields, ws.secrets),
        observedAt: nowIso,
      });
    }
  }

  // Feed entries about managed objects no declared resource covers (removed resources, unmatched).
  for (const e of options.feed.events) {
    if (explained.has(e)) continue;
    const hidden = secretFields(ws, e.type, e.address);
    const before = e.change.before ? redact(hidden, e.change.before, ws.secrets) : undefined;
    const after = e.change.after ? redact(hidden, e.change.after, ws.secrets) : undefined;
    await append({
      time: e.change.time || nowIso,
      ...attributionOf(e.change),
      source: 'audit',
      address: e.address,
      type: e.type,
      objectId: e.change.id,
      action: e.change.action,
      fields: changedFields(before, after),
      ...(before ? { before } : {}),
      ...(after ? { after } : {}),
    });
  }
  return { overrides, notes, decisions, recorded };

  function setOverride(address: Address, path: string, value: unknown): void {
    const l = overrides.get(address);
    if (l) l.push({ path, value });
    else overrides.set(address, [{ path, value }]);
  }

  /** Keeps the observed value of a field an actor holds, and notes what it means for the status. */
  function keep(address: Address, kind: DecisionKind, value: unknown, path: string): void {
    setOverride(address, path, value);
    if (kind === 'hold' || kind === 'escalate' || kind === 'accept') {
      const prev = notes.get(address);
      const state = kind === 'escalate' || prev?.state === 'blocked' ? 'blocked' : 'drifted';
      const text =
        kind === 'escalate'
          ? `${path}: escalated for a human (tend explain ${address})`
          : kind === 'hold'
            ? `${path}: held (tend explain ${address})`
            : `${path}: accepted; take it into the intent with tend accept ${address} ${path} --write`;
      notes.set(address, { state, message: prev ? `${prev.message}; ${text}` : text });
    }
  }
}

/**
 * Who changed a drifted field to its observed value: an announcement that matches it (the announcer
 * is what the ledger records), else the strongest of the feed entries that set that value (by the
 * policy's precedence: two changes to the same value, the incident response is kept on record), else
 * — when the value differs from what Tend last saw — an unknown actor. Undefined when nothing shows
 * that the platform changed.
 */
function explain(
  policy: ArbitrationPolicy,
  address: Address,
  path: string,
  observed: unknown,
  events: readonly FeedEvent[],
  announcements: readonly Announcement[],
  changedHere: boolean,
  same: (path: string, a: unknown, b: unknown) => boolean,
  nowIso: string,
): Explanation | undefined {
  const now = new Date(nowIso);
  // The feed entries that set this field to its observed value: a create, or an update that changed
  // it (an entry holds the whole object, so an update of another field does not explain this one).
  const setting = events.filter((e) => {
    const c = e.change;
    if (c.action === 'delete' || c.after === undefined) return false;
    if (!same(path, getPath(c.after, path), observed)) return false;
    return c.action === 'create' || !same(path, getPath(c.before ?? {}, path), observed);
  });
  const announced = announcements.filter((a) =>
    matchesDrift(a, address, path, observed, now, (x, y) => same(path, x, y)),
  );
  // Several explanations of the same value: the strongest motivation (the policy's precedence) is
  // the one kept on record; on a tie an announcement (declared intent) before a feed entry, then the
  // latest.
  type Candidate =
    | { readonly kind: 'announcement'; readonly a: Announcement; readonly rank: number }
    | { readonly kind: 'event'; readonly e: FeedEvent; readonly rank: number };
  const candidates: Candidate[] = [
    ...announced.map((a) => ({
      kind: 'announcement' as const,
      a,
      rank: motivationRank(policy.precedence, a.motivation?.kind),
    })),
    ...setting.map((e) => ({
      kind: 'event' as const,
      e,
      rank: motivationRank(policy.precedence, attributionOf(e.change).motivation?.kind),
    })),
  ];
  const timeOf = (c: Candidate) => (c.kind === 'announcement' ? c.a.createdAt : c.e.change.time);
  candidates.sort(
    (x, y) =>
      x.rank - y.rank ||
      (x.kind === y.kind ? 0 : x.kind === 'announcement' ? -1 : 1) ||
      (timeOf(x) < timeOf(y) ? 1 : timeOf(x) > timeOf(y) ? -1 : 0),
  );
  const best = candidates[0];
  if (best?.kind === 'announcement') {
    const { actor, actorKind, intent, motivation } = best.a;
    // The platform's record of the same change: by the announcer, or by nobody in particular (a
    // console edit with no attribution). An attributed change by someone else stays its own entry.
    const recorded = setting.find(
      (e) =>
        e.change.actor === actor ||
        (!e.change.intent && !e.change.motivation && !e.change.actorKind),
    );
    return {
      by: {
        actor,
        ...(actorKind ? { actorKind } : {}),
        ...(intent ? { intent } : {}),
        ...(motivation ? { motivation } : {}),
        source: 'announcement',
      },
      at: recorded?.change.time || nowIso,
      announcement: best.a,
      ...(recorded ? { event: recorded } : {}),
    };
  }
  if (best?.kind === 'event') {
    return {
      by: { ...attributionOf(best.e.change), source: 'audit' },
      at: best.e.change.time || nowIso,
      event: best.e,
    };
  }
  if (changedHere) return { by: { actor: 'unknown', source: 'unknown' }, at: nowIso };
  return undefined;
}

/** Paths without repeats and without those inside another listed path (`tags.team` under `tags`). */
function withoutNested(paths: readonly string[]): string[] {
  const all = [...new Set(paths)];
  return all.filter((p) => !all.some((q) => p.startsWith(`${q}.`)));
}

/** The facts `decide` needs about one drifted field. */
function factsOf(
  decl: ResourceDecl,
  field: string,
  declared: unknown,
  observed: unknown,
  change: Attribution & { readonly source: ChangeSource; readonly at: string },
  claim: FieldClaim | undefined,
  now: string,
) {
  return {
    address: decl.address,
    type: decl.type,
    labels: decl.labels ?? {},
    field,
    declared,
    observed,
    change,
    ...(claim ? { claim } : {}),
    now,
  };
}

function claimAttribution(c: FieldClaim): Attribution {
  return {
    actor: c.actor,
    ...(c.actorKind ? { actorKind: c.actorKind } : {}),
    ...(c.intent ? { intent: c.intent } : {}),
    ...(c.motivation ? { motivation: c.motivation } : {}),
  };
}

/** A claim whose hold ended, presented to `decide` as the change to decide on again. */
function claimAsChange(c: FieldClaim): Attribution & { source: ChangeSource; at: string } {
  return { ...claimAttribution(c), source: 'tend', at: c.since };
}

function claimReason(c: FieldClaim): string {
  const until = c.until ? ` until ${c.until}` : '';
  return `${c.field} is ${c.decision === 'yield' ? 'yielded to' : c.decision === 'accept' ? 'accepted from' : c.decision === 'hold' ? 'held for' : 'escalated for'} ${c.actor}${until} (rule ${c.rule})`;
}

/** The declared paths of `desired` read from `fields` (what Tend last saw of them). */
function pickDeclared(
  fields: Readonly<Record<string, unknown>>,
  desired: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(desired)) {
    if (Object.hasOwn(fields, k)) setKey(out, k, fields[k]);
  }
  return out;
}

/** The values of some field paths, keyed by path. */
function pick(
  fields: Readonly<Record<string, unknown>>,
  paths: readonly string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of paths) setKey(out, p, getPath(fields, p) ?? null);
  return out;
}
