import type { Address } from './address.js';
import { parseAddress } from './address.js';
import type { Diagnostic } from './diagnostic.js';
import type { FieldChange } from './diff.js';
import { TendError } from './errors.js';
import { canonicalJson, hashValue, sha256 } from './hash.js';
import type { Intent } from './intent.js';
import type { FoundBy, Plan, PlanStep } from './plan.js';
import { STEP_KINDS } from './plan.js';
import { MAX_INPUT_DEPTH, defineKey, isForbiddenKey, setKey } from './safe-keys.js';

/**
 * A changeset is a saved plan pinned to what it was computed from (DESIGN.md §2): the workspace, a
 * hash of the intent, the options, the plan itself, and for every resource the plan touches the
 * observed version it saw. `tend apply <changeset>` runs exactly that plan, and refuses when any
 * pinned object moved since (docs/decisions/0007-changesets.md).
 */

/** The format tag of the changesets this Tend writes and reads. */
export const CHANGESET_FORMAT = 'tend.changeset/1';

/** The options a plan was computed with; apply re-uses them as they are. */
export interface ChangesetOptions {
  readonly approveDestroy: boolean;
  readonly prune: boolean;
  /** The `--target` addresses the plan was limited to (empty: the whole intent). */
  readonly targets: readonly Address[];
}

/** The object at an address did not exist when the plan was made (the plan creates it). */
export interface AbsentPin {
  readonly kind: 'absent';
  readonly address: Address;
  /** `provider.resourceType`. */
  readonly type: string;
}

/**
 * The object at an address as the plan saw it: its id, the platform's version when it reports one,
 * and a hash of each compared field's normalised value (declared fields and fields read through
 * references; never server-owned ones, which move by themselves).
 */
export interface PresentPin {
  readonly kind: 'present';
  readonly address: Address;
  /** `provider.resourceType`. */
  readonly type: string;
  readonly objectId: string;
  /** The platform's version (a version field or an ETag), when it reports one. */
  readonly version?: string;
  /** Dotted field path → `hashValue` of the normalised observed value at that path. */
  readonly fields: Readonly<Record<string, string>>;
}

/** What a changeset pinned for one touched address, tagged by `kind`. */
export type Pin = AbsentPin | PresentPin;

/** A saved plan, frozen data that survives a JSON round trip (Unknown placeholders included). */
export interface Changeset {
  readonly format: typeof CHANGESET_FORMAT;
  /** The workspace whose objects the plan acts on. */
  readonly workspace: string;
  /**
   * The intent directory as the planner was given it, `intentHash` of its content, and
   * `policiesHash` of its Policy documents (absent in changesets made before policies: as if none).
   */
  readonly intent: { readonly dir: string; readonly hash: string; readonly policies?: string };
  /**
   * The policy verdicts the plan was computed with, as `tend plan` words them (`<address>: policy …
   * rule n violated: …`): every rule not passed on its predicted result. Absent: none.
   */
  readonly policyVerdicts?: readonly string[];
  readonly options: ChangesetOptions;
  /** When the plan was made (ISO 8601), as the caller's clock said. */
  readonly createdAt: string;
  readonly plan: Plan;
  /** One pin per address in `touchedAddresses(plan)`, sorted by address. */
  readonly pins: readonly Pin[];
}

/** Everything `toChangeset` needs; the engine computes the pins (`src/engine/changeset.ts`). */
export interface ChangesetInput {
  readonly workspace: string;
  readonly intentDir: string;
  readonly intentHash: string;
  /** `policiesHash` of the intent's Policy documents. */
  readonly policiesHash?: string;
  readonly policyVerdicts?: readonly string[];
  readonly options: ChangesetOptions;
  readonly plan: Plan;
  readonly pins: readonly Pin[];
  readonly createdAt: Date | string;
}

/**
 * The addresses a plan touches, sorted: every resource with a step other than noop, plus the
 * resources a create, update or replace reads through references (its `dependsOn`).
 */
export function touchedAddresses(plan: Plan): Address[] {
  const out = new Set<Address>();
  for (const s of plan.steps) {
    if (s.kind === 'noop') continue;
    out.add(s.address);
    if (s.kind !== 'delete') for (const d of s.dependsOn) out.add(d);
  }
  return [...out].sort();
}

/**
 * A hash of the intent's Policy documents as validated, without where they were written: a saved
 * plan is refused when they changed since it was made (its verdicts were computed with others).
 */
