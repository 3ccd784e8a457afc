import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RecordingServer } from '../../../../test/support/recording-server.js';
import { json, startRecordingServer } from '../../../../test/support/recording-server.js';
import { deriveTypes } from '../derive-types.js';
import { inspectOpenApi } from '../inspect.js';
import { overlaySkeleton } from '../overlay-skeleton.js';
import { prepareOpenApiDocument } from '../document/load-document.js';
import { createOpenApiProvider } from '../openapi-provider.js';
import { requestEnvelopeHint, requestEnvelopeOf, wrapRequest } from './request-envelope.js';

// Request envelopes (request-envelope.ts), and one type whose operations sit on paths that differ by
// an /admin prefix, paired by x-tend-op declarations (irregular-ops.ts): Discourse's groups.

type Obj = Record<string, unknown>;
const GROUP = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string' }, bio_raw: { type: 'string' } },
};
const wrapped = (field: string, inner: unknown = GROUP, required = true): Obj => ({
  type: 'object',
  ...(required ? { required: [field] } : {}),
  properties: { [field]: inner },
});

describe('the envelope of a request body', () => {
  const cases: {
    name: string;
    op?: Obj;
    schema: unknown;
    field: string | undefined;
    warning?: string;
    hint?: string;
  }[] = [
    {
      name: 'one required object property named after the type (singular) is inferred',
      schema: wrapped('group'),
      field: 'group',
    },
    {
      name: 'named after the type (plural) is inferred too',
      schema: wrapped('groups'),
      field: 'groups',
    },
    {
      name: 'a property named otherwise is a field, never guessed; inspect says what to declare',
      schema: wrapped('settings'),
      field: undefined,
      hint: "groups: the body of POST /admin/groups is one object property, settings; if it wraps the object's fields, declare x-tend-request-envelope: settings on the operation",
    },
    {
      name: 'an optional property is a field',
      schema: wrapped('group', GROUP, false),
      field: undefined,
      hint: "groups: the body of POST /admin/groups is one object property, group; if it wraps the object's fields, declare x-tend-request-envelope: group on the operation",
    },
    {
      name: 'a body with more properties is the fields themselves',
      schema: { type: 'object', properties: { group: GROUP, name: { type: 'string' } } },
      field: undefined,
    },
    {
      name: 'an array property wraps nothing',
      schema: wrapped('group', { type: 'array', items: GROUP }),
      field: undefined,
    },
    {
      name: 'declared on the operation, any object property',
      op: { 'x-tend-request-envelope': 'settings' },
      schema: wrapped('settings'),
      field: 'settings',
    },
    {
      name: 'declared false: not wrapped, even when it looks so',
      op: { 'x-tend-request-envelope': false },
      schema: wrapped('group'),
      field: undefined,
    },
    {
      name: 'declared as something that is not a property name: a warning',
      op: { 'x-tend-request-envelope': 'a.b' },
      schema: wrapped('group'),
      field: undefined,
      warning:
        'groups: POST /admin/groups: x-tend-request-envelope must be the name of the body property wrapping the fields, or false, not "a.b"; ignored',
    },
    {
      name: 'declared as a property the body does not have as an object: a warning',
      op: { 'x-tend-request-envelope': 'name' },
      schema: GROUP,
      field: undefined,
      warning:
        'groups: POST /admin/groups: x-tend-request-envelope names name, which is not an object property of the request body (it has name, bio_raw); ignored',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const warnings: string[] = [];
      const got = requestEnvelopeOf('groups', 'POST /admin/groups', c.op ?? {}, c.schema, warnings);
      expect(got?.field).toBe(c.field);
      expect(warnings).toEqual(c.warning !== undefined ? [c.warning] : []);
      if (c.hint !== undefined) {
        expect(requestEnvelopeHint('groups', 'POST /admin/groups', c.schema)).toBe(c.hint);
      }
    });
  }

  it('leaves a possible wrapper to inspect as a note, never a warning', () => {
    const doc = forum();
    const paths = doc['paths'] as Record<string, Record<string, Obj>>;
    paths['/admin/groups.json']!['post']!['requestBody'] = body(wrapped('settings'));
    const derived = deriveTypes(doc);
    const t = derived.types.find((x) => x.info.name === 'groups')!;
    expect(t.requestEnvelope).toEqual({ update: 'group' });
    expect(t.requestEnvelopeNote).toBe(
      "groups: the body of POST /admin/groups.json is one object property, settings; if it wraps the object's fields, declare x-tend-request-envelope: settings on the operation",
    );
    expect(derived.warnings.filter((w) => w.includes('x-tend-request-envelope'))).toEqual([]);
  });

  it('wraps the fields sent, or sends them as they are', () => {
    expect(wrapRequest({ name: 'a' }, 'group')).toEqual({ group: { name: 'a' } });
    expect(wrapRequest({ name: 'a' }, undefined)).toEqual({ name: 'a' });
    expect(Object.keys(wrapRequest({}, '__proto__'))).toEqual(['__proto__']);
  });
});

