import type {
  Address,
  Change,
  ObservedObject,
  ResourceDecl,
  ResourceStatus,
} from '../core/index.js';
import { fieldPath, nearMatches, parseAddress, TendError, toTendError } from '../core/index.js';
import type { FieldDecision, Observation, Workspace } from '../engine/index.js';
import { policyOfWorkspace, secretFields } from '../engine/index.js';
import type { AppContext } from './context.js';
import type { FieldReport } from './explain-fields.js';
import { explainFields } from './explain-fields.js';
import { declaredDrift } from '../engine/index.js';
import { decideReadOnly, observeNow } from './observe-drift.js';
import type { WorkspaceNameSource, WorkspaceSelection } from './workspace.js';
import { openWorkspace } from './workspace.js';

/** What `explain` is asked. */
export interface ExplainRequest extends WorkspaceSelection {
  /** `type/name`, or `type/name.field` (the field with or without `spec.`). */
  readonly target: string;
  /** Most ledger entries shown per field (default 5). */
  readonly limit?: number;
}

/** One resource, field by field: declared, observed, owner, history and what the policy decides. */
export interface ExplainReport {
  readonly workspace: { readonly name: string; readonly source: WorkspaceNameSource };
  readonly address: Address;
  /** `provider.resourceType`. */
  readonly type: string;
  /** The field asked about (below the spec), when one was. */
  readonly field?: string;
  /**
   * Where the observed values come from: `platform` (read now), `store` (what Tend last recorded:
   * the platform could not be read; secrets are never recorded), or `none` (no object).
   */
  readonly observedFrom: 'platform' | 'store' | 'none';
  readonly objectId?: string;
  /** When the recorded values were observed (`observedFrom: store`). */
  readonly recordedAt?: string;
  /** The resource's state after the last pass. */
  readonly status?: ResourceStatus;
  /** `intent` when the intent has Arbitration documents, else the built-in `default`. */
  readonly policy: 'intent' | 'default';
  readonly fields: readonly FieldReport[];
  /** What the reader should know about how this was found out, one sentence each. */
  readonly notes: readonly string[];
}

/** The error codes of a target that names nothing: the CLI exits 2 for them. */
export const UNKNOWN_TARGET_CODES: readonly string[] = [
  'explain.bad_target',
  'explain.unknown_address',
  'explain.unknown_field',
];

/** Default number of ledger entries shown per field. */
export const EXPLAIN_ENTRIES = 5;

/**
 * Splits `type/name[.field]`: the name holds no dot, so the first dot after the `/` starts the
 * field. A field of `spec` alone names the whole resource.
 */
export function parseTarget(text: string): { address: Address; field?: string } {
  const slash = text.indexOf('/');
  const dot = slash < 0 ? -1 : text.indexOf('.', slash);
  const address = (dot < 0 ? text : text.slice(0, dot)) as Address;
  const raw = dot < 0 ? '' : text.slice(dot + 1);
  if (!parseAddress(address) || (dot >= 0 && (raw === '' || raw.split('.').includes('')))) {
    throw new TendError(
      'explain.bad_target',
      `"${text}" is not an address with an optional field`,
      {
        hint: 'write provider.type/name or provider.type/name.field, e.g. sb.services/api.replicas',
      },
    );
  }
  const field = raw === '' || raw === 'spec' ? undefined : fieldPath(raw);
  return field === undefined ? { address } : { address, field };
}

/** The first window of an address's ledger entries read; grown until every field has enough. */
const FIRST_WINDOW = 512;

/**
 * Explains one resource, or one field of it: for each field its declared value (as written, and
 * resolved when it holds a reference), its observed value (read from the platform now; Tend's last
 * record when the platform cannot be read), its owner (the intent, an actor's claim, or nobody for
 * a field the intent does not declare), the latest ledger entries touching it with their actors,
 * motivations and decisions, the announcements about it, and what the policy decides now for a
 * drifted field. Read-only. Secret fields show `(secret)`. Throws `explain.unknown_address` or
 * `explain.unknown_field` with near matches.
 */
export async function explain(ctx: AppContext, request: ExplainRequest): Promise<ExplainReport> {
  const target = parseTarget(request.target);
  const limit = request.limit ?? EXPLAIN_ENTRIES;
  const { ws, nameSource } = await openWorkspace(ctx, request, 'read', { recorded: true });
  try {
    const decl = ws.intent.resources.find((r) => r.address === target.address);
    if (!decl) throw unknownAddress(ws, target.address);
    const now = ctx.clock.now();
    const notes: string[] = [];
    const seen = await observed(ws, decl, now, notes);
    const hidden = secretFields(ws, decl.type, decl.address);
    for (const k of hidden) if (seen.fields?.[k] !== undefined) ws.secrets.add(seen.fields[k]);
    const { desired, drift } = declaredDrift(ws, decl, seen.fields ?? {}, seen.known);
    const claims = await ws.store.claims(decl.address);
    const announcements = await ws.store.announcements({
      address: decl.address,
      activeAt: now.toISOString(),
    });
    const facts = {
      written: decl.spec,
      desired,
      observed: seen.fields,
      secrets: hidden,
      ...(ws.typeOf(decl.type).info.markerField
        ? { markerField: ws.typeOf(decl.type).info.markerField }
        : {}),
      drift: seen.fields === undefined ? [] : drift,
      claims,
      decisions: seen.decisions,
      announcements,
      entriesPerField: limit,
    };

    let fields: FieldReport[] = [];
    for (let window = Math.max(FIRST_WINDOW, limit * 8); ; window *= 4) {
      const changes: Change[] = await ws.store.changes({ address: decl.address, limit: window });
      fields = explainFields({ ...facts, changes });
      if (target.field !== undefined) fields = onlyField(ws, decl, fields, target.field);
      if (changes.length < window || fields.every((f) => f.entries.length >= limit)) break;
    }
    const status = (await ws.store.listStatus()).find((s) => s.address === decl.address);
    return {
      workspace: { name: ws.name, source: nameSource },
      address: decl.address,
      type: decl.type,
      ...(target.field !== undefined ? { field: target.field } : {}),
      observedFrom: seen.from,
      ...(seen.objectId !== undefined ? { objectId: seen.objectId } : {}),
      ...(seen.recordedAt !== undefined ? { recordedAt: seen.recordedAt } : {}),
      ...(status ? { status } : {}),
      policy: policyOfWorkspace(ws).isDefault ? 'default' : 'intent',
      fields,
      notes,
    };
  } finally {
    await ws.close();
  }
}