export function policiesHash(intent: Pick<Intent, 'policies'>): string {
  return sha256(
    canonicalJson(
      (intent.policies ?? []).map(({ source: _s, variables, validations, ...p }) => ({
        ...p,
        variables: variables.map(({ source: _v, ...v }) => v),
        validations: validations.map(({ source: _r, ...r }) => r),
      })),
    ),
  );
}

/**
 * A hash of the intent's content: providers and resources as validated, without where they were
 * written (line numbers, the directory; documents inside it by relative path) — moving the intent
 * or a document, or adding a comment, changes nothing. Resource labels and Arbitration documents are
 * left out too: they steer arbitration of drift, never what a plan does.
 */
export function intentHash(intent: Intent): string {
  // Documents inside the intent directory are named relative to it, so a checkout elsewhere (CI)
  // hashes the same.
  const inside = intent.dir.endsWith('/') ? intent.dir : `${intent.dir}/`;
  const rel = (p: string) => (p.startsWith(inside) ? p.slice(inside.length) : p);
  const content = {
    providers: intent.providers.map(({ source: _s, ...p }) =>
      p.type === 'openapi'
        ? {
            ...p,
            spec: rel(p.spec),
            ...(p.overlay !== undefined ? { overlay: rel(p.overlay) } : {}),
          }
        : {
            ...p,
            ...(p.connection?.fromFile !== undefined
              ? { connection: { fromFile: rel(p.connection.fromFile) } }
              : {}),
            ...(p.sslRootCert !== undefined ? { sslRootCert: rel(p.sslRootCert) } : {}),
          },
    ),
    resources: intent.resources.map(({ source: _s, labels: _l, checks, ...r }) => ({
      ...r,
      checks: checks.map(({ source: _c, ...c }) => c),
    })),
  };
  return sha256(canonicalJson(content));
}

/** The pin of one address: absent, or the object's id, version and a hash per compared field. */
export function pinOf(input: {
  readonly address: Address;
  readonly type: string;
  readonly object?: { readonly id: string; readonly version?: string };
  /** Compared field path → the normalised observed value at that path. */
  readonly fields?: Readonly<Record<string, unknown>>;
}): Pin {
  const { address, type, object } = input;
  if (!object) return { kind: 'absent', address, type };
  const fields: Record<string, string> = {};
  for (const path of Object.keys(input.fields ?? {}).sort()) {
    setKey(fields, path, hashValue(input.fields![path] ?? null));
  }
  return {
    kind: 'present',
    address,
    type,
    objectId: object.id,
    ...(object.version !== undefined ? { version: object.version } : {}),
    fields,
  };
}

/**
 * Builds a changeset. Throws when the pins do not cover exactly what the plan touches, or disagree
 * with its steps (a bug in the caller, never user input).
 */
export function toChangeset(input: ChangesetInput): Changeset {
  const pins = [...input.pins].sort((a, b) => (a.address < b.address ? -1 : 1));
  const changeset: Changeset = {
    format: CHANGESET_FORMAT,
    workspace: input.workspace,
    intent: {
      dir: input.intentDir,
      hash: input.intentHash,
      ...(input.policiesHash !== undefined ? { policies: input.policiesHash } : {}),
    },
    ...(input.policyVerdicts && input.policyVerdicts.length > 0
      ? { policyVerdicts: [...input.policyVerdicts] }
      : {}),
    options: {
      approveDestroy: input.options.approveDestroy,
      prune: input.options.prune,
      targets: [...input.options.targets].sort(),
    },
    createdAt:
      typeof input.createdAt === 'string' ? input.createdAt : input.createdAt.toISOString(),
    plan: structuredClone<Plan>(input.plan),
    pins: structuredClone(pins),
  };
  const problems = consistency(changeset);
  if (problems.length > 0) {
    throw new TendError(
      'changeset.internal',
      `the changeset does not agree with its plan: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`,
    );
  }
  return deepFreeze(changeset);
}

/** The changeset as stable, pretty JSON (two-space indent, keys sorted, a final newline). */
export function serializeChangeset(changeset: Changeset): string {
  return `${JSON.stringify(sortedKeys(changeset), null, 2)}\n`;
}

/** Why an object pinned by a changeset is no longer what the plan was computed from. */
export interface StaleObject {
  /**
   * `changed`: the object (or the platform's version of it) differs; `deleted`: it is gone;
   * `appeared`: the plan creates it, and an object exists at that address now.
   */
  readonly kind: 'changed' | 'deleted' | 'appeared';
  readonly address: Address;
  readonly type: string;
  /** The compared fields whose value moved, when the field hashes can tell (sorted). */
  readonly fields: readonly string[];
  /** The object's id then and now, when the address now holds another object. */
  readonly objectId?: { readonly before?: string; readonly after?: string };
  /** The platform's version then and now, when it reports one. */
  readonly version?: { readonly before: string; readonly after: string };
  /** One line for people, naming the object. */
  readonly message: string;
}

