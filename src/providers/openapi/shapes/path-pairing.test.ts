import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deriveTypes, type DerivedType } from '../derive-types.js';
import { longerName, sameSchema, singulars, withParams } from './path-pairing.js';

// The generic rules that pair a collection with operations on other paths (path-pairing.ts), each
// with a small hand-written document: what pairs, and what must not.

type Obj = Record<string, unknown>;
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ok = (schema?: unknown) => ({
  '200': { description: 'ok', ...(schema !== undefined ? json(schema) : {}) },
});
const THING = {
  type: 'object',
  required: ['name'],
  properties: { id: { type: 'string', readOnly: true }, name: { type: 'string' } },
};
const del = () => ({ responses: { '204': { description: 'gone' } } });
const list = (schema: Obj = THING) => ({ responses: ok({ type: 'array', items: schema }) });
const create = (answer: Obj = THING) => ({
  requestBody: json(THING),
  responses: { '201': { description: 'created', ...json(answer) } },
});
const read = (schema: Obj = THING) => ({ responses: ok(schema) });

function doc(paths: Obj): Obj {
  return { openapi: '3.0.3', info: { title: 't', version: '1' }, paths };
}

/** A type's name, collection path and where each of its operations really is. */
function summary(t: DerivedType): Obj {
  const o = t.operations;
  return {
    name: t.info.name,
    collection: t.collectionPath,
    item: t.itemPath,
    list: `${o.list.method} ${o.list.path}`,
    create: `${o.create.method} ${o.create.path}`,
    read: `${o.read.method} ${o.read.path}`,
    delete: o.delete ? `${o.delete.method} ${o.delete.path}` : null,
    ...(o.update ? { update: `${o.update.method} ${o.update.path}` } : {}),
    ...(t.info.parent ? { parent: t.info.parent.type } : {}),
  };
}

interface Case {
  readonly name: string;
  readonly paths: Obj;
  /** The types found, summarised; [] when none. */
  readonly types: readonly Obj[];
  /** Unmapped paths and their reasons (those listed must be there, with that reason). */
  readonly unmapped?: Readonly<Record<string, string>>;
}