const ok = (schema?: unknown) => ({
  '200': {
    description: 'ok',
    ...(schema !== undefined ? { content: { 'application/json': { schema } } } : {}),
  },
});
const body = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'integer' } };
const READ = {
  type: 'object',
  properties: { id: { type: 'integer', readOnly: true }, ...GROUP.properties },
};
const decl = (role: string) => ({ 'x-tend-type': 'groups', 'x-tend-op': role });

/** Discourse's groups, as its overlay declares them. */
function forum(overrides: Obj = {}): Obj {
  return {
    openapi: '3.1.0',
    info: { title: 'forum', version: '1' },
    paths: {
      '/groups.json': {
        get: {
          ...decl('list'),
          'x-tend-pagination': { style: 'page', param: 'page', start: 0 },
          responses: ok({ type: 'object', properties: { groups: { type: 'array', items: READ } } }),
        },
      },
      '/admin/groups.json': {
        post: {
          ...decl('create'),
          'x-tend-identity': 'natural-key',
          'x-tend-natural-key': 'name',
          requestBody: body(wrapped('group')),
          responses: ok(wrapped('basic_group', READ)),
        },
      },
      '/groups/{id}.json': {
        put: {
          ...decl('update'),
          parameters: [idParam],
          requestBody: body(wrapped('group')),
          responses: ok({ type: 'object', properties: { success: { type: 'string' } } }),
        },
      },
      '/admin/groups/{id}.json': {
        delete: { ...decl('delete'), parameters: [idParam], responses: ok() },
      },
      ...overrides,
    },
  };
}

describe('one type on paths that differ by an /admin prefix, declared by an overlay', () => {
  it('pairs them: the item path is the delete’s, each operation keeps its own path', () => {
    const derived = deriveTypes(forum());
    expect(derived.warnings).toEqual([]);
    const t = derived.types.find((x) => x.info.name === 'groups')!;
    expect(t.collectionPath).toBe('/admin/groups');
    expect(t.itemPath).toBe('/admin/groups/{id}');
    expect(t.operations.list.path).toBe('/groups.json');
    expect(t.operations.create.path).toBe('/admin/groups.json');
    expect(t.operations.update?.path).toBe('/groups/{id}.json');
    expect(t.operations.delete?.path).toBe('/admin/groups/{id}.json');
    expect(t.readByList).toBeDefined();
    expect(t.requestEnvelope).toEqual({ create: 'group', update: 'group' });
    expect(t.writableFields).toEqual(['name', 'bio_raw']);
    expect(t.info.identity).toBe('natural-key');
    expect(t.info.idField).toBe('id');
  });

  it('refuses item operations whose path parameters differ, saying so', () => {
    const derived = deriveTypes(
      forum({
        '/admin/groups/{group_name}.json': {
          delete: {
            ...decl('delete'),
            parameters: [{ ...idParam, name: 'group_name' }],
            responses: ok(),
          },
        },
        '/admin/groups/{id}.json': {},
      }),
    );
    expect(derived.types.find((x) => x.info.name === 'groups')).toBeUndefined();
    expect(derived.warnings).toContain(
      'x-tend-type groups: the item operations are on different objects (/groups/{id}, /admin/groups/{group_name}: their path parameters differ); ignored',
    );
  });
});

