import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ActionDefinition, Provider, ResourceTypeInfo } from '../core/index.js';
import { TendError } from '../core/index.js';
import type { ActionCrashPoint, ActionEvent } from '../engine/index.js';
import { ACTION_CRASH_POINTS } from '../engine/index.js';
import { openStore } from '../store/index.js';
import type { ActionRequest } from './action.js';
import { listActions, runAction } from './action.js';
import type { AppContext } from './context.js';
import { defaultContext } from './context.js';
import { defaultStorePath } from './workspace.js';

// The action framework with a provider made of functions and a world held in memory: a crash (a throw
// at a crash point, as the torture suite's SIGKILL does for mutations) after every step and at every
// point, then a restart, must resume from the last settled step and end in the right state — with the
// non-idempotent step done exactly once.

const WIDGETS: ResourceTypeInfo = {
  name: 'widgets',
  schema: { type: 'object', properties: { name: { type: 'string' } } },
  identity: 'natural-key',
  naturalKey: 'name',
  idField: 'name',
  createOnly: [],
  outputOnly: [],
  sensitive: [],
  lifecycle: 'annotations',
  idempotencyKey: false,
};

const PROVIDER = `kind: Provider
name: sb
type: openapi
spec: http://127.0.0.1:9/openapi.json
endpoint: http://127.0.0.1:9
`;

const WIDGET = `kind: Resource
type: sb.widgets
name: w
spec:
  name: w
`;

/** The platform the test action works on. */
interface World {
  reserved: boolean;
  count: number;
  /** How many times each step's work ran. */
  ran: Record<string, number>;
  /** Set by a step to see the lease from inside the run. */
  leaseHolder?: string;
  failIncrement?: boolean;
}

class Crash extends Error {}

function bump(world: World, ctx: () => AppContext): ActionDefinition {
  const did = (s: string) => (world.ran[s] = (world.ran[s] ?? 0) + 1);
  return {
    name: 'bump',
    description: 'reserve, add one to the count up to `to`, release',
    params: [
      { name: 'to', description: 'the count to reach', required: true },
      { name: 'note', description: 'free text', default: 'none' },
    ],
    changes: ['count'],
    steps: [
      {
        name: 'reserve',
        description: 'reserve the widget',
        run: () => {
          did('reserve');
          world.reserved = true;
          return Promise.resolve('reserved');
        },
        verify: () => Promise.resolve({ ok: world.reserved, message: 'is reserved' }),
      },
      {
        // Not idempotent: only verification after a crash keeps it from counting twice.
        name: 'increment',
        description: 'add one',
        run: async (c) => {
          did('increment');
          if (world.failIncrement) {
            throw new TendError('widget.refused', 'the widget refused', { hint: 'ask nicely' });
          }
          const store = await openStore(defaultStorePath(c.dir));
          world.leaseHolder = (await store.getLease('test'))?.holder.command;
          await store.close();
          world.count += 1;
          c.progress(`count is ${world.count}`);
          return `count ${world.count}`;
        },
        verify: (c) =>
          Promise.resolve({
            ok: world.count === Number(c.params['to']),
            message: `count is ${world.count}, want ${c.params['to']}`,
          }),
      },
      {
        name: 'release',
        description: 'release the widget',
        run: () => {
          did('release');
          world.reserved = false;
          return Promise.resolve('');
        },
        verify: () => Promise.resolve({ ok: !world.reserved, message: 'is released' }),
      },
    ],
  };
  void ctx;
}

