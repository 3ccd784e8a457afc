import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ActorContext, ObservedChange } from '../../core/index.js';
import { parseMotivation } from '../../core/index.js';
import {
  autoscaler,
  buildOpenApiDocument,
  consoleEdit,
  costOptimiser,
  sandboxClient,
  scanner,
  startSandbox,
  type RunningSandbox,
} from '../../sandbox/index.js';
import { prepareOpenApiDocument } from './document/load-document.js';
import {
  actorHeaders,
  createOpenApiProvider,
  loadOpenApiProvider,
  type OpenApiProvider,
} from './openapi-provider.js';

// The actor kind on the wire: sent as X-Tend-Actor-Kind by actorHeaders, read back from an audit
// feed's `actorKind` by the provider (only a kind Tend knows; anything else is left out).

describe('actorHeaders: the actor kind', () => {
  it.each<{ reason: string; actor: ActorContext; want: Record<string, string> }>([
    {
      reason: 'a kind is sent beside the actor',
      actor: { actor: 'hpa', actorKind: 'controller', intent: 'availability' },
      want: {
        'X-Tend-Actor': 'hpa',
        'X-Tend-Actor-Kind': 'controller',
        'X-Tend-Intent': 'availability',
      },
    },
    {
      reason: 'no kind, no header',
      actor: { actor: 'hpa' },
      want: { 'X-Tend-Actor': 'hpa' },
    },
    {
      reason: 'Tend itself says so',
      actor: { actor: 'tend', actorKind: 'tend', motivation: 'scheduled' },
      want: {
        'X-Tend-Actor': 'tend',
        'X-Tend-Actor-Kind': 'tend',
        'X-Tend-Motivation': 'scheduled',
      },
    },
  ])('$reason', ({ actor, want }) => {
    expect(actorHeaders(actor)).toEqual(want);
  });
});

describe('the audit feed: actorKind of an entry', () => {
  const entry = (extra: Record<string, unknown>) => ({
    seq: 1,
    time: '2030-01-01T00:00:00.000Z',
    actor: 'bot',
    action: 'update',
    type: 'services',
    id: 'svc-1',
    ...extra,
  });

  /** A provider whose platform answers GET /audit with `entries` (nothing else is called). */
  async function feedOf(entries: unknown[]): Promise<OpenApiProvider> {
    const document = await prepareOpenApiDocument(buildOpenApiDocument(), 'sandbox');
    return createOpenApiProvider({
      name: 'sb',
      document,
      endpoint: 'http://platform.test',
      workspace: 'ws',
      fetch: (input) => {
        const url = new URL(input instanceof Request ? input.url : String(input));
        if (url.pathname !== '/audit') throw new Error(`unexpected call to ${url.pathname}`);
        return Promise.resolve(Response.json({ entries, cursor: '1' }));
      },
    });
  }

  it.each<{ reason: string; actorKind: unknown; want: ObservedChange['actorKind'] }>([
    { reason: 'a known kind is kept', actorKind: 'agent', want: 'agent' },
    { reason: 'every kind Tend knows: pipeline', actorKind: 'pipeline', want: 'pipeline' },
    { reason: 'kinds are lower case', actorKind: 'Agent', want: undefined },
    { reason: 'an unknown kind is left out', actorKind: 'robot', want: undefined },
    { reason: 'an empty header is no kind', actorKind: '', want: undefined },
    { reason: 'null (no header) is no kind', actorKind: null, want: undefined },
    { reason: 'a number is not a kind', actorKind: 7, want: undefined },
  ])('$reason', async ({ actorKind, want }) => {
    const provider = await feedOf([entry({ actorKind })]);
    const [change] = (await provider.changes!(undefined)).changes;
    expect(change).toMatchObject({ actor: 'bot', action: 'update', id: 'svc-1' });
    if (want === undefined) expect(change).not.toHaveProperty('actorKind');
    else expect(change!.actorKind).toBe(want);
  });

  it('an entry without the field (an older platform) has no kind', async () => {
    const provider = await feedOf([entry({})]);
    expect((await provider.changes!(undefined)).changes[0]).not.toHaveProperty('actorKind');
  });
});

