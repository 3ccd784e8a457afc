import type {
  Address,
  Announcement,
  ArbitrationPolicy,
  Attribution,
  Change,
  ChangeSource,
  Decision,
  DecisionKind,
  FieldChange,
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
  defineKey,
  denies,
  keyPathSegments,
  policyMatches,
  decide,
  diffDeclared,
  getPath,
  hashValue,
  matchesDrift,
  motivationRank,
  parseMotivation,
  policyOf,
  setKey,
} from '../core/index.js';
import { evaluatePolicies } from '../policy/index.js';
import type { ArbitrationMemory, FeedBatch, FeedEvent } from './arbitration-inputs.js';
import type { Observation } from './observe.js';
import { changedFields, redact } from './operator.js';
import { diffOptionsFor, resolveDesired } from './planner.js';
import type { Workspace } from './workspace.js';
import { secretFields } from './workspace.js';

export type { FeedBatch, FeedEvent } from './arbitration-inputs.js';

/** What Tend remembers of an object (the twin entry), as observe hands it over. */
type Remembered = NonNullable<ReturnType<Observation['twin']['get']>>;

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

/**
 * One store write recording what arbitration decided, in the order they are made (the recorder's
 * `recordDecisions`): a ledger entry; an object deleted behind Tend's back (its twin entry and the
 * claims on it go; its status stays until the pass writes the next); a claim stored or released; an
 * announcement marked as used; the twin entry of an object that changed, refreshed.
 */
export type ArbitrationWrite =
  | { readonly kind: 'ledger'; readonly entry: NewChange }
  | { readonly kind: 'gone'; readonly address: Address; readonly claims: readonly string[] }
  | { readonly kind: 'claim'; readonly claim: FieldClaim }
  | { readonly kind: 'release'; readonly address: Address; readonly field: string }
  | { readonly kind: 'announcement-used'; readonly id: string; readonly at: string }
  | { readonly kind: 'twin'; readonly entry: Remembered };

/** The result of arbitrating one pass: frozen data, nothing written. */
export interface ArbitrationOutcome {
  /** Per address, the values the plan wants instead of the declared ones. */
  readonly overrides: ReadonlyMap<Address, readonly FieldOverride[]>;
  /** Per address, the state a decision gives it when nothing else is wrong, and why. */
  readonly notes: ReadonlyMap<
    Address,
    { readonly state: 'drifted' | 'blocked'; readonly message: string }
  >;
  readonly decisions: readonly FieldDecision[];
  /**
   * Addresses observe found waiting to become visible whose deletion the audit feed reports: they
   * are not waited for (`observationAfter`).
   */
  readonly deletedWhileWaiting: ReadonlySet<Address>;
  /** The writes that record the decisions (made by the recorder in apply mode; a plan makes none). */
  readonly writes: readonly ArbitrationWrite[];
  /** Ledger entries written (none until the recorder has recorded `writes`; none in plan mode). */
  readonly recorded: readonly Change[];
}

/** The workspace's policy: its Arbitration documents, else the default. */
export function policyOfWorkspace(ws: Workspace): ArbitrationPolicy {
  const docs = ws.intent.arbitration ?? [];
  return docs.length > 0 ? policyOf(docs) : DEFAULT_POLICY;
}

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
/** The state of one arbitration while it runs: what it was handed, and what it decided so far. */
interface Arbitration {
  readonly ws: Workspace;
  readonly observation: Observation;
  readonly policy: ArbitrationPolicy;
  readonly nowIso: string;
  /** Per address and field, the claims held (a copy: released ones are taken out of it). */
  readonly claims: Map<Address, Map<string, FieldClaim>>;
  readonly announcements: readonly Announcement[];
  readonly eventsOf: ReadonlyMap<Address, readonly FeedEvent[]>;
  readonly failedTypes: ReadonlySet<string>;
  /** Feed entries an entry of the ledger already covers. */
  readonly explained: Set<FeedEvent>;
  readonly overrides: Map<Address, FieldOverride[]>;
  readonly notes: Map<Address, { state: 'drifted' | 'blocked'; message: string }>;
  readonly decisions: FieldDecision[];
  readonly deletedWhileWaiting: Set<Address>;
  readonly writes: ArbitrationWrite[];
}

