import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address, CheckResult, NewChange, PolicyDecl, ResourceDecl } from '../core/index.js';
import { Redactor } from '../core/index.js';
import type { Store } from '../store/index.js';
import { ledgerKey, openSqliteStore } from '../store/index.js';
import { evaluateChecks, evaluateCompliance, settleCompliance } from './compliance.js';
import type { Workspace } from './workspace.js';

// Checks in the compliance record (docs/policies.md): the verdict entries a pass writes when a
// resource's check starts or stops failing, against the real SQLite store, pass after pass — and
// not twice when a pass died between the entry and the status.

const ROLE: Address = 'pg.role/app';
const CONSUMER: Address = 'pg.schema/orders';
const KEY = ledgerKey('check-compliance-test-key-material-0123456789');
const SOURCE = { file: 'consumers.yaml', line: 12, column: 7 };

const consumer: ResourceDecl = {
  kind: 'Resource',
  address: CONSUMER,
  type: 'pg.schema',
  provider: 'pg',
  resourceType: 'schema',
  name: 'orders',
  spec: { name: 'orders', owner: '${pg.role/app.name}' },
  lifecycle: { stateful: false },
  checks: [
    {
      kind: 'sql',
      name: 'login',
      connection: { fromFile: 'orders.url' },
      query: 'SELECT 1',
      timeoutMs: 1000,
      source: SOURCE,
    },
  ],
  dependsOn: [ROLE],
  source: { file: 'consumers.yaml', line: 1, column: 1 },
};

let root: string;
let n = 0;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'tend-check-compliance-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const ownedByApp: PolicyDecl = {
  kind: 'Policy',
  name: 'schemas-owned-by-app',
  match: { types: ['pg.schema'] },
  variables: [],
  validations: [
    {
      expression: "object.owner == 'app'",
      message: 'schemas are owned by app',
      reason: 'Invalid',
      source: { file: 'policy.yaml', line: 8, column: 17 },
    },
  ],
  actions: ['deny'],
  severity: 'high',
  source: { file: 'policy.yaml', line: 1, column: 1 },
};

function workspaceOf(store: Store, policies: PolicyDecl[] = []): Workspace {
  return {
    intent: { resources: [consumer], policies },
    store,
    secrets: new Redactor(),
    typeOf: () => ({ info: { sensitive: [] } }),
  } as unknown as Workspace;
}

/** Records a step as the recorder does (entries, then the states remembered), and the statuses. */
async function record(
  store: Store,
  ws: Workspace,
  step: Awaited<ReturnType<typeof evaluateChecks>>,
  at: string,
) {
  const appended = [];
  for (const { entry } of step.entries) appended.push(await store.appendChange(entry));
  const states = settleCompliance(ws, step, appended);
  for (const [address, compliance] of states) {
    await store.putStatus({ address, state: 'converged', checks: [], compliance, updatedAt: at });
  }
  return { appended, state: states.get(CONSUMER) };
}

function change(address: Address, over: Partial<NewChange> = {}): NewChange {
  return {
    time: '2026-01-01T00:00:00.000Z',
    actor: 'tend',
    actorKind: 'tend',
    source: 'tend',
    address,
    type: address.split('/')[0]!,
    objectId: address.split('/')[1]!,
    action: 'create',
    fields: ['name'],
    ...over,
  };
}

const login = (
  ok: boolean,
  message = ok ? '1 row' : 'password authentication failed',
): CheckResult => ({
  name: 'login',
  kind: 'sql',
  ok,
  message,
  at: 'T',
});

/** One pass's check step as the recorder carries it out: entries appended, then the statuses. */
async function pass(
  store: Store,
  checks: readonly CheckResult[],
  at: string,
  options: { status?: boolean } = {},
) {
  const ws = workspaceOf(store);
  const step = await evaluateChecks(
    ws,
    new Map([[CONSUMER, { objectId: 'orders', checks }]]),
    new Map(),
    at,
  );
  const appended = [];
  for (const { entry } of step.entries) appended.push(await store.appendChange(entry));
  const states = settleCompliance(ws, step, appended);
  if (options.status !== false) {
    for (const [address, compliance] of states) {
      await store.putStatus({ address, state: 'converged', checks, compliance, updatedAt: at });
    }
  }
  return { appended, state: states.get(CONSUMER) };
}

