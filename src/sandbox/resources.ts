import { createHash, randomBytes } from 'node:crypto';
import { SandboxError } from './errors.js';
import { evaluateLifecycle, inPlaceRefusals, type LifecycleEvaluation } from './lifecycle.js';
import { TYPES, typeSpec, type TypeName, type TypeSpec } from './spec.js';
import type { AuditEntry, SandboxState, StoredObject } from './store.js';
import type { RequestValidator } from './validate.js';

/** Who makes a change and why, from the X-Tend-Actor / -Actor-Kind / -Intent / -Motivation headers. */
export interface Attribution {
  readonly actor: string;
  /** The kind of actor (human, controller, agent, …) as the header said it; not checked. */
  readonly actorKind: string | null;
  readonly intent: string | null;
  readonly motivation: string | null;
}

/** The outcome of a create: the object, and whether it replays an earlier create with the same key. */
export interface CreateResult {
  readonly object: Record<string, unknown>;
  readonly replayed: boolean;
}

/** An object as the test oracle shows it: every field, visible to reads yet or not. */
export interface OracleObject {
  readonly type: TypeName;
  readonly id: string;
  readonly visible: boolean;
  readonly fields: Readonly<Record<string, unknown>>;
}

/** What the resource rules need besides the state. */
export interface ResourcesOptions {
  readonly state: SandboxState;
  readonly validator: RequestValidator;
  readonly now: () => number;
  /** How long a new object stays invisible to reads (read at each create). */
  readonly consistencyMs: () => number;
  /** Called with every audit entry as it is recorded. */
  readonly onAudit?: (entry: AuditEntry) => void;
}

/**
 * The sandbox's API semantics, independent of HTTP: validation, references, dependents, create-only
 * fields, idempotency, derived fields, visibility and the audit trail. Refusals are SandboxErrors.
 */
export class Resources {
  constructor(private readonly options: ResourcesOptions) {}

  private get state(): SandboxState {
    return this.options.state;
  }

  /** The visible objects of a type, in creation order. */
  list(spec: TypeSpec): Record<string, unknown>[] {
    const now = this.options.now();
    return this.state
      .list(spec.name)
      .filter((o) => o.visibleAt <= now)
      .map((o) => publicView(spec, o.fields));
  }

  /** One visible object; 404 when it does not exist or is not visible yet. */
  get(spec: TypeSpec, id: string): Record<string, unknown> {
    const object = this.state.get(spec.name, id);
    if (!object || object.visibleAt > this.options.now()) throw notFound(spec, id);
    return publicView(spec, object.fields);
  }

  /** Creates an object, or replays the create an idempotency key already made. */
  create(spec: TypeSpec, raw: unknown, by: Attribution, idempotencyKey?: string): CreateResult {
    const body = this.options.validator.check(spec, 'resource', raw);
    const fingerprint = digest(canonicalJson({ type: spec.name, body }));
    if (idempotencyKey !== undefined) {
      const record = this.state.idempotencyRecord(idempotencyKey);
      if (record) {
        if (record.type === spec.name && record.fingerprint === fingerprint) {
          return { object: record.response, replayed: true };
        }
        throw new SandboxError(
          422,
          'idempotency_key_reused',
          `Idempotency-Key "${idempotencyKey}" was already used for a different request: use a new key for a new create`,
        );
      }
    }
    const writable = withDefaults(spec, body);
    this.checkReferences(spec, writable);
    const id = spec.idField === 'name' ? String(writable.name) : this.newId(spec);
    if (this.state.get(spec.name, id)) {
      throw new SandboxError(
        409,
        'already_exists',
        `a ${noun(spec)} named "${id}" already exists: choose another name`,
        spec.idField,
      );
    }
    const now = this.options.now();
    const fields = this.derive(spec, id, {
      ...(spec.idField === 'id' ? { id } : {}),
      ...hideSecrets(spec, writable),
      created_at: new Date(now).toISOString(),
    });
    const object: StoredObject = {
      type: spec.name,
      id,
      fields: ordered(spec, fields),
      visibleAt: now + this.options.consistencyMs(),
    };
    this.state.put(object);
    const view = publicView(spec, object.fields);
    this.audit(by, 'create', spec, id, null, view);
    if (idempotencyKey !== undefined) {
      this.state.rememberIdempotency(idempotencyKey, {
        type: spec.name,
        fingerprint,
        response: view,
      });
    }
    return { object: view, replayed: false };
  }

  /** Applies a JSON merge patch of writable fields (PATCH). */
  update(spec: TypeSpec, id: string, raw: unknown, by: Attribution): Record<string, unknown> {
    const body = this.options.validator.check(spec, 'patch', raw);
    const current = this.existing(spec, id);
    return this.change(spec, current, { ...current.fields, ...hideSecrets(spec, body) }, body, by);
  }