/**
 * The arbitrate step of the loop (DESIGN.md §4): for every declared field whose observed value
 * differs from the declared one because someone changed it on the platform (an audit-feed entry, an
 * announcement, or a difference from what Tend last saw), find who changed it and why, ask the policy
 * (`decide`, pure) and keep to the decision: the claims of actors whose change was accepted, yielded
 * to, held or escalated are kept (field ownership), and the plan wants their values instead of the
 * declared ones. Every change of a managed object, deletions included, becomes a ledger entry.
 *
 * Deciding only: it reads no store and changes nothing it is handed (the observation included). What
 * recording the decisions takes is returned as `writes`, which the recorder makes in apply mode
 * (`Recorder.recordDecisions`); a plan, a saved plan's check and `tend drift` make none. The one side
 * effect is the redactor learning the secret values it leaves out of entries.
 */
export function arbitrate(
  ws: Workspace,
  observation: Observation,
  options: {
    readonly now: Date;
    readonly feed: FeedBatch;
    /** The claims and announcements to decide with (`readArbitrationMemory`). */
    readonly memory: ArbitrationMemory;
    /** Arbitrate only these resources (a focused pass observed only them). */
    readonly only?: ReadonlySet<Address>;
  },
): ArbitrationOutcome {
  const claims = new Map<Address, Map<string, FieldClaim>>();
  for (const c of options.memory.claims) {
    let m = claims.get(c.address);
    if (!m) claims.set(c.address, (m = new Map<string, FieldClaim>()));
    m.set(c.field, c);
  }
  const eventsOf = new Map<Address, FeedEvent[]>();
  for (const e of options.feed.events) {
    const l = eventsOf.get(e.address);
    if (l) l.push(e);
    else eventsOf.set(e.address, [e]);
  }
  const run: Arbitration = {
    ws,
    observation,
    policy: policyOfWorkspace(ws),
    nowIso: options.now.toISOString(),
    claims,
    announcements: options.memory.announcements,
    eventsOf,
    failedTypes: new Set(observation.failures.map((f) => f.type)),
    explained: new Set<FeedEvent>(),
    overrides: new Map(),
    notes: new Map(),
    decisions: [],
    deletedWhileWaiting: new Set(),
    writes: [],
  };
  for (const decl of ws.intent.resources) {
    if (options.only && !options.only.has(decl.address)) continue;
    const obj = observation.objects.get(decl.address);
    if (obj) arbitrateObject(run, decl, obj);
    else arbitrateMissing(run, decl);
  }
  recordUnexplained(run, options.feed);
  return Object.freeze({
    overrides: run.overrides,
    notes: run.notes,
    decisions: Object.freeze(run.decisions),
    deletedWhileWaiting: run.deletedWhileWaiting,
    writes: Object.freeze(run.writes),
    recorded: Object.freeze([]),
  });
}

/**
 * The observation a pass plans from once arbitration decided: a create the feed says was deleted is
 * no longer waited for (`deletedWhileWaiting`). The observation itself is left as it was.
 */
export function observationAfter(
  observation: Observation,
  arbitration: ArbitrationOutcome,
): Observation {
  if (arbitration.deletedWhileWaiting.size === 0) return observation;
  const waiting = new Set(observation.pendingVisibility);
  for (const a of arbitration.deletedWhileWaiting) waiting.delete(a);
  return { ...observation, pendingVisibility: waiting };
}