describe('tend action (the framework)', () => {
  let dir: string;
  let world: World;
  const context = (): AppContext => {
    const provider: Provider = {
      name: 'sb',
      describe: () => ({ types: [WIDGETS], auditFeed: false, warnings: [] }),
      list: () => Promise.resolve([]),
      read: () => Promise.resolve(undefined),
      create: () => Promise.reject(new Error('never')),
      update: () => Promise.reject(new Error('never')),
      delete: () => Promise.reject(new Error('never')),
      evaluate: () => Promise.reject(new Error('never')),
      actions: (type) => (type === 'widgets' ? [bump(world, context)] : []),
    };
    return defaultContext({
      env: { TEND_LEDGER_KEY: 'k'.repeat(64), TEND_WORKSPACE: 'test' },
      providers: new Map([['openapi', () => Promise.resolve(provider)]]),
      notice: () => {},
    });
  };
  const request = (over: Partial<ActionRequest> = {}): ActionRequest => ({
    dir,
    address: 'sb.widgets/w',
    action: 'bump',
    params: ['to=1'],
    lockTimeoutMs: 0,
    ...over,
  });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tend-action-'));
    writeFileSync(join(dir, 'provider.yaml'), PROVIDER);
    writeFileSync(join(dir, 'widget.yaml'), WIDGET);
    world = { reserved: false, count: 0, ran: {} };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('lists what the type offers', async () => {
    const list = await listActions(context(), { dir, address: 'sb.widgets/w' });
    expect(list.type).toBe('sb.widgets');
    expect(list.actions.map((a) => [a.name, a.steps.map((s) => s.name)])).toEqual([
      ['bump', ['reserve', 'increment', 'release']],
    ]);
    expect(list.actions[0]!.params).toEqual([
      { name: 'to', description: 'the count to reach', required: true },
      { name: 'note', description: 'free text', required: false, default: 'none' },
    ]);
  });

  it('runs every step, journaled and settled, holding the lease, and records it in the ledger', async () => {
    const events: ActionEvent[] = [];
    const r = await runAction(context(), {
      ...request(),
      actor: {
        actor: 'alice',
        actorKind: 'human',
        intent: 'security',
        motivation: { kind: 'incident', ref: 'INC-7' },
      },
      report: (e) => events.push(e),
    });
    expect(r.state).toBe('done');
    expect(r.resumed).toBe(false);
    expect(r.params).toEqual({ to: '1', note: 'none' });
    expect(r.steps.map((s) => [s.name, s.state, s.attempts])).toEqual([
      ['reserve', 'settled', 1],
      ['increment', 'settled', 1],
      ['release', 'settled', 1],
    ]);
    expect(r.steps[1]!.message).toBe('count 1; count is 1, want 1');
    expect(world.leaseHolder).toBe('tend action');
    expect(events.map((e) => e.kind)).toContain('action-progress');
    const store = await openStore(defaultStorePath(dir));
    try {
      const [entry] = await store.changes({ address: 'sb.widgets/w' });
      expect(entry).toMatchObject({
        seq: r.ledgerSeq,
        actor: 'alice',
        actorKind: 'human',
        intent: 'security',
        motivation: { kind: 'incident', ref: 'INC-7' },
        source: 'tend',
        action: 'update',
        fields: ['count'],
        after: { action: 'bump', run: r.runId, outcome: 'done' },
      });
      expect((await store.getActionRun(r.runId))?.state).toBe('done');
      // The lease was given back.
      expect(await store.getLease('test')).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  const crashes = (['reserve', 'increment', 'release'] as const).flatMap((step) =>
    ACTION_CRASH_POINTS.map((point) => ({ step, point })),
  );
  it.each(crashes)(
    'a crash at $point of $step resumes from the last settled step and ends right',
    async ({ step, point }: { step: string; point: ActionCrashPoint }) => {
      const crash = (p: ActionCrashPoint, s: string) => {
        if (p === point && s === step) throw new Crash(`crash at ${p}:${s}`);
      };
      await expect(runAction(context(), { ...request(), crash })).rejects.toBeInstanceOf(Crash);
      const before = { ...world.ran };
      // The restart: the same action again, parameters left out, resumes the run.
      const r = await runAction(context(), request({ params: [] }));
      expect(r.resumed).toBe(true);
      expect(r.state).toBe('done');
      expect(world).toMatchObject({ reserved: false, count: 1 });
      expect(world.ran['increment']).toBe(1);
      const index = ['reserve', 'increment', 'release'].indexOf(step);
      // A step settled before the crash is never run again; the crashed one is verified first (its
      // effect is there once it ran), so only a crash right after `started` runs it a second time.
      for (const [i, name] of ['reserve', 'increment', 'release'].entries()) {
        const again = i === index && point === 'started' ? 1 : i > index ? 1 : 0;
        expect([name, (world.ran[name] ?? 0) - (before[name] ?? 0)]).toEqual([name, again]);
      }
      expect(r.steps.every((s) => s.state === 'settled')).toBe(true);
      if (point === 'ran')
        expect(r.steps[index]!.message).toMatch(/^verified after an interruption/);
    },
  );

  it('a failing step fails the run: later steps never run, the ledger records the failure', async () => {
    world.failIncrement = true;
    const r = await runAction(context(), request());
    expect(r.state).toBe('failed');
    expect(r.error).toBe('increment: the widget refused; ask nicely');
    expect(r.steps.map((s) => s.state)).toEqual(['settled', 'failed', 'pending']);
    expect(world.ran['release']).toBeUndefined();
    // A failed run is over: the next one starts afresh.
    world.failIncrement = false;
    const again = await runAction(context(), request({ params: ['to=1'] }));
    expect(again.resumed).toBe(false);
    expect(again.state).toBe('done');
  });

  it('a step whose verification does not hold fails the run, saying why', async () => {
    const r = await runAction(context(), request({ params: ['to=5'] }));
    expect(r.state).toBe('failed');
    expect(r.error).toBe('increment: its verification does not hold: count is 1, want 5');
  });

  it('an interrupted run refuses other parameters, naming the run', async () => {
    const crash = (p: ActionCrashPoint, s: string) => {
      if (p === 'settled' && s === 'reserve') throw new Crash('boom');
    };
    await expect(runAction(context(), { ...request(), crash })).rejects.toBeInstanceOf(Crash);
    await expect(runAction(context(), request({ params: ['to=2'] }))).rejects.toMatchObject({
      code: 'action.unfinished',
      message: expect.stringMatching(
        /^run act-[0-9a-f]{16} of bump on sb\.widgets\/w \(started .*\) is unfinished, with other parameters: \{"to":"1","note":"none"\}$/,
      ) as unknown,
    });
    const same = await runAction(context(), request({ params: ['to=1'] }));
    expect([same.resumed, same.state]).toEqual([true, 'done']);
  });

  it.each([
    [
      'an unknown resource',
      { address: 'sb.widgets/x' },
      'action.unknown_resource',
      'no resource sb.widgets/x in the intent; did you mean sb.widgets/w?',
    ],
    [
      'an unknown action',
      { action: 'bmup' },
      'action.unknown',
      'sb.widgets has no action bmup; did you mean bump?',
    ],
    [
      'a misspelt parameter',
      { params: ['to=1', 'nite=x'] },
      'action.invalid_params',
      'unknown parameter `nite`; did you mean note?',
    ],
    [
      'a missing required parameter',
      { params: [] },
      'action.invalid_params',
      'parameter `to` is required: the count to reach; write --param to=…',
    ],
    [
      'a parameter without a value',
      { params: ['to=1', 'note'] },
      'action.invalid_params',
      '`note` is not name=value; write --param to=…',
    ],
    [
      'a parameter given twice',
      { params: ['to=1', 'to=2'] },
      'action.invalid_params',
      'parameter `to` is given twice; give it once',
    ],
  ])('refuses %s before running anything', async (_name, over, code, message) => {
    await expect(runAction(context(), request(over))).rejects.toMatchObject({ code, message });
    expect(world.ran).toEqual({});
  });
});