const SHARED = { ...THING }; // one schema object, answered by a POST and a GET
const cases: Case[] = [
  // --- singular item paths ---------------------------------------------------------------------
  {
    name: 'a plural collection pairs with its singular item path',
    paths: {
      '/silences': { get: list(), post: create() },
      '/silence/{silenceID}': { get: read(), delete: del() },
    },
    types: [
      {
        name: 'silences',
        collection: '/silences',
        item: '/silences/{silenceID}',
        read: 'GET /silence/{silenceID}',
        delete: 'DELETE /silence/{silenceID}',
      },
    ],
  },
  {
    name: 'a plain pair with trailing slashes is left alone',
    paths: {
      '/dcim/sites/': { get: list(), post: create() },
      '/dcim/sites/{id}/': { get: read(), delete: del() },
    },
    types: [{ name: 'sites', item: '/dcim/sites/{id}/', read: 'GET /dcim/sites/{id}/' }],
  },
  {
    name: '-ies is -y',
    paths: {
      '/policies': { get: list(), post: create() },
      '/policy/{id}': { get: read(), delete: del() },
    },
    types: [{ name: 'policies', read: 'GET /policy/{id}' }],
  },
  {
    name: '-es after s, x, z, ch, sh',
    paths: {
      '/boxes': { get: list(), post: create() },
      '/box/{id}': { get: read(), delete: del() },
    },
    types: [{ name: 'boxes', read: 'GET /box/{id}' }],
  },
  {
    name: 'not when the singular is a collection with a POST of its own',
    paths: {
      '/silences': { get: list(), post: create() },
      '/silence': { post: create() },
      '/silence/{silenceID}': { get: read(), delete: del() },
    },
    types: [],
    unmapped: {
      '/silences': 'no item path /silences/{id}: Tend cannot read or delete one object',
    },
  },
  {
    name: 'not when the collection has an item path of its own (it is complete)',
    paths: {
      '/things': { get: list(), post: create() },
      '/things/{id}': { get: read(), delete: del() },
      '/thing/{id}': { get: read(), delete: del() },
    },
    types: [{ name: 'things', read: 'GET /things/{id}' }],
  },
  {
    name: 'a nested collection with its singular item path (parameters renamed by position)',
    paths: {
      '/a': { get: list(), post: create() },
      '/a/{id}': { get: read(), delete: del() },
      '/a/{aid}/keys': { get: list(), post: create() },
      '/a/{x}/key/{kid}': { get: read(), delete: del() },
    },
    types: [
      { name: 'a' },
      {
        name: 'keys',
        collection: '/a/{aid}/keys',
        item: '/a/{aid}/keys/{kid}',
        read: 'GET /a/{aid}/key/{kid}',
        parent: 'a',
      },
    ],
  },
  // --- .json suffixes ------------------------------------------------------------------------------
  {
    name: '/x.json and /x/{id}.json are /x and /x/{id}',
    paths: {
      '/tag_groups.json': { get: list(), post: create() },
      '/tag_groups/{id}.json': { get: read(), put: create(), delete: del() },
    },
    types: [
      {
        name: 'tag_groups',
        collection: '/tag_groups',
        item: '/tag_groups/{id}',
        list: 'GET /tag_groups.json',
        create: 'POST /tag_groups.json',
        read: 'GET /tag_groups/{id}.json',
        update: 'PUT /tag_groups/{id}.json',
      },
    ],
  },
  {
    name: 'a .json path lacking an operation says so with its own path',
    paths: {
      '/tag_groups.json': { post: create() },
      '/tag_groups/{id}.json': { get: read(), put: create(), delete: del() },
    },
    types: [],
    unmapped: {
      '/tag_groups.json': 'no GET on /tag_groups.json: Tend cannot list these objects',
      '/tag_groups/{id}.json': 'no GET on /tag_groups.json: Tend cannot list these objects',
    },
  },
  {
    name: 'a .json item path without GET: read from the .json list, said with its own path',
    paths: {
      '/tag_groups.json': { get: list(), post: create() },
      '/tag_groups/{id}.json': { put: create(), delete: del() },
    },
    types: [
      { name: 'tag_groups', read: 'GET /tag_groups.json', update: 'PUT /tag_groups/{id}.json' },
    ],
  },
  {
    name: 'the reason for an unused .json path is the one for the path it is read as',
    paths: { '/admin/users/{id}.json': { get: read(), delete: del() } },
    types: [],
    unmapped: {
      '/admin/users/{id}.json': 'no collection path /admin/users with POST for this item path',
    },
  },
  {
    name: 'the plain path keeps its own operations; the .json one fills in what it lacks',
    paths: {
      '/x': { get: list() },
      '/x.json': { get: list(), post: create() },
      '/x/{id}': { get: read(), delete: del() },
    },
    types: [{ name: 'x', list: 'GET /x', create: 'POST /x.json' }],
  },
  // --- API versions --------------------------------------------------------------------------------
  {
    name: 'one resource spread over versions: each operation from the newest version that has it',
    paths: {
      '/v9/projects': { get: list(), post: create() },
      '/v9/projects/{idOrName}': { get: read(), delete: del() },
      '/v9/projects/{idOrName}/env': { get: list() },
      '/v10/projects/{idOrName}/env': { post: create() },
      '/v9/projects/{idOrName}/env/{id}': { patch: create(), delete: del() },
      '/v1/projects/{idOrName}/env/{id}': { get: read() },
    },
    types: [
      { name: 'projects', collection: '/projects', create: 'POST /v9/projects' },
      {
        name: 'env',
        collection: '/projects/{idOrName}/env',
        list: 'GET /v9/projects/{idOrName}/env',
        create: 'POST /v10/projects/{idOrName}/env',
        read: 'GET /v1/projects/{idOrName}/env/{id}',
        update: 'PATCH /v9/projects/{idOrName}/env/{id}',
        parent: 'projects',
      },
    ],
  },
  {
    name: 'an older version of the same operation is superseded, and says so',
    paths: {
      '/v1/volumes': { get: list(), post: create() },
      '/v1/volumes/{id}': { get: read(), delete: del() },
      '/v2/volumes': { get: list(), post: create() },
      '/v2/volumes/{id}': { get: read(), delete: del() },
    },
    types: [{ name: 'volumes', list: 'GET /v2/volumes', delete: 'DELETE /v2/volumes/{id}' }],
    unmapped: {
      '/v1/volumes':
        'superseded: /volumes takes each operation from the newest API version that has it (v2, v1)',
      '/v1/volumes/{id}':
        'superseded: /volumes/{id} takes each operation from the newest API version that has it (v2, v1)',
    },
  },
  {
    name: 'a family at one version keeps its paths',
    paths: {
      '/v2/droplets': { get: list(), post: create() },
      '/v2/droplets/{id}': { get: read(), delete: del() },
    },
    types: [{ name: 'droplets', collection: '/v2/droplets' }],
  },
  {
    name: 'paths that differ by more than the version are not merged',
    paths: {
      '/v1/teams': { post: create() },
      '/v2/teams/all': { get: list() },
      '/v1/teams/{id}': { get: read(), delete: del() },
    },
    types: [],
    unmapped: {
      // Not merged, but named as the list a person would declare.
      '/v1/teams':
        "no GET on /v1/teams: Tend cannot list these objects; GETs that list objects with its create's fields: /v2/teams/all (id, name). If one lists every object, declare x-tend-type: teams and x-tend-op: list on it (x-tend-path-values for a parameter that filters)",
    },
  },
  {
    name: 'not when the document has the unversioned path too',
    paths: {
      '/teams': { get: list() },
      '/v1/teams': { post: create() },
      '/v2/teams': { get: list() },
      '/v1/teams/{id}': { get: read(), delete: del() },
    },
    types: [],
  },
  // --- repeated and renamed parameters -------------------------------------------------------------
  {
    name: 'a parameter repeated in the item path is renamed where it repeats',
    paths: {
      '/clients': { get: list(), post: create() },
      '/clients/{id}': { get: read(), delete: del() },
      '/clients/{cid}/mappers': { get: list(), post: create() },
      '/clients/{cid}/mappers/{cid}': { get: read(), delete: del() },
    },
    types: [
      { name: 'clients' },
      {
        name: 'mappers',
        item: '/clients/{cid}/mappers/{cid2}',
        read: 'GET /clients/{cid}/mappers/{cid2}',
        parent: 'clients',
      },
    ],
  },
  {
    name: 'the item path of the same shape with other parameter names',
    paths: {
      '/clients': { get: list(), post: create() },
      '/clients/{id}': { get: read(), delete: del() },
      '/clients/{cid}/mappers': { get: list(), post: create() },
      '/clients/{cid1}/mappers/{cid2}': { get: read(), put: create(), delete: del() },
    },
    types: [
      { name: 'clients' },
      {
        name: 'mappers',
        item: '/clients/{cid}/mappers/{cid2}',
        read: 'GET /clients/{cid}/mappers/{cid2}',
        update: 'PUT /clients/{cid}/mappers/{cid2}',
        parent: 'clients',
      },
    ],
  },
  // --- top-level item paths of nested collections --------------------------------------------------
  {
    name: 'a nested collection whose items live at the top level (the same answer schema)',
    paths: {
      '/orgs/{org}/repos': { get: list(SHARED), post: create(SHARED) },
      '/repos/{owner}/{repo}': { get: read(SHARED), patch: create(SHARED), delete: del() },
    },
    types: [
      {
        name: 'repos',
        collection: '/orgs/{org}/repos',
        item: '/orgs/{org}/repos/{repo}',
        read: 'GET /repos/{org}/{repo}',
        update: 'PATCH /repos/{org}/{repo}',
        delete: 'DELETE /repos/{org}/{repo}',
      },
    ],
  },
  {
    name: 'items at the top level by their own id alone',
    paths: {
      '/orgs/{org}/teams': { get: list(SHARED), post: create(SHARED) },
      '/teams/{id}': { get: read(SHARED), delete: del() },
    },
    types: [{ name: 'teams', read: 'GET /teams/{id}', delete: 'DELETE /teams/{id}' }],
  },
  {
    name: 'two schema objects equal but for their documentation pair (an inline copy, no $ref)',
    paths: {
      '/orgs/{org}/teams': { get: list(), post: create({ ...THING, description: 'A new team' }) },
      '/teams/{id}': {
        get: read({ ...THING, title: 'Team', 'x-go-name': 'Team', example: { name: 'a' } }),
        delete: del(),
      },
    },
    types: [{ name: 'teams', read: 'GET /teams/{id}', delete: 'DELETE /teams/{id}' }],
  },
  {
    name: 'not when the answers only look alike (a field more)',
    paths: {
      '/orgs/{org}/teams': { get: list(), post: create({ ...THING }) },
      '/teams/{id}': {
        get: read({
          ...THING,
          properties: { ...THING.properties, slug: { type: 'string' } },
        }),
        delete: del(),
      },
    },
    types: [],
    unmapped: {
      '/orgs/{org}/teams':
        'no item path /orgs/{org}/teams/{id}: Tend cannot read or delete one object',
    },
  },
  {
    name: 'not when the answers only look alike (a field of another type)',
    paths: {
      '/orgs/{org}/teams': { get: list(), post: create({ ...THING }) },
      '/teams/{id}': {
        get: read({
          ...THING,
          properties: { ...THING.properties, name: { type: 'integer' } },
        }),
        delete: del(),
      },
    },
    types: [],
  },
  {
    name: 'not when the top-level path has a collection of its own',
    paths: {
      '/orgs/{org}/teams': { get: list(SHARED), post: create(SHARED) },
      '/teams': { post: create(SHARED) },
      '/teams/{id}': { get: read(SHARED), delete: del() },
    },
    types: [],
  },
  {
    name: 'not when the top-level item has parameters the collection cannot give',
    paths: {
      '/user/repos': { get: list(SHARED), post: create(SHARED) },
      '/repos/{owner}/{repo}': { get: read(SHARED), delete: del() },
    },
    types: [],
  },
  {
    name: 'a missing read of an item path is borrowed from the top level',
    paths: {
      '/admin/users': { get: list(SHARED), post: create(SHARED) },
      '/admin/users/{username}': { patch: create(SHARED), delete: del() },
      '/users/{username}': { get: read(SHARED) },
    },
    types: [
      {
        name: 'users',
        collection: '/admin/users',
        read: 'GET /users/{username}',
        update: 'PATCH /admin/users/{username}',
        delete: 'DELETE /admin/users/{username}',
      },
    ],
  },
  {
    name: 'not for an operation an overlay declared for another type',
    paths: {
      '/orgs/{org}/teams': { get: list(SHARED), post: create(SHARED) },
      '/teams/{id}': {
        get: { ...read(SHARED), 'x-tend-type': 'other', 'x-tend-op': 'read' },
        delete: del(),
      },
    },
    types: [],
  },
  // --- names and reasons -----------------------------------------------------------------------------
  {
    name: 'a clash of names is resolved by more of the path, in order',
    paths: {
      '/teams/{t}/config/variables': { get: list(), post: create() },
      '/teams/{t}/config/variables/{id}': { get: read(), delete: del() },
      '/users/{u}/config/variables': { get: list(), post: create() },
      '/users/{u}/config/variables/{id}': { get: read(), delete: del() },
      '/repos/{r}/config/variables': { get: list(), post: create() },
      '/repos/{r}/config/variables/{id}': { get: read(), delete: del() },
    },
    types: [
      { name: 'variables', collection: '/teams/{t}/config/variables' },
      { name: 'config-variables', collection: '/users/{u}/config/variables' },
      { name: 'repos-config-variables', collection: '/repos/{r}/config/variables' },
    ],
  },
  {
    name: 'objects addressed by two parameters no field holds: the reason says what to declare',
    paths: {
      '/autoprimaries': { get: list(), post: create() },
      '/autoprimaries/{ip}/{nameserver}': { delete: del() },
    },
    types: [],
    unmapped: {
      '/autoprimaries':
        'its objects are addressed by {ip} and {nameserver} together (/autoprimaries/{ip}/{nameserver}), but no field of the objects holds {ip} (none is named like it, and it is not a name-like field both the create body and the read object have); name it with x-tend-key-fields: {ip: <field>} on /autoprimaries/{ip}/{nameserver}',
    },
  },
  {
    name: 'objects addressed by two parameters without a DELETE: no type, and the reason says so',
    paths: {
      '/autoprimaries': { get: list(), post: create() },
      '/autoprimaries/{ip}/{nameserver}': { get: read() },
    },
    types: [],
    unmapped: {
      '/autoprimaries':
        'no item path /autoprimaries/{id}: Tend cannot read or delete one object; its objects are addressed by {ip} and {nameserver} together (/autoprimaries/{ip}/{nameserver}: GET), with no DELETE there: Tend could not remove one; if the platform removes them another way, declare it with x-tend-type and x-tend-op: delete',
    },
  },
];

