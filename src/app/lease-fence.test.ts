import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address } from '../core/index.js';
import type { Workspace } from '../engine/index.js';
import { reconcilePass, tendActor } from '../engine/index.js';
import type { RunningSandbox } from '../sandbox/index.js';
import { startSandbox } from '../sandbox/index.js';
import { defaultContext } from './context.js';
import { acquireWorkspaceLease } from './lease.js';
import { openWorkspaceAt } from './workspace.js';

// A holder paused past its lease (SIGSTOP, a frozen VM) must not send what it journaled before the
// pause: the store refuses its later writes, and the send fence refuses the mutation itself. The
// platform is the real sandbox; the pause is a clock moved by the test while the lease's renewal loop
// is frozen (its sleeps never end).

const SPEC = resolve(import.meta.dirname, '../sandbox/openapi.json');
const NETWORK = 'sb.networks/main' as Address;
const SERVICE = 'sb.services/api' as Address;
const TTL_MS = 10_000;

let sb: RunningSandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'tend-lease-fence-'));
});
afterAll(async () => {
  await sb.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A clock that moves only when the test moves it; sleeps end only when aborted. */
function frozenClock() {
  const clock = {
    t: Date.UTC(2026, 10, 28, 12, 0, 0),
    now: () => new Date(clock.t),
    sleep: (_ms: number, signal?: AbortSignal) =>
      new Promise<void>((r) => {
        if (signal?.aborted) return r();
        signal?.addEventListener('abort', () => r(), { once: true });
      }),
    monotonic: () => clock.t,
  };
  return clock;
}

async function workspace(): Promise<Workspace> {
  const intent = mkdtempSync(join(dir, 'intent-'));
  writeFileSync(
    join(intent, 'intent.yaml'),
    `kind: Provider
name: sb
type: openapi
spec: ${SPEC}
endpoint: ${sb.url}
---
kind: Resource
type: sb.networks
name: main
spec:
  name: main
  cidr: 10.20.0.0/16
---
kind: Resource
type: sb.services
name: api
spec:
  name: api
  image: nginx:1.27
  replicas: 2
  network_id: \${sb.networks/main.id}
`,
  );
  return openWorkspaceAt({ dir: intent, name: 'fenced', env: { TEND_SPEC_DIRS: dirname(SPEC) } });
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

describe('the send fence of a lease holder, on the real sandbox', () => {
  it.each([
    { name: 'a holder within its lease sends', pausedMs: TTL_MS / 2, sends: true },
    { name: 'a holder paused past its lease sends nothing', pausedMs: TTL_MS + 1, sends: false },
  ])('$name', async ({ pausedMs, sends }) => {
    sb.sandbox.reset();
    const clock = frozenClock();
    const ctx = defaultContext({ clock });
    const ws = await workspace();
    try {
      const held = await acquireWorkspaceLease(ctx, ws, {
        command: 'tend apply',
        waitMs: 0,
        ttlMs: TTL_MS,
      });
      clock.t += pausedMs;
      const result = await reconcilePass(ws, { ...passOptions, clock: ctx.clock });
      await held.release();

      const held_ = sb.sandbox.state.all().map((o) => o.type as string);
      if (sends) {
        expect(result.outcomes.get(NETWORK)?.state).toBe('converged');
        expect(result.outcomes.get(SERVICE)?.state).toBe('converged');
        expect(held_.sort()).toEqual(['networks', 'services']);
        return;
      }
      // Nothing reached the platform, and the outcome says why.
      expect(held_).toEqual([]);
      expect(result.outcomes.get(NETWORK)?.state).toBe('error');
      expect(result.outcomes.get(NETWORK)?.message).toMatch(
        /store\.lease-lost: not sent: this process last secured the lease on workspace fenced 10 s ago/,
      );
      expect(result.outcomes.get(SERVICE)?.state).toBe('pending');
      // The journal keeps the attempt, settled as failed: nothing was sent for it.
      const ops = await ws.store.operations();
      expect(ops.map((o) => [o.address, o.action, o.state])).toEqual([
        [NETWORK, 'create', 'failed'],
      ]);
    } finally {
      await ws.close();
    }
  });
});
