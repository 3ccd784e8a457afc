import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RecordingServer } from '../../../../test/support/recording-server.js';
import { json, startRecordingServer } from '../../../../test/support/recording-server.js';
import { deriveTypes } from '../derive-types.js';
import { prepareOpenApiDocument } from '../document/load-document.js';
import { createOpenApiProvider } from '../openapi-provider.js';

// An item path not under its collection (scoped-create.ts, issue 27): widgets created in a team at
// `POST /teams/{team}/widgets`, listed all together at `GET /widgets`, read, changed and deleted at
// `/widgets/{widgetId}`. Each case is a small document of our own.

type Obj = Record<string, unknown>;
const str = { type: 'string' };
const body = (schema: unknown): Obj => ({ content: { 'application/json': { schema } } });
const ok = (schema: unknown): Obj => ({ '200': { description: 'ok', ...body(schema) } });
const param = (name: string): Obj => ({ name, in: 'path', required: true, schema: str });
const gone = { responses: { '204': { description: 'gone' } } };

const WIDGET = {
  type: 'object',
  properties: {
    id: { type: 'string', readOnly: true },
    team: { type: 'string', readOnly: true },
    name: { type: 'string', description: 'The widget name, unique within its team' },
    color: str,
  },
};
const NEW_WIDGET = { type: 'object', required: ['name'], properties: { name: str, color: str } };
const TEAM = { type: 'object', properties: { id: str, name: str } };

/** The widget service; each entry replaces a path (undefined removes it). */
function doc(paths: Obj = {}, widget: Obj = WIDGET): Obj {
  const all: Obj = {
    '/teams': {
      get: { responses: ok({ type: 'array', items: TEAM }) },
      post: { requestBody: body(TEAM), responses: ok(TEAM) },
    },
    '/teams/{team}': { parameters: [param('team')], get: { responses: ok(TEAM) }, delete: gone },
    '/teams/{team}/widgets': {
      parameters: [param('team')],
      post: { requestBody: body(NEW_WIDGET), responses: { '201': body(widget) } },
    },
    '/widgets': { get: { responses: ok({ type: 'array', items: widget }) } },
    '/widgets/{widgetId}': {
      parameters: [param('widgetId')],
      get: { responses: ok(widget) },
      patch: {
        requestBody: body({ type: 'object', properties: { color: str } }),
        responses: ok(widget),
      },
      delete: gone,
    },
    ...paths,
  };
  for (const [k, v] of Object.entries(all)) if (v === undefined) delete all[k];
  return { openapi: '3.0.3', info: { title: 'widgets', version: '1' }, paths: all };
}

const widgetsOf = (d: Obj) => deriveTypes(d).types.find((t) => t.info.name === 'widgets');

describe('an item path not under its collection: created in a scope, listed all together', () => {
  it('is the type at /widgets, created by the scoped POST, its scope a field sent in the path', () => {
    const t = widgetsOf(doc())!;
    expect(t.collectionPath).toBe('/widgets');
    expect(t.itemPath).toBe('/widgets/{widgetId}');
    expect(t.operations.list.path).toBe('/widgets');
    expect(t.operations.create).toMatchObject({
      method: 'POST',
      path: '/teams/{team}/widgets',
      assigned:
        'inferred: POST /teams/{team}/widgets creates what GET /widgets/{widgetId} reads (the same schema), in the scope {team} its objects carry as team',
    });
    expect(t.operations.update).toMatchObject({ method: 'PATCH', path: '/widgets/{widgetId}' });
    expect(t.params).toEqual([]); // listed once, not once per team
    expect(t.createQuery?.pathFields).toEqual([{ param: 'team', field: 'team' }]);
    expect(t.info.schema['required']).toEqual(expect.arrayContaining(['team', 'name']));
    // The name is unique within its team: the team is the key's scope, in front.
    expect(t.info.identity).toBe('natural-key');
    expect(t.keyFields).toEqual(['team', 'name']);
  });

  const not: { name: string; doc: Obj }[] = [
    {
      name: 'not when the objects read do not say their team (two teams’ widgets could not be told apart)',
      doc: doc(
        {},
        {
          ...WIDGET,
          properties: Object.fromEntries(
            Object.entries(WIDGET.properties).filter(([k]) => k !== 'team'),
          ),
        },
      ),
    },
    {
      name: 'not when the scoped POST answers another object',
      doc: doc({
        '/teams/{team}/widgets': {
          parameters: [param('team')],
          post: { requestBody: body(NEW_WIDGET), responses: { '201': body(TEAM) } },
        },
      }),
    },
    {
      name: 'not when the POST answers an object that only looks alike (a field more)',
      doc: doc({
        '/teams/{team}/widgets': {
          parameters: [param('team')],
          post: {
            requestBody: body(NEW_WIDGET),
            responses: {
              '201': body({ ...WIDGET, properties: { ...WIDGET.properties, size: str } }),
            },
          },
        },
      }),
    },
    {
      name: 'not when the collection creates too (/widgets has a POST of its own)',
      doc: doc({
        '/widgets': {
          get: { responses: ok({ type: 'array', items: WIDGET }) },
          post: {
            requestBody: body({
              ...NEW_WIDGET,
              properties: { ...NEW_WIDGET.properties, team: str },
            }),
            responses: ok(WIDGET),
          },
        },
      }),
    },
    {
      name: 'not when two scopes create them (which one is meant cannot be told)',
      doc: doc({
        '/orgs/{team}/widgets': {
          parameters: [param('team')],
          post: { requestBody: body(NEW_WIDGET), responses: { '201': body(WIDGET) } },
        },
      }),
    },
    {
      name: 'not when the scoped path does more than create (it lists: a collection of its own)',
      doc: doc({
        '/teams/{team}/widgets': {
          parameters: [param('team')],
          get: { responses: ok({ type: 'array', items: WIDGET }) },
          post: { requestBody: body(NEW_WIDGET), responses: { '201': body(WIDGET) } },
        },
      }),
    },
    {
      name: 'not when nothing deletes one (no DELETE at /widgets/{widgetId})',
      doc: doc({
        '/widgets/{widgetId}': { parameters: [param('widgetId')], get: { responses: ok(WIDGET) } },
      }),
    },
  ];
  for (const c of not) {
    it(c.name, () => {
      const t = widgetsOf(c.doc);
      expect(
        t?.operations.create.path === '/teams/{team}/widgets' && t.collectionPath === '/widgets',
      ).toBe(false);
    });
  }
});

