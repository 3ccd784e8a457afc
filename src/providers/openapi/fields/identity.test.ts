import { describe, expect, it } from 'vitest';
import { deriveTypes } from '../derive-types.js';
import { isIdLike, saysUnique, statesUniqueRule } from './identity.js';

// Natural keys the document shows, and the ones it does not (identity.ts). Each case is a small
// document with one type `/things` + `/things/{param}`; a false natural key makes Tend adopt someone
// else's object, so every rule has a case where a look-alike is no key.

type Obj = Record<string, unknown>;

const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ok = (schema: unknown) => ({ '200': { description: 'ok', ...json(schema) } });

interface Options {
  body: Obj;
  read?: Obj;
  param?: string;
  paramDescription?: string;
  post?: Obj;
  /** More paths (lookups). */
  more?: Obj;
}

function doc(o: Options): Obj {
  const read = o.read ?? o.body;
  const param = o.param ?? 'id';
  return {
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: {
      '/things': {
        get: { responses: ok({ type: 'array', items: read }) },
        post: { requestBody: json(o.body), responses: { '201': json(read) }, ...o.post },
      },
      [`/things/{${param}}`]: {
        parameters: [
          {
            name: param,
            in: 'path',
            required: true,
            schema: { type: 'string' },
            ...(o.paramDescription !== undefined ? { description: o.paramDescription } : {}),
          },
        ],
        get: { responses: ok(read) },
        delete: { responses: { '204': { description: 'gone' } } },
      },
      ...o.more,
    },
  };
}

const object = (properties: Obj, required: string[] = []): Obj => ({
  type: 'object',
  required,
  properties,
});
const str = (description?: string): Obj => ({
  type: 'string',
  ...(description !== undefined ? { description } : {}),
});
const RELEASE = object({ id: { type: 'integer', readOnly: true }, tag_name: str(), name: str() }, [
  'tag_name',
]);
const lookup = (schema: unknown) => ({
  '/things/tags/{tag}': {
    get: {
      parameters: [{ name: 'tag', in: 'path', required: true, schema: { type: 'string' } }],
      responses: ok(schema),
    },
  },
});

interface Case {
  name: string;
  doc: Obj;
  /** The natural key, or null for none. */
  key: string | null;
  /** A part of identityWhy (the reason, for none). */
  why: string;
}