interface Seen {
  readonly from: 'platform' | 'store' | 'none';
  readonly fields: Readonly<Record<string, unknown>> | undefined;
  readonly objectId?: string;
  readonly recordedAt?: string;
  /** What references resolve against. */
  readonly known: (address: Address) => ObservedObject | undefined;
  readonly decisions: readonly FieldDecision[];
}

/**
 * The resource's object as the platform shows it now, with the policy's decisions of a read-only
 * pass; when the platform cannot be read, the object as Tend last recorded it (no decisions).
 */
async function observed(
  ws: Workspace,
  decl: ResourceDecl,
  now: Date,
  notes: string[],
): Promise<Seen> {
  let observation: Observation;
  try {
    observation = await observeNow(ws, now);
  } catch (e) {
    return recorded(ws, decl, toTendError(e).message, notes);
  }
  const decided = await decideReadOnly(ws, observation, now);
  observation = decided.observation;
  const { arbitration, warnings } = decided;
  for (const w of warnings) notes.push(w);
  const obj = observation.objects.get(decl.address);
  const known = (a: Address) => observation.objects.get(a);
  const decisions = arbitration.decisions.filter((d) => d.address === decl.address);
  if (!obj) {
    notes.push(
      observation.pendingVisibility.has(decl.address)
        ? `${decl.address} was just created and is not visible yet`
        : observation.conflicts.has(decl.address)
          ? `${decl.address} has no object: its natural key is taken by another workspace's object`
          : observation.twin.has(decl.address)
            ? `${decl.address} has no object: it was deleted; apply creates it again`
            : `${decl.address} has no object yet: apply creates it`,
    );
    return { from: 'none', fields: undefined, known, decisions };
  }
  return { from: 'platform', fields: obj.fields, objectId: obj.id, known, decisions };
}

/** The object as Tend last recorded it, when the platform cannot be read (no decisions then). */
async function recorded(
  ws: Workspace,
  decl: ResourceDecl,
  why: string,
  notes: string[],
): Promise<Seen> {
  const twin = await ws.store.listTwin();
  const byAddress = new Map(twin.map((t) => [t.address, t] as const));
  const known = (a: Address): ObservedObject | undefined => {
    const t = byAddress.get(a);
    return t ? { type: t.type, id: t.objectId, fields: t.fields } : undefined;
  };
  const mine = byAddress.get(decl.address);
  if (!mine) {
    notes.push(`the platform could not be read (${why}) and Tend has no record of the object`);
    return { from: 'none', fields: undefined, known, decisions: [] };
  }
  notes.push(
    `the platform could not be read (${why}): observed values are what Tend last recorded, at ${mine.observedAt}; what the policy would decide now is not known`,
  );
  return {
    from: 'store',
    fields: mine.fields,
    objectId: mine.objectId,
    recordedAt: mine.observedAt,
    known,
    decisions: [],
  };
}

function unknownAddress(ws: Workspace, address: Address): TendError {
  const near = nearMatches(
    address,
    ws.intent.resources.map((r) => r.address),
  );
  return new TendError(
    'explain.unknown_address',
    `${address}: no such resource in the intent${near.length > 0 ? `; did you mean ${near.join(' or ')}?` : ''}`,
    { hint: 'an address is provider.type/name as tend plan and tend status list it' },
  );
}

/**
 * The reports of one field and the fields below it. A field of the type's schema that is neither
 * declared nor observed is reported as undeclared; anything else is `explain.unknown_field`.
 */
function onlyField(
  ws: Workspace,
  decl: ResourceDecl,
  fields: readonly FieldReport[],
  field: string,
): FieldReport[] {
  const kept = fields.filter((f) => f.field === field || f.field.startsWith(`${field}.`));
  if (kept.length > 0) return kept;
  const schemaFields = Object.keys(
    (ws.typeOf(decl.type).info.schema['properties'] as Record<string, unknown> | undefined) ?? {},
  );
  if (schemaFields.includes(field)) {
    return [
      {
        field,
        state: 'undeclared',
        secret: false,
        owner: { kind: 'unowned' },
        entries: [],
        announcements: [],
      },
    ];
  }
  const candidates = [...new Set([...fields.map((f) => f.field), ...schemaFields])];
  const near = nearMatches(field, candidates);
  throw new TendError(
    'explain.unknown_field',
    `${decl.address} has no field ${field}${near.length > 0 ? `; did you mean ${near.join(' or ')}?` : ''}`,
    { hint: `tend explain ${decl.address} lists every field` },
  );
}
