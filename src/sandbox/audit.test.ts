import { describe, expect, it } from 'vitest';
import { createSandbox } from './app.js';
import { sandboxClient, type SandboxReply } from './client.js';
import { SandboxState, type AuditEntry, type StateSnapshot } from './store.js';

function fresh() {
  let now = Date.parse('2030-01-01T00:00:00Z');
  const sandbox = createSandbox({ now: () => now });
  return { sandbox, api: sandboxClient(sandbox.app), tick: () => (now += 1000) };
}

const NET = { name: 'n', cidr: '10.0.0.0/24' };

function entries(reply: SandboxReply): AuditEntry[] {
  return (reply.body as { entries: AuditEntry[] }).entries;
}

describe('GET /audit', () => {
  it('records create, update and delete with actor, intent, motivation, before and after', async () => {
    const { api, tick } = fresh();
    const who = {
      'X-Tend-Actor': 'oncall:alice',
      'X-Tend-Actor-Kind': 'human',
      'X-Tend-Intent': 'availability',
      'X-Tend-Motivation': 'incident',
    };
    const net = (await api.post('/networks', NET, { headers: who })).body;
    tick();
    const renamed = (await api.patch(`/networks/${net.id}`, { name: 'm' })).body;
    tick();
    await api.delete(`/networks/${net.id}`, { headers: { 'X-Tend-Actor': 'tend' } });

    const page = await api.get('/audit');
    expect(page.status).toBe(200);
    expect(page.body).toEqual({
      cursor: '3',
      entries: [
        {
          seq: 1,
          time: '2030-01-01T00:00:00.000Z',
          actor: 'oncall:alice',
          actorKind: 'human',
          intent: 'availability',
          motivation: 'incident',
          action: 'create',
          type: 'networks',
          id: net.id,
          before: null,
          after: net,
        },
        {
          seq: 2,
          time: '2030-01-01T00:00:01.000Z',
          actor: 'anonymous',
          actorKind: null,
          intent: null,
          motivation: null,
          action: 'update',
          type: 'networks',
          id: net.id,
          before: net,
          after: renamed,
        },
        {
          seq: 3,
          time: '2030-01-01T00:00:02.000Z',
          actor: 'tend',
          actorKind: null,
          intent: null,
          motivation: null,
          action: 'delete',
          type: 'networks',
          id: net.id,
          before: renamed,
          after: null,
        },
      ],
    });
  });

  it('records the actor kind and the motivation text as sent, without judging them', async () => {
    // The sandbox is a platform, not Tend: it keeps what the headers say; Tend checks them when it
    // reads the feed (an unknown kind is dropped there, an unparsable motivation kept as text).
    const { api } = fresh();
    await api.post(
      '/buckets',
      { name: 'judged-later' },
      {
        headers: {
          'X-Tend-Actor': 'keda',
          'X-Tend-Actor-Kind': 'robot',
          'X-Tend-Motivation': 'traffic:spike at 09:00; ttl=2h',
        },
      },
    );
    expect(entries(await api.get('/audit'))).toMatchObject([
      {
        actor: 'keda',
        actorKind: 'robot',
        intent: null,
        motivation: 'traffic:spike at 09:00; ttl=2h',
      },
    ]);
  });

  it('records nothing for refusals, replays and no-op updates', async () => {
    const { api } = fresh();
    const key = { headers: { 'Idempotency-Key': 'k' } };
    const net = (await api.post('/networks', NET, key)).body;
    await api.post('/networks', NET, key);
    await api.post('/networks', { name: 'x' });
    await api.patch(`/networks/${net.id}`, { cidr: '10.9.0.0/24' });
    await api.patch(`/networks/${net.id}`, { name: net.name });
    expect(entries(await api.get('/audit')).map((e) => e.seq)).toEqual([1]);
  });

  it('pages with limit and resumes after the cursor', async () => {
    const { api } = fresh();
    for (let i = 0; i < 5; i++) await api.post('/buckets', { name: `bucket-${i}` });
    const first = await api.get('/audit?limit=2');
    expect(entries(first).map((e) => e.id)).toEqual(['bucket-0', 'bucket-1']);
    expect(first.body.cursor).toBe('2');
    const rest = await api.get(`/audit?after=${first.body.cursor}`);
    expect(entries(rest).map((e) => e.seq)).toEqual([3, 4, 5]);
    expect(rest.body.cursor).toBe('5');
    const none = await api.get('/audit?after=5');
    expect(none.body).toEqual({ entries: [], cursor: '5' });
  });

  it('an empty feed from the beginning answers cursor "0"', async () => {
    const { api } = fresh();
    expect((await api.get('/audit')).body).toEqual({ entries: [], cursor: '0' });
  });

  it('long-polls: answers as soon as an entry arrives', async () => {
    const { api } = fresh();
    await api.post('/buckets', { name: 'first' });
    // A 20 s wait: if the poll were not woken by the create, the test would time out.
    const poll = api.get('/audit?after=1&wait=20000');
    let answered = false;
    void poll.then(() => (answered = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe(false);
    await api.post('/buckets', { name: 'second' }, { headers: { 'X-Tend-Actor': 'bob' } });
    const page = await poll;
    expect(page.body.cursor).toBe('2');
    expect(page.body.entries).toMatchObject([{ seq: 2, id: 'second', actor: 'bob' }]);
  }, 5000);

  it('long-polls: answers empty with the same cursor when the wait ends', async () => {
    const { api } = fresh();
    await api.post('/buckets', { name: 'first' });
    const page = await api.get('/audit?after=1&wait=20');
    expect(page.body).toEqual({ entries: [], cursor: '1' });
  });

  it('sequence numbers keep increasing across a reset', async () => {
    const { api } = fresh();
    await api.post('/buckets', { name: 'first' });
    await api.post('/_sandbox/reset', undefined);
    await api.post('/buckets', { name: 'again' });
    expect((await api.get('/audit?after=1')).body.entries).toMatchObject([{ seq: 2, id: 'again' }]);
  });

  it.each([
    {
      query: 'after=abc',
      field: 'after',
      message: 'after must be an integer from 0 to 9007199254740991',
    },
    { query: 'limit=0', field: 'limit', message: 'limit must be an integer from 1 to 1000' },
    { query: 'limit=5000', field: 'limit', message: 'limit must be an integer from 1 to 1000' },
    { query: 'wait=30001', field: 'wait', message: 'wait must be an integer from 0 to 30000' },
    { query: 'wait=-1', field: 'wait', message: 'wait must be an integer from 0 to 30000' },
  ])('refuses $query', async ({ query, field, message }) => {
    const { api } = fresh();
    const reply = await api.get(`/audit?${query}`);
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ code: 'invalid', field, message });
  });
});

describe('audit entries from a state file written before actor kinds', () => {
  it('read back with actorKind null', () => {
    const old = {
      seq: 1,
      time: '2029-12-31T00:00:00.000Z',
      actor: 'alice',
      intent: null,
      motivation: null,
      action: 'create',
      type: 'buckets',
      id: 'old',
      before: null,
      after: { name: 'old' },
    };
    const snapshot = {
      version: 1,
      seq: 1,
      objects: [],
      idempotency: {},
      audit: [old],
    } as unknown as StateSnapshot;
    expect(new SandboxState(snapshot).auditAfter(0, 10)).toEqual([{ ...old, actorKind: null }]);
  });
});
