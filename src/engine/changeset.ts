import type {
  Address,
  Changeset,
  ChangesetOptions,
  ObservedObject,
  Pin,
  Plan,
  StaleObject,
} from '../core/index.js';
import {
  TendError,
  canonicalJson,
  comparePin,
  findReferences,
  getPath,
  intentHash,
  policiesHash,
  verdictText,
  isUnknown,
  pinOf,
  toChangeset,
  touchedAddresses,
  setKey,
} from '../core/index.js';
import type { Observation } from './observe.js';
import type { PlannedPass, PlanOptions } from './planner.js';
import { planPass } from './planner.js';
import { admitPlan } from './policy-gate.js';
import { isSecretRef } from './secrets.js';
import type { Workspace } from './workspace.js';

// Changesets (docs/decisions/0007-changesets.md): `tend plan --out` saves a plan with the observed
// version of everything it touches; `tend apply <changeset>` observes again and runs the saved plan
// only when nothing it was computed from has moved. These are the engine halves of both; the app
// layer takes the workspace lease and observes around them.

/** `policiesHash` of an intent without policies: what a changeset made before them was planned with. */
const EMPTY_POLICIES = policiesHash({ policies: [] });
/**
 * The field paths a changeset compares for each address, so that plan and apply hash the same
 * thing: a declared resource's declared leaf fields (declared keys of declared objects, as the diff
 * compares them) without secrets, server-owned and write-only fields; a removed resource's writable
 * fields (nothing declares it any more, and its delete destroys all of it); plus, for every
 * address, the paths that touched steps read from it through references.
 */
export function comparedPaths(ws: Workspace, plan: Plan): Map<Address, string[]> {
  const decls = new Map(ws.intent.resources.map((r) => [r.address, r] as const));
  const touched = touchedAddresses(plan);
  const steps = new Map(plan.steps.map((s) => [s.address, s] as const));
  const out = new Map<Address, Set<string>>();
  for (const a of touched) {
    const paths = new Set<string>();
    out.set(a, paths);
    const type = decls.get(a)?.type ?? steps.get(a)?.type;
    if (type === undefined) continue;
    const { info } = ws.typeOf(type);
    const skip = new Set([
      ...info.sensitive,
      ...(info.serverOwned ?? []),
      ...(info.writeOnly ?? []),
      ...info.outputOnly,
    ]);
    const decl = decls.get(a);
    if (decl) {
      const walk = (v: unknown, prefix: string): void => {
        if (isPlainObject(v) && !isSecretRef(v) && Object.keys(v).length > 0) {
          for (const [k, item] of Object.entries(v)) walk(item, `${prefix}.${k}`);
        } else {
          paths.add(prefix);
        }
      };
      for (const [k, v] of Object.entries(decl.spec)) {
        if (!skip.has(k) && !isSecretRef(v)) walk(v, k);
      }
    } else {
      const props = info.schema['properties'];
      for (const k of isPlainObject(props) ? Object.keys(props) : []) {
        if (!skip.has(k)) paths.add(k);
      }
    }
  }
  // What a step reads through a reference is part of what it was computed from.
  for (const s of plan.steps) {
    if (s.kind === 'noop' || s.kind === 'delete') continue;
    const decl = decls.get(s.address);
    if (!decl) continue;
    for (const ref of findReferences(decl.spec).refs) out.get(ref.target)?.add(ref.path);
  }
  return new Map([...out].map(([a, p]) => [a, [...p].sort()] as const));
}

/**
 * The pins of everything a plan touches, from an observation: absent where no object exists, else
 * the object's id, version and a hash of each compared field's normalised value. An object that was
 * just created but is not visible yet counts as present (with no fields): it exists.
 */