/**
 * Compares a pin with the pin of what exists now (taken over the same fields). The platform's
 * version decides when both pins carry one; otherwise the field hashes do.
 */
export function comparePin(pinned: Pin, now: Pin): StaleObject | undefined {
  const { address, type } = pinned;
  if (pinned.kind === 'absent') {
    if (now.kind === 'absent') return undefined;
    return {
      kind: 'appeared',
      address,
      type,
      fields: [],
      objectId: { after: now.objectId },
      message: `${address}: an object (${now.objectId}) exists there now; the plan was to create it`,
    };
  }
  if (now.kind === 'absent') {
    return {
      kind: 'deleted',
      address,
      type,
      fields: [],
      objectId: { before: pinned.objectId },
      message: `${address}: the object ${pinned.objectId} was deleted since the plan was made`,
    };
  }
  const moved = [...new Set([...Object.keys(pinned.fields), ...Object.keys(now.fields)])]
    .filter((f) => pinned.fields[f] !== now.fields[f])
    .sort();
  if (pinned.objectId !== now.objectId) {
    return {
      kind: 'changed',
      address,
      type,
      fields: moved,
      objectId: { before: pinned.objectId, after: now.objectId },
      message: `${address}: is another object now (${now.objectId}, was ${pinned.objectId})`,
    };
  }
  const versions = pinned.version !== undefined && now.version !== undefined;
  if (versions && pinned.version === now.version) return undefined;
  if (!versions && moved.length === 0) return undefined;
  const what = moved.length > 0 ? `: ${moved.join(', ')}` : '';
  return {
    kind: 'changed',
    address,
    type,
    fields: moved,
    ...(versions ? { version: { before: pinned.version, after: now.version } } : {}),
    message: versions
      ? `${address}: changed since the plan was made (version ${pinned.version} → ${now.version})${what}`
      : `${address}: changed since the plan was made${what}`,
  };
}

// --- parsing hostile input ------------------------------------------------------------------------

/** The outcome of `parseChangeset`: the changeset, or every problem found, each with its JSON path. */
export type ParsedChangeset =
  | { readonly kind: 'ok'; readonly changeset: Changeset }
  | { readonly kind: 'invalid'; readonly diagnostics: readonly Diagnostic[] };

/** Deeper values are refused (a hand-made file cannot make the checks overflow the stack). */
const MAX_DEPTH = MAX_INPUT_DEPTH;

interface Problem {
  readonly code: string;
  readonly path: string;
  readonly message: string;
}

/**
 * Reads a changeset from text that may have been edited by hand or come from a pull request. Never
 * throws: wrong JSON, another format, missing or mistyped fields, unknown keys, `__proto__`-like keys,
 * and pins that disagree with the plan each give a diagnostic naming the file and the JSON path.
 */
export function parseChangeset(text: string, file: string): ParsedChangeset {
  const fail = (problems: readonly Problem[]): ParsedChangeset => ({
    kind: 'invalid',
    diagnostics: problems.map((p) => ({
      code: p.code,
      severity: 'error' as const,
      message: `${file}: ${p.path}: ${p.message}`,
      file,
      path: p.path,
      hint: 'a changeset is written by `tend plan --out`; make a new one rather than edit it',
    })),
  });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return fail([{ code: 'changeset.json', path: '$', message: `is not JSON (${why})` }]);
  }
  const shape: Problem[] = [];
  checkShape(raw, '$', 0, shape);
  if (shape.length > 0) return fail(shape);
  const problems: Problem[] = [];
  const changeset = readChangeset(raw, problems);
  if (!changeset || problems.length > 0) return fail(problems);
  const inconsistent = consistency(changeset);
  if (inconsistent.length > 0) return fail(inconsistent);
  return { kind: 'ok', changeset: deepFreeze(changeset) };
}

/** At most this many shape problems are reported: a hostile file cannot flood the terminal. */
const MAX_SHAPE_PROBLEMS = 20;

/**
 * Refuses prototype-like keys and excessive depth anywhere in a parsed JSON value, adding what it
 * finds to `out` (at most MAX_SHAPE_PROBLEMS).
 */