const cases: Case[] = [
  // The item path parameter: named after, or described as, a name-like field.
  {
    name: 'an optional name the item parameter is named after (DigitalOcean domains)',
    doc: doc({
      param: 'domain_name',
      body: object({ name: str('The name of the domain itself.'), ip_address: str() }),
    }),
    key: 'name',
    why: 'natural key name: a field of the create body (optional in the document; Tend requires it), and the item path parameter {domain_name} is named after it',
  },
  {
    name: 'an optional name the item parameter is described as (DigitalOcean tags, {tag_id})',
    doc: doc({
      param: 'tag_id',
      paramDescription: 'The name of the tag. Tags may contain letters, numbers, colons.',
      body: object({ name: str() }),
    }),
    key: 'name',
    why: 'is described as its name',
  },
  {
    name: "an optional key is not taken from an id parameter described as the key's id",
    doc: doc({
      param: 'key_id',
      paramDescription: "The SSH key's UUID value.",
      body: object({ key: str(), comment: { type: 'integer' } }),
    }),
    key: null,
    why: 'no natural key ({key_id}',
  },
  {
    name: 'an optional name is not taken from a parameter it is only the end of ({hostname})',
    doc: doc({ param: 'hostname', body: object({ name: str() }) }),
    key: null,
    why: 'no natural key ({hostname}',
  },
  {
    name: 'an optional item parameter field described as a name (Keycloak realms)',
    doc: doc({
      param: 'realm',
      paramDescription: 'realm name (not id!)',
      body: object({ realm: str(), enabled: { type: 'boolean' } }),
    }),
    key: 'realm',
    why: 'natural key realm: the item path parameter {realm} is described as a name, and a field of the create body (optional in the document; Tend requires it)',
  },
  {
    name: 'an optional name-like item parameter field (Keycloak identity providers, {alias})',
    doc: doc({ param: 'alias', body: object({ alias: str(), providerId: str() }) }),
    key: 'alias',
    why: 'natural key alias: a field of the create body (optional in the document; Tend requires it), and the item path parameter {alias} is named after it',
  },
  {
    name: 'an optional id item parameter field is no key, even described as a name',
    doc: doc({
      param: 'id',
      paramDescription: 'name of the thing',
      body: object({ id: str(), size: { type: 'integer' } }),
    }),
    key: null,
    why: '{id} is a field of the create body but optional, so the platform might choose it',
  },
  // A path reading one object by a value.
  {
    name: 'a GET by tag answering the same object makes tag_name the key (GitHub releases)',
    doc: doc({ param: 'release_id', body: RELEASE, more: lookup(RELEASE) }),
    key: 'tag_name',
    why: 'natural key tag_name: a required field of the create body, and GET /things/tags/{tag} reads one object by it',
  },
  {
    name: 'a GET by tag answering a list is no lookup',
    doc: doc({
      param: 'release_id',
      body: RELEASE,
      more: lookup({ type: 'array', items: RELEASE }),
    }),
    key: null,
    why: 'no natural key ({release_id}',
  },
  {
    name: 'a GET by tag answering another object is no lookup',
    doc: doc({
      param: 'release_id',
      body: RELEASE,
      more: lookup(object({ sha: str(), tag: str() })),
    }),
    key: null,
    why: 'no natural key ({release_id}',
  },
  {
    name: 'a GET by a value no field holds is no key',
    doc: doc({
      param: 'release_id',
      body: object({ title: str() }, ['title']),
      read: object({ id: { type: 'integer' }, title: str() }),
      more: lookup(object({ id: { type: 'integer' }, title: str() })),
    }),
    key: null,
    why: 'no natural key ({release_id}',
  },
  // A description stating a uniqueness rule.
  {
    name: 'an optional label documented unique (Linode NodeBalancers)',
    doc: doc({
      param: 'nodeBalancerId',
      body: object({
        label: str("This NodeBalancer's label. These must be unique on your Account."),
      }),
    }),
    key: 'label',
    why: 'natural key label: a field of the create body (optional in the document; Tend requires it) that its description says is unique',
  },
  {
    name: 'any scalar field whose description states a uniqueness rule (Linode config ports)',
    doc: doc({
      param: 'configId',
      body: object({
        port: {
          type: 'integer',
          description: 'The port this Config is for. These values must be unique across configs.',
        },
        algorithm: str(),
      }),
    }),
    key: 'port',
    why: 'natural key port: a field of the create body (optional in the document; Tend requires it) whose description states it is unique',
  },
  {
    name: 'the unique identifier of another object is no key',
    doc: doc({
      param: 'volume_id',
      body: object({
        snapshot_id: str('The unique identifier for the volume snapshot to create it from.'),
        size: { type: 'integer' },
      }),
    }),
    key: null,
    why: 'no natural key ({volume_id}',
  },
  {
    name: 'a field that is not name-like is no key from a mere "unique"',
    doc: doc({ body: object({ title: str('A unique, user-defined title.') }, ['title']) }),
    key: null,
    why: 'no natural key ({id}',
  },
  {
    name: 'a field documented as not unique is no key',
    doc: doc({
      body: object({ label: str('A label; it does not need to be unique.') }, ['label']),
    }),
    key: null,
    why: 'label is required on create but the document does not say it is unique',
  },
  {
    name: 'an optional field unique only in a later paragraph (one case of several) is no key',
    doc: doc({
      param: 'recordId',
      body: object(
        {
          name: str(
            'The name of this Record.\n\n`A`: The hostname.\n\n`CNAME`: The hostname. Must be unique.',
          ),
          type: str(),
        },
        ['type'],
      ),
    }),
    key: null,
    why: 'no natural key ({recordId}',
  },
  {
    name: 'a field unique only together with another field is no key (NetBox "unique to the parent device")',
    doc: doc({
      body: object(
        {
          device: { type: 'integer' },
          identifier: {
            type: 'integer',
            description: 'Numeric identifier unique to the parent device',
          },
          name: str(),
        },
        ['name'],
      ),
    }),
    key: null,
    why: 'no natural key ({id}',
  },
  {
    name: 'a label unique among the backups of the parent in the path is a key',
    doc: doc({
      param: 'backupId',
      body: object(
        {
          label: str(
            'The label.\n* Letters only.\n* Must be unique among other backup labels for this Database.',
          ),
        },
        ['label'],
      ),
    }),
    key: 'label',
    why: 'natural key label: a required field of the create body that its description says is unique',
  },
  {
    name: 'a list whose items must be unique says nothing of a scalar field',
    doc: doc({
      body: object({
        configs: {
          type: 'array',
          items: str(),
          description: 'Each Config must have a unique port.',
        },
      }),
    }),
    key: null,
    why: 'no natural key ({id}',
  },
  // The create operation's text.
  {
    name: 'the create says "Username must be unique." (Keycloak users)',
    doc: doc({
      body: object({ id: str(), username: str(), email: str() }),
      post: { summary: 'Create a new user Username must be unique.' },
    }),
    key: 'username',
    why: 'natural key username: a field of the create body (optional in the document; Tend requires it), and POST /things says "Create a new user Username must be unique."',
  },
  {
    name: 'a create text naming a unique id is no key for the name it also mentions',
    doc: doc({
      body: object({ name: str() }, ['name']),
      post: { description: 'Creates a network with a unique ID and the given name.' },
    }),
    key: null,
    why: 'name is required on create but the document does not say it is unique',
  },
  {
    name: 'a create text saying the name need not be unique is no key',
    doc: doc({
      body: object({ name: str() }, ['name']),
      post: { description: 'The name is not unique.' },
    }),
    key: null,
    why: 'name is required on create but the document does not say it is unique',
  },
  // oneOf / anyOf create bodies.
  {
    name: 'a name every oneOf branch requires and documents unique (DigitalOcean certificates)',
    doc: doc({
      param: 'certificate_id',
      body: {
        oneOf: [
          object({ name: str('A unique human-readable name.'), dns_names: { type: 'array' } }, [
            'name',
          ]),
          object({ name: str('A unique human-readable name.'), private_key: str() }, ['name']),
        ],
      },
      read: object({ id: str(), name: str() }),
    }),
    key: 'name',
    why: 'natural key name: a required field of the create body that its description says is unique',
  },
  {
    name: 'a name every branch documents unique but not every branch requires is no key',
    doc: doc({
      param: 'certificate_id',
      body: {
        oneOf: [
          object({ name: str('A unique name.') }, ['name']),
          object({ name: str('A unique name.'), private_key: str() }),
        ],
      },
      read: object({ id: str(), name: str() }),
    }),
    key: null,
    why: 'no natural key ({certificate_id}',
  },
  {
    name: 'a name only one branch has is no key',
    doc: doc({
      param: 'droplet_id',
      body: {
        oneOf: [
          object({ name: str('A unique name.') }, ['name']),
          object({ names: { type: 'array', items: str() } }, ['names']),
        ],
      },
      read: object({ id: str(), name: str() }),
    }),
    key: null,
    why: 'no natural key ({droplet_id}',
  },
];

