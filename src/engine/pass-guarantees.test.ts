import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address, ObservedObject, Provider, ResourceState } from '../core/index.js';
import { TendError } from '../core/index.js';
import type { RunningSandbox } from '../sandbox/index.js';
import { startSandbox } from '../sandbox/index.js';
import { steppedClock } from './clock.js';
import { reconcilePass, tendActor } from './reconciler.js';
import type { Workspace } from './workspace.js';
import { openWorkspaceAt as openWorkspace } from '../app/index.js';

// Two guarantees of one apply pass, each checked by making the platform misbehave in one way:
// - a step that fails skips what depends on it: nothing is sent for a dependent, which stays
//   pending (after a failed update its reference still resolves, so only the skip holds it back);
// - a 2xx is not success: an object that never reads back as declared is not reported converged.
// Found by breaking them on purpose (docs/mutation.md): no unit test failed before this file.
// The platform is the real sandbox; the misbehaviour is a hand-written wrapper around its provider.

const NETWORK = 'sb.networks/main' as Address;
const SERVICE = 'sb.services/api' as Address;
const SPEC = resolve(import.meta.dirname, '../sandbox/openapi.json');
const VERIFY_TIMEOUT_MS = 2000;

const fakeClock = steppedClock;

/** What a case changes in the provider's behaviour; the rest is the real provider. */
interface Misbehaviour {
  create?: (real: Provider['create']) => Provider['create'];
  update?: (real: Provider['update']) => Provider['update'];
  read?: (real: Provider['read']) => Provider['read'];
}

/**
 * The real provider, with `create`, `update` and `read` replaced where the case says so; every write
 * that reaches it is logged as `<action> <type>` in `sent`.
 */
function misbehaving(real: Provider, m: Misbehaviour, sent: string[]): Provider {
  const create: Provider['create'] = (type, desired, ctx) => real.create(type, desired, ctx);
  const update: Provider['update'] = (type, id, desired, current, ctx) =>
    real.update(type, id, desired, current, ctx);
  const read: Provider['read'] = (type, id, signal) => real.read(type, id, signal);
  const faultyCreate = m.create?.(create) ?? create;
  const faultyUpdate = m.update?.(update) ?? update;
  return {
    name: real.name,
    describe: () => real.describe(),
    list: (type, signal) => real.list(type, signal),
    read: m.read?.(read) ?? read,
    create: (type, desired, ctx) => {
      sent.push(`create ${type}`);
      return faultyCreate(type, desired, ctx);
    },
    update: (type, id, desired, current, ctx) => {
      sent.push(`update ${type}`);
      return faultyUpdate(type, id, desired, current, ctx);
    },
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

/** What the intent declares: a network (with a tag) and a service on it. */
interface Declared {
  readonly tier: string;
  readonly replicas: number;
}
const DECLARED: Declared = { tier: 'one', replicas: 2 };

interface Case {
  readonly name: string;
  readonly reason: string;
  /** Applied first, on a platform that behaves; the case's pass then applies `declared`. */
  readonly before?: Declared;
  readonly declared?: Declared;
  readonly misbehaviour: Misbehaviour;
  readonly want: {
    readonly states: Readonly<Record<Address, ResourceState>>;
    readonly messages?: Readonly<Record<string, RegExp>>;
    /** The writes that reached the provider in the case's pass (faulty ones included), sorted. */
    readonly sent: readonly string[];
    /** The types of the objects the platform holds afterwards, sorted. */
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
      sent: ['create networks', 'create services'],
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
      sent: ['create networks'],
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
      sent: ['create networks', 'create services'],
      onPlatform: ['networks', 'services'],
    },
  },
  {
    name: 'an update the platform refuses',
    reason:
      'its dependents are not updated either, although their references still resolve (to the old network)',
    before: DECLARED,
    declared: { tier: 'two', replicas: 3 },
    misbehaviour: {
      update: (real) => (type, id, desired, current, ctx) =>
        type === 'networks'
          ? Promise.reject(
              new TendError('platform.refused', 'update networks was refused (409 locked)', {
                status: 409,
              }),
            )
          : real(type, id, desired, current, ctx),
    },
    want: {
      states: { [NETWORK]: 'error', [SERVICE]: 'pending' },
      messages: { [SERVICE]: /not attempted: a resource it depends on failed/ },
      sent: ['update networks'],
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

/** Writes the intent into `intent` (a folder that keeps its store between passes) and opens it. */
async function workspace(intent: string, d: Declared): Promise<Workspace> {
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
  tags: { tier: ${d.tier} }
---
kind: Resource
type: sb.services
name: api
spec:
  name: api
  image: nginx:1.27
  replicas: ${d.replicas}
  network_id: \${sb.networks/main.id}
`,
  );
  return openWorkspace({ dir: intent, name: 'guarantees', env: { TEND_SPEC_DIRS: dirname(SPEC) } });
}

const passOptions = {
  mode: 'apply',
  approveDestroy: false,
  prune: true,
  actor: tendActor(),
  report: () => {},
  verifyTimeoutMs: VERIFY_TIMEOUT_MS,
  visibilityWindowMs: 0,
  runChecks: false,
} as const;

describe('one apply pass when the platform misbehaves', () => {
  it.each(CASES)('$name: $reason', async (c) => {
    sb.sandbox.reset();
    const intent = mkdtempSync(join(dir, 'intent-'));
    if (c.before) {
      const first = await workspace(intent, c.before);
      try {
        const r = await reconcilePass(first, { ...passOptions, clock: fakeClock() });
        expect([...r.outcomes.values()].map((o) => o.state)).toEqual(['converged', 'converged']);
      } finally {
        await first.close();
      }
    }
    const opened = await workspace(intent, c.declared ?? DECLARED);
    try {
      const sent: string[] = [];
      const real = opened.providers.get('sb')!;
      const ws = withProvider(opened, misbehaving(real, c.misbehaviour, sent));
      const result = await reconcilePass(ws, { ...passOptions, clock: fakeClock() });

      const got = Object.fromEntries(
        [...result.outcomes].map(([address, o]) => [address, o.state]),
      );
      expect(got).toEqual(c.want.states);
      for (const [address, pattern] of Object.entries(c.want.messages ?? {})) {
        expect(result.outcomes.get(address as Address)?.message).toMatch(pattern);
      }
      expect(sent.sort()).toEqual(c.want.sent);
      const held = sb.sandbox.state.all().map((o) => o.type as string);
      expect(held.sort()).toEqual(c.want.onPlatform);
    } finally {
      await opened.close();
    }
  });
});
