// The torture suite's machinery: run one case (a scenario, maybe a kill, maybe faults) against a
// sandbox process with the built CLI, then judge the result against the sandbox's own object dump
// and audit feed, never against what Tend says about itself.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { hasChanges } from '../../src/core/index.js';
import type { PassOptions, Workspace } from '../../src/engine/index.js';
import { IntentError, openWorkspaceAt as openWorkspace } from '../../src/app/index.js';
import { formatDiagnostic } from '../../src/core/index.js';
import { reconcilePass, systemClock, tendActor } from '../../src/engine/index.js';
import type {
  AuditEntry,
  FaultKind,
  FaultSettings,
  OracleObject,
} from '../../src/sandbox/index.js';
import { NO_FAULTS } from '../../src/sandbox/index.js';
import type { CliResult } from '../support/cli.js';
import { runCli } from '../support/cli.js';
import type { SandboxHandle } from '../support/sandbox-process.js';
import { startSandboxProcess } from '../support/sandbox-process.js';
import type { CrashAction } from '../../src/engine/crash-points.js';
import { CRASH_WHEN, WRITE_POINTS } from '../../src/engine/crash-points.js';
import { mulberry32 } from '../../src/sandbox/faults.js';
import type { IntentShape, Scenario } from './scenarios.js';
import { declared, intentYaml } from './scenarios.js';
import type { ChangeKind, World } from './world.js';
import { START, addresses, change, worldYaml } from './world.js';

/** The workspace every case uses (its name is in the ownership marker). */
export const WORKSPACE = 'torture';

/** True for the long set (`npm run torture`). */
export const LONG = process.env['TEND_TORTURE'] === 'long';

/**
 * Crash points (`when:point:action`) the scenarios cannot reach, with the reason. A point listed here
 * that is reached fails the suite, so the list cannot go stale.
 */
export const UNREACHED: Readonly<Record<string, string>> = {
  'before:twin:replace-delete':
    "step 2 of a replace writes no twin entry (the address's entry already names the new object)",
  'after:twin:replace-delete':
    "step 2 of a replace writes no twin entry (the address's entry already names the new object)",
};

/** Every crash point of an action that a scenario reaches, enumerated from the engine's lists. */
export function reachablePoints(action: CrashAction): string[] {
  const out: string[] = [];
  for (const point of WRITE_POINTS) {
    for (const when of CRASH_WHEN) {
      const spec = `${when}:${point}:${action}`;
      if (UNREACHED[spec] === undefined) out.push(spec);
    }
  }
  return out;
}

/**
 * A few sandbox processes that cases take turns on, so that two cases run at once (each CLI run is a
 * process of its own, and the machine has two cores). A case resets the sandbox it gets.
 */
export class SandboxPool {
  private readonly idle: SandboxHandle[] = [];
  private readonly waiting: ((s: SandboxHandle) => void)[] = [];
  private readonly all: SandboxHandle[] = [];

  static async start(size: number): Promise<SandboxPool> {
    const pool = new SandboxPool();
    const started = await Promise.all(
      Array.from({ length: size }, () =>
        // Given, eventual consistency may be switched on per case (no promise of consistent reads).
        startSandboxProcess(['--eventual-consistency', '0']),
      ),
    );
    pool.all.push(...started);
    pool.idle.push(...started);
    return pool;
  }

  /** Runs `fn` with a sandbox of its own. */
  async use<T>(fn: (sandbox: SandboxHandle) => Promise<T>): Promise<T> {
    const sandbox =
      this.idle.pop() ?? (await new Promise<SandboxHandle>((r) => this.waiting.push(r)));
    try {
      return await fn(sandbox);
    } finally {
      const next = this.waiting.shift();
      if (next) next(sandbox);
      else this.idle.push(sandbox);
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.all.map((s) => s.stop()));
  }
}

/** How many cases run at once. */
export const PARALLEL = 2;