describe('the actor kind through the real sandbox', () => {
  let sb: RunningSandbox;
  let provider: OpenApiProvider;
  beforeAll(async () => {
    sb = await startSandbox({ port: 0 });
    provider = await loadOpenApiProvider({
      name: 'sb',
      spec: `${sb.url}/openapi.json`,
      endpoint: sb.url,
      workspace: 'ws',
    });
  });
  afterAll(async () => {
    await sb.close();
  });
  beforeEach(() => sb.sandbox.reset());

  it('what the provider sends comes back from the feed: kind, intent and motivation', async () => {
    const net = await provider.create(
      'networks',
      { name: 'n', cidr: '10.0.0.0/24' },
      {
        actor: {
          actor: 'hpa',
          actorKind: 'controller',
          intent: 'availability',
          motivation: 'traffic:spike; ttl=2h',
        },
      },
    );
    await provider.update('networks', net.id, { name: 'm' }, net, { actor: { actor: 'tend' } });
    const { changes } = await provider.changes!(undefined);
    expect(changes).toMatchObject([
      {
        action: 'create',
        actor: 'hpa',
        actorKind: 'controller',
        intent: 'availability',
        motivation: 'traffic:spike; ttl=2h',
      },
      { action: 'update', actor: 'tend' },
    ]);
    expect(changes[1]).not.toHaveProperty('actorKind');
  });

  it('a kind the sandbox recorded but Tend does not know is left out', async () => {
    const r = await fetch(`${sb.url}/buckets`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'X-Tend-Actor': 'r2',
        'X-Tend-Actor-Kind': 'robot',
      },
      body: JSON.stringify({ name: 'by-a-robot' }),
    });
    expect(r.status).toBe(201);
    const audit = (await (await fetch(`${sb.url}/audit`)).json()) as {
      entries: { actorKind: unknown }[];
    };
    expect(audit.entries[0]!.actorKind).toBe('robot');
    const [change] = (await provider.changes!(undefined)).changes;
    expect(change).toMatchObject({ actor: 'r2', id: 'by-a-robot' });
    expect(change).not.toHaveProperty('actorKind');
  });

  it("the scripted actors' changes arrive with known kinds and motivations Tend can parse", async () => {
    const api = sandboxClient(sb.url);
    const created = await api.post('/services', { name: 'api', image: 'nginx:1.25.3' });
    expect(created.status).toBe(201);
    const clock = () => Date.parse('2030-06-01T12:00:00Z');
    await autoscaler(api, 'api', { load: 450, ttl: '2h', now: clock });
    await costOptimiser(api, 'api', { target: 3, now: clock });
    await scanner(api, 'api', { image: '1.25.4', cve: 'CVE-2030-1234', now: clock });
    await consoleEdit(api, 'api', { actor: 'alice', patch: { replicas: 4 }, now: clock });
    const changes = (await provider.changes!(undefined)).changes.filter(
      (c) => c.action === 'update',
    );
    const parsed = changes.map((c) => ({
      actor: c.actor,
      actorKind: c.actorKind,
      intent: c.intent,
      motivation:
        c.motivation === undefined ? undefined : parseMotivation(c.motivation, new Date(c.time)),
    }));
    const expires = new Date(Date.parse(changes[0]!.time) + 2 * 3_600_000).toISOString();
    expect(parsed).toEqual([
      {
        actor: 'hpa',
        actorKind: 'controller',
        intent: 'availability',
        motivation: {
          ok: true,
          value: {
            kind: 'traffic',
            ref: 'load 450 at 2030-06-01T12:00:00.000Z',
            expiresAt: expires,
          },
        },
      },
      {
        actor: 'cost-optimiser',
        actorKind: 'controller',
        intent: 'cost',
        motivation: { ok: true, value: { kind: 'budget', ref: '2030-06' } },
      },
      {
        actor: 'scanner',
        actorKind: 'controller',
        intent: 'security',
        motivation: { ok: true, value: { kind: 'cve', ref: 'CVE-2030-1234', urgency: 'high' } },
      },
      { actor: 'alice', actorKind: 'human', intent: undefined, motivation: undefined },
    ]);
  });
});
