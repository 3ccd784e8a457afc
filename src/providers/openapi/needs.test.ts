import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectOpenApi } from './inspect.js';

// Issue 27, item 4: for every type found without an identity, inspect says what it would need — the
// overlay keys to write, with a target ready to paste, or the probe to run. Each case is a small
// document of our own (a widget service), loaded from a file as a user's would be.

type Obj = Record<string, unknown>;
const body = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ok = (schema: unknown) => ({ '200': { description: 'ok', ...body(schema) } });
const gone = { responses: { '204': { description: 'gone' } } };
const str = { type: 'string' };
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const WIDGET = {
  type: 'object',
  properties: { id: { type: 'string', readOnly: true }, name: str, color: str },
};

interface Options {
  /** The create body (a `$ref` to NewWidget by default). */
  create?: unknown;
  /** More schemas under components. */
  schemas?: Obj;
  /** More paths. */
  paths?: Obj;
  /** The collection path (`/widgets`), its item path below it. */
  at?: string;
}

function doc(o: Options = {}): Obj {
  const at = o.at ?? '/widgets';
  const params = [...at.matchAll(/\{([^{}]+)\}/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: str,
  }));
  return {
    openapi: '3.0.3',
    info: { title: 'widgets', version: '1' },
    paths: {
      [at]: {
        ...(params.length > 0 ? { parameters: params } : {}),
        get: { responses: ok({ type: 'array', items: ref('Widget') }) },
        post: { requestBody: body(o.create ?? ref('NewWidget')), responses: ok(ref('Widget')) },
      },
      [`${at}/{widgetId}`]: {
        parameters: [...params, { name: 'widgetId', in: 'path', required: true, schema: str }],
        get: { responses: ok(ref('Widget')) },
        delete: gone,
      },
      ...o.paths,
    },
    components: {
      schemas: {
        Widget: WIDGET,
        NewWidget: { type: 'object', required: ['name'], properties: { name: str, color: str } },
        ...o.schemas,
      },
    },
  };
}

const PROBE = (file: string, scope = '') =>
  `tend providers probe ${file} --endpoint <url> --type widgets${scope} --yes`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tend-needs-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

let n = 0;
async function inspected(d: Obj, type = 'widgets') {
  const file = join(dir, `doc${n++}.json`);
  await writeFile(file, JSON.stringify(d));
  const report = await inspectOpenApi(file);
  return { t: report.types.find((x) => x.name === type)!, file };
}