function checkShape(v: unknown, path: string, depth: number, out: Problem[]): void {
  if (v === null || typeof v !== 'object' || out.length >= MAX_SHAPE_PROBLEMS) return;
  if (depth >= MAX_DEPTH) {
    out.push({
      code: 'changeset.depth',
      path,
      message: `is nested deeper than ${MAX_DEPTH} levels`,
    });
    return;
  }
  if (Array.isArray(v)) {
    v.forEach((item, i) => checkShape(item, `${path}[${i}]`, depth + 1, out));
    return;
  }
  for (const k of Object.keys(v)) {
    if (out.length >= MAX_SHAPE_PROBLEMS) break;
    const at = childPath(path, k);
    if (isForbiddenKey(k)) {
      out.push({ code: 'changeset.forbidden_key', path: at, message: `the key "${k}" is refused` });
      continue;
    }
    checkShape((v as Record<string, unknown>)[k], at, depth + 1, out);
  }
}

function childPath(path: string, key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${quoted(key)}]`;
}

/** A value as JSON for a message, cut short: a hostile file cannot flood the terminal. */
function quoted(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function describeType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${quoted(v)}`;
}

/** A reader of one JSON object that records a problem per missing, mistyped or unknown member. */
class Reader {
  readonly ok: boolean;
  private readonly obj: Record<string, unknown>;
  constructor(
    private readonly problems: Problem[],
    readonly path: string,
    value: unknown,
    private readonly known: readonly string[],
  ) {
    this.ok = value !== null && typeof value === 'object' && !Array.isArray(value);
    this.obj = this.ok ? (value as Record<string, unknown>) : {};
    if (!this.ok) {
      this.problem('changeset.type', path, `must be an object, not ${describeType(value)}`);
      return;
    }
    for (const k of Object.keys(this.obj)) {
      if (!known.includes(k)) {
        this.problem(
          'changeset.unknown_key',
          childPath(path, k),
          `is not a member this format knows (expected ${known.join(', ')})`,
        );
      }
    }
  }
  problem(code: string, path: string, message: string): void {
    this.problems.push({ code, path, message });
  }
  has(key: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.obj, key);
  }
  raw(key: string, optional = false): unknown {
    if (!this.has(key)) {
      if (!optional && this.ok)
        this.problem('changeset.missing', childPath(this.path, key), 'is missing');
      return undefined;
    }
    return this.obj[key];
  }
  string(key: string, optional = false): string | undefined {
    const v = this.raw(key, optional);
    if (v === undefined) return undefined;
    if (typeof v === 'string' && v !== '') return v;
    this.problem(
      'changeset.type',
      childPath(this.path, key),
      `must be a non-empty string, not ${describeType(v)}`,
    );
    return undefined;
  }
  boolean(key: string): boolean | undefined {
    const v = this.raw(key);
    if (v === undefined) return undefined;
    if (typeof v === 'boolean') return v;
    this.problem(
      'changeset.type',
      childPath(this.path, key),
      `must be true or false, not ${describeType(v)}`,
    );
    return undefined;
  }
  address(key: string): Address | undefined {
    const v = this.string(key);
    return v === undefined ? undefined : checkAddress(this.problems, childPath(this.path, key), v);
  }
  array(key: string): unknown[] | undefined {
    const v = this.raw(key);
    if (v === undefined) return undefined;
    if (Array.isArray(v)) return v as unknown[];
    this.problem(
      'changeset.type',
      childPath(this.path, key),
      `must be an array, not ${describeType(v)}`,
    );
    return undefined;
  }
  addresses(key: string): Address[] | undefined {
    const list = this.array(key);
    if (!list) return undefined;
    const out: Address[] = [];
    list.forEach((v, i) => {
      const at = `${childPath(this.path, key)}[${i}]`;
      if (typeof v !== 'string') {
        this.problem('changeset.type', at, `must be an address string, not ${describeType(v)}`);
        return;
      }
      const a = checkAddress(this.problems, at, v);
      if (a) out.push(a);
    });
    return out;
  }
  strings(key: string): string[] | undefined {
    const list = this.array(key);
    if (!list) return undefined;
    const out: string[] = [];
    list.forEach((v, i) => {
      if (typeof v === 'string') out.push(v);
      else
        this.problem(
          'changeset.type',
          `${childPath(this.path, key)}[${i}]`,
          `must be a string, not ${describeType(v)}`,
        );
    });
    return out;
  }
  /** A member that is any JSON value (present, possibly absent when `optional`). */
  value(key: string, optional = false): unknown {
    return this.raw(key, optional);
  }
}

