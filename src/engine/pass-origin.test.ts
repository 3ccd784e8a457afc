import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IntentOrigin } from '../core/index.js';
import { openWorkspaceAt as openWorkspace } from '../app/index.js';
import type { RunningSandbox } from '../sandbox/index.js';
import { startSandbox } from '../sandbox/index.js';
import { steppedClock } from './clock.js';
import type { EngineEvent } from './events.js';
import { tendActor } from './reconciler.js';
import { runContinuously } from './runner.js';
import type { Workspace } from './workspace.js';

// Git workspaces (decision 0044): a workspace read from a commit carries it (`Workspace.origin`), and
// every ledger entry its passes write names it — Tend's own changes and the drift arbitration records
// — as do the pass's `plan` and `pass-done` events; a workspace without one writes entries without.
// And the loop asks `beforePass` before every pass but the first (where a git workspace fetches).

const clock = steppedClock(Date.parse('2026-11-28T12:00:00Z'));
const ORIGIN: IntentOrigin = {
  kind: 'git',
  url: 'file:///srv/git/infra.git',
  ref: 'main',
  commit: 'a'.repeat(40),
  path: 'prod',
};
let sb: RunningSandbox;
let root: string;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, now: () => clock.now().getTime() });
  root = mkdtempSync(join(tmpdir(), 'tend-pass-origin-'));
});
afterAll(async () => {
  await sb.close();
  rmSync(root, { recursive: true, force: true });
});

async function workspace(name: string, replicas: number): Promise<Workspace> {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'intent.yaml'),
    [
      `kind: Workspace`,
      `name: ${name}`,
      '---',
      'kind: Provider',
      'name: sb',
      'type: openapi',
      `spec: ${sb.url}/openapi.json`,
      `endpoint: ${sb.url}`,
      '---',
      'kind: Resource',
      'type: sb.services',
      'name: api',
      'spec:',
      `  name: api-${name}`,
      '  image: nginx:1.27',
      `  replicas: ${replicas}`,
      '',
    ].join('\n'),
  );
  return openWorkspace({
    dir,
    store: join(dir, '.tend', 'tend.db'),
    env: { TEND_LEDGER_KEY: 'pass-origin-ledger-key-0123456789abcdef' },
  });
}

async function passes(
  ws: Workspace,
  n: number,
  beforePass?: () => Promise<void>,
  signal = new AbortController().signal,
): Promise<{ events: EngineEvent[]; ran: number }> {
  const events: EngineEvent[] = [];
  const done = await runContinuously(
    ws,
    {
      approveDestroy: false,
      prune: true,
      actor: tendActor('drift'),
      clock,
      report: (e) => events.push(e),
      verifyTimeoutMs: 1000,
      runChecks: false,
      intervalMs: 1000,
      feedWaitMs: 10,
      maxPasses: n,
      ...(beforePass ? { beforePass } : {}),
    },
    signal,
  );
  return { events, ran: done.passes };
}

describe('the commit a workspace was read from', () => {
  it('is on every ledger entry its passes write, Tend’s and drift’s, and on plan and pass-done', async () => {
    const plain = await workspace('plain', 2);
    const fromGit = await workspace('from-git', 2);
    const ws: Workspace = { ...fromGit, origin: ORIGIN };
    try {
      const { events } = await passes(ws, 1);
      await passes(plain, 1);
      // Someone changes replicas behind Tend's back: the drift entry and Tend's correction.
      const oracle = (await (await fetch(`${sb.url}/_sandbox/objects`)).json()) as {
        objects: { id: string; type: string; fields: Record<string, unknown> }[];
      };
      const service = oracle.objects.find(
        (o) => o.type === 'services' && o.fields['name'] === 'api-from-git',
      )!;
      await fetch(`${sb.url}/services/${service.id}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', 'x-tend-actor': 'alice' },
        body: JSON.stringify({ replicas: 9 }),
      });
      await passes(ws, 1);
      const entries = await ws.store.changes();
      expect(entries.map((c) => [c.source, c.action])).toEqual([
        ['tend', 'create'],
        ['audit', 'update'],
        ['tend', 'update'],
      ]);
      for (const c of entries) expect(c.origin).toEqual(ORIGIN);
      expect(events.find((e) => e.kind === 'plan')).toMatchObject({ origin: ORIGIN });
      expect(events.find((e) => e.kind === 'pass-done')).toMatchObject({ origin: ORIGIN });
      const own = await plain.store.changes();
      expect(own.length).toBeGreaterThan(0);
      for (const c of own) expect(c).not.toHaveProperty('origin');
      expect((await ws.store.verifyLedger()).ok).toBe(true);
    } finally {
      await fromGit.close();
      await plain.close();
    }
  });
});

describe('beforePass', () => {
  it('is asked before every pass but the first', async () => {
    const ws = await workspace('before', 1);
    try {
      const order: string[] = [];
      const { events, ran } = await passes(ws, 3, () => {
        order.push('before');
        return Promise.resolve();
      });
      expect(ran).toBe(3);
      const starts = events.filter((e) => e.kind === 'pass-start').length;
      expect(starts).toBe(3);
      expect(order).toEqual(['before', 'before']);
    } finally {
      await ws.close();
    }
  });

  it('stops the loop without the pass when it aborts the signal', async () => {
    const ws = await workspace('stops', 1);
    try {
      const stop = new AbortController();
      const { events, ran } = await passes(
        ws,
        5,
        () => {
          stop.abort();
          return Promise.resolve();
        },
        stop.signal,
      );
      expect(ran).toBe(1);
      expect(events.filter((e) => e.kind === 'pass-start')).toHaveLength(1);
    } finally {
      await ws.close();
    }
  });
});