describe('pairing paths that are not the plain /x and /x/{id}', () => {
  it.each(cases)('$name', (c) => {
    const got = deriveTypes(doc(c.paths));
    expect(got.warnings).toEqual([]);
    expect(got.types.map(summary)).toMatchObject(c.types);
    expect(got.types).toHaveLength(c.types.length);
    const reasons = Object.fromEntries(got.unmapped.map((u) => [u.path, u.reason]));
    for (const [path, reason] of Object.entries(c.unmapped ?? {})) {
      expect(reasons[path], path).toBe(reason);
    }
    // Every path of the document is either part of a type or listed with a reason.
    const inTypes = new Set(
      got.types.flatMap((t) => Object.values(t.operations).map((o) => o?.path)),
    );
    for (const p of Object.keys(c.paths)) {
      const listed = got.unmapped.some((u) => u.path === p);
      const used = [...inTypes].some(
        (x) => x !== undefined && x.replace(/\{[^}]*\}/g, '{}') === p.replace(/\{[^}]*\}/g, '{}'),
      );
      expect(listed || used, `${p} is neither used nor listed`).toBe(true);
    }
  });

  it('says where each moved operation comes from', () => {
    const got = deriveTypes(doc(cases.find((c) => c.name.startsWith('one resource'))!.paths));
    const env = got.types.find((t) => t.info.name === 'env')!;
    expect(env.operations.create.assigned).toBe(
      'inferred: API version v10, the newest with POST of /projects/{idOrName}/env (at v9, v10)',
    );
    expect(env.operations.read.assigned).toBe(
      'inferred: API version v1, the newest with GET of /projects/{idOrName}/env/{id} (at v1, v9)',
    );
    const projects = got.types.find((t) => t.info.name === 'projects')!;
    expect(projects.operations.delete?.assigned).toBe(
      'inferred: API version v9 (/projects… is spread over v1, v9, v10)',
    );
    const repos = deriveTypes(
      doc(cases.find((c) => c.name.startsWith('a nested collection whose'))!.paths),
    ).types[0]!;
    expect(repos.operations.read.assigned).toBe(
      'inferred: /repos/{owner}/{repo} (with {owner} = {org}) reads what POST /orgs/{org}/repos creates (the same schema)',
    );
    const teams = deriveTypes(
      doc(cases.find((c) => c.name.startsWith('two schema objects equal'))!.paths),
    ).types[0]!;
    expect(teams.operations.read.assigned).toBe(
      'inferred: /teams/{id} reads what POST /orgs/{org}/teams creates (an equal schema)',
    );
  });
});