function checkAddress(problems: Problem[], path: string, v: string): Address | undefined {
  if (parseAddress(v)) return v as Address;
  problems.push({
    code: 'changeset.address',
    path,
    message: `${quoted(v)} is not an address (provider.type/name)`,
  });
  return undefined;
}

const TOP_KEYS = [
  'format',
  'workspace',
  'intent',
  'policyVerdicts',
  'options',
  'createdAt',
  'plan',
  'pins',
];

function readChangeset(raw: unknown, problems: Problem[]): Changeset | undefined {
  const top = new Reader(problems, '$', raw, TOP_KEYS);
  if (!top.ok) return undefined;
  const format = top.raw('format');
  if (format === undefined) {
    problems.length = 0;
    problems.push({
      code: 'changeset.format',
      path: '$.format',
      message: `is missing: this is not a Tend changeset (expected format "${CHANGESET_FORMAT}")`,
    });
    return undefined;
  }
  if (format !== CHANGESET_FORMAT) {
    const other =
      typeof format === 'string' && format.startsWith('tend.changeset/')
        ? `is ${quoted(format)}, a changeset format this Tend does not read (it reads "${CHANGESET_FORMAT}")`
        : `is ${describeType(format)}: this is not a Tend changeset (expected "${CHANGESET_FORMAT}")`;
    // Another format's other members mean nothing here: this one problem says it all.
    problems.length = 0;
    problems.push({ code: 'changeset.format', path: '$.format', message: other });
    return undefined;
  }
  const workspace = top.string('workspace');
  const intentR = new Reader(problems, '$.intent', top.value('intent'), [
    'dir',
    'hash',
    'policies',
  ]);
  const dir = intentR.ok ? intentR.string('dir') : undefined;
  const hash = intentR.ok ? intentR.string('hash') : undefined;
  const policies = intentR.ok ? intentR.string('policies', true) : undefined;
  for (const [key, v] of [
    ['hash', hash],
    ['policies', policies],
  ] as const) {
    if (v !== undefined && !/^[0-9a-f]{64}$/.test(v)) {
      problems.push({
        code: 'changeset.type',
        path: `$.intent.${key}`,
        message: 'must be 64 lower-case hex digits (a SHA-256)',
      });
    }
  }
  const policyVerdicts = top.has('policyVerdicts') ? top.strings('policyVerdicts') : undefined;
  const optR = new Reader(problems, '$.options', top.value('options'), [
    'approveDestroy',
    'prune',
    'targets',
  ]);
  const approveDestroy = optR.ok ? optR.boolean('approveDestroy') : undefined;
  const prune = optR.ok ? optR.boolean('prune') : undefined;
  const targets = optR.ok ? optR.addresses('targets') : undefined;
  const createdAt = top.string('createdAt');
  if (createdAt !== undefined && Number.isNaN(Date.parse(createdAt))) {
    problems.push({
      code: 'changeset.type',
      path: '$.createdAt',
      message: `${quoted(createdAt)} is not a date and time`,
    });
  }
  const plan = readPlan(problems, top.value('plan'));
  const pinsRaw = top.array('pins');
  const pins = pinsRaw?.map((p, i) => readPin(problems, `$.pins[${i}]`, p));
  if (problems.length > 0) return undefined;
  return {
    format: CHANGESET_FORMAT,
    workspace: workspace!,
    intent: { dir: dir!, hash: hash!, ...(policies !== undefined ? { policies } : {}) },
    ...(policyVerdicts !== undefined ? { policyVerdicts } : {}),
    options: { approveDestroy: approveDestroy!, prune: prune!, targets: targets! },
    createdAt: createdAt!,
    plan: plan!,
    pins: pins as Pin[],
  };
}

function readPlan(problems: Problem[], raw: unknown): Plan | undefined {
  const r = new Reader(problems, '$.plan', raw, ['steps', 'counts', 'gated', 'blastRadius']);
  if (!r.ok) return undefined;
  const steps = r.array('steps')?.map((s, i) => readStep(problems, `$.plan.steps[${i}]`, s));
  const countsR = new Reader(problems, '$.plan.counts', r.value('counts'), STEP_KINDS);
  const counts: Record<string, number> = {};
  if (countsR.ok) {
    for (const k of STEP_KINDS) {
      const v = countsR.value(k);
      if (v === undefined) continue;
      if (typeof v === 'number' && Number.isInteger(v) && v >= 0) counts[k] = v;
      else
        problems.push({
          code: 'changeset.type',
          path: `$.plan.counts.${k}`,
          message: `must be a whole number, not ${describeType(v)}`,
        });
    }
  }
  const gated = r.addresses('gated');
  const blastRadius = r.addresses('blastRadius');
  if (!steps || steps.some((s) => s === undefined) || !gated || !blastRadius) return undefined;
  return {
    steps: steps as PlanStep[],
    counts: counts as Plan['counts'],
    gated,
    blastRadius,
  };
}