async function freshStore(): Promise<{ store: Store; path: string }> {
  const path = join(root, `s${++n}.db`);
  const store = await openSqliteStore(path, { ledgerKey: KEY });
  await store.appendChange(change(ROLE));
  await store.appendChange(change(CONSUMER));
  return { store, path };
}

describe('checks in the compliance record', () => {
  it('records when a check starts failing (caused by the rotation of the role it depends on) and when it passes again', async () => {
    const { store } = await freshStore();
    const first = await pass(store, [login(true)], 'T1');
    expect(first.appended).toEqual([]);
    // all its checks pass and it had no compliance state: none is made
    expect(first.state).toBeUndefined();

    const rotation = await store.appendChange(
      change(ROLE, {
        time: '2026-01-01T01:00:00.000Z',
        actor: 'ops',
        actorKind: 'human',
        motivation: { kind: 'maintenance', ref: 'Q1 rotation' },
        action: 'update',
        fields: ['password'],
        after: { action: 'rotate-password', run: 'act-00ff', outcome: 'done' },
      }),
    );
    const failing = await pass(store, [login(false)], 'T2');
    expect(failing.appended.map((e) => [e.action, e.address, e.compliance])).toEqual([
      [
        'verdict',
        CONSUMER,
        {
          policy: 'check:login',
          rule: 0,
          result: 'fail',
          message: 'password authentication failed',
          actions: ['deny'],
          severity: 'high',
          cause: {
            seq: rotation.seq,
            time: rotation.time,
            actor: 'ops',
            actorKind: 'human',
            motivation: { kind: 'maintenance', ref: 'Q1 rotation' },
            source: 'tend',
            address: ROLE,
            run: { action: 'rotate-password', id: 'act-00ff' },
          },
        },
      ],
    ]);
    expect(failing.state).toMatchObject({ key: '', passed: 0, findings: [] });
    expect(failing.state?.checks).toMatchObject([
      { policy: 'check:login', since: 'T2', recorded: failing.appended[0]!.seq, source: SOURCE },
    ]);

    const still = await pass(store, [login(false, 'reworded')], 'T3');
    expect(still.appended).toEqual([]);
    expect(still.state?.checks).toMatchObject([
      { message: 'reworded', since: 'T2', recorded: failing.appended[0]!.seq },
    ]);

    const fixed = await pass(store, [login(true)], 'T4');
    expect(fixed.appended.map((e) => e.compliance)).toEqual([
      {
        policy: 'check:login',
        rule: 0,
        result: 'pass',
        message: 'passes again: reworded',
        actions: ['deny'],
        severity: 'high',
        found: failing.appended[0]!.seq,
      },
    ]);
    expect(fixed.state).toEqual({
      key: '',
      evaluatedAt: 'T2',
      passed: 0,
      undecidable: 0,
      findings: [],
    });
    expect((await pass(store, [login(true)], 'T5')).appended).toEqual([]);
    await store.close();
  });

  it('a warning is a warn, medium', async () => {
    const { store } = await freshStore();
    const { appended } = await pass(
      store,
      [{ ...login(false, '10 days left'), kind: 'tls', severity: 'warning' }],
      'T1',
    );
    expect(appended[0]?.compliance).toMatchObject({ actions: ['warn'], severity: 'medium' });
    await store.close();
  });

  it('is not written twice when a pass died after the entry and before the status', async () => {
    const { store, path } = await freshStore();
    const died = await pass(store, [login(false)], 'T1', { status: false });
    expect(died.appended).toHaveLength(1);
    await store.close();
    // A new process: nothing in memory, no status says the check fails.
    const again = await openSqliteStore(path, { ledgerKey: KEY });
    const resumed = await pass(again, [login(false)], 'T2');
    expect(resumed.appended).toEqual([]);
    expect(resumed.state?.checks).toMatchObject([
      {
        policy: 'check:login',
        recorded: died.appended[0]!.seq,
        // the newest entry then: the consumer's own create, after the role's
        cause: { seq: 2, actor: 'tend' },
      },
    ]);
    // …and the pass entry of one that passed again, killed the same way, is not written twice.
    const passed = await pass(again, [login(true)], 'T3', { status: false });
    expect(passed.appended.map((e) => e.compliance?.result)).toEqual(['pass']);
    await again.close();
    const third = await openSqliteStore(path, { ledgerKey: KEY });
    await third.putStatus({
      address: CONSUMER,
      state: 'converged',
      checks: [login(false)],
      compliance: resumed.state!,
      updatedAt: 'T2',
    });
    expect((await pass(third, [login(true)], 'T4')).appended).toEqual([]);
    await third.close();
  });

  it("a policy's evaluation keeps the failing checks, and the checks' keeps the broken rules", async () => {
    const { store } = await freshStore();
    const ws = workspaceOf(store, [ownedByApp]);
    await pass(store, [login(false)], 'T1');
    const objects = (owner: string) =>
      new Map([[CONSUMER, { id: 'orders', fields: { name: 'orders', owner } }]]);
    const broken = await record(
      store,
      ws,
      await evaluateCompliance(ws, objects('postgres'), 'T2'),
      'T2',
    );
    expect(broken.appended.map((e) => e.compliance?.policy)).toEqual(['schemas-owned-by-app']);
    expect(broken.state?.findings.map((f) => f.policy)).toEqual(['schemas-owned-by-app']);
    expect(broken.state?.checks?.map((f) => [f.policy, f.since])).toEqual([['check:login', 'T1']]);
    const fixed = await record(
      store,
      ws,
      await evaluateChecks(
        ws,
        new Map([[CONSUMER, { objectId: 'orders', checks: [login(true)] }]]),
        new Map(),
        'T3',
      ),
      'T3',
    );
    expect(fixed.appended.map((e) => [e.compliance?.policy, e.compliance?.result])).toEqual([
      ['check:login', 'pass'],
    ]);
    expect(fixed.state?.findings.map((f) => f.policy)).toEqual(['schemas-owned-by-app']);
    expect(fixed.state?.checks).toBeUndefined();
    // the rule put right: its finding goes, no check comes back
    const ok = await record(store, ws, await evaluateCompliance(ws, objects('app'), 'T4'), 'T4');
    expect(ok.appended.map((e) => [e.compliance?.policy, e.compliance?.result])).toEqual([
      ['schemas-owned-by-app', 'pass'],
    ]);
    expect(ok.state).toMatchObject({ findings: [], passed: 1 });
    expect(ok.state?.checks).toBeUndefined();
    await store.close();
  });

  it('a new process, with no policies, finds the failing check its status keeps, and closes it', async () => {
    const { store, path } = await freshStore();
    const failed = await pass(store, [login(false)], 'T1');
    await store.close();
    const next = await openSqliteStore(path, { ledgerKey: KEY });
    const ws = workspaceOf(next);
    // the pass's policy step comes first, and evaluates nothing without policies
    const none = await evaluateCompliance(ws, new Map(), 'T2');
    expect(none.states.size).toBe(0);
    await record(next, ws, none, 'T2');
    const { appended } = await pass(next, [login(true)], 'T2');
    expect(appended.map((e) => [e.compliance?.result, e.compliance?.found])).toEqual([
      ['pass', failed.appended[0]!.seq],
    ]);
    await next.close();
  });

  it('a resource whose checks did not run keeps what it had; one without checks gets no state', async () => {
    const { store } = await freshStore();
    await pass(store, [login(false)], 'T1');
    const ws = workspaceOf(store);
    const none = await evaluateChecks(ws, new Map([[CONSUMER, { checks: [] }]]), new Map(), 'T2');
    expect(none).toEqual({ states: new Map(), entries: [] });
    await store.close();
  });
});
