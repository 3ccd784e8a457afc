import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address } from '../core/index.js';
import { openWorkspaceAt as openWorkspace } from '../app/index.js';
import type { RunningSandbox } from '../sandbox/index.js';
import { startSandbox } from '../sandbox/index.js';
import { makeChangeset } from './changeset.js';
import { steppedClock } from './clock.js';
import type { CrashHook } from './crash-points.js';
import type { EngineEvent } from './events.js';
import type { PassOptions } from './reconciler.js';
import { reconcilePass, tendActor } from './reconciler.js';
import { onlyTheRecorderWrites } from './store-writer.js';
import type { Workspace } from './workspace.js';

// Issue 25, item 1: every store write of a pass goes through the Recorder. Each pass here runs over a
// workspace whose store refuses every write (`onlyTheRecorderWrites`); only the recorder writes to
// the store behind it. A write from anywhere else in the engine (a `ws.store.putTwin(...)` in
// arbitrate, the executor, recovery or observe) rejects, and the pass fails. The passes are the
// same as ever (issue 25 changes no behaviour): creates, updates, a replace, a delete, drift decided
// with claims and ledger entries, a focused pass, a saved plan, and a plan that writes nothing.

const SPEC = resolve(import.meta.dirname, '../sandbox/openapi.json');
const clock = steppedClock(Date.parse('2026-11-25T12:00:00Z'));
const WEB = 'sb.instances/web' as Address;
const service = (name: string) => `sb.services/${name}` as Address;
let sb: RunningSandbox;
let root: string;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, now: () => clock.now().getTime() });
  root = mkdtempSync(join(tmpdir(), 'tend-pass-recorder-'));
  dir = mkdtempSync(join(root, 'intent-'));
});
afterAll(async () => {
  await sb.close();
  rmSync(root, { recursive: true, force: true });
});

interface Shape {
  readonly image: string;
  readonly replicas: number;
  readonly apiImage: string;
  readonly withOld: boolean;
}

/** A network, an instance on it, and services; an actor's change of replicas is yielded to. */
function writeIntent(shape: Shape): void {
  const services = [
    ['api', shape.apiImage, 2],
    ['web', 'nginx:1.27', shape.replicas],
    ...(shape.withOld ? [['old', 'nginx:1.27', 1] as const] : []),
  ] as const;
  writeFileSync(
    join(dir, 'intent.yaml'),
    [
      `kind: Provider
name: sb
type: openapi
spec: ${SPEC}
endpoint: ${sb.url}`,
      `kind: Resource
type: sb.networks
name: main
spec: { name: main, cidr: 10.30.0.0/16 }`,
      `kind: Resource
type: sb.instances
name: web
spec: { name: web, image: ${shape.image}, size: small, network_id: '\${sb.networks/main.id}' }`,
      ...services.map(
        ([name, image, replicas]) => `kind: Resource
type: sb.services
name: ${name}
spec: { name: ${name}, image: '${image}', replicas: ${replicas}, network_id: '\${sb.networks/main.id}' }`,
      ),
      `kind: Arbitration
name: hands-off
rules:
  - decide: yield`,
    ].join('\n---\n') + '\n',
  );
}

/** The workspace as a pass gets it: its store refuses every write the recorder does not make. */
async function guarded<T>(shape: Shape, fn: (ws: Workspace) => Promise<T>): Promise<T> {
  writeIntent(shape);
  const opened = await openWorkspace({ dir, name: 'rec', env: { TEND_SPEC_DIRS: dirname(SPEC) } });
  try {
    return await fn({ ...opened, store: onlyTheRecorderWrites(opened.store) });
  } finally {
    await opened.close();
  }
}

const options = (events: EngineEvent[], extra: Partial<PassOptions> = {}): PassOptions => ({
  mode: 'apply',
  approveDestroy: false,
  prune: true,
  actor: tendActor(),
  clock,
  report: (e) => events.push(e),
  verifyTimeoutMs: 2000,
  visibilityWindowMs: 0,
  runChecks: false,
  ...extra,
});