const STEP_KEYS: Record<PlanStep['kind'], readonly string[]> = {
  create: ['kind', 'address', 'type', 'dependsOn', 'desired'],
  update: ['kind', 'address', 'type', 'dependsOn', 'objectId', 'changes'],
  replace: [
    'kind',
    'address',
    'type',
    'dependsOn',
    'objectId',
    'changes',
    'forcedBy',
    'decidedBy',
    'reason',
    'strategy',
    'gated',
    'gate',
    'blocked',
    'blastRadius',
    'movedFrom',
    'adopted',
  ],
  delete: [
    'kind',
    'address',
    'type',
    'dependsOn',
    'objectId',
    'gated',
    'gate',
    'gatedBy',
    'blocked',
    'blastRadius',
    'waitsFor',
  ],
  noop: ['kind', 'address', 'type', 'dependsOn', 'objectId'],
  move: ['kind', 'address', 'type', 'dependsOn', 'objectId', 'from', 'changes'],
  adopt: ['kind', 'address', 'type', 'dependsOn', 'objectId', 'foundBy', 'changes'],
  conflict: ['kind', 'address', 'type', 'dependsOn', 'objectId', 'owner'],
};

/** `marker`, `natural-key` or `record`: how an adopted object was found. */
function foundByOf(
  problems: Problem[],
  path: string,
  value: string | undefined,
): FoundBy | undefined {
  if (value === undefined || value === 'marker' || value === 'natural-key' || value === 'record') {
    return value;
  }
  problems.push({
    code: 'changeset.type',
    path,
    message: `must be marker, natural-key or record, not ${quoted(value)}`,
  });
  return undefined;
}

