import { describe, expect, it } from 'vitest';
import {
  ActorError,
  autoscaler,
  consoleEdit,
  costOptimiser,
  planAutoscaler,
  planConsole,
  planCostOptimiser,
  planScanner,
  scanner,
  type ActorPlan,
  type ServiceObject,
} from './actors.js';
import { createSandbox } from './app.js';
import { sandboxClient, type SandboxClient } from './client.js';
import { startSandbox } from './server.js';
import type { AuditEntry } from './store.js';

const AT = new Date('2030-01-01T00:00:00.000Z');
const svc = (fields: Record<string, unknown> = {}): ServiceObject => ({
  id: 'svc-1',
  name: 'api',
  image: 'nginx:1.25.3',
  replicas: 2,
  tags: { team: 'web' },
  ...fields,
});

/** The parts of a plan a case states (the time and the service are always AT and svc-1). */
const what = (p: ActorPlan) => ({ patch: p.patch, reason: p.reason, headers: p.headers });

describe('planAutoscaler', () => {
  const HPA = { 'X-Tend-Actor': 'hpa', 'X-Tend-Actor-Kind': 'controller' };
  it.each([
    {
      reason: 'raises to ceil(load / perReplica)',
      service: svc(),
      options: { load: 450 },
      patch: { replicas: 5 },
      why: 'load 450 needs 5 replicas at 100 per replica: raising replicas 2 → 5',
    },
    {
      reason: 'never above max',
      service: svc(),
      options: { load: 2000, max: 8 },
      patch: { replicas: 8 },
      why: 'load 2000 needs 20 replicas at 100 per replica, capped at 8: raising replicas 2 → 8',
    },
    {
      reason: 'never scales down: that is not its job',
      service: svc({ replicas: 3 }),
      options: { load: 150 },
      patch: {},
      why: 'load 150 needs 2 replicas at 100 per replica: it has 3, enough (the autoscaler only scales up)',
    },
    {
      reason: 'no load still wants one replica',
      service: svc({ replicas: 0 }),
      options: { load: 0 },
      patch: { replicas: 1 },
      why: 'load 0 needs 1 replica at 100 per replica: raising replicas 0 → 1',
    },
    {
      reason: 'a service already at max is left alone',
      service: svc({ replicas: 10 }),
      options: { load: 5000 },
      patch: {},
      why: 'load 5000 needs 50 replicas at 100 per replica, capped at 10: it has 10, enough (the autoscaler only scales up)',
    },
    {
      reason: 'perReplica sets the ratio',
      service: svc(),
      options: { load: 90, perReplica: 25 },
      patch: { replicas: 4 },
      why: 'load 90 needs 4 replicas at 25 per replica: raising replicas 2 → 4',
    },
  ])('$reason', ({ service, options, patch, why }) => {
    const p = planAutoscaler(service, options, AT);
    expect(what(p)).toEqual({
      patch,
      reason: why,
      headers: {
        ...HPA,
        'X-Tend-Intent': 'availability',
        'X-Tend-Motivation': `traffic:load ${options.load} at 2030-01-01T00:00:00.000Z; ttl=15m`,
      },
    });
    expect(p).toMatchObject({ actor: 'autoscaler', service: 'svc-1', at: AT.toISOString() });
    expect(Object.isFrozen(p) && Object.isFrozen(p.patch)).toBe(true);
  });

  it('takes another name, a reference and a ttl', () => {
    const p = planAutoscaler(
      svc(),
      { load: 300, actor: 'keda', ref: 'black friday', ttl: '2h' },
      AT,
    );
    expect(p.headers).toEqual({
      'X-Tend-Actor': 'keda',
      'X-Tend-Actor-Kind': 'controller',
      'X-Tend-Intent': 'availability',
      'X-Tend-Motivation': 'traffic:black friday; ttl=2h',
    });
  });

  it.each([
    { options: { load: -1 }, option: 'load', message: 'load must be a number >= 0, got -1' },
    { options: { load: NaN }, option: 'load', message: 'load must be a number >= 0, got NaN' },
    {
      options: { load: 1, perReplica: 0 },
      option: 'perReplica',
      message: 'perReplica must be a number > 0, got 0',
    },
    {
      options: { load: 1, max: 101 },
      option: 'max',
      message: 'max must be an integer from 1 to 100, got 101',
    },
    {
      options: { load: 1, ttl: '2 hours' },
      option: 'ttl',
      message: 'ttl "2 hours" is not a duration: write a number and a unit, e.g. 30s, 15m, 2h',
    },
    {
      options: { load: 1, ttl: '0m' },
      option: 'ttl',
      message: 'ttl "0m" is not a duration: write a number and a unit, e.g. 30s, 15m, 2h',
    },
    {
      options: { load: 1, ref: 'spike; urgency=low' },
      option: 'ref',
      message: 'ref "spike; urgency=low" may not contain ";"',
    },
    {
      options: { load: 1, ref: ' ' },
      option: 'ref',
      message: 'ref is empty: leave it out or give a value',
    },
    {
      options: { load: 1, actor: 'hpa\n' },
      option: 'actor',
      message: 'actor "hpa\n" has a character an HTTP header cannot carry',
    },
  ])('refuses $options', ({ options, option, message }) => {
    expect(() => planAutoscaler(svc(), options, AT)).toThrow(new ActorError(message, option));
    try {
      planAutoscaler(svc(), options, AT);
    } catch (e) {
      expect((e as ActorError).option).toBe(option);
    }
  });
});