describe('requests of a type created in a scope, against a real server', () => {
  let server: RecordingServer;
  const widgets = new Map<string, Obj>();
  beforeAll(async () => {
    server = await startRecordingServer();
  });
  afterAll(() => server.stop());
  beforeEach(() => {
    server.clear();
    widgets.clear();
    let next = 0;
    server.handle((req, res) => {
      const path = new URL(req.url, 'http://x').pathname;
      const sent = req.body ? (JSON.parse(req.body) as Obj) : {};
      const scoped = /^\/teams\/([^/]+)\/widgets$/.exec(path);
      if (scoped && req.method === 'POST') {
        const made = { id: `w${++next}`, team: decodeURIComponent(scoped[1]!), ...sent };
        widgets.set(made.id, made);
        return json(res, 201, made);
      }
      if (path === '/widgets' && req.method === 'GET') return json(res, 200, [...widgets.values()]);
      const one = /^\/widgets\/([^/]+)$/.exec(path);
      const found = one ? widgets.get(one[1]!) : undefined;
      if (found === undefined) return json(res, 404, { error: 'no such widget' });
      if (req.method === 'PATCH') Object.assign(found, sent);
      if (req.method === 'DELETE') widgets.delete(one![1]!);
      return json(res, 200, found);
    });
  });

  const provider = async () =>
    createOpenApiProvider({
      name: 'w',
      document: await prepareOpenApiDocument(doc(), 'inline'),
      endpoint: server.url,
      workspace: 'w',
    });
  const actor = { actor: { actor: 't' } };
  const sent = () => server.requests.map((r) => `${r.method} ${r.url}`);

  it('creates in the team named by the field, lists once, changes and deletes at the item', async () => {
    const p = await provider();
    const created = await p.create(
      'widgets',
      { team: 'red team', name: 'knob', color: 'red' },
      actor,
    );
    expect(sent()).toEqual(['POST /teams/red%20team/widgets']);
    // The team travels in the path, not in the body.
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ name: 'knob', color: 'red' });
    expect(created.id).toBe('w1');
    expect(created.fields).toMatchObject({ team: 'red team', name: 'knob' });
    server.clear();
    expect((await p.list('widgets')).map((o) => [o.id, o.fields['team']])).toEqual([
      ['w1', 'red team'],
    ]);
    await p.update(
      'widgets',
      'w1',
      { team: 'red team', name: 'knob', color: 'blue' },
      created,
      actor,
    );
    await p.delete('widgets', 'w1', actor);
    expect(sent().filter((s) => !s.startsWith('GET /widgets/'))).toEqual([
      'GET /widgets',
      'PATCH /widgets/w1',
      'DELETE /widgets/w1',
    ]);
  });

  it('a spec without the team is refused before anything is sent, naming the field', async () => {
    const p = await provider();
    await expect(p.create('widgets', { name: 'knob' }, actor)).rejects.toThrow(
      'widgets: POST /teams/{team}/widgets takes {team} from the field team, and the spec does not declare it; declare team',
    );
    expect(server.requests).toEqual([]);
  });
});
