import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ObservedObject, ResourceDecl } from '../core/index.js';
import type { TwinEntry } from '../store/index.js';
import { ledgerKey, openStore } from '../store/index.js';
import type { PlatformCall } from '../../test/support/fake-workspace.js';
import {
  decl,
  fakePlatform,
  listed,
  twinOf,
  twinWith,
  workspaceOver,
} from '../../test/support/fake-workspace.js';
import { systemClock } from './clock.js';
import { executePlan } from './executor.js';
import { observe } from './observe.js';
import { planPass } from './planner.js';
import { tendActor } from './reconciler.js';

// executePlan over an in-memory platform and a real SQLite store: the order of what reaches the
// platform, and the outcome of every step that fails (so that `apply` can exit 1).

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const net = (id: string, address: string, fields: Record<string, unknown> = {}) =>
  listed('networks', id, ['w', address], fields);
const bucket = (id: string, marker?: [string, string], fields: Record<string, unknown> = {}) =>
  listed('buckets', id, marker, fields);

async function run(
  declared: ResourceDecl[],
  objects: ObservedObject[],
  twin: TwinEntry[],
  options: Parameters<typeof fakePlatform>[1] = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'tend-executor-'));
  dirs.push(dir);
  const store = await openStore(join(dir, 'tend.db'), {
    ledgerKey: ledgerKey('executor-test-ledger-key-0123456789abcdef'),
  });
  for (const t of twin) await store.putTwin(t);
  const platform = fakePlatform(objects, options);
  const ws = workspaceOver(declared, platform.provider, store);
  try {
    const observation = await observe(ws, { visibilityWindowMs: 0, now: new Date() });
    const pass = await planPass(ws, observation, { approveDestroy: false, prune: true });
    const outcomes = await executePlan(ws, pass, {
      actor: tendActor('test'),
      clock: systemClock,
      report: () => {},
      verifyTimeoutMs: 500,
      runChecks: false,
    });
    const states = Object.fromEntries(
      [...outcomes].map(([a, o]) => [a, o.message ? `${o.state}: ${o.message}` : o.state]),
    );
    return { calls: platform.calls, states, twin: await store.listTwin() };
  } finally {
    await store.close();
  }
}

const call = (verb: PlatformCall['verb'], type: string, id: string): PlatformCall => ({
  verb,
  type,
  id,
});

describe('executePlan', () => {
  const cases: {
    name: string;
    reason: string;
    declared: ResourceDecl[];
    objects: ObservedObject[];
    twin: TwinEntry[];
    options?: Parameters<typeof fakePlatform>[1];
    wantCalls: PlatformCall[];
    wantStates: Record<string, string | RegExp>;
  }[] = [
    {
      name: 'delete after the repointed dependent',
      reason: 'the declared resource that referenced the removed one is updated before the delete',
      declared: [
        decl('sb.networks/b', 'net-b'),
        decl('sb.buckets/app', 'app', undefined, { name: 'app', net: '${sb.networks/b.id}' }),
      ],
      objects: [
        net('net-a', 'sb.networks/a'),
        net('net-b', 'sb.networks/b'),
        bucket('app', ['w', 'sb.buckets/app'], { net: 'net-a' }),
      ],
      twin: [
        twinOf('sb.networks/a', 'net-a'),
        twinOf('sb.networks/b', 'net-b'),
        twinWith('sb.buckets/app', 'app', ['sb.networks/a']),
      ],
      wantCalls: [call('update', 'buckets', 'app'), call('delete', 'networks', 'net-a')],
      wantStates: { 'sb.networks/b': 'converged', 'sb.buckets/app': 'converged' },
    },
    {
      name: 'refused delete',
      reason: 'a delete the platform refuses is an error outcome of the removed resource',
      declared: [],
      objects: [net('net-a', 'sb.networks/a')],
      twin: [twinOf('sb.networks/a', 'net-a')],
      options: { refuse: (c) => (c.verb === 'delete' ? 'still used by svc-1' : undefined) },
      wantCalls: [call('delete', 'networks', 'net-a')],
      wantStates: { 'sb.networks/a': /^error: .*still used by svc-1/ },
    },
    {
      name: 'refused step 2 of a replace',
      reason: 'the replacement converged, but the old object could not be deleted: error',
      declared: [decl('sb.networks/n', 'n', undefined, { name: 'n', cidr: '10.1.0.0/16' })],
      objects: [net('net-n', 'sb.networks/n', { name: 'n', cidr: '10.0.0.0/16' })],
      twin: [twinOf('sb.networks/n', 'net-n')],
      options: {
        evaluate: () => ({ action: 'replace', fields: ['cidr'], source: 'platform' }),
        refuse: (c) => (c.verb === 'delete' ? 'busy' : undefined),
      },
      wantCalls: [call('create', 'networks', 'n-1'), call('delete', 'networks', 'net-n')],
      wantStates: { 'sb.networks/n': /^error: step 2 of the replace .*busy/ },
    },
    {
      name: 'replace with a dependent',
      reason: 'create the replacement, repoint the dependent, then delete the old object',
      declared: [
        decl('sb.networks/n', 'n', undefined, { name: 'n', cidr: '10.1.0.0/16' }),
        decl('sb.buckets/app', 'app', undefined, { name: 'app', net: '${sb.networks/n.id}' }),
      ],
      objects: [
        net('net-n', 'sb.networks/n', { name: 'n', cidr: '10.0.0.0/16' }),
        bucket('app', ['w', 'sb.buckets/app'], { net: 'net-n' }),
      ],
      twin: [
        twinOf('sb.networks/n', 'net-n'),
        twinWith('sb.buckets/app', 'app', ['sb.networks/n']),
      ],
      options: {
        evaluate: (type) =>
          type === 'networks'
            ? { action: 'replace', fields: ['cidr'], source: 'platform' }
            : { action: 'update', fields: [], source: 'platform' },
      },
      wantCalls: [
        call('create', 'networks', 'n-1'),
        call('update', 'buckets', 'app'),
        call('delete', 'networks', 'net-n'),
      ],
      wantStates: { 'sb.networks/n': 'converged', 'sb.buckets/app': 'converged' },
    },
    {
      name: 'conflict',
      reason:
        "another workspace's object fails the resource and skips its dependents; nothing is sent",
      declared: [
        decl('sb.buckets/logs', 'logs'),
        decl('sb.buckets/app', 'app', undefined, { name: 'app', log: '${sb.buckets/logs.name}' }),
      ],
      objects: [bucket('logs', ['prod', 'sb.buckets/logs'])],
      twin: [],
      wantCalls: [],
      wantStates: {
        'sb.buckets/logs': /^error: ownership\.conflict: .*belongs to workspace `prod`/,
        'sb.buckets/app': /^pending: not attempted/,
      },
    },
    {
      name: 'move',
      reason: 'a rename rewrites the marker (one update) and re-records; nothing is deleted',
      declared: [decl('sb.buckets/static', 'b1')],
      objects: [bucket('b1', ['w', 'sb.buckets/assets'])],
      twin: [twinOf('sb.buckets/assets', 'b1')],
      wantCalls: [call('update', 'buckets', 'b1')],
      wantStates: { 'sb.buckets/static': 'converged' },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, async () => {
      const got = await run(c.declared, c.objects, c.twin, c.options);
      expect(got.calls).toEqual(c.wantCalls);
      expect(Object.keys(got.states).sort()).toEqual(Object.keys(c.wantStates).sort());
      for (const [address, want] of Object.entries(c.wantStates)) {
        if (typeof want === 'string') expect(got.states[address], address).toBe(want);
        else expect(got.states[address], address).toMatch(want);
      }
    });
  }

  it('a move leaves one record, under the new address', async () => {
    const got = await run(
      [decl('sb.buckets/static', 'b1')],
      [bucket('b1', ['w', 'sb.buckets/assets'])],
      [twinOf('sb.buckets/assets', 'b1')],
    );
    expect(got.twin.map((t) => `${t.address} ${t.objectId}`)).toEqual(['sb.buckets/static b1']);
  });
});