/** What went wrong in a pass, so a failure shows the refused write. */
const errors = (events: readonly EngineEvent[]) =>
  events.filter((e) => e.kind === 'error' || e.kind === 'op-failed');

/** Another actor changes a service's replicas behind Tend's back (the audit feed says who). */
async function hpaScales(ws: Workspace, name: string, replicas: number): Promise<void> {
  const id = (await ws.store.getTwin(service(name)))!.objectId;
  const res = await fetch(`${sb.url}/services/${id}`, {
    method: 'PATCH',
    headers: {
      'content-type': 'application/json',
      'X-Tend-Actor': 'hpa',
      'X-Tend-Motivation': 'traffic',
    },
    body: JSON.stringify({ replicas }),
  });
  expect(res.status).toBe(200);
}

const BASE: Shape = { image: 'debian-12', replicas: 2, apiImage: 'nginx:1.27', withOld: true };

describe('every store write of a pass is the recorder’s (the store refuses all others)', () => {
  it('the guard refuses a write made past the recorder', async () => {
    await guarded(BASE, async (ws) => {
      await expect(ws.store.setCursor('sb', '1')).rejects.toThrow(/outside the recorder/);
      await expect(ws.store.putStatus({} as never)).rejects.toThrow(/outside the recorder/);
      expect(await ws.store.listTwin()).toEqual([]); // reads go through
    });
  });

  it('an apply that creates everything', async () => {
    const events: EngineEvent[] = [];
    const result = await guarded(BASE, (ws) => reconcilePass(ws, options(events)));
    expect(errors(events)).toEqual([]);
    expect(result.plan.steps.map((s) => s.kind)).toEqual(Array(5).fill('create'));
    expect([...result.outcomes.values()].map((o) => o.state)).toEqual(Array(5).fill('converged'));
  });

  it('drift decided with a claim and a ledger entry, an update, a replace and a delete in one pass', async () => {
    await guarded(BASE, (ws) => hpaScales(ws, 'api', 5));
    const events: EngineEvent[] = [];
    const shape = { ...BASE, image: 'debian-13', replicas: 3, withOld: false };
    const result = await guarded(shape, async (ws) => {
      const r = await reconcilePass(ws, options(events));
      expect(await ws.store.claims(service('api'))).toMatchObject([
        { field: 'replicas', value: 5, actor: 'hpa', decision: 'yield' },
      ]);
      return r;
    });
    expect(errors(events)).toEqual([]);
    expect(result.plan.steps.map((s) => `${s.kind} ${s.address}`)).toEqual(
      expect.arrayContaining([
        `replace ${WEB}`,
        `update ${service('web')}`,
        `delete ${service('old')}`,
        `noop ${service('api')}`,
      ]),
    );
    expect(result.arbitration?.recorded.map((c) => `${c.actor} ${c.action} ${c.address}`)).toEqual([
      `hpa update ${service('api')}`,
    ]);
    expect(result.outcomes.get(WEB)?.state).toBe('converged');
    expect(result.outcomes.get(service('api'))?.state).toBe('converged');
  });

  it('a focused pass records what the feed brought', async () => {
    const shape = { ...BASE, image: 'debian-13', replicas: 3, withOld: false };
    await guarded(shape, (ws) => hpaScales(ws, 'web', 6));
    const events: EngineEvent[] = [];
    const result = await guarded(shape, async (ws) => {
      const r = await reconcilePass(ws, options(events, { focused: true }));
      expect((await ws.store.claims(service('web'))).map((c) => [c.field, c.value])).toEqual([
        ['replicas', 6],
      ]);
      return r;
    });
    expect(errors(events)).toEqual([]);
    expect(result.focused).toBe(true);
    expect(result.arbitration?.recorded.map((c) => `${c.actor} ${c.action} ${c.address}`)).toEqual([
      `hpa update ${service('web')}`,
    ]);
  });

  it('a saved plan carried out', async () => {
    const shape = {
      ...BASE,
      image: 'debian-13',
      replicas: 3,
      withOld: false,
      apiImage: 'nginx:1.28',
    };
    const events: EngineEvent[] = [];
    const result = await guarded(shape, async (ws) => {
      // As `tend plan --out` saves one: the plan of a plan pass (the decisions of its time applied).
      const planned = await reconcilePass(ws, options([], { mode: 'plan' }));
      const { plan, observation } = planned;
      const changeset = makeChangeset(
        ws,
        { plan, observation, waiting: [] },
        { approveDestroy: false, prune: true, targets: [] },
        clock.now(),
      );
      return reconcilePass(ws, options(events, { changeset }));
    });
    expect(errors(events)).toEqual([]);
    expect(result.refused).toBeUndefined();
    expect(result.applied).toBe(true);
    expect(result.plan.steps.find((s) => s.address === service('api'))?.kind).toBe('update');
    expect(result.outcomes.get(service('api'))?.state).toBe('converged');
  });

  it('a plan writes nothing, not even through the recorder', async () => {
    const shape = { ...BASE, withOld: true };
    const events: EngineEvent[] = [];
    await guarded(BASE, (ws) => hpaScales(ws, 'api', 7));
    writeIntent(shape);
    const opened = await openWorkspace({
      dir,
      name: 'rec',
      env: { TEND_SPEC_DIRS: dirname(SPEC) },
    });
    try {
      // The recorder's own store refuses too: a plan must not make a recorder at all.
      const store = onlyTheRecorderWrites(onlyTheRecorderWrites(opened.store));
      const result = await reconcilePass({ ...opened, store }, options(events, { mode: 'plan' }));
      expect(errors(events)).toEqual([]);
      expect(result.applied).toBe(false);
      expect(result.plan.steps.some((s) => s.kind !== 'noop')).toBe(true);
      expect(result.arbitration?.decisions.length).toBeGreaterThan(0);
    } finally {
      await opened.close();
    }
  });
});