export function pinsOf(ws: Workspace, plan: Plan, observation: Observation): Pin[] {
  const paths = comparedPaths(ws, plan);
  const typeOf = new Map(plan.steps.map((s) => [s.address, s.type] as const));
  for (const r of ws.intent.resources) typeOf.set(r.address, r.type);
  const pins: Pin[] = [];
  for (const [address, compared] of paths) {
    const type = typeOf.get(address) ?? observation.twin.get(address)?.type;
    if (type === undefined) {
      throw new TendError('changeset.internal', `${address} is touched by the plan but unknown`);
    }
    const object = observation.objects.get(address);
    if (!object) {
      const pending = observation.pendingVisibility.has(address);
      const id = observation.twin.get(address)?.objectId;
      pins.push(
        pending && id !== undefined
          ? pinOf({ address, type, object: { id }, fields: {} })
          : pinOf({ address, type }),
      );
      continue;
    }
    pins.push(
      pinOf({ address, type, object, fields: normalisedFields(ws, type, object, compared) }),
    );
  }
  return pins;
}

function normalisedFields(
  ws: Workspace,
  type: string,
  object: ObservedObject,
  paths: readonly string[],
): Record<string, unknown> {
  const { provider, info } = ws.typeOf(type);
  const out: Record<string, unknown> = {};
  for (const path of paths) {
    const v = getPath(object.fields, path);
    setKey(
      out,
      path,
      provider.normalize && v !== undefined ? provider.normalize(info.name, path, v) : v,
    );
  }
  return out;
}

/** Options a changeset is planned with; the same as `tend plan`'s flags. */
export interface ChangesetPlanOptions extends ChangesetOptions {
  /** The intent directory to record (default: the workspace's, as loaded). */
  readonly intentDir?: string;
}

/**
 * Turns a planned pass into a changeset: the plan as computed, the options it was computed with,
 * the workspace, the intent's hash, and the pins of everything it touches from the same observation.
 */
export function makeChangeset(
  ws: Workspace,
  planned: PlannedPass,
  options: ChangesetPlanOptions,
  createdAt: Date,
): Changeset {
  return toChangeset({
    workspace: ws.name,
    intentDir: options.intentDir ?? ws.intent.dir,
    intentHash: intentHash(ws.intent),
    policiesHash: policiesHash(ws.intent),
    policyVerdicts: admitPlan(ws, planned)
      .filter((v) => v.result !== 'pass')
      .map((v) => `${v.address}: ${verdictText(v)}`),
    options: {
      approveDestroy: options.approveDestroy,
      prune: options.prune,
      targets: options.targets,
    },
    plan: planned.plan,
    pins: pinsOf(ws, planned.plan, planned.observation),
    createdAt,
  });
}

/**
 * Why a changeset cannot be applied to this workspace at all, or undefined: it was made for another
 * workspace, or the intent changed since (`changeset.other_workspace`, `changeset.intent_changed`).
 */
export function changesetRefusal(ws: Workspace, changeset: Changeset): TendError | undefined {
  if (changeset.workspace !== ws.name) {
    return new TendError(
      'changeset.other_workspace',
      `the changeset was made for workspace ${changeset.workspace}, not ${ws.name}; run tend plan again for this one`,
      { phase: 'apply' },
    );
  }
  if ((changeset.intent.policies ?? EMPTY_POLICIES) !== policiesHash(ws.intent)) {
    return new TendError(
      'changeset.policies_changed',
      `the policies changed since the plan was made (its verdicts were computed with others); run tend plan again`,
      { phase: 'apply', hint: `the changeset was planned from ${changeset.intent.dir}` },
    );
  }
  if (changeset.intent.hash !== intentHash(ws.intent)) {
    return new TendError(
      'changeset.intent_changed',
      `the intent changed since the plan was made; run tend plan again`,
      { phase: 'apply', hint: `the changeset was planned from ${changeset.intent.dir}` },
    );
  }
  return undefined;
}

/**
 * The objects a changeset pinned that moved since, observed now: each with `changed` (and the fields
 * that moved, when the hashes can tell), `deleted` or `appeared`. Empty when the saved plan may run.
 * Throws the `changesetRefusal` error first when the changeset is not this workspace's or the intent
 * changed. Never mutates anything.
 */
export function staleSteps(
  ws: Workspace,
  changeset: Changeset,
  observation: Observation,
): StaleObject[] {
  const refusal = changesetRefusal(ws, changeset);
  if (refusal) throw refusal;
  const now = new Map(pinsOf(ws, changeset.plan, observation).map((p) => [p.address, p] as const));
  const stale: StaleObject[] = [];
  for (const pinned of changeset.pins) {
    const current =
      now.get(pinned.address) ?? pinOf({ address: pinned.address, type: pinned.type });
    const moved = comparePin(pinned, current);
    if (moved) stale.push(moved);
  }
  return stale;
}

