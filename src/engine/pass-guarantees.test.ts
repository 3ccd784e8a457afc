import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address, ObservedObject, Provider, ResourceState } from '../core/index.js';
import { TendError } from '../core/index.js';
import type { RunningSandbox } from '../sandbox/index.js';
import { startSandbox } from '../sandbox/index.js';
import type { Clock } from './clock.js';
import { reconcilePass, tendActor } from './reconciler.js';
import type { Workspace } from './workspace.js';
import { openWorkspace } from './workspace.js';

// Two guarantees of one apply pass, each checked by making the platform misbehave in one way:
// - a step that fails skips what depends on it (nothing is sent for a dependent, which stays
//   pending, never "error" from a half-resolved reference);
// - a 2xx is not success: an object that never reads back as declared is not reported converged.
// Found by breaking them on purpose (docs/mutation.md): no unit test failed before this file.
// The platform is the real sandbox; the misbehaviour is a hand-written wrapper around its provider.

const NETWORK = 'sb.networks/main' as Address;
const SERVICE = 'sb.services/api' as Address;
const SPEC = resolve(import.meta.dirname, '../sandbox/openapi.json');
const VERIFY_TIMEOUT_MS = 2000;

/** A clock that moves only when someone sleeps on it. */
function fakeClock(): Clock & { elapsed(): number } {
  const start = Date.parse('2026-01-01T00:00:00Z');
  let t = start;
  return {
    now: () => new Date(t),
    sleep: (ms) => {
      t += Math.max(0, ms);
      return Promise.resolve();
    },
    elapsed: () => t - start,
  };
}

/** What a case changes in the provider's behaviour; the rest is the real provider. */
interface Misbehaviour {
  create?: (real: Provider['create']) => Provider['create'];
  read?: (real: Provider['read']) => Provider['read'];
}

/** The real provider, with `create` and `read` replaced where the case says so; counts creates. */
function misbehaving(real: Provider, m: Misbehaviour, creates: Map<string, number>): Provider {
  const create: Provider['create'] = (type, desired, ctx) => real.create(type, desired, ctx);
  const read: Provider['read'] = (type, id, signal) => real.read(type, id, signal);
  const faultyCreate = m.create?.(create) ?? create;
  return {
    name: real.name,
    describe: () => real.describe(),
    list: (type, signal) => real.list(type, signal),
    read: m.read?.(read) ?? read,
    create: (type, desired, ctx) => {
      creates.set(type, (creates.get(type) ?? 0) + 1);
      return faultyCreate(type, desired, ctx);
    },
    update: (type, id, desired, current, ctx) => real.update(type, id, desired, current, ctx),
    delete: (type, id, ctx) => real.delete(type, id, ctx),
    evaluate: (type, current, desired) => real.evaluate(type, current, desired),
    ...(real.find ? { find: real.find.bind(real) } : {}),
    ...(real.normalize ? { normalize: real.normalize.bind(real) } : {}),
  };
}

/** The workspace as opened, with every type served by `provider`. */
function withProvider(ws: Workspace, provider: Provider): Workspace {
  return {
    ...ws,
    providers: new Map([['sb', provider]]),
    typeOf: (type) => ({ provider, info: ws.typeOf(type).info }),
  };
}

interface Case {
  readonly name: string;
  readonly reason: string;
  readonly misbehaviour: Misbehaviour;
  readonly want: {
    readonly states: Readonly<Record<Address, ResourceState>>;
    readonly messages?: Readonly<Record<string, RegExp>>;
    /** Creates sent per provider type (what reached the provider, faults included). */
    readonly creates: Readonly<Record<string, number>>;
    /** The types of the objects the platform holds afterwards. */
    readonly onPlatform: readonly string[];
  };
}

const CASES: Case[] = [
  {
    name: 'a platform that behaves',
    reason: 'the control case: the same pass creates and verifies both, so the faults below matter',
    misbehaviour: {},
    want: {
      states: { [NETWORK]: 'converged', [SERVICE]: 'converged' },
      creates: { networks: 1, services: 1 },
      onPlatform: ['networks', 'services'],
    },
  },
  {
    name: 'a create the platform refuses',
    reason:
      'what depends on a failed step is not attempted: nothing is sent for it and it stays pending',
    misbehaviour: {
      create: (real) => (type, desired, ctx) =>
        type === 'networks'
          ? Promise.reject(
              new TendError('platform.refused', 'create networks was refused (422 overlap)', {
                status: 422,
              }),
            )
          : real(type, desired, ctx),
    },
    want: {
      states: { [NETWORK]: 'error', [SERVICE]: 'pending' },
      messages: {
        [NETWORK]: /platform\.refused/,
        [SERVICE]: /not attempted: a resource it depends on failed/,
      },
      creates: { networks: 1 },
      onPlatform: [],
    },
  },
  {
    name: 'a create that never reads back as declared',
    reason:
      'a 2xx is not success: verification re-reads until its bound, then reports it, never converged',
    misbehaviour: {
      read: (real) => async (type, id, signal) => {
        const o = await real(type, id, signal);
        if (type !== 'services' || !o) return o;
        const stale: ObservedObject = { ...o, fields: { ...o.fields, replicas: 1 } };
        return stale;
      },
    },
    want: {
      states: { [NETWORK]: 'converged', [SERVICE]: 'error' },
      messages: { [SERVICE]: /verify\.timeout: .*replicas still differs/ },
      creates: { networks: 1, services: 1 },
      onPlatform: ['networks', 'services'],
    },
  },
];

let sb: RunningSandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'tend-pass-guarantees-'));
});
afterAll(async () => {
  await sb.close();
  rmSync(dir, { recursive: true, force: true });
});

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
  return openWorkspace({ dir: intent, name: 'guarantees', env: {} });
}

describe('one apply pass when the platform misbehaves', () => {
  it.each(CASES)('$name: $reason', async (c) => {
    sb.sandbox.reset();
    const opened = await workspace();
    try {
      const creates = new Map<string, number>();
      const real = opened.providers.get('sb')!;
      const ws = withProvider(opened, misbehaving(real, c.misbehaviour, creates));
      const clock = fakeClock();
      const result = await reconcilePass(ws, {
        mode: 'apply',
        approveDestroy: false,
        prune: true,
        actor: tendActor(),
        clock,
        report: () => {},
        verifyTimeoutMs: VERIFY_TIMEOUT_MS,
        visibilityWindowMs: 0,
        runChecks: false,
      });

      const got = Object.fromEntries(
        [...result.outcomes].map(([address, o]) => [address, o.state]),
      );
      expect(got).toEqual(c.want.states);
      for (const [address, pattern] of Object.entries(c.want.messages ?? {})) {
        expect(result.outcomes.get(address as Address)?.message).toMatch(pattern);
      }
      expect(Object.fromEntries(creates)).toEqual(c.want.creates);
      const held = sb.sandbox.state.all().map((o) => o.type as string);
      expect(held.sort()).toEqual([...c.want.onPlatform]);
    } finally {
      await opened.close();
    }
  });
});