/** A hook that stops the pass at a named point, as a kill there would (nothing after it runs). */
class Killed extends Error {}
function killAt(spec: string): CrashHook {
  return (when, point, action) => {
    if (`${when}:${point}:${action}` === spec) throw new Killed(spec);
  };
}

describe('the arbitrate phase’s writes have crash points: killed at one, the next pass finishes', () => {
  it.each([
    'after:claim:arbitrate',
    'after:ledger:arbitrate',
    'after:twin:arbitrate',
    'before:cursor:arbitrate',
    'after:cursor:arbitrate',
  ])('%s', async (spec) => {
    sb.sandbox.reset();
    dir = mkdtempSync(join(root, 'intent-'));
    await guarded(BASE, (ws) => reconcilePass(ws, options([])));
    await guarded(BASE, (ws) => hpaScales(ws, 'api', 5));
    await expect(
      guarded(BASE, (ws) => reconcilePass(ws, options([], { crash: killAt(spec) }))),
    ).rejects.toThrow(Killed);
    const events: EngineEvent[] = [];
    await guarded(BASE, async (ws) => {
      const r = await reconcilePass(ws, options(events));
      expect(r.outcomes.get(service('api'))?.state).toBe('converged');
      expect((await ws.store.claims()).map((c) => [c.address, c.field, c.value])).toEqual([
        [service('api'), 'replicas', 5],
      ]);
      const hpa = (await ws.store.changes()).filter((c) => c.actor === 'hpa');
      expect(hpa.length).toBeGreaterThanOrEqual(1);
    });
    expect(errors(events)).toEqual([]);
    const api = sb.sandbox.state
      .all()
      .find((o) => o.type === 'services' && o.fields['name'] === 'api');
    expect(api?.fields['replicas']).toBe(5);
  });
});
