import { describe, expect, it } from 'vitest';
import type { Address } from '../core/index.js';
import type { NodeId, Phase } from './scheduler.js';
import { Blocked, Skipped, createScheduler, nodeId } from './scheduler.js';

// The scheduler alone, over nodes named `phase:address`: what ran, in which order, and how every node
// that did not end well ended. No timers: nodes finish on microtasks.

const id = (name: string): NodeId => {
  const [phase, address] = name.split(':') as [Phase, Address];
  return nodeId(phase, address);
};
const name = (n: NodeId) => `${n.phase}:${n.address}`;

interface NodeSpec {
  readonly id: string;
  readonly deps?: readonly string[];
  /** How the node's work ends: an error, or stopped at a gate (a Blocked of its own address). */
  readonly ends?: 'error' | 'blocked';
}

/** Runs the nodes; `ran` lists the ones whose work started, in order, `failures` how the rest ended. */
async function schedule(nodes: readonly NodeSpec[], options: { aborted?: boolean } = {}) {
  const controller = new AbortController();
  if (options.aborted) controller.abort();
  const scheduler = createScheduler({ maxInFlight: 2, signal: controller.signal });
  const ran: string[] = [];
  for (const n of nodes) {
    const self = id(n.id);
    scheduler.add(
      self,
      () => (n.deps ?? []).map(id),
      async () => {
        ran.push(n.id);
        await Promise.resolve();
        if (n.ends === 'error') throw new Error(`${n.id} failed`);
        if (n.ends === 'blocked') throw new Blocked(self.address, 'which needs approval');
      },
      true,
    );
  }
  const failures = (await scheduler.settle()).map(({ node, error }) => {
    const how =
      error instanceof Blocked
        ? `blocked by ${error.root} (${error.why})`
        : error instanceof Skipped
          ? `skipped (${error.reason})`
          : (error as Error).message;
    return `${name(node)}: ${how}`;
  });
  return { ran, failures };
}

describe('createScheduler', () => {
  const cases: {
    name: string;
    reason: string;
    nodes: NodeSpec[];
    aborted?: boolean;
    want: { ran: string[]; failures: string[] };
  }[] = [
    {
      name: 'dependency order',
      reason:
        'a node starts only once what it depends on has ended, whatever order they were added in',
      nodes: [
        { id: 'step:c', deps: ['step:b'] },
        { id: 'step:b', deps: ['step:a'] },
        { id: 'step:a' },
      ],
      want: { ran: ['step:a', 'step:b', 'step:c'], failures: [] },
    },
    {
      name: 'unknown dependency',
      reason: 'a dependency that is no node (nothing to do there) counts as done',
      nodes: [{ id: 'step:b', deps: ['step:a', 'delete:z'] }],
      want: { ran: ['step:b'], failures: [] },
    },
    {
      name: 'phases are separate nodes',
      reason: "one address's delete-replaced waits for its own step; the two never share a key",
      nodes: [{ id: 'delete-replaced:a', deps: ['step:a'] }, { id: 'step:a' }],
      want: { ran: ['step:a', 'delete-replaced:a'], failures: [] },
    },
    {
      name: 'failure skips dependents only',
      reason: 'what depends on a failed node is skipped, transitively; an independent branch runs',
      nodes: [
        { id: 'step:a', ends: 'error' },
        { id: 'step:b', deps: ['step:a'] },
        { id: 'delete:c', deps: ['step:b'] },
        { id: 'step:d' },
      ],
      want: {
        ran: ['step:a', 'step:d'],
        failures: [
          'step:a: step:a failed',
          'step:b: skipped (dependency-failed)',
          'delete:c: skipped (dependency-failed)',
        ],
      },
    },
    {
      name: 'gate holds back dependents',
      reason:
        'what waits on a node stopped at a gate is blocked by that root, transitively, with its why',
      nodes: [
        { id: 'delete:a', ends: 'blocked' },
        { id: 'delete:b', deps: ['delete:a'] },
        { id: 'delete:c', deps: ['delete:b'] },
      ],
      want: {
        ran: ['delete:a'],
        failures: [
          'delete:a: blocked by a (which needs approval)',
          'delete:b: blocked by a (which needs approval)',
          'delete:c: blocked by a (which needs approval)',
        ],
      },
    },
    {
      name: 'blocked before skipped',
      reason: 'a node waiting on both a failed and a gated node is held back, not skipped',
      nodes: [
        { id: 'step:a', ends: 'error' },
        { id: 'delete:g', ends: 'blocked' },
        { id: 'step:b', deps: ['step:a', 'delete:g'] },
      ],
      want: {
        ran: ['step:a', 'delete:g'],
        failures: [
          'step:a: step:a failed',
          'delete:g: blocked by g (which needs approval)',
          'step:b: blocked by g (which needs approval)',
        ],
      },
    },
    {
      name: 'added twice',
      reason: 'adding an id again does nothing: its work runs once',
      nodes: [{ id: 'finish-replace:a' }, { id: 'finish-replace:a' }],
      want: { ran: ['finish-replace:a'], failures: [] },
    },
    {
      name: 'stopping',
      reason: 'once the signal is aborted no node starts; each is skipped as stopping',
      nodes: [{ id: 'step:a' }, { id: 'step:b', deps: ['step:a'] }],
      aborted: true,
      want: {
        ran: [],
        failures: ['step:a: skipped (stopping)', 'step:b: skipped (dependency-failed)'],
      },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, async () => {
      expect(await schedule(c.nodes, { aborted: c.aborted ?? false })).toEqual(c.want);
    });
  }

  it.each([
    [true, 2],
    [false, 6],
  ])(
    'bounded %s: at most %i of six independent nodes run at once (maxInFlight 2)',
    async (bounded, want) => {
      const scheduler = createScheduler({ maxInFlight: 2 });
      let now = 0;
      let most = 0;
      for (let i = 0; i < 6; i++) {
        scheduler.add(
          nodeId('step', `sb.n/${i}` as Address),
          () => [],
          async () => {
            most = Math.max(most, ++now);
            for (let t = 0; t < 5; t++) await Promise.resolve();
            now--;
          },
          bounded,
        );
      }
      expect(await scheduler.settle()).toEqual([]);
      expect(most).toBe(want);
    },
  );
});