/** Per-case test timeout: a case is a few CLI runs, slower on a busy machine. */
export const CASE_TIMEOUT_MS = 180_000;

/** One case: a scenario, and what goes wrong while it is applied. */
export interface CaseSpec {
  readonly scenario: Scenario;
  /** TEND_CRASH_AT for the first `tend apply` (it must die there). */
  readonly crashAt?: string;
  /** Faults in force while applying (turned off for the final convergence). */
  readonly faults?: Partial<FaultSettings>;
  /** Flags of the runs after the first (default: the scenario's). */
  readonly recoveryFlags?: readonly string[];
  /** Most `tend apply` runs after the first before giving up (default 4). */
  readonly maxRuns?: number;
  /** Said in every failure message (how to reproduce the case). */
  readonly label: string;
}

/** What a case did. */
export interface CaseResult {
  /** The first run's exit code (null when it was killed by a signal). */
  readonly firstExit: number | null;
  readonly killed: boolean;
  /** `tend apply` runs, the first included. */
  readonly runs: number;
  readonly faults: Record<FaultKind, number>;
  /** Every run's output, for failure messages. */
  readonly log: string;
}

const NO_FAULT_COUNTS: Record<FaultKind, number> = {
  latency: 0,
  error: 0,
  rate429: 0,
  rateLimit: 0,
  timeoutAfterSuccess: 0,
};