describe('singulars', () => {
  it.each([
    ['silences', ['silence']],
    ['policies', ['policy', 'policie']],
    ['boxes', ['box', 'boxe']],
    ['matches', ['match', 'matche']],
    ['keys', ['key']],
    ['status', ['statu']],
    ['address', []],
    ['data', []],
    ['s', []],
    ['{ids}', []],
  ])('%s → %j', (plural, want) => {
    expect(singulars(plural)).toEqual(want);
  });
});

describe('sameSchema', () => {
  const cyclic = (): Obj => {
    const node: Obj = { type: 'object', properties: {} };
    (node['properties'] as Obj)['parent'] = node;
    return node;
  };
  it.each([
    ['one object', SHARED, SHARED, 'the same schema'],
    ['equal copies', { ...THING }, { ...THING, description: 'x' }, 'an equal schema'],
    ['cyclic copies', cyclic(), cyclic(), 'an equal schema'],
    ['a required field less', THING, { ...THING, required: [] }, undefined],
    ['an enum more', { type: 'string' }, { type: 'string', enum: ['a'] }, undefined],
    ['nothing to compare', undefined, THING, undefined],
  ])('%s → %s', (_, a, b, want) => {
    expect(sameSchema(a, b)).toBe(want);
  });

  it('gives up on schemas too large to compare (not the same)', () => {
    const wide = (): Obj => ({
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: 5000 }, (_, i) => [`f${i}`, { type: 'string' }]),
      ),
    });
    expect(sameSchema(wide(), wide())).toBeUndefined();
  });
});