describe('executePlan: resources carried out at once', () => {
  /** Twelve independent networks, and a chain of four buckets each referencing the one before. */
  const declared = [
    ...Array.from({ length: 12 }, (_, i) => decl(`sb.networks/n${i}`, `n${i}`)),
    decl('sb.buckets/c0', 'c0'),
    ...[1, 2, 3].map((i) =>
      decl(`sb.buckets/c${i}`, `c${i}`, undefined, {
        name: `c${i}`,
        after: `\${sb.buckets/c${i - 1}.name}`,
      }),
    ),
  ];

  it.each([
    [1, 1, false],
    [3, 3, false],
    [undefined, 13, false], // the 12 networks and the head of the chain: the rest wait for it
    // A batched type's changes share one request per parent: its steps take no slot, so all 12
    // networks start together (and join one batch), beside the one bucket the slot allows.
    [1, 13, true],
  ])(
    'maxInFlight %s: at most %i creates at once (networks batched: %s), and every resource converges',
    async (max, want, networksBatched) => {
      const dir = mkdtempSync(join(tmpdir(), 'tend-executor-'));
      dirs.push(dir);
      const store = await openStore(join(dir, 'tend.db'), {
        ledgerKey: ledgerKey('executor-test-ledger-key-0123456789abcdef'),
      });
      const platform = fakePlatform([]);
      let now = 0;
      let most = 0;
      // Every create is held until `want` creates are in flight at once (then the gate stays open),
      // so the others get to start however slowly the journal syncs; if the executor never lets
      // `want` run together, each gives up after 2 s and `most` stays below `want`.
      let open: () => void = () => undefined;
      const opened = new Promise<void>((r) => (open = r));
      const create = platform.provider.create.bind(platform.provider);
      const provider = {
        ...platform.provider,
        create: async (...args: Parameters<typeof create>) => {
          most = Math.max(most, ++now);
          if (now >= want) open();
          try {
            await Promise.race([opened, new Promise((r) => setTimeout(r, 2000))]);
            // Long enough that any create the executor should not start yet would start.
            await new Promise((r) => setTimeout(r, 5));
            return await create(...args);
          } finally {
            now--;
          }
        },
      };
      const plain = workspaceOver(declared, provider, store);
      const ws: typeof plain = {
        ...plain,
        typeOf: (type) => {
          const found = plain.typeOf(type);
          return networksBatched && type === 'sb.networks'
            ? { ...found, info: { ...found.info, batched: true } }
            : found;
        },
      };
      try {
        const observation = await observe(ws, { visibilityWindowMs: 0, now: new Date() });
        const pass = await planPass(ws, observation, { approveDestroy: false, prune: true });
        const outcomes = await executePlan(ws, pass, {
          actor: tendActor('test'),
          clock: systemClock,
          report: () => {},
          verifyTimeoutMs: 500,
          runChecks: false,
          ...(max !== undefined ? { maxInFlight: max } : {}),
        });
        expect(most).toBe(want);
        expect([...outcomes.values()].map((o) => o.state)).toEqual(Array(16).fill('converged'));
        expect(platform.calls.filter((c) => c.verb === 'create')).toHaveLength(16);
      } finally {
        await store.close();
      }
    },
  );
});