/** A fresh intent directory (its store is `<dir>/.tend/tend.db`). */
export function freshDir(): {
  dir: string;
  write(shape: IntentShape, url: string, timeoutMs?: number): void;
  cleanup(): void;
} {
  const dir = mkdtempSync(join(tmpdir(), 'tend-torture-'));
  return {
    dir,
    write: (shape, url, timeoutMs) =>
      writeFileSync(join(dir, 'intent.yaml'), intentYaml(url, shape, timeoutMs)),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Opens the workspace of a directory in this process (for setup and for judging). An intent that
 * does not load (e.g. the provider's document could not be fetched in time) fails with every
 * diagnostic in the message, so a failed trial says why.
 */
async function withWorkspace<T>(dir: string, fn: (ws: Workspace) => Promise<T>): Promise<T> {
  const ws = await openWorkspace({ dir, name: WORKSPACE, env: {} }).catch((e: unknown) => {
    if (!(e instanceof IntentError)) throw e;
    throw new Error(
      `${e.message}:\n${e.diagnostics.map((d) => `  ${formatDiagnostic(d)}`).join('\n')}`,
    );
  });
  try {
    return await fn(ws);
  } finally {
    await ws.close();
  }
}

function passOptions(mode: 'plan' | 'apply'): PassOptions {
  return {
    mode,
    approveDestroy: true,
    prune: true,
    actor: tendActor('torture-setup'),
    clock: systemClock,
    report: () => {},
    verifyTimeoutMs: 5000,
    runChecks: false,
  };
}

/** Resets the sandbox: no objects, no audit entries, no faults, counters at zero. */
export async function resetSandbox(sandbox: SandboxHandle): Promise<void> {
  // Through the handle: it sends the sandbox's API key when the sandbox has one.
  await sandbox.reset();
  await sandbox.setFaults(NO_FAULTS);
}

/** The operations left pending in a directory's journal, as `action address`. */
export async function pendingOperations(dir: string): Promise<string[]> {
  return withWorkspace(dir, async (ws) =>
    (await ws.store.unsettled()).map((op) => `${op.action} ${op.address}`),
  );
}

/** Resolves once the sandbox has answered every API request it received. */
export async function quiesce(sandbox: SandboxHandle, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await sandbox.stats();
    const answered = Object.values(s.byStatus).reduce((a, b) => a + b, 0);
    if (answered >= s.requests) return;
    if (Date.now() > deadline) throw new Error(`sandbox still busy: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The sandbox's audit feed, oldest first. */
export async function auditFeed(sandbox: SandboxHandle): Promise<AuditEntry[]> {
  const r = await fetch(`${sandbox.url}/audit?after=0&limit=1000`);
  const body = (await r.json()) as { entries: AuditEntry[] };
  return body.entries;
}

function apply(dir: string, flags: readonly string[], env: Record<string, string> = {}) {
  return runCli(['apply', dir, '--workspace', WORKSPACE, '--no-checks', ...flags], {
    env,
    timeoutMs: 60_000,
  });
}

function describeRun(n: number, env: string, r: CliResult): string {
  return `--- run ${n}${env} → exit ${r.code}\n${r.stdout}${r.stderr}`;
}

/**
 * Runs one case: reset the sandbox, apply the scenario's base (in-process, fault-free), switch to its
 * target, set the faults, run `tend apply` (killed at `crashAt` if given) and again until it exits 0,
 * then turn faults off, converge, and check everything `judge` checks.
 */
export async function runCase(sandbox: SandboxHandle, spec: CaseSpec): Promise<CaseResult> {
  const { scenario } = spec;
  await resetSandbox(sandbox);
  const d = freshDir();
  let log = '';
  try {
    const baseline = new Map<string, string>();
    if (scenario.base) {
      d.write(scenario.base, sandbox.url);
      await withWorkspace(d.dir, async (ws) => {
        const r = await reconcilePass(ws, passOptions('apply'));
        for (const [a, o] of r.outcomes) {
          expect(o.state, `${spec.label}: baseline ${a}`).toBe('converged');
          if (o.objectId) baseline.set(a, o.objectId);
        }
      });
    }
    d.write(scenario.target, sandbox.url);
    if (spec.faults) await sandbox.setFaults(spec.faults);

    let runs = 0;
    const first = await apply(
      d.dir,
      scenario.flags,
      spec.crashAt ? { TEND_CRASH_AT: spec.crashAt } : {},
    );
    runs++;
    log += describeRun(runs, spec.crashAt ? ` (TEND_CRASH_AT=${spec.crashAt})` : '', first);
    const killed = first.code === null;
    let last = first;
    const maxRuns = spec.maxRuns ?? 4;
    const again = spec.recoveryFlags ?? scenario.flags;
    while (last.code !== 0 && runs <= maxRuns) {
      last = await apply(d.dir, again);
      runs++;
      log += describeRun(runs, '', last);
    }
    const faults = spec.faults ? (await sandbox.stats()).faults : { ...NO_FAULT_COUNTS };
    if (spec.faults) {
      // Faults off: whatever the faulted runs left must now converge.
      await sandbox.setFaults(NO_FAULTS);
      for (let i = 0; last.code !== 0 && i < 3; i++) {
        last = await apply(d.dir, again);
        runs++;
        log += describeRun(runs, ' (faults off)', last);
      }
    }
    expect(last.code, `${spec.label}: tend apply never exited 0\n${log}`).toBe(0);
    await judge(sandbox, d.dir, scenario, baseline, `${spec.label}\n${log}`);
    if (process.env['TEND_TORTURE_VERBOSE']) console.log(`${spec.label}\n${log}`);
    return { firstExit: first.code, killed, runs, faults, log };
  } finally {
    d.cleanup();
  }
}

function markerOf(o: { fields: Readonly<Record<string, unknown>> } | Record<string, unknown>) {
  const fields = ('fields' in o ? o.fields : o) as Record<string, unknown>;
  const tags = (fields['tags'] ?? {}) as Record<string, string>;
  return { workspace: tags['tend.workspace'], address: tags['tend.address'] };
}

/**
 * The assertions every case ends with, against the sandbox's oracle and audit feed:
 * - no ghost: every object carrying the workspace's marker is the one the twin remembers for its
 *   address, and every remembered object exists;
 * - exactly one object per declared address, none for a removed one, no object without a marker;
 * - never created twice: the audit feed shows exactly the creates the scenario needs;
 * - a replace deleted the old object once, after creating its replacement and repointing dependents;
 * - nothing left pending in the journal, no duplicate, orphan or unfinished replace, and a fresh
 *   plan has nothing to do.
 */
export async function judge(
  sandbox: SandboxHandle,
  dir: string,
  scenario: Scenario,
  baseline: ReadonlyMap<string, string>,
  context: string,
): Promise<void> {
  const objects: OracleObject[] = await sandbox.objects();
  const audit = await auditFeed(sandbox);
  const byAddress = new Map<string, OracleObject[]>();
  for (const o of objects) {
    const m = markerOf(o);
    expect(m.workspace, `${context}\nan object without Tend's marker: ${o.id}`).toBe(WORKSPACE);
    byAddress.set(m.address!, [...(byAddress.get(m.address!) ?? []), o]);
  }
  const wanted = declared(scenario.target);
  for (const [address, list] of byAddress) {
    expect(wanted, `${context}\nobjects for an address not declared: ${address}`).toContain(
      address,
    );
    expect(
      list.map((o) => o.id),
      `${context}\nmore than one object for ${address}`,
    ).toHaveLength(1);
  }
  for (const address of wanted) {
    expect(byAddress.has(address), `${context}\nno object for ${address}`).toBe(true);
  }

  const creates = new Map<string, number>();
  for (const e of audit) {
    if (e.action !== 'create' || !e.after) continue;
    const a = markerOf(e.after).address!;
    creates.set(a, (creates.get(a) ?? 0) + 1);
  }
  for (const [address, n] of Object.entries(scenario.creates)) {
    expect(creates.get(address) ?? 0, `${context}\ncreates of ${address} in the audit feed`).toBe(
      n,
    );
  }

  const deletes = audit.filter((e) => e.action === 'delete');
  if (scenario.replaced) {
    const oldId = baseline.get(scenario.replaced)!;
    const now = byAddress.get(scenario.replaced)![0]!;
    expect(now.id, `${context}\n${scenario.replaced} was not replaced`).not.toBe(oldId);
    const created = audit.find((e) => e.action === 'create' && e.id === now.id)!;
    const deleted = deletes.filter((e) => e.id === oldId);
    expect(deleted, `${context}\nthe old ${scenario.replaced} deleted once`).toHaveLength(1);
    expect(
      deleted[0]!.seq,
      `${context}\nthe old object was deleted before its replacement was created`,
    ).toBeGreaterThan(created.seq);
    // Every dependent was repointed to the new object before the old one went.
    for (const e of audit) {
      const refersToNew = Object.values(e.after ?? {}).includes(now.id);
      if (e.action === 'update' && refersToNew) {
        expect(
          e.seq,
          `${context}\nold object deleted before a dependent was repointed`,
        ).toBeLessThan(deleted[0]!.seq);
      }
    }
    expect(deletes, `${context}\nonly the old object is deleted`).toHaveLength(1);
  } else if (scenario.removed) {
    expect(
      deletes.map((e) => e.id),
      `${context}\nonly the removed resource is deleted`,
    ).toEqual([baseline.get(scenario.removed)]);
  } else {
    expect(deletes, `${context}\nnothing is deleted`).toHaveLength(0);
  }

  await withWorkspace(dir, async (ws) => {
    const twin = await ws.store.listTwin();
    const remembered = new Map(twin.map((t) => [t.address as string, t.objectId] as const));
    for (const [address, list] of byAddress) {
      expect(remembered.get(address), `${context}\nghost: ${list[0]!.id} is not in the twin`).toBe(
        list[0]!.id,
      );
    }
    expect([...remembered.keys()].sort(), `${context}\nthe twin remembers`).toEqual(
      [...wanted].sort(),
    );
    const pending = await ws.store.unsettled();
    expect(
      pending.map((p) => `${p.action} ${p.address} ${p.id}`),
      `${context}\nleft pending in the journal`,
    ).toEqual([]);
    const plan = await reconcilePass(ws, passOptions('plan'));
    expect(
      hasChanges(plan.plan),
      `${context}\nnot converged: ${JSON.stringify(plan.plan.steps.filter((s) => s.kind !== 'noop'))}`,
    ).toBe(false);
    expect(plan.observation.duplicates, `${context}\nduplicates`).toEqual([]);
    expect(plan.observation.orphans, `${context}\norphans`).toEqual([]);
    expect(plan.observation.leftovers, `${context}\nunfinished replaces`).toEqual([]);
  });
}

// --- the "intent changes" mode ------------------------------------------------------------------

/** A trial of the intent-changes mode: a random walk over the intent, with kills and faults. */
export interface EvolutionSpec {
  readonly seed: number;
  /** How many intent changes (each followed by a `tend apply`, most of them killed). */
  readonly steps: number;
  /** Faults in force from the first change until the final convergence. */
  readonly faults: Partial<FaultSettings>;
  /** Plain `tend apply` runs allowed, faults off, to converge at the end (default 4). */
  readonly finalRuns?: number;
  readonly label: string;
}

/** What a trial did, and what the oracle found. */
export interface EvolutionResult {
  /** `tend apply` runs that died at their crash point. */
  readonly kills: number;
  /** Runs given a crash point that they did not reach (the step did not get that far). */
  readonly missed: number;
  readonly runs: number;
  readonly changes: Readonly<Record<ChangeKind, number>>;
  /** Bucket renames (a new address, the same natural key). */
  readonly renames: number;
  /** Renamed buckets whose platform object was deleted and created again (a move not yet done). */
  readonly renamesAsDeleteCreate: number;
  /** What renames left that a move would not have (stale twin entries of old addresses). */
  readonly renameEffects: readonly string[];
  readonly faults: Record<FaultKind, number>;
  /** Plain runs, faults off, it took to converge (0 when it never did). */
  readonly convergenceRuns: number;
  /** What the oracle found, by kind (`ghost`, `duplicate`, `orphan`, …); empty when all is well. */
  readonly violations: readonly { readonly kind: string; readonly detail: string }[];
  readonly log: string;
}

/** The flags every run of the mode gets: the walk removes and replaces stateful volumes. */
const EVOLUTION_FLAGS = ['--yes', '--approve-destroy'];

/** The request timeout of the harness's own passes (setup and judging), which run without faults. */
const HARNESS_TIMEOUT_MS = 10_000;

/**
 * Runs one trial: the start world applied fault-free; then `steps` times: change the intent, run
 * `tend apply` with faults on and a kill at a random crash point of what the change does,
 * and sometimes one more faulted run before the next change (else the intent changes right after
 * the crash). Then one more faulted run, faults off, plain runs until one exits 0 (bounded), and the
 * oracle's verdict (`judgeWorld`).
 */
export async function runEvolution(
  sandbox: SandboxHandle,
  spec: EvolutionSpec,
): Promise<EvolutionResult> {
  await resetSandbox(sandbox);
  const d = freshDir();
  const random = mulberry32(spec.seed * 7919 + 17);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  // The faulted runs use the intent's short request timeout; the in-process setup and judging
  // passes (no faults) get a long one, so that a loaded machine cannot fail a trial before it starts.
  const write = (w: World, timeoutMs?: number) =>
    writeFileSync(join(d.dir, 'intent.yaml'), worldYaml(sandbox.url, w, timeoutMs));
  const changes: Record<ChangeKind, number> = {
    add: 0,
    remove: 0,
    rename: 0,
    replace: 0,
    update: 0,
    move: 0,
    none: 0,
  };
  let log = '';
  let runs = 0;
  let kills = 0;
  let missed = 0;
  const renamed = new Set<string>();
  const renamedFrom = new Set<string>();
  const dropped = new Set<string>();
  const run = async (note: string, env: Record<string, string> = {}) => {
    const t0 = Date.now();
    const r = await apply(d.dir, EVOLUTION_FLAGS, env);
    runs++;
    log += describeRun(runs, `${note} [${Date.now() - t0} ms]`, r);
    return r;
  };
  try {
    let world = START;
    write(world, HARNESS_TIMEOUT_MS);
    await withWorkspace(d.dir, async (ws) => {
      const r = await reconcilePass(ws, passOptions('apply'));
      for (const [a, o] of r.outcomes)
        expect(o.state, `${spec.label}: start ${a}`).toBe('converged');
    });
    await sandbox.setFaults(spec.faults);
    for (let step = 1; step <= spec.steps; step++) {
      const c = change(world, random);
      world = c.world;
      changes[c.kind]++;
      if (c.renamedBucket) renamed.add(c.renamedBucket);
      if (c.renamedFrom) renamedFrom.add(c.renamedFrom);
      if (c.droppedBucket) dropped.add(c.droppedBucket);
      write(world);
      log += `=== step ${step}: ${c.label}\n`;
      const kill = c.actions.length > 0;
      const points = [...new Set(c.actions)].flatMap((a) => reachablePoints(a));
      const n = pick([1, 1, 1, 2]);
      const crashAt = kill ? `${pick(points)}${n > 1 ? `@${n}` : ''}` : undefined;
      let r = await run(
        crashAt ? ` (TEND_CRASH_AT=${crashAt})` : '',
        crashAt ? { TEND_CRASH_AT: crashAt } : {},
      );
      // A fault can stop a run before it reaches its crash point: try the point once more.
      if (crashAt && r.code !== null && r.code !== 0) {
        r = await run(` (TEND_CRASH_AT=${crashAt}, again)`, { TEND_CRASH_AT: crashAt });
      }
      if (crashAt && r.code === null) kills++;
      else if (crashAt) missed++;
      // Sometimes the next pass sees the same intent; otherwise it sees a changed one at once.
      if (r.code === null && random() < 0.15) await run(' (after the kill, same intent)');
    }
    await run(' (faults still on)');
    const faults = (await sandbox.stats()).faults;
    await sandbox.setFaults(NO_FAULTS);
    let convergenceRuns = 0;
    for (let i = 1; i <= (spec.finalRuns ?? 4); i++) {
      const r = await run(' (faults off)');
      if (r.code === 0) {
        convergenceRuns = i;
        break;
      }
    }
    const violations =
      convergenceRuns === 0
        ? [{ kind: 'no-convergence', detail: `tend apply never exited 0 with faults off` }]
        : [];
    // A rename that ran as delete + create can leave the old address's twin entry behind (it names
    // the bucket's id, which the new address's object has taken): a rename effect, counted, not
    // failed, until plans show moves.
    const renameEffects: string[] = [];
    write(world, HARNESS_TIMEOUT_MS);
    for (const v of await judgeWorld(sandbox, d.dir, world)) {
      const address = /remembers (\S+)/.exec(v.detail)?.[1];
      if (v.kind === 'stale-twin' && address && renamedFrom.has(address)) {
        renameEffects.push(`${v.kind}: ${v.detail}`);
      } else {
        violations.push(v);
      }
    }
    // A renamed bucket whose object was deleted (by name) without the user removing it: the rename
    // ran as delete + create rather than a move.
    const audit = await auditFeed(sandbox);
    const renamesAsDeleteCreate = [...renamed].filter(
      (name) =>
        !dropped.has(name) &&
        audit.some((e) => e.type === 'buckets' && e.action === 'delete' && e.id === name),
    ).length;
    if (process.env['TEND_TORTURE_VERBOSE']) console.log(`${spec.label}\n${log}`);
    return {
      kills,
      missed,
      runs,
      changes,
      renames: renamed.size,
      renamesAsDeleteCreate,
      renameEffects,
      faults,
      convergenceRuns,
      violations,
      log,
    };
  } finally {
    d.cleanup();
  }
}

/**
 * The oracle's verdict on a trial, from the sandbox's own object dump (every object, visible to reads
 * yet or not) and Tend's store, after the final convergence:
 * - `ghost`: an object Tend's memory does not know (not the twin's object of any address);
 * - `stale-twin`: the twin remembers an address the final intent does not declare;
 * - `duplicate`: a second object carrying the marker of a declared address;
 * - `orphan`: an object carrying the marker of an address the final intent does not declare;
 * - `missing`: a declared address without its object; `stale-marker`: the twin's object carries
 *   another address's marker; `foreign`: an object without this workspace's marker;
 * - `pending`: operations left unsettled; `not-converged`: a fresh plan still has work, or observe
 *   still reports duplicates, orphans or unfinished replaces.
 */
export async function judgeWorld(
  sandbox: SandboxHandle,
  dir: string,
  world: World,
): Promise<{ kind: string; detail: string }[]> {
  const out: { kind: string; detail: string }[] = [];
  const objects = await sandbox.objects();
  const wanted = new Set(addresses(world));
  await withWorkspace(dir, async (ws) => {
    const twin = new Map((await ws.store.listTwin()).map((t) => [t.address as string, t] as const));
    const twinIds = new Map<string, string>(
      [...twin].map(([a, t]) => [`${t.type}/${t.objectId}`, a] as const),
    );
    const seen = new Set<string>();
    for (const o of objects) {
      const m = markerOf(o);
      const key = `sb.${o.type}/${o.id}`;
      const recordedAs = twinIds.get(key);
      if (m.workspace !== WORKSPACE) {
        out.push({ kind: 'foreign', detail: `${key} carries no marker of ${WORKSPACE}` });
        continue;
      }
      if (recordedAs && wanted.has(recordedAs)) {
        seen.add(recordedAs);
        if (m.address !== recordedAs) {
          out.push({
            kind: 'stale-marker',
            detail: `${key} is ${recordedAs} but marked ${m.address}`,
          });
        }
        continue;
      }
      if (!wanted.has(m.address!)) {
        out.push({ kind: 'orphan', detail: `${key} marked ${m.address}, not declared` });
      } else if (twin.get(m.address!)?.objectId !== o.id) {
        out.push({ kind: 'duplicate', detail: `${key} is a second object for ${m.address}` });
      }
      if (!recordedAs)
        out.push({ kind: 'ghost', detail: `${key} (${m.address}) is in no twin entry` });
    }
    for (const a of wanted) {
      if (!seen.has(a)) out.push({ kind: 'missing', detail: `${a} has no object` });
    }
    for (const a of twin.keys()) {
      if (!wanted.has(a)) {
        out.push({ kind: 'stale-twin', detail: `the twin still remembers ${a} (not declared)` });
      }
    }
    for (const op of await ws.store.unsettled()) {
      out.push({ kind: 'pending', detail: `${op.action} ${op.address} ${op.id}` });
    }
    const plan = await reconcilePass(ws, passOptions('plan'));
    for (const s of plan.plan.steps) {
      if (s.kind !== 'noop') out.push({ kind: 'not-converged', detail: `${s.kind} ${s.address}` });
    }
    for (const x of plan.observation.duplicates) {
      out.push({
        kind: 'not-converged',
        detail: `duplicate ${x.address}: ${x.objectIds.join(', ')}`,
      });
    }
    for (const x of plan.observation.orphans) {
      out.push({ kind: 'not-converged', detail: `orphan ${x.type}/${x.object.id}` });
    }
    for (const x of plan.observation.leftovers) {
      out.push({ kind: 'not-converged', detail: `unfinished replace ${x.address}: ${x.old.id}` });
    }
  });
  return out;
}