/** The error `tend apply <changeset>` exits with when objects moved: each one named on its line. */
export function staleChangesetError(stale: readonly StaleObject[]): TendError {
  const n = stale.length;
  return new TendError(
    'changeset.stale',
    `${n} object${n === 1 ? '' : 's'} changed since the plan was made; nothing was sent:\n${stale.map((s) => `  ${s.message}`).join('\n')}`,
    { phase: 'apply', hint: 'run tend plan again, review it, and apply the new changeset' },
  );
}

/**
 * The addresses whose saved step is not the step the intent and the current observation give
 * (planned again with the changeset's own options): a plan edited by hand, or a platform whose
 * lifecycle answers changed. The saved plan is what runs; this only decides whether it may.
 */
export async function unexpectedSteps(
  ws: Workspace,
  changeset: Changeset,
  observation: Observation,
  overrides?: PlanOptions['overrides'],
): Promise<Address[]> {
  const fresh = await planPass(ws, observation, {
    ...changeset.options,
    ...(overrides ? { overrides } : {}),
  });
  const saved = new Map(changeset.plan.steps.map((s) => [s.address, canonicalJson(s)] as const));
  const got = new Map(fresh.plan.steps.map((s) => [s.address, canonicalJson(s)] as const));
  const out = new Set<Address>();
  for (const [a, s] of saved) if (got.get(a) !== s) out.add(a);
  for (const a of got.keys()) if (!saved.has(a)) out.add(a);
  // Order matters too: the executor follows the saved order.
  if (
    out.size === 0 &&
    canonicalJson(changeset.plan.steps.map((s) => s.address)) !==
      canonicalJson(fresh.plan.steps.map((s) => s.address))
  ) {
    for (const a of saved.keys()) out.add(a);
  }
  return [...out].sort();
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !isUnknown(v);
}

/** What `tend apply <changeset>` may do, decided before anything is sent. */
export type ChangesetVerdict =
  | { readonly kind: 'run'; readonly plan: Plan }
  | {
      readonly kind: 'refused';
      /** The error to exit 1 with: `changeset.other_workspace`, `.intent_changed`, `.stale`, `.unexpected`. */
      readonly error: TendError;
      /** The pinned objects that moved (empty for the other refusals). */
      readonly stale: readonly StaleObject[];
      /** The addresses whose saved step is not the step planned now (empty unless `.unexpected`). */
      readonly unexpected: readonly Address[];
    };

/**
 * Every check `tend apply <changeset>` makes, in order, over an observation taken under the
 * workspace lease: the changeset is this workspace's and the intent is unchanged; no pinned object
 * moved; the saved steps are the steps the intent gives now. `run` carries the saved plan, to be
 * executed exactly; anything else is a refusal with nothing sent. Never mutates anything.
 */
export async function checkChangeset(
  ws: Workspace,
  changeset: Changeset,
  observation: Observation,
  overrides?: PlanOptions['overrides'],
): Promise<ChangesetVerdict> {
  const refusal = changesetRefusal(ws, changeset);
  if (refusal) return { kind: 'refused', error: refusal, stale: [], unexpected: [] };
  const stale = staleSteps(ws, changeset, observation);
  if (stale.length > 0) {
    return { kind: 'refused', error: staleChangesetError(stale), stale, unexpected: [] };
  }
  const unexpected = await unexpectedSteps(ws, changeset, observation, overrides);
  if (unexpected.length > 0) {
    return {
      kind: 'refused',
      error: new TendError(
        'changeset.unexpected',
        `the saved plan is not the plan the intent gives for what exists now (edited by hand?); nothing was sent. Steps that differ: ${unexpected.join(', ')}`,
        { phase: 'apply', hint: 'run tend plan again, review it, and apply the new changeset' },
      ),
      stale: [],
      unexpected,
    };
  }
  return { kind: 'run', plan: changeset.plan };
}