describe('planCostOptimiser', () => {
  it.each([
    {
      reason: 'lowers straight to the target',
      service: svc({ replicas: 5 }),
      options: { target: 2 },
      patch: { replicas: 2 },
      why: 'the budget pays for 2 replicas: lowering replicas 5 → 2',
    },
    {
      reason: 'by at most step at a time',
      service: svc({ replicas: 5 }),
      options: { target: 2, step: 1 },
      patch: { replicas: 4 },
      why: 'the budget pays for 2 replicas: lowering replicas 5 → 4 (at most 1 fewer per step)',
    },
    {
      reason: 'a step past the target stops at the target',
      service: svc({ replicas: 3 }),
      options: { target: 2, step: 5 },
      patch: { replicas: 2 },
      why: 'the budget pays for 2 replicas: lowering replicas 3 → 2',
    },
    {
      reason: 'within the budget: nothing to do',
      service: svc({ replicas: 2 }),
      options: { target: 3 },
      patch: {},
      why: 'it has 2 replicas, within the budget of 3',
    },
    {
      reason: 'a budget of zero stops the service',
      service: svc({ replicas: 1 }),
      options: { target: 0 },
      patch: { replicas: 0 },
      why: 'the budget pays for 0 replicas: lowering replicas 1 → 0',
    },
  ])('$reason', ({ service, options, patch, why }) => {
    expect(what(planCostOptimiser(service, options, AT))).toEqual({
      patch,
      reason: why,
      headers: {
        'X-Tend-Actor': 'cost-optimiser',
        'X-Tend-Actor-Kind': 'controller',
        'X-Tend-Intent': 'cost',
        'X-Tend-Motivation': 'budget:2030-01',
      },
    });
  });

  it('the reference defaults to the budget month of its clock, or is given', () => {
    const march = new Date('2031-03-31T23:59:59Z');
    expect(planCostOptimiser(svc(), { target: 1 }, march).headers['X-Tend-Motivation']).toBe(
      'budget:2031-03',
    );
    expect(planCostOptimiser(svc(), { target: 1, ref: 'FIN-7' }, AT).headers).toMatchObject({
      'X-Tend-Motivation': 'budget:FIN-7',
    });
  });

  it.each([
    { options: { target: 1.5 }, message: 'target must be an integer from 0 to 100, got 1.5' },
    { options: { target: -1 }, message: 'target must be an integer from 0 to 100, got -1' },
    { options: { target: 1, step: 0 }, message: 'step must be an integer from 1 to 100, got 0' },
  ])('refuses $options', ({ options, message }) => {
    expect(() => planCostOptimiser(svc(), options, AT)).toThrow(message);
  });
});

