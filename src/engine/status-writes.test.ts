import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceStatus } from '../core/index.js';
import { TendError } from '../core/index.js';
import type { RunningSandbox } from '../sandbox/index.js';
import { startSandbox } from '../sandbox/index.js';
import { openWorkspaceAt } from '../app/index.js';
import { steppedClock } from './clock.js';
import { reconcilePass, tendActor } from './reconciler.js';
import type { Workspace } from './workspace.js';

// A pass writes a resource's status only when it changes (issue 13: a no-drift pass over 10,000
// converged resources wrote 10,000 rows, every pass). The status keeps the time of the pass that
// found it; a later pass that finds the same writes nothing, one that finds another writes it.

const SPEC = resolve(import.meta.dirname, '../sandbox/openapi.json');

let sb: RunningSandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'tend-status-writes-'));
});
afterAll(async () => {
  await sb.close();
  rmSync(dir, { recursive: true, force: true });
});

function intent(versioning: boolean, prefix = 'status'): string {
  return `kind: Provider
name: sb
type: openapi
spec: ${SPEC}
endpoint: ${sb.url}
---
kind: Resource
type: sb.buckets
name: a
spec: { name: ${prefix}-a, versioning: ${versioning} }
---
kind: Resource
type: sb.buckets
name: b
spec: { name: ${prefix}-b, versioning: false }
`;
}

const passOptions = {
  mode: 'apply',
  approveDestroy: false,
  prune: true,
  actor: tendActor(),
  report: () => {},
  verifyTimeoutMs: 2000,
  visibilityWindowMs: 0,
  runChecks: false,
} as const;

/** The workspace with its store's putStatus counted. */
function counted(ws: Workspace, writes: ResourceStatus[]): Workspace {
  const real = ws.store;
  const store = new Proxy(real, {
    get(target, key) {
      if (key === 'putStatus') {
        return (s: ResourceStatus) => {
          writes.push(s);
          return real.putStatus(s);
        };
      }
      const v = Reflect.get(target, key, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { ...ws, store };
}

/** A person turns versioning off on a bucket, through the platform's API. */
async function turnOff(name: string): Promise<void> {
  const res = await fetch(`${sb.url}/buckets/${name}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', 'X-Tend-Actor': 'alice' },
    body: JSON.stringify({ versioning: false }),
  });
  expect(res.status).toBe(200);
}

describe('status writes', () => {
  it('a pass writes only the statuses that changed, and keeps the time of the pass that found them', async () => {
    writeFileSync(join(dir, 'intent.yaml'), intent(true));
    const ws = await openWorkspaceAt({
      dir,
      name: 'status-writes',
      env: { TEND_SPEC_DIRS: dirname(SPEC) },
    });
    const clock = steppedClock();
    try {
      const writes: ResourceStatus[] = [];
      const w = counted(ws, writes);
      await reconcilePass(w, { ...passOptions, clock });
      expect(writes.map((s) => [s.address, s.state])).toEqual([
        ['sb.buckets/a', 'converged'],
        ['sb.buckets/b', 'converged'],
      ]);
      const first = await ws.store.listStatus();

      writes.length = 0;
      await reconcilePass(w, { ...passOptions, clock });
      await reconcilePass(w, { ...passOptions, clock });
      expect(writes).toEqual([]);
      expect(await ws.store.listStatus()).toEqual(first);

      // Someone turns versioning off: the next pass puts it back (an update) — still converged,
      // with the same object, so nothing to write; a failing check or an error would be written.
      await turnOff('status-a');
      await reconcilePass(w, { ...passOptions, clock });
      expect(writes).toEqual([]);
    } finally {
      await ws.close();
    }
  });

  it('a changed status is written, with the time of the pass that found it', async () => {
    const sub = mkdtempSync(join(dir, 'changed-'));
    writeFileSync(join(sub, 'intent.yaml'), intent(true, 'changed'));
    const ws = await openWorkspaceAt({
      dir: sub,
      name: 'status-changed',
      env: { TEND_SPEC_DIRS: dirname(SPEC) },
    });
    const clock = steppedClock();
    try {
      const writes: ResourceStatus[] = [];
      const w = counted(ws, writes);
      await reconcilePass(w, { ...passOptions, clock });
      writes.length = 0;
      // The platform refuses every write from now on: the drifted bucket's update fails.
      await turnOff('changed-a');
      const failing: Workspace = {
        ...w,
        typeOf: (type) => {
          const t = w.typeOf(type);
          return {
            info: t.info,
            provider: {
              ...t.provider,
              describe: () => t.provider.describe(),
              list: (x, s) => t.provider.list(x, s),
              read: (x, id, s) => t.provider.read(x, id, s),
              evaluate: (x, c, d) => t.provider.evaluate(x, c, d),
              update: () =>
                Promise.reject(
                  new TendError('platform.refused', 'update refused (422)', { status: 422 }),
                ),
              ...(t.provider.normalize ? { normalize: t.provider.normalize.bind(t.provider) } : {}),
            },
          };
        },
      };
      await reconcilePass(failing, { ...passOptions, clock });
      expect(writes.map((s) => [s.address, s.state])).toEqual([['sb.buckets/a', 'error']]);
      const stored = (await ws.store.listStatus()).find((s) => s.address === 'sb.buckets/a')!;
      expect(stored.state).toBe('error');
      expect(stored.updatedAt).toBe(writes[0]!.updatedAt);
    } finally {
      await ws.close();
    }
  });

  it('a resource removed (its status deleted) and declared again has its status written again', async () => {
    const sub = mkdtempSync(join(dir, 'again-'));
    writeFileSync(join(sub, 'intent.yaml'), intent(true, 'again'));
    const ws = await openWorkspaceAt({
      dir: sub,
      name: 'status-again',
      env: { TEND_SPEC_DIRS: dirname(SPEC) },
    });
    const clock = steppedClock();
    try {
      const writes: ResourceStatus[] = [];
      const w = counted(ws, writes);
      await reconcilePass(w, { ...passOptions, clock });
      const withoutB: Workspace = {
        ...w,
        intent: {
          ...w.intent,
          resources: w.intent.resources.filter((r) => r.address !== 'sb.buckets/b'),
        },
      };
      await reconcilePass(withoutB, { ...passOptions, clock });
      expect((await ws.store.listStatus()).map((s) => s.address)).toEqual(['sb.buckets/a']);
      // Declared again: created again with the same name (the same object id), so the same status
      // as before — and it must be written, since the row is gone.
      await reconcilePass(w, { ...passOptions, clock });
      const statuses = await ws.store.listStatus();
      expect(statuses.map((s) => [s.address, s.state])).toEqual([
        ['sb.buckets/a', 'converged'],
        ['sb.buckets/b', 'converged'],
      ]);
    } finally {
      await ws.close();
    }
  });
});