/** A declared resource without an object: deleted by someone (recorded), or not there yet. */
function arbitrateMissing(run: Arbitration, decl: ResourceDecl): void {
  const { ws, observation, nowIso } = run;
  const address = decl.address;
  const twin = observation.twin.get(address);
  const events = run.eventsOf.get(address) ?? [];
  const event = events.find((e) => e.change.action === 'delete' && e.change.id === twin?.objectId);
  // The platform's own feed saying the object was deleted outweighs waiting for a create that
  // settled moments ago to become visible: it was visible, and it is gone.
  const waiting = observation.pendingVisibility.has(address);
  if (event && waiting) run.deletedWhileWaiting.add(address);
  const gone =
    twin !== undefined &&
    (!waiting || event !== undefined) &&
    !run.failedTypes.has(decl.type) &&
    !observation.conflicts.has(address);
  if (!gone) return;
  if (event) run.explained.add(event);
  const by = event
    ? { ...attributionOf(event.change), source: 'audit' as const }
    : { actor: 'unknown', source: 'unknown' as const };
  const who =
    by.actor === 'unknown' ? 'someone (no audit entry or announcement says who)' : by.actor;
  run.writes.push({
    kind: 'ledger',
    entry: {
      time: event?.change.time || nowIso,
      ...by,
      address,
      type: decl.type,
      objectId: twin.objectId,
      action: 'delete',
      fields: [],
      before: redact(secretFields(ws, decl.type, address), twin.fields, ws.secrets),
      decision: {
        decision: 'enforce',
        rule: 'declared',
        reason: `${address} was deleted by ${who}; the intent still declares it, so Tend creates it again`,
        restore: 'declared',
        fields: [],
      },
    },
  });
  run.writes.push({ kind: 'gone', address, claims: [...(run.claims.get(address)?.keys() ?? [])] });
}

/** Entries to write for one object, keyed by who explains them and what was decided. */
type Groups = Map<string, { explanation: Explanation; decision?: Decision; fields: string[] }>;

/** How one object's fields are compared: the provider's normalisation applied. */
type Same = (path: string, a: unknown, b: unknown) => boolean;