describe('withParams', () => {
  it.each([
    ['/repos/{owner}/{repo}', ['org', 'repo'], '/repos/{org}/{repo}'],
    ['/teams/{id}', ['org', 'id'], '/teams/{id}'],
    ['/a/{x}/b/{x}', ['x', 'x2'], '/a/{x}/b/{x2}'],
    ['/t/{id}.json', ['tid'], '/t/{tid}.json'],
    ['/a/{x}/{y}', ['z'], undefined],
    ['/plain', ['a'], '/plain'],
  ])('%s with %j → %s', (template, names, want) => {
    expect(withParams(template, names)).toBe(want);
  });
});

describe('longerName', () => {
  it.each([
    ['/r/{w}/{s}/pipelines_config/variables', ['variables'], 'pipelines_config-variables'],
    [
      '/r/{w}/{s}/pipelines_config/variables',
      ['variables', 'pipelines_config-variables'],
      'r-pipelines_config-variables',
    ],
    ['/v2/a/keys', ['keys'], 'a-keys'],
    ['/keys', ['keys'], undefined],
    ['/a/keys', ['keys', 'a-keys'], undefined],
  ])('%s, taken %j → %s', (path, taken, want) => {
    expect(longerName(path, (n) => taken.includes(n))).toBe(want);
  });
});