describe('what inspect would need to give a type an identity', () => {
  const cases: {
    name: string;
    doc: Obj;
    /** The overlay target (undefined: no overlay, the probe only). */
    target?: string;
    key?: string;
    scope?: string;
  }[] = [
    {
      name: 'a required name: natural-key keys on the create body’s named schema',
      doc: doc(),
      target: '$.components.schemas.NewWidget',
      key: 'name',
    },
    {
      name: 'an inline create body: the keys go on the create operation',
      doc: doc({
        create: { type: 'object', required: ['name'], properties: { name: str, color: str } },
      }),
      target: "$.paths['/widgets'].post",
      key: 'name',
    },
    {
      name: 'a schema another type creates with too: the create operation, not the shared schema',
      doc: doc({
        paths: {
          '/gadgets': {
            get: { responses: ok({ type: 'array', items: ref('Widget') }) },
            post: { requestBody: body(ref('NewWidget')), responses: ok(ref('Widget')) },
          },
          '/gadgets/{gadgetId}': {
            parameters: [{ name: 'gadgetId', in: 'path', required: true, schema: str }],
            get: { responses: ok(ref('Widget')) },
            delete: gone,
          },
        },
      }),
      target: "$.paths['/widgets'].post",
      key: 'name',
    },
    {
      name: 'a schema name JSONPath cannot write plainly is quoted',
      doc: doc({
        create: ref('New.Widget'),
        schemas: {
          'New.Widget': { type: 'object', required: ['slug'], properties: { slug: str } },
        },
      }),
      target: "$.components.schemas['New.Widget']",
      key: 'slug',
    },
    {
      name: 'an optional name is a candidate too (a declared key becomes required)',
      doc: doc({
        schemas: { NewWidget: { type: 'object', properties: { size: str, name: str } } },
      }),
      target: '$.components.schemas.NewWidget',
      key: 'name',
    },
    {
      name: 'a required name-like field before an optional one',
      doc: doc({
        schemas: {
          NewWidget: { type: 'object', required: ['slug'], properties: { name: str, slug: str } },
        },
      }),
      target: '$.components.schemas.NewWidget',
      key: 'slug',
    },
    {
      name: 'no name-like field at all: the probe only',
      doc: doc({
        schemas: { NewWidget: { type: 'object', required: ['size'], properties: { size: str } } },
      }),
    },
    {
      name: 'nested: the parent’s parameter is the probe’s scope, never the key',
      doc: doc({
        at: '/projects/{key}/widgets',
        schemas: { NewWidget: { type: 'object', required: ['key'], properties: { key: str } } },
      }),
      scope: ' --scope key=<value>',
    },
    {
      name: 'nested with a name: keyed by the name, probed in a scope',
      doc: doc({ at: '/teams/{team}/widgets' }),
      target: '$.components.schemas.NewWidget',
      key: 'name',
      scope: ' --scope team=<value>',
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const { t, file } = await inspected(c.doc);
      expect(t.identity).toBeNull();
      const probe = PROBE(file, c.scope);
      if (c.target === undefined) {
        expect(t.needs).toEqual({
          line: `no field to name as a key or a marker place: run \`${probe}\` to learn which field the platform keeps unique or keeps a marker in, then declare x-tend-identity`,
          probe,
        });
        return;
      }
      const when = `the platform refuses a second widgets object with the same ${c.key}`;
      expect(t.needs).toEqual({
        line: `x-tend-identity: natural-key and x-tend-natural-key: ${c.key} on ${c.target}, if ${when} (\`${probe}\` finds out)`,
        overlay: {
          target: c.target,
          update: { 'x-tend-identity': 'natural-key', 'x-tend-natural-key': c.key },
          when,
        },
        probe,
      });
    });
  }

  it('a scope the create sends in its path is never the key (a create in a scope)', async () => {
    const widget = { type: 'object', properties: { id: str, key: str, size: str } };
    const item = { parameters: [{ name: 'widgetId', in: 'path', required: true, schema: str }] };
    const { t, file } = await inspected({
      openapi: '3.0.3',
      info: { title: 'widgets', version: '1' },
      paths: {
        '/projects/{key}/widgets': {
          parameters: [{ name: 'key', in: 'path', required: true, schema: str }],
          post: {
            requestBody: body({ type: 'object', required: ['size'], properties: { size: str } }),
            responses: ok(widget),
          },
        },
        '/widgets': { get: { responses: ok({ type: 'array', items: widget }) } },
        '/widgets/{widgetId}': { ...item, get: { responses: ok(widget) }, delete: gone },
      },
    });
    expect(t.createQuery?.pathFields).toEqual([{ param: 'key', field: 'key' }]);
    expect(t.identity).toBeNull();
    expect(t.needs?.overlay).toBeUndefined();
    expect(t.needs?.probe).toBe(PROBE(file));
  });

  it('a type with an identity needs nothing', async () => {
    const { t } = await inspected(
      doc({
        schemas: {
          NewWidget: {
            type: 'object',
            required: ['name'],
            properties: { name: str, labels: { type: 'object', additionalProperties: str } },
          },
        },
      }),
    );
    expect(t.identity).toBe('marker');
    expect(t).not.toHaveProperty('needs');
  });

  it('a Swagger 2.0 document is addressed as written: $.definitions', async () => {
    const swagger = {
      swagger: '2.0',
      info: { title: 'widgets', version: '1' },
      paths: {
        '/widgets': {
          get: {
            responses: {
              '200': {
                description: 'ok',
                schema: { type: 'array', items: { $ref: '#/definitions/Widget' } },
              },
            },
          },
          post: {
            parameters: [
              {
                name: 'body',
                in: 'body',
                required: true,
                schema: { $ref: '#/definitions/NewWidget' },
              },
            ],
            responses: { '200': { description: 'ok', schema: { $ref: '#/definitions/Widget' } } },
          },
        },
        '/widgets/{widgetId}': {
          parameters: [{ name: 'widgetId', in: 'path', required: true, type: 'string' }],
          get: {
            responses: { '200': { description: 'ok', schema: { $ref: '#/definitions/Widget' } } },
          },
          delete: { responses: { '204': { description: 'gone' } } },
        },
      },
      definitions: {
        Widget: WIDGET,
        NewWidget: { type: 'object', required: ['name'], properties: { name: str } },
      },
    };
    const { t } = await inspected(swagger);
    expect(t.needs?.overlay?.target).toBe('$.definitions.NewWidget');
  });

  it('the keys it names give the type its identity once written (the hint is true)', async () => {
    const d = doc();
    const schemas = (d['components'] as Obj)['schemas'] as Obj;
    const { t: before } = await inspected(d);
    const update = before.needs!.overlay!.update;
    schemas['NewWidget'] = { ...(schemas['NewWidget'] as Obj), ...update };
    const { t: after } = await inspected(d);
    expect(after.identity).toBe('natural-key');
    expect(after.naturalKey).toEqual(['name']);
    expect(after).not.toHaveProperty('needs');
  });
});