/** A declared resource whose object was observed: its drifted fields decided, its changes recorded. */
function arbitrateObject(run: Arbitration, decl: ResourceDecl, obj: ObservedObject): void {
  const { ws, observation, nowIso } = run;
  const address = decl.address;
  const twin = observation.twin.get(address);
  const events = run.eventsOf.get(address) ?? [];
  const hidden = secretFields(ws, decl.type, address);
  const { provider, info } = ws.typeOf(decl.type);
  const diffOptions = diffOptionsFor(provider, info);
  const norm = diffOptions.normalize ?? ((_p: string, v: unknown) => v);
  const same: Same = (path, a, b) =>
    a === b || canonicalJson(norm(path, a) ?? null) === canonicalJson(norm(path, b) ?? null);
  const { desired, drift } = declaredDrift(ws, decl, obj.fields, (a) => observation.objects.get(a));
  const drifted = new Set(drift.map((c) => c.path));
  const mine = run.claims.get(address) ?? new Map<string, FieldClaim>();
  // A claim on a field that is no longer drifted (the platform went back, or the intent now says
  // the same): the intent owns the field again.
  for (const [field] of mine) {
    if (drifted.has(field)) continue;
    mine.delete(field);
    run.writes.push({ kind: 'release', address, field });
  }

  const groups: Groups = new Map();
  const group = (explanation: Explanation, decision: Decision | undefined, field: string) => {
    const key = `${explanation.event?.change.cursor ?? ''}\u0000${explanation.announcement?.id ?? ''}\u0000${explanation.by.actor}\u0000${decision?.decision ?? ''}\u0000${decision?.rule ?? ''}`;
    const g = groups.get(key);
    if (g) g.fields.push(field);
    else groups.set(key, { explanation, ...(decision ? { decision } : {}), fields: [field] });
  };

  const denied = deniedDrift(run, decl, obj, drift);
  let platformChanged = false;
  for (const change of drift) {
    if (decideField(run, decl, change, twin, events, mine, same, group, denied)) {
      platformChanged = true;
    }
  }
  if (observation.adoptions.get(address) === 'record' && info.markerField !== undefined) {
    markerPutBack(run, address, info.markerField, events, group);
    platformChanged = true;
  }

  // Entries that explain nothing drifted are history too: changes to fields the intent does not
  // declare, or to declared fields that are as declared again.
  for (const e of events) {
    if (run.explained.has(e)) continue;
    run.explained.add(e);
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

  recordGroups(run, decl, obj, twin, groups);
  if (twin && (platformChanged || groups.size > 0)) {
    run.writes.push({
      kind: 'twin',
      entry: {
        ...twin,
        objectId: obj.id,
        fields: redact(hidden, obj.fields, ws.secrets),
        observedAt: nowIso,
      },
    });
  }
}

/**
 * Decides one drifted field of an object: keeps to a claim an actor holds, asks the policy about a
 * change someone made, or leaves a field nobody changed to the plan. True when the platform changed
 * the field since Tend last saw it.
 */
function decideField(
  run: Arbitration,
  decl: ResourceDecl,
  change: FieldChange,
  twin: Remembered | undefined,
  events: readonly FeedEvent[],
  mine: Map<string, FieldClaim>,
  same: Same,
  group: (explanation: Explanation, decision: Decision | undefined, field: string) => void,
  denied: ReadonlyMap<string, DeniedField>,
): boolean {
  const { nowIso, policy } = run;
  const deny = deniedBy(denied, change.path);
  const address = decl.address;
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
    run.writes.push({ kind: 'release', address, field: path });
    claim = undefined;
  }
  const seen = twin === undefined ? undefined : getPath(twin.fields, path);
  const changedHere = twin !== undefined && !same(path, seen, observed);
  const explanation = explain(
    policy,
    address,
    path,
    observed,
    events,
    run.announcements,
    // A field an actor holds that no longer has the actor's value was changed by someone, even
    // when Tend already saw that value (a pass whose correction failed).
    changedHere || (claim !== undefined && !same(path, claim.value, observed)),
    same,
    nowIso,
  );
  if (explanation?.event) run.explained.add(explanation.event);

  let decision: Decision;
  const keepsClaim = claim !== undefined && same(path, claim.value, observed);
  if (keepsClaim && (!explanation || explanation.by.source === 'unknown')) {
    // Nothing new happened to a field an actor holds: keep to the decision made, unless a hold ended.
    const ended =
      claim!.decision === 'hold' && claim!.until !== undefined && claim!.until <= nowIso;
    // A value a deny policy forbids is never kept, whoever holds it.
    if (!ended && !deny) {
      keep(run, address, claim!.decision, claim!.value, path);
      run.decisions.push({
        address,
        field: path,
        observed,
        declared,
        by: { ...claimAttribution(claim!), source: 'tend' },
        decision: { decision: claim!.decision, rule: claim!.rule, reason: claimReason(claim!) },
        fresh: false,
      });
      return changedHere;
    }
    decision = outranked(
      decide(policy, factsOf(decl, path, declared, observed, claimAsChange(claim!), claim, nowIso)),
      deny,
      path,
    );
    group({ by: { ...claimAttribution(claim!), source: 'tend' }, at: nowIso }, decision, path);
  } else if (!explanation) {
    // No sign that anyone changed the platform (the intent changed, or the field never matched):
    // the plan makes it as declared, as always.
    return changedHere;
  } else {
    decision = outranked(
      decide(
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
      ),
      deny,
      path,
    );
    group(explanation, decision, path);
  }
  run.decisions.push({
    address,
    field: path,
    observed,
    declared,
    by: explanation?.by ?? { actor: 'unknown', source: 'unknown' },
    decision,
    fresh: true,
  });

  if (decision.decision === 'enforce') {
    if (decision.restore === 'claim' && claim) {
      setOverride(run, address, path, claim.value);
    } else if (claim) {
      mine.delete(path);
      run.writes.push({ kind: 'release', address, field: path });
    }
    return changedHere;
  }
  keep(run, address, decision.decision, observed, path);
  const by = explanation?.by ?? claimAttribution(claim!);
  run.writes.push({
    kind: 'claim',
    claim: {
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
    },
  });
  return changedHere;
}

