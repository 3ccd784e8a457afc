import { describe, expect, it } from 'vitest';
import { deriveTypes } from '../derive-types.js';
import { listCandidates, listCandidatesHint, listedFieldsOf } from './list-candidates.js';

// What inspect says of a create without a list: the GETs elsewhere that list objects with the
// create's fields (Discourse's POST /users.json and GET /admin/users/list/{flag}.json).

type Obj = Record<string, unknown>;
const ok = (schema: unknown): Obj => ({
  '200': { description: 'ok', content: { 'application/json': { schema } } },
});
const objects = (...fields: string[]): Obj => ({
  type: 'object',
  properties: Object.fromEntries(fields.map((f) => [f, { type: 'string' }])),
});
const create = (schema: Obj): Obj => ({
  requestBody: { content: { 'application/json': { schema } } },
  responses: ok({ type: 'object' }),
});
const array = (...fields: string[]): Obj => ({ type: 'array', items: objects(...fields) });

describe('GETs that list objects with a create’s fields', () => {
  const paths: Record<string, Record<string, unknown>> = {
    '/users': { post: create(objects('username', 'email', 'name', 'password')) },
    '/admin/users/list/{flag}': {
      get: { responses: ok(array('id', 'username', 'email', 'name')) },
    },
    '/posts': {
      get: {
        responses: ok({ type: 'object', properties: { posts: array('id', 'username', 'name') } }),
      },
    },
    '/about': { get: { responses: ok(objects('username', 'name')) } },
    '/tags': { get: { responses: ok(array('id', 'name')) } },
    '/declared': {
      get: { 'x-tend-op': 'list', 'x-tend-type': 't', responses: ok(array('username', 'name')) },
    },
  };
  const listed = listedFieldsOf(paths);

  const cases: { name: string; post: unknown; limit?: number; expected: unknown }[] = [
    {
      name: 'most shared fields first; a list in an envelope counts; one field in common does not',
      post: paths['/users']!['post'],
      expected: [
        { path: '/admin/users/list/{flag}', shared: ['username', 'email', 'name'] },
        { path: '/posts', shared: ['username', 'name'] },
      ],
    },
    {
      name: 'at most the limit',
      post: paths['/users']!['post'],
      limit: 1,
      expected: [{ path: '/admin/users/list/{flag}', shared: ['username', 'email', 'name'] }],
    },
    {
      name: 'a body wrapping the fields in one object property is read inside it',
      post: create({ type: 'object', properties: { user: objects('username', 'name') } }),
      expected: [
        { path: '/admin/users/list/{flag}', shared: ['username', 'name'] },
        { path: '/posts', shared: ['username', 'name'] },
      ],
    },
    {
      name: 'a body of several properties is read as it is, an object among them included',
      post: create({
        type: 'object',
        properties: { meta: objects('username', 'name'), email: { type: 'string' }, id: {} },
      }),
      expected: [{ path: '/admin/users/list/{flag}', shared: ['id', 'email'] }],
    },
    {
      name: 'a create of fewer than two fields suggests nothing (one shared name is chance)',
      post: create(objects('name')),
      expected: [],
    },
    { name: 'a create without a body suggests nothing', post: { responses: ok({}) }, expected: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(listCandidates('/users', c.post, Object.keys(paths), listed, c.limit)).toEqual(
        c.expected,
      );
    });
  }

  it('ranks by fields shared, not by the document’s order; ties keep the document’s order', () => {
    const reordered: Record<string, Record<string, unknown>> = {
      '/a': { get: { responses: ok(array('username', 'name')) } },
      '/b': { get: { responses: ok(array('username', 'email', 'name')) } },
      '/c': { get: { responses: ok(array('email', 'name')) } },
    };
    const found = listCandidates(
      '/users',
      paths['/users']!['post'],
      Object.keys(reordered),
      listedFieldsOf(reordered),
    );
    expect(found.map((c) => c.path)).toEqual(['/b', '/a', '/c']);
  });

  it('never suggests the collection itself, nor a GET already declared as some type’s list', () => {
    const found = listCandidates(
      '/admin/users/list/{flag}',
      paths['/users']!['post'],
      Object.keys(paths),
      listed,
    );
    expect(found.map((c) => c.path)).toEqual(['/posts']);
  });

  it('says what to declare, naming each candidate with the fields it shares', () => {
    expect(
      listCandidatesHint('users', [
        { path: '/admin/users/list/{flag}', shared: ['username', 'email'] },
        { path: '/posts', shared: ['username', 'name'] },
      ]),
    ).toBe(
      "; GETs that list objects with its create's fields: /admin/users/list/{flag} (username, email), /posts (username, name). If one lists every object, declare x-tend-type: users and x-tend-op: list on it (x-tend-path-values for a parameter that filters)",
    );
    expect(listCandidatesHint('users', [])).toBe('');
  });

  it('is what inspect reports for a create without a list', () => {
    const derived = deriveTypes({
      openapi: '3.1.0',
      info: { title: 'forum', version: '1' },
      paths,
    });
    expect(derived.unmapped.find((u) => u.path === '/users')?.reason).toBe(
      "no GET on /users: Tend cannot list these objects; GETs that list objects with its create's fields: /admin/users/list/{flag} (username, email, name), /posts (username, name). If one lists every object, declare x-tend-type: users and x-tend-op: list on it (x-tend-path-values for a parameter that filters)",
    );
  });
});