  /**
   * Replaces every writable field (PUT): omitted optional fields go back to their defaults or away,
   * except secrets, which are kept (reads never return them, so a GET-modify-PUT cannot resend them).
   */
  replace(spec: TypeSpec, id: string, raw: unknown, by: Attribution): Record<string, unknown> {
    const body = this.options.validator.check(spec, 'resource', raw);
    const current = this.existing(spec, id);
    const next: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(spec.fields)) {
      if (field.readOnly || field.sensitive || (field.createOnly && !(name in body))) {
        if (name in current.fields) next[name] = current.fields[name];
      }
    }
    Object.assign(next, hideSecrets(spec, withDefaults(spec, body)));
    return this.change(spec, current, next, body, by);
  }

  /** Deletes an object nothing else references. */
  delete(spec: TypeSpec, id: string, by: Attribution): void {
    const current = this.existing(spec, id);
    const dependents = this.dependentsOf(spec.name, id);
    if (dependents.length > 0) {
      throw new SandboxError(
        409,
        'has_dependents',
        `${noun(spec)} ${id} is still used by ${dependents.join(', ')}: delete or move those first`,
      );
    }
    this.state.remove(spec.name, id);
    this.audit(by, 'delete', spec, id, publicView(spec, current.fields), null);
  }

  /** The lifecycle endpoint: what going from `current` to `desired` takes. */
  evaluate(raw: unknown): LifecycleEvaluation {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      throw new SandboxError(400, 'invalid', 'the request body must be a JSON object');
    }
    const body = raw as Record<string, unknown>;
    for (const key of Object.keys(body)) {
      if (!['type', 'current', 'desired'].includes(key)) {
        throw new SandboxError(
          400,
          'invalid',
          `unknown field "${key}": send type, current and desired`,
          key,
        );
      }
    }
    const spec = typeof body.type === 'string' ? typeSpec(body.type) : undefined;
    if (!spec) {
      const known = TYPES.map((t) => t.name).join(', ');
      throw new SandboxError(400, 'invalid', `type must be one of ${known}`, 'type');
    }
    const current = body.current;
    if (current === null || typeof current !== 'object' || Array.isArray(current)) {
      throw new SandboxError(400, 'invalid', 'current must be the object as read now', 'current');
    }
    if (body.desired === undefined) {
      throw new SandboxError(400, 'invalid', 'missing required field "desired"', 'desired');
    }
    let desired: Record<string, unknown>;
    try {
      desired = this.options.validator.check(spec, 'patch', body.desired);
    } catch (error) {
      if (!(error instanceof SandboxError)) throw error;
      const field = error.field === undefined ? 'desired' : `desired.${error.field}`;
      throw new SandboxError(400, error.code, `desired: ${error.message}`, field);
    }
    return evaluateLifecycle(spec, current as Record<string, unknown>, desired);
  }

  /** Every object for the test oracle, secrets as digests. */
  oracle(): OracleObject[] {
    const now = this.options.now();
    return this.state.all().map((o) => ({
      type: o.type,
      id: o.id,
      visible: o.visibleAt <= now,
      fields: o.fields,
    }));
  }

  private existing(spec: TypeSpec, id: string): StoredObject {
    const object = this.state.get(spec.name, id);
    if (!object) throw notFound(spec, id);
    return object;
  }

  /** Validates and commits an update whose result is `proposed` (`given`: the fields sent). */
  private change(
    spec: TypeSpec,
    current: StoredObject,
    proposed: Record<string, unknown>,
    given: Record<string, unknown>,
    by: Attribution,
  ): Record<string, unknown> {
    const refusal = inPlaceRefusals(spec, current.fields, given)[0];
    if (refusal) throw new SandboxError(409, refusal.code, refusal.message, refusal.field);
    this.checkReferences(spec, given);
    const fields = ordered(spec, this.derive(spec, current.id, proposed, current.fields));
    if (canonicalJson(fields) === canonicalJson(current.fields)) {
      return publicView(spec, current.fields);
    }
    this.state.put({ ...current, fields });
    const before = publicView(spec, current.fields);
    const after = publicView(spec, fields);
    this.audit(by, 'update', spec, current.id, before, after);
    return after;
  }

  /** Refuses (422) a reference field naming an object that does not exist. */
  private checkReferences(spec: TypeSpec, fields: Record<string, unknown>): void {
    for (const [name, field] of Object.entries(spec.fields)) {
      const target = field.references;
      const value = fields[name];
      if (!target || typeof value !== 'string') continue;
      if (!this.state.get(target, value)) {
        const targetNoun = noun(typeSpec(target) as TypeSpec);
        throw new SandboxError(
          422,
          'invalid_reference',
          `${name}: no ${targetNoun} "${value}" exists: create it first or fix the id`,
          name,
        );
      }
    }
  }

  /** `type/id` of every object referencing the given one. */
  private dependentsOf(type: TypeName, id: string): string[] {
    const dependents: string[] = [];
    for (const spec of TYPES) {
      const refs = Object.entries(spec.fields).filter(([, f]) => f.references === type);
      for (const object of this.state.list(spec.name)) {
        if (refs.some(([name]) => object.fields[name] === id))
          dependents.push(`${spec.name}/${object.id}`);
      }
    }
    return dependents;
  }

  /** Sets the fields the platform computes: status, and an instance's private IP. */
  private derive(
    spec: TypeSpec,
    id: string,
    fields: Record<string, unknown>,
    previous?: Readonly<Record<string, unknown>>,
  ): Record<string, unknown> {
    const next = { ...fields };
    switch (spec.name) {
      case 'networks':
        next.status = 'available';
        break;
      case 'volumes':
        next.status = 'attached';
        break;
      case 'services':
        next.status = next.replicas === 0 ? 'stopped' : 'running';
        break;
      case 'instances':
        next.status = 'running';
        if (!previous || previous.network_id !== next.network_id || !previous.private_ip) {
          next.private_ip = this.allocateIp(String(next.network_id), id);
        }
        break;
      case 'buckets':
        break;
    }
    return next;
  }

  /** The lowest free host address of a network's block; 409 when the block is full. */
  private allocateIp(networkId: string, instanceId: string): string {
    const network = this.state.get('networks', networkId);
    const [address = '', prefixText = '32'] = String(network?.fields.cidr).split('/');
    const prefix = Number(prefixText);
    const size = 2 ** (32 - prefix);
    const base = address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
    const start = base - (base % size);
    const used = new Set(
      this.state
        .list('instances')
        .filter((i) => i.id !== instanceId && i.fields.network_id === networkId)
        .map((i) => i.fields.private_ip),
    );
    // Skip the network and broadcast addresses where the block is big enough to have them.
    const [first, last] = size > 2 ? [start + 1, start + size - 2] : [start, start + size - 1];
    for (let n = first; n <= last; n++) {
      const ip = [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
      if (!used.has(ip)) return ip;
    }
    throw new SandboxError(
      409,
      'network_full',
      `network ${networkId} has no free address left: use a network with a larger block`,
      'network_id',
    );
  }

  private newId(spec: TypeSpec): string {
    for (;;) {
      const id = `${spec.idPrefix ?? ''}${randomBytes(4).toString('hex')}`;
      if (!this.state.get(spec.name, id)) return id;
    }
  }

  private audit(
    by: Attribution,
    action: AuditEntry['action'],
    spec: TypeSpec,
    id: string,
    before: Record<string, unknown> | null,
    after: Record<string, unknown> | null,
  ): void {
    const entry = this.state.appendAudit({
      time: new Date(this.options.now()).toISOString(),
      actor: by.actor,
      actorKind: by.actorKind,
      intent: by.intent,
      motivation: by.motivation,
      action,
      type: spec.name,
      id,
      before,
      after,
    });
    this.options.onAudit?.(entry);
  }
}