describe('what inspect and the overlay skeleton say of request envelopes', () => {
  const inspectDoc = async (doc: Obj) => {
    const file = join(mkdtempSync(join(tmpdir(), 'tend-envelope-')), 'forum.json');
    writeFileSync(file, JSON.stringify(doc));
    return inspectOpenApi(file);
  };

  it('shows the wrapper of each body and why, and the skeleton names it', async () => {
    const report = await inspectDoc(forum());
    const t = report.types.find((x) => x.name === 'groups')!;
    expect(t.requestEnvelope).toEqual({
      create: 'group',
      update: 'group',
      why: [
        'group: inferred: the body of POST /admin/groups.json is one required object property, group, named after the type',
        'group: inferred: the body of PUT /groups/{id}.json is one required object property, group, named after the type',
      ],
    });
    expect(t.requestEnvelopeNote).toBeUndefined();
    expect(overlaySkeleton(report)).toContain(
      '# x-tend-request-envelope: group # inferred (false: not wrapped)',
    );
  });

  it('notes a body of one object property it does not take as a wrapper, with what to declare', async () => {
    const doc = forum();
    const paths = doc['paths'] as Record<string, Record<string, Obj>>;
    paths['/admin/groups.json']!['post']!['requestBody'] = body(wrapped('settings'));
    const report = await inspectDoc(doc);
    const t = report.types.find((x) => x.name === 'groups')!;
    expect(t.requestEnvelope?.create).toBeUndefined();
    expect(t.requestEnvelopeNote).toBe(
      "groups: the body of POST /admin/groups.json is one object property, settings; if it wraps the object's fields, declare x-tend-request-envelope: settings on the operation",
    );
    const skeleton = overlaySkeleton(report);
    expect(skeleton).toContain(
      "# groups: the body of POST /admin/groups.json is one object property, settings; if it wraps the object's fields, declare x-tend-request-envelope: settings on the operation",
    );
    expect(skeleton).toContain(
      '# x-tend-request-envelope: <property> # if the fields are sent wrapped',
    );
  });
});

describe('writes of wrapped bodies on paired paths, against a real server', () => {
  let server: RecordingServer;
  const groups = new Map<number, Obj>();
  beforeAll(async () => {
    server = await startRecordingServer();
  });
  afterAll(() => server.stop());
  beforeEach(() => {
    server.clear();
    groups.clear();
    let next = 41;
    server.handle((req, res) => {
      const url = new URL(req.url, 'http://x');
      if (req.method === 'GET' && url.pathname === '/groups.json') {
        // Two per page, 0-based, as Discourse pages (an empty page ends the list).
        const page = Number(url.searchParams.get('page') ?? '0');
        return json(res, 200, { groups: [...groups.values()].slice(page * 2, page * 2 + 2) });
      }
      const sent = req.body ? (JSON.parse(req.body) as Obj) : {};
      if (req.method === 'POST' && url.pathname === '/admin/groups.json') {
        const g = sent['group'] as Obj | undefined;
        if (g === undefined) return json(res, 400, { errors: ['param is missing: group'] });
        const made = { id: ++next, ...g };
        groups.set(made.id, made);
        return json(res, 200, { basic_group: made });
      }
      const m = /^\/(admin\/)?groups\/(\d+)\.json$/.exec(url.pathname);
      const found = m ? groups.get(Number(m[2])) : undefined;
      if (found === undefined) return json(res, 404, {});
      if (req.method === 'PUT' && m![1] === undefined) {
        const g = sent['group'] as Obj | undefined;
        if (g === undefined) return json(res, 400, { errors: ['param is missing: group'] });
        groups.set(found['id'] as number, { ...found, ...g });
        return json(res, 200, { success: 'OK' });
      }
      if (req.method === 'DELETE' && m![1] === 'admin/') {
        groups.delete(found['id'] as number);
        return json(res, 200, { success: 'OK' });
      }
      json(res, 405, {});
    });
  });

  it('creates and updates with the fields in group, lists every page, deletes under /admin', async () => {
    for (const name of ['staff', 'mods'])
      groups.set(groups.size + 1, { id: groups.size + 1, name });
    const p = createOpenApiProvider({
      name: 'forum',
      document: await prepareOpenApiDocument(forum(), 'inline'),
      endpoint: server.url,
      workspace: 'w',
    });
    const created = await p.create(
      'groups',
      { name: 'ops', bio_raw: 'on call' },
      { actor: { actor: 't' } },
    );
    expect(created.id).toBe('42');
    expect(JSON.parse(server.requests[0]!.body)).toEqual({
      group: { name: 'ops', bio_raw: 'on call' },
    });
    const listed = await p.list('groups');
    expect(listed.map((o) => o.fields['name'])).toEqual(['staff', 'mods', 'ops']);
    server.clear();
    await p.update('groups', '42', { name: 'ops', bio_raw: 'paged' }, created, {
      actor: { actor: 't' },
    });
    expect(server.requests[0]!.method).toBe('PUT');
    expect(server.requests[0]!.url).toBe('/groups/42.json');
    expect(JSON.parse(server.requests[0]!.body)).toEqual({
      group: { name: 'ops', bio_raw: 'paged' },
    });
    expect(groups.get(42)?.['bio_raw']).toBe('paged');
    server.clear();
    await p.delete('groups', '42', { actor: { actor: 't' } });
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'DELETE /admin/groups/42.json',
    ]);
    expect(groups.has(42)).toBe(false);
  });
});