function readStep(problems: Problem[], path: string, raw: unknown): PlanStep | undefined {
  const kind =
    raw !== null && typeof raw === 'object' && !Array.isArray(raw)
      ? (raw as Record<string, unknown>)['kind']
      : undefined;
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
    if (!STEP_KINDS.includes(kind as PlanStep['kind'])) {
      problems.push({
        code: kind === undefined ? 'changeset.missing' : 'changeset.type',
        path: `${path}.kind`,
        message:
          kind === undefined
            ? 'is missing'
            : `must be one of ${STEP_KINDS.join(', ')}, not ${describeType(kind)}`,
      });
      return undefined;
    }
  }
  const r = new Reader(problems, path, raw, STEP_KEYS[kind as PlanStep['kind']] ?? []);
  if (!r.ok) return undefined;
  const before = problems.length;
  const address = r.address('address');
  const type = r.string('type');
  if (address && type && parseAddress(address)!.type !== type) {
    problems.push({
      code: 'changeset.type',
      path: `${path}.type`,
      message: `${quoted(type)} is not the type of ${address}`,
    });
  }
  const dependsOn = r.addresses('dependsOn');
  const base = { address: address!, type: type!, dependsOn: dependsOn! };
  const k = kind as PlanStep['kind'];
  let step: PlanStep | undefined;
  if (k === 'create') {
    const desired = r.value('desired');
    if (
      desired !== undefined &&
      (desired === null || typeof desired !== 'object' || Array.isArray(desired))
    ) {
      problems.push({
        code: 'changeset.type',
        path: `${path}.desired`,
        message: `must be an object, not ${describeType(desired)}`,
      });
    }
    step = { ...base, kind: k, desired: desired as Record<string, unknown> };
  } else if (k === 'noop') {
    step = { ...base, kind: k, objectId: r.string('objectId')! };
  } else if (k === 'update') {
    step = {
      ...base,
      kind: k,
      objectId: r.string('objectId')!,
      changes: readChanges(problems, r, path)!,
    };
  } else if (k === 'delete') {
    const blocked = r.string('blocked', true);
    const gate = r.string('gate', true);
    const gatedBy = r.has('gatedBy') ? r.address('gatedBy') : undefined;
    step = {
      ...base,
      kind: k,
      objectId: r.string('objectId')!,
      gated: r.boolean('gated')!,
      ...(gate !== undefined ? { gate } : {}),
      ...(gatedBy !== undefined ? { gatedBy } : {}),
      ...(blocked !== undefined ? { blocked } : {}),
      blastRadius: r.addresses('blastRadius')!,
      waitsFor: r.addresses('waitsFor')!,
    };
  } else if (k === 'move') {
    step = {
      ...base,
      kind: k,
      objectId: r.string('objectId')!,
      from: r.address('from')!,
      changes: readChanges(problems, r, path)!,
    };
  } else if (k === 'adopt') {
    step = {
      ...base,
      kind: k,
      objectId: r.string('objectId')!,
      foundBy: foundByOf(problems, `${path}.foundBy`, r.string('foundBy'))!,
      changes: readChanges(problems, r, path)!,
    };
  } else if (k === 'conflict') {
    step = { ...base, kind: k, objectId: r.string('objectId')!, owner: r.string('owner')! };
  } else {
    const decidedBy = r.string('decidedBy');
    if (decidedBy !== undefined && decidedBy !== 'platform' && decidedBy !== 'annotation') {
      problems.push({
        code: 'changeset.type',
        path: `${path}.decidedBy`,
        message: `must be platform or annotation, not ${quoted(decidedBy)}`,
      });
    }
    const strategy = r.string('strategy');
    if (
      strategy !== undefined &&
      strategy !== 'create-before-destroy' &&
      strategy !== 'delete-before-create'
    ) {
      problems.push({
        code: 'changeset.type',
        path: `${path}.strategy`,
        message: `must be create-before-destroy or delete-before-create, not ${quoted(strategy)}`,
      });
    }
    const reason = r.string('reason', true);
    const gate = r.string('gate', true);
    const blocked = r.string('blocked', true);
    const movedFrom = r.has('movedFrom') ? r.address('movedFrom') : undefined;
    const adopted = foundByOf(problems, `${path}.adopted`, r.string('adopted', true));
    step = {
      ...base,
      kind: k,
      objectId: r.string('objectId')!,
      changes: readChanges(problems, r, path)!,
      forcedBy: r.strings('forcedBy')!,
      decidedBy: decidedBy as 'platform' | 'annotation',
      ...(reason !== undefined ? { reason } : {}),
      strategy: strategy as 'create-before-destroy' | 'delete-before-create',
      gated: r.boolean('gated')!,
      ...(gate !== undefined ? { gate } : {}),
      ...(blocked !== undefined ? { blocked } : {}),
      blastRadius: r.addresses('blastRadius')!,
      ...(movedFrom !== undefined ? { movedFrom } : {}),
      ...(adopted !== undefined ? { adopted } : {}),
    };
  }
  return problems.length > before ? undefined : step;
}

function readChanges(problems: Problem[], r: Reader, path: string): FieldChange[] | undefined {
  const list = r.array('changes');
  if (!list) return undefined;
  return list.map((c, i) => {
    const cr = new Reader(problems, `${path}.changes[${i}]`, c, ['path', 'before', 'after']);
    const p = cr.ok ? cr.string('path') : undefined;
    const before = cr.ok ? cr.value('before', true) : undefined;
    const after = cr.ok ? cr.value('after') : undefined;
    return { path: p!, before, after };
  });
}

function readPin(problems: Problem[], path: string, raw: unknown): Pin | undefined {
  const kind =
    raw !== null && typeof raw === 'object' && !Array.isArray(raw)
      ? (raw as Record<string, unknown>)['kind']
      : undefined;
  const keys =
    kind === 'absent'
      ? ['kind', 'address', 'type']
      : ['kind', 'address', 'type', 'objectId', 'version', 'fields'];
  const r = new Reader(problems, path, raw, keys);
  if (!r.ok) return undefined;
  if (kind !== 'absent' && kind !== 'present') {
    problems.push({
      code: kind === undefined ? 'changeset.missing' : 'changeset.type',
      path: `${path}.kind`,
      message:
        kind === undefined ? 'is missing' : `must be absent or present, not ${describeType(kind)}`,
    });
    return undefined;
  }
  const address = r.address('address');
  const type = r.string('type');
  if (address && type && parseAddress(address)!.type !== type) {
    problems.push({
      code: 'changeset.type',
      path: `${path}.type`,
      message: `${quoted(type)} is not the type of ${address}`,
    });
  }
  if (kind === 'absent') return { kind, address: address!, type: type! };
  const objectId = r.string('objectId');
  const version = r.string('version', true);
  const fieldsRaw = r.value('fields');
  const fields: Record<string, string> = {};
  if (fieldsRaw !== undefined) {
    if (fieldsRaw === null || typeof fieldsRaw !== 'object' || Array.isArray(fieldsRaw)) {
      problems.push({
        code: 'changeset.type',
        path: `${path}.fields`,
        message: `must be an object of field hashes, not ${describeType(fieldsRaw)}`,
      });
    } else {
      for (const [f, h] of Object.entries(fieldsRaw)) {
        if (typeof h === 'string' && /^[0-9a-f]{16}$/.test(h)) setKey(fields, f, h);
        else
          problems.push({
            code: 'changeset.type',
            path: childPath(`${path}.fields`, f),
            message: `must be a field hash (16 hex digits), not ${describeType(h)}`,
          });
      }
    }
  }
  return {
    kind,
    address: address!,
    type: type!,
    objectId: objectId!,
    ...(version !== undefined ? { version } : {}),
    fields,
  };
}