describe('natural keys the document shows', () => {
  it.each(cases)('$name', ({ doc: d, key, why }) => {
    const derived = deriveTypes(d);
    expect(derived.types).toHaveLength(1);
    const t = derived.types[0]!;
    if (key === null) {
      expect(t.info.identity).toBeNull();
      expect(t.info.identityReason).toContain(why);
    } else {
      expect(t.info.identity).toBe('natural-key');
      expect(t.keyFields).toEqual([key]);
      expect(t.identityWhy).toContain(why);
      // The key becomes required: the creator always gives it, the platform never chooses it (a
      // key from oneOf branches is one every branch requires).
      const branches = t.info.schema['oneOf'] as { required: string[] }[] | undefined;
      if (branches === undefined) expect(t.info.schema['required']).toContain(key);
      else for (const b of branches) expect(b.required).toContain(key);
    }
  });
});

describe('markers in oneOf/anyOf create bodies', () => {
  const tags = { type: 'array', items: { type: 'string' } };
  it('a tags list every branch has is the marker (DigitalOcean droplets)', () => {
    const derived = deriveTypes(
      doc({
        param: 'droplet_id',
        body: {
          oneOf: [
            object({ name: str(), tags }, ['name']),
            object({ names: { type: 'array', items: str() }, tags }, ['names']),
          ],
        },
        read: object({ id: str(), name: str(), tags }),
      }),
    );
    expect(derived.types[0]?.info).toMatchObject({
      identity: 'marker',
      markerField: 'tags',
      markerKind: 'list',
    });
  });

  it('a tags list only one branch has is no marker', () => {
    const derived = deriveTypes(
      doc({
        param: 'droplet_id',
        body: { anyOf: [object({ name: str(), tags }), object({ names: str() })] },
        read: object({ id: str(), name: str(), tags }),
      }),
    );
    expect(derived.types[0]?.info.identity).toBeNull();
    expect(derived.types[0]?.info.markerField).toBeUndefined();
  });

  it('branches that disagree on the shape of tags give no marker', () => {
    const derived = deriveTypes(
      doc({
        param: 'droplet_id',
        body: {
          oneOf: [
            object({ tags }),
            object({ tags: { type: 'object', additionalProperties: str() } }),
          ],
        },
      }),
    );
    expect(derived.types[0]?.info.identity).toBeNull();
  });
});