describe('planScanner', () => {
  it.each([
    { current: 'nginx:1.25.3', image: '1.25.4', want: 'nginx:1.25.4' },
    { current: 'nginx', image: '1.25.4', want: 'nginx:1.25.4' },
    {
      current: 'registry.local:5000/team/app:1.0',
      image: '1.1',
      want: 'registry.local:5000/team/app:1.1',
    },
    {
      current: 'registry.local:5000/team/app',
      image: '1.1',
      want: 'registry.local:5000/team/app:1.1',
    },
    { current: 'nginx@sha256:0123abcd', image: '1.27', want: 'nginx:1.27' },
    { current: 'nginx:1.25.3', image: 'caddy:2.8', want: 'caddy:2.8' },
  ])('$current with $image runs $want', ({ current, image, want }) => {
    const p = planScanner(svc({ image: current }), { image, cve: 'CVE-2030-1234' }, AT);
    expect(what(p)).toEqual({
      patch: { image: want },
      reason: `CVE-2030-1234 is fixed in ${want}: bumping image ${current} → ${want}`,
      headers: {
        'X-Tend-Actor': 'scanner',
        'X-Tend-Actor-Kind': 'controller',
        'X-Tend-Intent': 'security',
        'X-Tend-Motivation': 'cve:CVE-2030-1234; urgency=high',
      },
    });
  });

  it('does nothing when the service already runs the patched image', () => {
    const p = planScanner(svc({ image: 'nginx:1.25.4' }), { image: '1.25.4', cve: 'CVE-1' }, AT);
    expect(p.patch).toEqual({});
    expect(p.reason).toBe('it already runs nginx:1.25.4, which fixes CVE-1');
  });

  it('may be an agent', () => {
    const p = planScanner(svc(), { image: '1.25.4', cve: 'CVE-1', actorKind: 'agent' }, AT);
    expect(p.headers['X-Tend-Actor-Kind']).toBe('agent');
  });

  it.each([
    {
      options: { image: 'not a tag', cve: 'CVE-1' },
      message: 'image "not a tag" is neither a tag (1.25.4) nor an image (nginx:1.25.4)',
    },
    {
      options: { image: '1.2', cve: '' },
      message: 'cve must name the vulnerability the new image fixes, e.g. CVE-2030-1234',
    },
    {
      options: { image: '1.2', cve: 'CVE-1', actorKind: 'human' as 'agent' },
      message: 'a scanner is a controller or an agent, got "human"',
    },
  ])('refuses $options', ({ options, message }) => {
    expect(() => planScanner(svc(), options, AT)).toThrow(message);
  });
});

describe('planConsole', () => {
  it.each([
    {
      reason: 'a named person: actor and kind human, nothing else unless asked',
      options: { actor: 'alice', patch: { replicas: 5 } },
      headers: { 'X-Tend-Actor': 'alice', 'X-Tend-Actor-Kind': 'human' },
      why: 'alice sets replicas 2 → 5 in the console',
    },
    {
      reason: 'asked why: intent and motivation as written',
      options: {
        actor: 'alice',
        intent: 'availability',
        motivation: 'incident:INC-42; ttl=2h',
        patch: { replicas: 5 },
      },
      headers: {
        'X-Tend-Actor': 'alice',
        'X-Tend-Actor-Kind': 'human',
        'X-Tend-Intent': 'availability',
        'X-Tend-Motivation': 'incident:INC-42; ttl=2h',
      },
      why: 'alice sets replicas 2 → 5 in the console',
    },
    {
      reason: 'nobody named: no headers at all',
      options: { patch: { image: 'nginx:1.27' } },
      headers: {},
      why: 'someone sets image nginx:1.25.3 → nginx:1.27 in the console',
    },
  ])('$reason', ({ options, headers, why }) => {
    const p = planConsole(svc(), options, AT);
    expect(what(p)).toEqual({ patch: options.patch, reason: why, headers });
  });

  it('saves nothing when every field already has the value (objects compared by content)', () => {
    const p = planConsole(
      svc({ tags: { b: '2', a: '1' } }),
      { patch: { tags: { a: '1', b: '2' } } },
      AT,
    );
    expect(p.patch).toEqual({});
    expect(p.reason).toBe('tags already has that value: nothing to save');
  });

  it('refuses an empty edit', () => {
    expect(() => planConsole(svc(), { patch: {} }, AT)).toThrow(
      'say which field to set (and its value)',
    );
  });
});

// ---- against the sandbox ----

const START = Date.parse('2030-01-01T00:00:00Z');

