import { describe, expect, it } from 'vitest';
import { prepareOpenApiDocument } from './document/load-document.js';
import { createOpenApiProvider } from './openapi-provider.js';

// An id in a nested field, and a list of another shape than the read (GitHub's organisation
// memberships: members are listed as users, `login`; a membership is read and written at
// /memberships/{username} as `{user: {login}, role, state}`). x-tend-id-field names a key path on
// the read schema and the list's own field on the list GET: a listed member and a read membership
// are the same object, with the same id and the same key.

const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const USER = {
  type: 'object',
  required: ['login'],
  properties: { login: { type: 'string' }, id: { type: 'integer' } },
};
const MEMBERSHIP = {
  type: 'object',
  properties: {
    user: USER,
    role: { type: 'string', enum: ['admin', 'member'] },
    state: { type: 'string', readOnly: true },
  },
  'x-tend-id-field': 'user.login',
};
const username = {
  name: 'username',
  in: 'path',
  required: true,
  schema: { type: 'string' },
};
function document(listIdField: unknown) {
  return {
    openapi: '3.0.0',
    info: { title: 'forge', version: '1' },
    paths: {
      '/orgs/{org}/members': {
        get: {
          'x-tend-type': 'memberships',
          'x-tend-op': 'list',
          ...(listIdField !== null ? { 'x-tend-id-field': listIdField } : {}),
          responses: { '200': json({ type: 'array', items: USER }) },
        },
      },
      '/orgs/{org}/memberships/{username}': {
        parameters: [username],
        get: {
          'x-tend-type': 'memberships',
          'x-tend-op': 'read',
          responses: { '200': json(MEMBERSHIP) },
        },
        put: {
          'x-tend-type': 'memberships',
          'x-tend-op': 'create',
          requestBody: json({ type: 'object', properties: { role: MEMBERSHIP.properties.role } }),
          responses: { '200': json(MEMBERSHIP) },
        },
        delete: {
          'x-tend-type': 'memberships',
          'x-tend-op': 'delete',
          responses: { '204': { description: 'gone' } },
        },
      },
    },
  };
}

type Obj = Record<string, unknown>;

/** A forge with members (login → role); every request is logged. */
function forge(members: Map<string, string>) {
  const requests: string[] = [];
  const answer = (status: number, body?: unknown) =>
    new Response(body === undefined ? null : JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/json' },
    });
  const membership = (login: string): Obj => ({
    user: { login, id: 7 },
    role: members.get(login),
    state: 'active',
  });
  const respond = (method: string, path: string, sent: unknown): Response => {
    requests.push(`${method} ${path}`);
    if (path === '/orgs/acme/members') {
      return answer(
        200,
        [...members.keys()].map((login) => ({ login, id: 7 })),
      );
    }
    const login = /^\/orgs\/acme\/memberships\/(.+)$/.exec(path)?.[1];
    if (login === undefined) return answer(404, { message: 'Not Found' });
    if (method === 'PUT') {
      const body = JSON.parse(typeof sent === 'string' ? sent : '{}') as Obj;
      members.set(login, typeof body['role'] === 'string' ? body['role'] : 'member');
      return answer(200, membership(login));
    }
    if (!members.has(login)) return answer(404, { message: 'Not Found' });
    if (method === 'DELETE') {
      members.delete(login);
      return answer(204);
    }
    return answer(200, membership(login));
  };
  const fetch: typeof globalThis.fetch = (input, init) => {
    const url = new URL(String(input instanceof Request ? input.url : input));
    return Promise.resolve(
      respond(init?.method ?? 'GET', decodeURIComponent(url.pathname), init?.body),
    );
  };
  return { fetch, requests };
}

/** The provider; `listIdField` is the list GET's x-tend-id-field (null: none). */
async function provider(fetch: typeof globalThis.fetch, listIdField: unknown) {
  return createOpenApiProvider({
    name: 'gh',
    document: await prepareOpenApiDocument(document(listIdField), 'inline'),
    endpoint: 'http://127.0.0.1:9',
    workspace: 'ws',
    parameters: { org: 'acme' },
    fetch,
    maxAttempts: 1,
  });
}

describe('an id in a nested field, listed in another shape', () => {
  it('a listed member and a read membership are one object: same id, same key', async () => {
    const { fetch } = forge(new Map([['alice', 'admin']]));
    const p = await provider(fetch, 'login');
    const t = p.types.find((x) => x.info.name === 'memberships')!;
    expect(t.info.identity).toBe('natural-key');
    expect(t.info.idField).toBe('user.login');
    expect(t.listIdField).toBe('login');
    expect(t.identityWhy).toBe(
      'natural key username: PUT /orgs/{org}/memberships/{username} creates the object at the address its creator names ({username}), so a second create names the same object; listed objects carry it in user.login (the list GET /orgs/{org}/members answers another shape: its objects hold the id in login)',
    );
    const [listed] = await p.list('memberships');
    const read = await p.read('memberships', listed!.id);
    expect(listed!.id).toBe('alice');
    expect(read!.id).toBe(listed!.id);
    expect(read!.fields['username']).toBe('alice');
    expect(listed!.fields['username']).toBe(read!.fields['username']);
    // The role, which the list leaves out, is read from the membership.
    expect(listed!.fields['role']).toBe('admin');
    expect(read!.fields['role']).toBe('admin');
  });

  it('creates at the address the username names and finds it again', async () => {
    const members = new Map<string, string>();
    const { fetch, requests } = forge(members);
    const p = await provider(fetch, 'login');
    const created = await p.create(
      'memberships',
      { username: 'bob', role: 'member' },
      { actor: { actor: 'tend' } },
    );
    expect(created.id).toBe('bob');
    expect(requests[0]).toBe('PUT /orgs/acme/memberships/bob');
    expect((await p.list('memberships')).map((o) => o.id)).toEqual(['bob']);
  });

  it('without the list id field, listed users carry no id and are not objects of the type', async () => {
    const { fetch } = forge(new Map([['alice', 'admin']]));
    const p = await provider(fetch, null);
    expect(await p.list('memberships')).toEqual([]);
  });

  it.each([
    { value: 'user.login', why: 'a path the listed users do not have' },
    { value: 'nick', why: 'a field the listed users do not have' },
  ])('a list id field naming $why is a warning and ignored', async ({ value }) => {
    const p = await provider(forge(new Map()).fetch, value);
    expect(p.types.find((x) => x.info.name === 'memberships')!.listIdField).toBeUndefined();
    expect(p.describe().warnings).toContain(
      `memberships: x-tend-id-field on GET /orgs/{org}/memberships names ${value}, which is not a field of it; ignored`,
    );
  });
});