describe('the words', () => {
  it.each([
    ['Must be unique per project.', true, true],
    ['These values must be unique across configs on a single NodeBalancer', true, true],
    ['A unique human-readable name referring to a certificate.', true, false],
    ['The unique identifier for the volume snapshot.', true, false],
    ['A display name; it does not need to be unique.', false, false],
    ['Names are not necessarily unique.', false, false],
    ['Labels are unique per account.', true, true],
    ['non-unique', false, false],
    ['A name', false, false],
  ])('%j: says unique %s, states a rule %s', (text, says, rule) => {
    expect(saysUnique(text)).toBe(says);
    expect(statesUniqueRule(text)).toBe(rule);
  });

  it.each([
    ['id', true],
    ['uuid', true],
    ['zone_id', true],
    ['nodeBalancerId', true],
    ['environment_uuid', true],
    ['name', false],
    ['realm', false],
    ['alias', false],
    ['paid', false],
    ['valid', false],
  ])('%s is an id: %s', (name, want) => {
    expect(isIdLike(name)).toBe(want);
  });
});

// Keys one level down (identity.ts, nestedNaturalKey): DigitalOcean's app is `{spec: {name}}`, and
// its name "Must be unique across all apps in the same account".
const APP_NAME = str('The name of the app. Must be unique across all apps in the same account.');
const appBody = (spec: Obj, extra: Obj = {}, required = ['spec']) =>
  object({ spec, project_id: str(), ...extra }, required);
const appRead = (spec: Obj) => object({ id: { type: 'string', readOnly: true }, spec });