/**
 * What must hold between a changeset's parts: counts and gates agree with the steps, each address
 * has one step and one pin, every touched address is pinned (nothing more), a create's pin is absent
 * and any other step's pin is the object the step acts on.
 */
function consistency(c: Changeset): Problem[] {
  const out: Problem[] = [];
  const counts = Object.fromEntries(STEP_KINDS.map((k) => [k, 0])) as Record<
    PlanStep['kind'],
    number
  >;
  const seen = new Set<Address>();
  c.plan.steps.forEach((s, i) => {
    counts[s.kind]++;
    if (seen.has(s.address)) {
      out.push({
        code: 'changeset.duplicate',
        path: `$.plan.steps[${i}].address`,
        message: `${s.address} has more than one step`,
      });
    }
    seen.add(s.address);
  });
  for (const k of STEP_KINDS) {
    if (c.plan.counts[k] !== counts[k]) {
      out.push({
        code: 'changeset.inconsistent',
        path: `$.plan.counts.${k}`,
        message: `is ${String(c.plan.counts[k])}, but the plan has ${counts[k]} ${k} step${counts[k] === 1 ? '' : 's'}`,
      });
    }
  }
  const gated = c.plan.steps
    .filter((s) => (s.kind === 'replace' || s.kind === 'delete') && s.gated)
    .map((s) => s.address);
  if (canonicalJson([...gated].sort()) !== canonicalJson([...c.plan.gated].sort())) {
    out.push({
      code: 'changeset.inconsistent',
      path: '$.plan.gated',
      message: `must list exactly the gated steps (${gated.join(', ') || 'none'})`,
    });
  }
  const pins = new Map<Address, { pin: Pin; i: number }>();
  c.pins.forEach((pin, i) => {
    if (pins.has(pin.address)) {
      out.push({
        code: 'changeset.duplicate',
        path: `$.pins[${i}].address`,
        message: `${pin.address} is pinned more than once`,
      });
    }
    pins.set(pin.address, { pin, i });
  });
  const touched = new Set(touchedAddresses(c.plan));
  for (const a of touched) {
    if (!pins.has(a)) {
      out.push({
        code: 'changeset.unpinned',
        path: '$.pins',
        message: `${a} is touched by the plan but not pinned`,
      });
    }
  }
  for (const [a, { i }] of pins) {
    if (!touched.has(a)) {
      out.push({
        code: 'changeset.inconsistent',
        path: `$.pins[${i}]`,
        message: `${a} is pinned but the plan does not touch it`,
      });
    }
  }
  c.plan.steps.forEach((s, i) => {
    const p = pins.get(s.address)?.pin;
    if (!p || s.kind === 'noop') return;
    const at = `$.plan.steps[${i}]`;
    if (p.type !== s.type) {
      out.push({
        code: 'changeset.inconsistent',
        path: `${at}.type`,
        message: `is ${s.type}, but its pin says ${p.type}`,
      });
    }
    if (s.kind === 'create' && p.kind !== 'absent') {
      out.push({
        code: 'changeset.inconsistent',
        path: at,
        message: `creates ${s.address}, but its pin says an object existed`,
      });
    }
    if (s.kind !== 'create' && (p.kind !== 'present' || p.objectId !== s.objectId)) {
      out.push({
        code: 'changeset.inconsistent',
        path: `${at}.objectId`,
        message: `acts on ${quoted(s.objectId)}, but the pin of ${s.address} is ${p.kind === 'present' ? quoted(p.objectId) : 'absent'}`,
      });
    }
  });
  return out;
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) defineKey(out, k, sortedKeys(v));
    }
    return out;
  }
  return value;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