/**
 * The ownership marker was removed or altered: always put back (the plan adopts the object again by
 * Tend's record), whoever did it and whatever the policy says about other fields.
 */
function markerPutBack(
  run: Arbitration,
  address: Address,
  field: string,
  events: readonly FeedEvent[],
  group: (explanation: Explanation, decision: Decision | undefined, field: string) => void,
): void {
  // The feed entry that changed the marker (it may also have explained a drifted field).
  const event = [...events]
    .reverse()
    .find(
      (e) =>
        e.change.action === 'update' &&
        canonicalJson(getPath(e.change.before, field) ?? null) !==
          canonicalJson(getPath(e.change.after, field) ?? null),
    );
  if (event) run.explained.add(event);
  const by = event
    ? { ...attributionOf(event.change), source: 'audit' as const }
    : { actor: 'unknown', source: 'unknown' as const };
  group(
    { by, at: event?.change.time || run.nowIso, ...(event ? { event } : {}) },
    {
      decision: 'enforce',
      rule: 'marker',
      reason: `the ownership marker on ${address} was removed or altered by ${by.actor}: Tend always puts it back`,
      restore: 'declared',
    },
    field,
  );
}

/** The ledger entries of one object's groups (and the announcements they used). */
function recordGroups(
  run: Arbitration,
  decl: ResourceDecl,
  obj: ObservedObject,
  twin: Remembered | undefined,
  groups: Groups,
): void {
  const { ws, nowIso } = run;
  const hidden = secretFields(ws, decl.type, decl.address);
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
    run.writes.push({
      kind: 'ledger',
      entry: {
        time: g.explanation.at || nowIso,
        ...g.explanation.by,
        address: decl.address,
        type: decl.type,
        objectId: obj.id,
        action,
        // Everything the platform's entry changed, and the decided paths (the decision names its own).
        fields: e ? withoutNested([...changedFields(before, after), ...fields]) : fields,
        ...(before ? { before } : {}),
        ...(after ? { after } : {}),
        ...(g.decision ? { decision: { ...g.decision, fields } } : {}),
      },
    });
    if (g.explanation.announcement) {
      run.writes.push({ kind: 'announcement-used', id: g.explanation.announcement.id, at: nowIso });
    }
  }
}

/** Feed entries about managed objects no declared resource covers (removed resources, unmatched). */
function recordUnexplained(run: Arbitration, feed: FeedBatch): void {
  const { ws, nowIso } = run;
  for (const e of feed.events) {
    if (run.explained.has(e)) continue;
    const hidden = secretFields(ws, e.type, e.address);
    const before = e.change.before ? redact(hidden, e.change.before, ws.secrets) : undefined;
    const after = e.change.after ? redact(hidden, e.change.after, ws.secrets) : undefined;
    run.writes.push({
      kind: 'ledger',
      entry: {
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
      },
    });
  }
}

function setOverride(run: Arbitration, address: Address, path: string, value: unknown): void {
  const l = run.overrides.get(address);
  if (l) l.push({ path, value });
  else run.overrides.set(address, [{ path, value }]);
}