/** A sandbox in-process sharing a fake clock with the actors (nothing waits). */
function world() {
  let now = START;
  const sandbox = createSandbox({ now: () => now });
  const api = sandboxClient(sandbox.app);
  return {
    sandbox,
    api,
    clock: () => now,
    tick: (ms: number) => (now += ms),
    audit: async (): Promise<AuditEntry[]> =>
      ((await api.get('/audit')).body as { entries: AuditEntry[] }).entries,
  };
}

async function service(api: SandboxClient, fields: Record<string, unknown> = {}) {
  const reply = await api.post(
    '/services',
    { name: 'api', image: 'nginx:1.25.3', replicas: 2, ...fields },
    { headers: { 'X-Tend-Actor': 'tend', 'X-Tend-Actor-Kind': 'tend' } },
  );
  expect(reply.status).toBe(201);
  return reply.body as { id: string; name: string };
}

const who = (e: AuditEntry | undefined) =>
  e && { actor: e.actor, actorKind: e.actorKind, intent: e.intent, motivation: e.motivation };

describe('scripted actors on the sandbox: the audit feed says who and why', () => {
  it('the autoscaler raises replicas as hpa, a controller, for availability, because of traffic', async () => {
    const w = world();
    const s = await service(w.api);
    w.tick(60_000);
    const result = await autoscaler(w.api, 'api', { load: 450, now: w.clock });
    expect(result).toMatchObject({ acted: true, before: { replicas: 2 }, after: { replicas: 5 } });
    const last = (await w.audit()).at(-1);
    expect(result.audit).toEqual(last);
    expect(last).toMatchObject({
      action: 'update',
      type: 'services',
      id: s.id,
      time: '2030-01-01T00:01:00.000Z',
      before: { replicas: 2 },
      after: { replicas: 5 },
    });
    expect(who(last)).toEqual({
      actor: 'hpa',
      actorKind: 'controller',
      intent: 'availability',
      motivation: 'traffic:load 450 at 2030-01-01T00:01:00.000Z; ttl=15m',
    });
  });

  it('the cost optimiser lowers replicas for cost, because of the budget', async () => {
    const w = world();
    const s = await service(w.api, { replicas: 6 });
    const result = await costOptimiser(w.api, s.id, { target: 2, step: 3, now: w.clock });
    expect(result.after).toMatchObject({ replicas: 3 });
    expect(who(result.audit)).toEqual({
      actor: 'cost-optimiser',
      actorKind: 'controller',
      intent: 'cost',
      motivation: 'budget:2030-01',
    });
  });

  it('the scanner bumps the image for security, because of a CVE, urgently', async () => {
    const w = world();
    await service(w.api);
    const result = await scanner(w.api, 'api', {
      image: '1.25.4',
      cve: 'CVE-2030-1234',
      actorKind: 'agent',
      now: w.clock,
    });
    expect(result.after).toMatchObject({ image: 'nginx:1.25.4' });
    expect(result.audit).toMatchObject({
      before: { image: 'nginx:1.25.3' },
      after: { image: 'nginx:1.25.4' },
    });
    expect(who(result.audit)).toEqual({
      actor: 'scanner',
      actorKind: 'agent',
      intent: 'security',
      motivation: 'cve:CVE-2030-1234; urgency=high',
    });
  });

  it('a console user without intent or motivation sends neither', async () => {
    const w = world();
    await service(w.api);
    const result = await consoleEdit(w.api, 'api', {
      actor: 'alice',
      patch: { replicas: 7 },
      now: w.clock,
    });
    expect(who(result.audit)).toEqual({
      actor: 'alice',
      actorKind: 'human',
      intent: null,
      motivation: null,
    });
  });

  it('a console user who says why has it recorded as written', async () => {
    const w = world();
    await service(w.api);
    const result = await consoleEdit(w.api, 'api', {
      actor: 'alice',
      intent: 'availability',
      motivation: 'incident:INC-42; urgency=high; ttl=2h',
      patch: { replicas: 7 },
      now: w.clock,
    });
    expect(who(result.audit)).toEqual({
      actor: 'alice',
      actorKind: 'human',
      intent: 'availability',
      motivation: 'incident:INC-42; urgency=high; ttl=2h',
    });
  });

  it('an anonymous console click carries no attribution at all', async () => {
    const w = world();
    await service(w.api);
    const result = await consoleEdit(w.api, 'api', { patch: { replicas: 7 }, now: w.clock });
    expect(who(result.audit)).toEqual({
      actor: 'anonymous',
      actorKind: null,
      intent: null,
      motivation: null,
    });
  });

  it('an actor with nothing to do sends nothing and adds nothing to the feed', async () => {
    const w = world();
    await service(w.api, { replicas: 5 });
    const before = await w.audit();
    const result = await autoscaler(w.api, 'api', { load: 100, now: w.clock });
    expect(result.acted).toBe(false);
    expect(result.audit).toBeUndefined();
    expect(result.after).toBe(result.before);
    expect(await w.audit()).toEqual(before);
    expect(w.sandbox.stats().updates).toBe(0);
  });

  it('actors fight over replicas, and the feed tells them apart', async () => {
    const w = world();
    await service(w.api);
    await autoscaler(w.api, 'api', { load: 800, now: w.clock });
    w.tick(1000);
    await costOptimiser(w.api, 'api', { target: 3, now: w.clock });
    w.tick(1000);
    await autoscaler(w.api, 'api', { load: 800, now: w.clock });
    const feed = (await w.audit()).filter((e) => e.action === 'update');
    expect(feed.map((e) => [e.actor, e.actorKind, e.intent, e.after?.['replicas']])).toEqual([
      ['hpa', 'controller', 'availability', 8],
      ['cost-optimiser', 'controller', 'cost', 3],
      ['hpa', 'controller', 'availability', 8],
    ]);
  });

  it('finds its own audit entry behind more than a page of history', async () => {
    const w = world();
    for (let i = 0; i < 1001; i++) await w.api.post('/buckets', { name: `bucket-${i}` });
    await service(w.api);
    const result = await autoscaler(w.api, 'api', { load: 300, now: w.clock });
    expect(result.audit).toMatchObject({ seq: 1003, actor: 'hpa' });
  });
});