const nestedCases: Case[] = [
  {
    name: 'the one required object has one required name said unique (DigitalOcean apps)',
    doc: doc({
      body: appBody(object({ name: APP_NAME, region: str() }, ['name'])),
      read: appRead(object({ name: APP_NAME, region: str() }, ['name'])),
    }),
    key: 'spec.name',
    why: "natural key spec.name: the create body's one required object spec has one required name-like field, name, that its description says is unique",
  },
  {
    name: 'a nested name the document does not call unique is no key, and the reason says what to declare',
    doc: doc({
      body: appBody(object({ name: str('The name of the app.') }, ['name'])),
      read: appRead(object({ name: str() })),
    }),
    key: null,
    why: 'spec.name is required on create but the document does not say it is unique (a display name may repeat); if the platform refuses a second object with the same spec.name, declare x-tend-identity: natural-key and x-tend-natural-key: spec.name',
  },
  {
    name: 'an optional holder object is no key (the platform might name the object itself)',
    doc: doc({
      body: appBody(object({ name: APP_NAME }, ['name']), {}, []),
      read: appRead(object({ name: APP_NAME })),
    }),
    key: null,
    why: 'no natural key ({id} is not a required writable field of the create body)',
  },
  {
    name: 'an optional nested name is no key',
    doc: doc({
      body: appBody(object({ name: APP_NAME })),
      read: appRead(object({ name: APP_NAME })),
    }),
    key: null,
    why: 'no natural key ({id} is not a required writable field of the create body)',
  },
  {
    name: 'two required objects: which one names the object is not known',
    doc: doc({
      body: appBody(
        object({ name: APP_NAME }, ['name']),
        { owner: object({ name: APP_NAME }, ['name']) },
        ['spec', 'owner'],
      ),
      read: appRead(object({ name: APP_NAME })),
    }),
    key: null,
    why: 'no natural key ({id} is not a required writable field of the create body)',
  },
  {
    name: 'two required name-like fields in the object: which one is the key is not known',
    doc: doc({
      body: appBody(object({ name: APP_NAME, slug: str('Must be unique.') }, ['name', 'slug'])),
      read: appRead(object({ name: APP_NAME, slug: str() })),
    }),
    key: null,
    why: 'no natural key ({id} is not a required writable field of the create body)',
  },
  {
    name: 'a nested name the read object does not carry cannot find objects',
    doc: doc({
      body: appBody(object({ name: APP_NAME }, ['name'])),
      read: appRead(object({ region: str() })),
    }),
    key: null,
    why: 'spec.name is required on create but the read object has no spec.name, so objects cannot be found by it',
  },
  {
    name: 'a top-level key is still found first',
    doc: doc({
      param: 'name',
      body: appBody(object({ name: APP_NAME }, ['name']), { name: str() }, ['spec', 'name']),
      read: appRead(object({ name: APP_NAME })),
    }),
    key: 'name',
    why: 'the item path parameter {name} is a required field of the create body',
  },
];

describe('natural keys in a nested field', () => {
  it.each(nestedCases)('$name', ({ doc: d, key, why }) => {
    const t = deriveTypes(d).types[0]!;
    if (key === null) {
      expect(t.info.identity).toBeNull();
      expect(t.info.identityReason).toContain(why);
      return;
    }
    expect(t.info.identity).toBe('natural-key');
    expect(t.keyFields).toEqual([key]);
    expect(t.identityWhy).toContain(why);
    // Every level of the key becomes required.
    const [top, inner] = key.split('.');
    expect(t.info.schema['required']).toContain(top);
    if (inner !== undefined) {
      const spec = (t.info.schema['properties'] as Record<string, Obj>)[top!]!;
      expect(spec['required']).toContain(inner);
    }
  });
});

describe('x-tend-natural-key with a key path', () => {
  const declared = (natural: unknown, spec: Obj) =>
    doc({
      body: {
        ...appBody(spec),
        'x-tend-identity': 'natural-key',
        'x-tend-natural-key': natural,
      },
      read: appRead(spec),
    });
  it.each([
    {
      reason: 'a dotted path names a nested field, which becomes required at every level',
      natural: 'spec.name',
      spec: object({ name: str(), region: str() }),
      key: ['spec.name'],
    },
    {
      reason: 'several fields, one nested',
      natural: ['project_id', 'spec.name'],
      spec: object({ name: str() }),
      key: ['project_id', 'spec.name'],
    },
  ])('$reason', ({ natural, spec, key }) => {
    const t = deriveTypes(declared(natural, spec)).types[0]!;
    expect(t.info.identity).toBe('natural-key');
    expect(t.keyFields).toEqual(key);
    const props = t.info.schema['properties'] as Record<string, Obj>;
    expect(props['spec']!['required']).toContain('name');
    expect(t.info.schema['required']).toContain('spec');
  });

  it.each([
    { natural: 'spec.title', reason: 'a nested field the body does not have' },
    { natural: 'project_id.name', reason: 'a path below a scalar' },
    { natural: 'spec\\.name', reason: 'an escaped dot names a top-level field spec.name' },
  ])('refuses $natural: $reason', ({ natural }) => {
    const t = deriveTypes(declared(natural, object({ name: str() }))).types[0]!;
    expect(t.info.identity).toBeNull();
    expect(t.info.identityReason).toBe(
      `x-tend-natural-key names ${natural}, which the create body does not have (a field below the top level is a dotted path, spec.name; a dot inside a field name is written \\.)`,
    );
  });
});