function noun(spec: TypeSpec): string {
  return spec.singular.toLowerCase();
}

function notFound(spec: TypeSpec, id: string): SandboxError {
  return new SandboxError(
    404,
    'not_found',
    `no ${noun(spec)} "${id}" exists (or it is not visible yet)`,
  );
}

/** An object as reads return it: without secrets. */
export function publicView(
  spec: TypeSpec,
  fields: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const view: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    if (!spec.fields[name]?.sensitive) view[name] = value;
  }
  return view;
}

function withDefaults(spec: TypeSpec, body: Record<string, unknown>): Record<string, unknown> {
  const filled = { ...body };
  for (const [name, field] of Object.entries(spec.fields)) {
    if (field.default !== undefined && !(name in filled)) filled[name] = field.default;
  }
  return filled;
}

/** Secrets are kept only as digests: the sandbox can tell a rotation, and never leaks the value. */
function hideSecrets(spec: TypeSpec, fields: Record<string, unknown>): Record<string, unknown> {
  const hidden = { ...fields };
  for (const [name, field] of Object.entries(spec.fields)) {
    const value = hidden[name];
    if (field.sensitive && typeof value === 'string') hidden[name] = `sha256:${digest(value)}`;
  }
  return hidden;
}

/** Fields in the order the type declares them (so responses read naturally). */
function ordered(spec: TypeSpec, fields: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const name of Object.keys(spec.fields)) {
    if (fields[name] !== undefined) result[name] = fields[name];
  }
  return result;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** JSON with object keys sorted, so equal values give equal text. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