/** Keeps the observed value of a field an actor holds, and notes what it means for the status. */
function keep(
  run: Arbitration,
  address: Address,
  kind: DecisionKind,
  value: unknown,
  path: string,
): void {
  setOverride(run, address, path, value);
  if (kind === 'hold' || kind === 'escalate' || kind === 'accept') {
    const prev = run.notes.get(address);
    const state = kind === 'escalate' || prev?.state === 'blocked' ? 'blocked' : 'drifted';
    const text =
      kind === 'escalate'
        ? `${path}: escalated for a human (tend explain ${address})`
        : kind === 'hold'
          ? `${path}: held (tend explain ${address})`
          : `${path}: accepted; take it into the intent with tend accept ${address} ${path} --write`;
    run.notes.set(address, { state, message: prev ? `${prev.message}; ${text}` : text });
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

/** A deny rule the observed object breaks, through the fields it reads. */
interface DeniedField {
  /** `policy <name> rule <n>`. */
  readonly rule: string;
  readonly message: string;
  /** True when the object with its declared values put back keeps the rule. */
  readonly declaredComplies: boolean;
}

/**
 * The drifted fields a `deny` policy forbids (docs/policies.md, "Deny outranks every motivation"):
 * the policies are evaluated on the observed object, and a broken deny rule names the drifted
 * fields it reads (every drifted field, for a rule reading the whole object). Whether the declared
 * values would comply is the same rule on the object with the drifted fields as declared.
 */
function deniedDrift(
  run: Arbitration,
  decl: ResourceDecl,
  obj: ObservedObject,
  drift: readonly FieldChange[],
): Map<string, DeniedField> {
  const out = new Map<string, DeniedField>();
  if (drift.length === 0) return out;
  const subject = {
    address: decl.address,
    type: decl.type,
    name: decl.name,
    labels: decl.labels ?? {},
  };
  const policies = (run.ws.intent.policies ?? []).filter(
    (p) => p.actions.includes('deny') && policyMatches(p.match, subject),
  );
  if (policies.length === 0) return out;
  const input = (object: Readonly<Record<string, unknown>>) => ({
    subject,
    moment: 'observed' as const,
    object,
    declared: decl.spec,
    observed: obj.fields,
  });
  const broken = evaluatePolicies(policies, input(obj.fields)).filter(denies);
  if (broken.length === 0) return out;
  const put = evaluatePolicies(policies, input(withValues(obj.fields, drift)));
  for (const v of broken) {
    const again = put.find((x) => x.policy === v.policy && x.rule === v.rule);
    const reads = (path: string) =>
      v.fields.includes('*') ||
      v.fields.some((f) => path === f || path.startsWith(`${f}.`) || f.startsWith(`${path}.`));
    for (const c of drift) {
      if (!reads(c.path) || out.has(c.path)) continue;
      out.set(c.path, {
        rule: `policy ${v.policy} rule ${v.rule + 1}`,
        message: v.message,
        declaredComplies: again !== undefined && !denies(again),
      });
    }
  }
  return out;
}

/** The deny rule that forbids a drifted field's observed value, if one does. */
function deniedBy(denied: ReadonlyMap<string, DeniedField>, path: string): DeniedField | undefined {
  return denied.get(path);
}

/**
 * A decision a deny policy outranks: a forbidden value is never accepted, yielded to or held; it is
 * enforced back when the declared value complies, else escalated for a human.
 */
function outranked(decision: Decision, deny: DeniedField | undefined, path: string): Decision {
  if (!deny || decision.decision === 'enforce' || decision.decision === 'escalate') return decision;
  const why = `${path} breaks ${deny.rule} (deny): ${deny.message}; a deny policy outranks every motivation (the policy would have decided ${decision.decision} by ${decision.rule})`;
  return deny.declaredComplies
    ? {
        decision: 'enforce',
        rule: deny.rule,
        reason: `${why}, so the declared value is put back`,
        restore: 'declared',
      }
    : {
        decision: 'escalate',
        rule: deny.rule,
        reason: `${why}, and the declared value breaks it too: escalated for a human`,
      };
}

/** A copy of `fields` with each change's path set to its declared value (`after`). */
function withValues(
  fields: Readonly<Record<string, unknown>>,
  changes: readonly FieldChange[],
): Record<string, unknown> {
  const out = structuredClone(fields) as Record<string, unknown>;
  for (const c of changes) {
    const segments = keyPathSegments(c.path);
    let at: Record<string, unknown> = out;
    for (const s of segments.slice(0, -1)) {
      const next = at[s];
      if (next === null || typeof next !== 'object' || Array.isArray(next)) defineKey(at, s, {});
      at = at[s] as Record<string, unknown>;
    }
    defineKey(at, segments[segments.length - 1]!, c.after);
  }
  return out;
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