describe('pairing is total', () => {
  const segment = fc.constantFrom(
    'a',
    'as',
    'b',
    'bs',
    'v1',
    'v2',
    '{id}',
    '{x}',
    '{id}.json',
    'x.json',
    'create',
    'json',
  );
  const path = fc.array(segment, { minLength: 0, maxLength: 4 }).map((s) => '/' + s.join('/'));
  const methods = fc.subarray(['get', 'post', 'put', 'patch', 'delete']);
  it('never throws, and lists every path it does not use', () => {
    fc.assert(
      fc.property(fc.dictionary(path, methods, { maxKeys: 8 }), (spec) => {
        const paths: Obj = {};
        for (const [p, ms] of Object.entries(spec)) {
          const item: Obj = {};
          for (const m of ms) {
            item[m] = m === 'get' ? read(SHARED) : m === 'delete' ? del() : { ...create(SHARED) };
          }
          paths[p] = item;
        }
        const got = deriveTypes(doc(paths));
        const placed = new Set(got.unmapped.map((u) => u.path));
        for (const t of got.types) {
          for (const o of Object.values(t.operations)) if (o) placed.add(o.path);
        }
        // A path is used by a type (perhaps under its parameters' new names) or listed.
        for (const p of Object.keys(paths)) {
          const shape = p.replace(/\{[^}]*\}/g, '{}');
          const used = [...placed].some((c) => c.replace(/\{[^}]*\}/g, '{}') === shape);
          const inType = got.types.some((t) =>
            [t.collectionPath, t.itemPath].some((x) => x.replace(/\{[^}]*\}/g, '{}') === shape),
          );
          if (!used && !inType) return false;
        }
        return true;
      }),
      { numRuns: 3000 },
    );
  });
});