describe('scripted actors on the sandbox: finding the service, and refusals', () => {
  it('finds a service by id or by name', async () => {
    const w = world();
    const s = await service(w.api);
    expect((await scanner(w.api, s.id, { image: '1.26', cve: 'CVE-1' })).before).toMatchObject({
      id: s.id,
    });
    expect((await scanner(w.api, 'api', { image: '1.27', cve: 'CVE-2' })).before).toMatchObject({
      id: s.id,
      image: 'nginx:1.26',
    });
  });

  it('says when no service or several services have that name', async () => {
    const w = world();
    await expect(autoscaler(w.api, 'api', { load: 1 })).rejects.toThrow(
      'no service has the id or name "api" (a service created a moment ago may not be visible yet)',
    );
    const a = await service(w.api);
    const b = await service(w.api);
    await expect(autoscaler(w.api, 'api', { load: 1 })).rejects.toThrow(
      `2 services are named "api" (${a.id}, ${b.id}): give the id`,
    );
  });

  it("passes on the sandbox's refusal", async () => {
    const w = world();
    await service(w.api);
    await expect(consoleEdit(w.api, 'api', { patch: { replicas: 500 } })).rejects.toThrow(
      /^PATCH \/services\/svc-[0-9a-f]+ answered 400: .*replicas.* \(invalid\)$/,
    );
  });

  it('sends the API key its client carries, and says when it is missing', async () => {
    const sandbox = createSandbox({ apiKey: 'k' });
    const keyed = sandboxClient(sandbox.app, { 'X-API-Key': 'k' });
    await service(keyed);
    expect((await autoscaler(keyed, 'api', { load: 900 })).after).toMatchObject({ replicas: 9 });
    await expect(autoscaler(sandboxClient(sandbox.app), 'api', { load: 900 })).rejects.toThrow(
      'GET /services/api answered 401: missing or wrong X-API-Key header (unauthorized)',
    );
  });
});

describe('scripted actors over HTTP', () => {
  it('act on a listening sandbox like any client', async () => {
    const running = await startSandbox({ port: 0 });
    try {
      const api = sandboxClient(running.url);
      await service(api);
      const result = await autoscaler(api, 'api', { load: 250, ttl: '5m' });
      expect(result.after).toMatchObject({ replicas: 3 });
      expect(result.audit?.motivation).toMatch(/^traffic:load 250 at .+Z; ttl=5m$/);
    } finally {
      await running.close();
    }
  });
});
