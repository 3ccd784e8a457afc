import { describe, expect, it } from 'vitest';
import { TendError } from '../../core/index.js';
import type { AuditFeed } from './audit-feed.js';
import { cursorAfter, pageOf, parseAuditFeed, toChange } from './audit-feed.js';
import { prepareOpenApiDocument } from './document/load-document.js';
import { createOpenApiProvider } from './openapi-provider.js';
import { createVirtualTime } from './transport/timing.js';

// `x-tend-audit` for event logs of another shape: the declaration (every bad one says what is wrong
// and is ignored whole), the mapping of entries (hostile ones skipped, never misread), the pages.

/** Unleash's event log, as examples/unleash/specs/unleash.overlay.yaml declares it. */
const UNLEASH = {
  path: '/api/admin/events',
  entries: 'events',
  query: { cursor: false, wait: false },
  fields: {
    cursor: 'id',
    time: 'createdAt',
    actor: 'createdBy',
    before: 'preData',
    after: 'data',
  },
  event: 'type',
  events: {
    'feature-metadata-updated': { type: 'features', action: 'update', id: 'featureName' },
    'feature-archived': { type: 'features', action: 'delete', id: 'featureName' },
    'feature-strategy-update': {
      type: 'feature-strategies',
      action: 'update',
      id: ['featureName', 'data.id'],
    },
  },
};

function feedOf(declaration: unknown): AuditFeed {
  const { feed, warnings } = parseAuditFeed(declaration);
  expect(warnings).toEqual([]);
  return feed!;
}

describe('x-tend-audit declarations', () => {
  const cases: {
    name: string;
    reason: string;
    value: unknown;
    want?: Partial<Record<keyof AuditFeed, unknown>>;
    /** Properties the feed must not have. */
    absent?: string[];
    warning?: string;
  }[] = [
    {
      name: 'no declaration',
      reason: 'a document without x-tend-audit has no feed and nothing to say about it',
      value: undefined,
    },
    {
      name: "Tend's own shape",
      reason: 'a bare path keeps the behaviour feeds had before mappings existed',
      value: { path: '/audit' },
      want: {
        path: '/audit',
        entries: ['entries'],
        cursorParam: 'after',
        waitParam: 'wait',
        fields: expect.objectContaining({ cursor: [['cursor'], ['seq']], actor: [['actor']] }),
      },
    },
    {
      name: "Unleash's event log",
      reason:
        'entries, fields and event kinds are mapped; the feed takes no cursor and cannot wait',
      value: UNLEASH,
      want: {
        entries: ['events'],
        event: ['type'],
        fields: expect.objectContaining({
          cursor: [['id']],
          after: [['data']],
          intent: [['intent']],
        }),
        events: new Map([
          [
            'feature-metadata-updated',
            { type: 'features', action: 'update', id: [['featureName']] },
          ],
          ['feature-archived', { type: 'features', action: 'delete', id: [['featureName']] }],
          [
            'feature-strategy-update',
            {
              type: 'feature-strategies',
              action: 'update',
              id: [['featureName'], ['data', 'id']],
            },
          ],
        ]),
      },
      absent: ['cursorParam', 'waitParam'],
    },
    {
      name: 'other parameter names',
      reason: 'a feed may call its cursor and wait parameters anything',
      value: { path: '/log', query: { cursor: 'since', wait: 'timeout' } },
      want: { cursorParam: 'since', waitParam: 'timeout' },
    },
    {
      name: 'not an object',
      reason: 'the message of old, unchanged',
      value: '/audit',
      warning: 'x-tend-audit must be an object with a path starting with /; ignored',
    },
    {
      name: 'relative path',
      reason: 'paths are absolute in OpenAPI',
      value: { path: 'audit' },
      warning: 'x-tend-audit must be an object with a path starting with /; ignored',
    },
    {
      name: 'unknown key',
      reason: 'a misspelt key would silently change nothing',
      value: { path: '/a', entry: 'events' },
      warning:
        'x-tend-audit.entry is not known; it offers path, entries, query, fields, event, events; ignored',
    },
    {
      name: 'entries of the wrong type',
      reason: 'entries is a dotted path',
      value: { path: '/a', entries: 3 },
      warning:
        'x-tend-audit.entries must be a dotted path to a field (e.g. data.id), not number; ignored',
    },
    {
      name: 'empty path segment',
      reason: 'a.b. names nothing',
      value: { path: '/a', entries: 'data..items' },
      warning:
        'x-tend-audit.entries: "data..items" is not a dotted path (an empty name between dots, or none at all); ignored',
    },
    {
      name: 'forbidden key in a field path',
      reason: 'Tend never reads a key that could reach a prototype',
      value: { path: '/a', fields: { actor: 'data.__proto__.name' } },
      warning:
        'x-tend-audit.fields.actor: "data.__proto__.name" names __proto__, a key Tend never reads (docs/decisions/0009); ignored',
    },
    {
      name: 'forbidden key in an id path',
      reason: 'the same for the parts of an id',
      value: { ...UNLEASH, events: { x: { type: 't', action: 'update', id: ['constructor'] } } },
      warning:
        'x-tend-audit.events.x.id[0]: "constructor" names constructor, a key Tend never reads (docs/decisions/0009); ignored',
    },
    {
      name: 'fields not a map',
      reason: 'fields maps entry fields to paths',
      value: { path: '/a', fields: ['id'] },
      warning:
        'x-tend-audit.fields must map fields of an entry (cursor, time, actor, actorKind, intent, motivation, action, type, id, before, after) to dotted paths; ignored',
    },
    {
      name: 'unknown entry field',
      reason: 'only the fields of an ObservedChange can be mapped',
      value: { path: '/a', fields: { who: 'createdBy' } },
      warning:
        'x-tend-audit.fields.who is not known; it offers cursor, time, actor, actorKind, intent, motivation, action, type, id, before, after; ignored',
    },
    {
      name: 'field path of the wrong type',
      reason: 'a path is text',
      value: { path: '/a', fields: { actor: ['createdBy'] } },
      warning:
        'x-tend-audit.fields.actor must be a dotted path to a field (e.g. data.id), not a list; ignored',
    },
    {
      name: 'query not an object',
      reason: 'query names the two parameters',
      value: { path: '/a', query: 'after' },
      warning:
        'x-tend-audit.query must be an object: {cursor: <parameter> | false, wait: <parameter> | false}; ignored',
    },
    {
      name: 'query: true',
      reason: 'a parameter is named, or false',
      value: { path: '/a', query: { cursor: true } },
      warning:
        'x-tend-audit.query.cursor must be the name of a query parameter, or false when the feed takes none; ignored',
    },
    {
      name: 'unknown query key',
      reason: 'only cursor and wait',
      value: { path: '/a', query: { limit: 'n' } },
      warning: 'x-tend-audit.query.limit is not known; it offers cursor, wait; ignored',
    },
    {
      name: 'event without events',
      reason: 'one names the field, the other maps its values',
      value: { path: '/a', event: 'type' },
      warning:
        'x-tend-audit.event and x-tend-audit.events go together: event names the field saying what happened, events maps its values to {type, action, id}; ignored',
    },
    {
      name: 'events without event',
      reason: 'the same the other way round',
      value: { path: '/a', events: { x: { type: 't', action: 'create', id: 'id' } } },
      warning:
        'x-tend-audit.event and x-tend-audit.events go together: event names the field saying what happened, events maps its values to {type, action, id}; ignored',
    },
    {
      name: 'empty events',
      reason: 'a mapping of nothing would skip every entry',
      value: { ...UNLEASH, events: {} },
      warning:
        'x-tend-audit.events must map event kinds to {type, action, id}, e.g. feature-created: {type: features, action: create, id: featureName}; ignored',
    },
    {
      name: 'event mapping not an object',
      reason: 'each kind maps to {type, action, id}',
      value: { ...UNLEASH, events: { x: 'features' } },
      warning: 'x-tend-audit.events.x must be an object {type, action, id}; ignored',
    },
    {
      name: 'unknown action',
      reason: 'an archive is a delete to Tend',
      value: { ...UNLEASH, events: { x: { type: 't', action: 'archive', id: 'id' } } },
      warning: 'x-tend-audit.events.x.action must be one of create, update, delete; ignored',
    },
    {
      name: 'missing type',
      reason: 'the type names a resource type',
      value: { ...UNLEASH, events: { x: { type: '', action: 'update', id: 'id' } } },
      warning: 'x-tend-audit.events.x.type must name a resource type of this provider; ignored',
    },
    {
      name: 'empty id',
      reason: 'an id has at least one part',
      value: { ...UNLEASH, events: { x: { type: 't', action: 'update', id: [] } } },
      warning:
        "x-tend-audit.events.x.id must be a dotted path, or a list of them (parent ids first), to the fields of an entry holding the object's id; ignored",
    },
    {
      name: 'id part of the wrong type',
      reason: 'every part is a path',
      value: { ...UNLEASH, events: { x: { type: 't', action: 'update', id: ['a', 2] } } },
      warning:
        'x-tend-audit.events.x.id[1] must be a dotted path to a field (e.g. data.id), not number; ignored',
    },
    {
      name: 'unknown key in an event mapping',
      reason: 'a misspelt key is an error, not silence',
      value: { ...UNLEASH, events: { x: { type: 't', action: 'update', id: 'a', ids: 'b' } } },
      warning: 'x-tend-audit.events.x.ids is not known; it offers type, action, id; ignored',
    },
    {
      name: 'fields.type beside events',
      reason: 'with events, each kind says its type, action and id',
      value: { ...UNLEASH, fields: { type: 'kind' } },
      warning:
        'x-tend-audit.fields.type is not used with events: each entry of events says its own type, action and id; ignored',
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, () => {
      const got = parseAuditFeed(c.value);
      expect(got.warnings).toEqual(c.warning === undefined ? [] : [c.warning]);
      if (c.want === undefined) expect(got.feed).toBeUndefined();
      else expect(got.feed).toMatchObject(c.want);
      for (const k of c.absent ?? []) expect(got.feed).not.toHaveProperty(k);
    });
  }
});

describe('audit entries as changes', () => {
  const unleash = feedOf(UNLEASH);
  const native = feedOf({ path: '/audit' });
  const strategy = {
    id: 11,
    type: 'feature-strategy-update',
    createdBy: 'alice',
    createdAt: '2026-01-02T03:04:05.000Z',
    featureName: 'checkout-v2',
    data: { id: 's-1', parameters: { rollout: '100' } },
    preData: { id: 's-1', parameters: { rollout: '25' } },
  };
  const cases: {
    name: string;
    reason: string;
    feed: AuditFeed;
    entry: unknown;
    want: Record<string, unknown> | undefined;
    /** Properties the change must not have. */
    absent?: string[];
  }[] = [
    {
      name: 'a strategy update',
      reason: 'the id is built from the parent and the entry data, as nested ids are',
      feed: unleash,
      entry: strategy,
      want: {
        cursor: '11',
        time: '2026-01-02T03:04:05.000Z',
        actor: 'alice',
        action: 'update',
        type: 'feature-strategies',
        id: 'checkout-v2/s-1',
        before: { id: 's-1', parameters: { rollout: '25' } },
        after: { id: 's-1', parameters: { rollout: '100' } },
      },
    },
    {
      name: 'id parts are URI-encoded',
      reason: 'a / inside a part must not split the id',
      feed: unleash,
      entry: { ...strategy, featureName: 'a/b', data: { id: 7 } },
      want: { id: 'a%2Fb/7' },
    },
    {
      name: 'a one-part id as it is',
      reason: 'top-level objects keep the platform id',
      feed: unleash,
      entry: { id: 12, type: 'feature-archived', createdBy: 'bob', featureName: 'a/b', data: null },
      want: { id: 'a/b', action: 'delete', type: 'features', actor: 'bob', time: '' },
    },
    {
      name: 'an event kind the declaration does not map',
      reason: 'entries about things Tend does not manage are skipped',
      feed: unleash,
      entry: { ...strategy, type: 'api-token-created' },
      want: undefined,
    },
    {
      name: 'an inherited name as event kind',
      reason: 'a kind is looked up among the declared ones only',
      feed: unleash,
      entry: { ...strategy, type: 'toString' },
      want: undefined,
    },
    {
      name: 'event kind of the wrong type',
      reason: 'an object is not a kind',
      feed: unleash,
      entry: { ...strategy, type: { kind: 'feature-strategy-update' } },
      want: undefined,
    },
    {
      name: 'missing id part',
      reason: 'an entry that does not say which object cannot be attributed',
      feed: unleash,
      entry: { ...strategy, data: null },
      want: undefined,
    },
    {
      name: 'id part in the other data',
      reason: 'a removal names its object in preData',
      feed: feedOf({
        ...UNLEASH,
        events: { r: { type: 's', action: 'delete', id: ['featureName', 'preData.id'] } },
      }),
      entry: { ...strategy, type: 'r', data: null },
      want: { id: 'checkout-v2/s-1', action: 'delete' },
      absent: ['after'],
    },
    {
      name: 'id part of the wrong type',
      reason: 'an object is not an id',
      feed: unleash,
      entry: { ...strategy, featureName: { name: 'x' } },
      want: undefined,
    },
    {
      name: 'empty id part',
      reason: 'an empty name names nothing',
      feed: unleash,
      entry: { ...strategy, featureName: '' },
      want: undefined,
    },
    {
      name: 'no cursor',
      reason: 'an entry without a position cannot be resumed after',
      feed: unleash,
      entry: { ...strategy, id: undefined },
      want: undefined,
    },
    {
      name: 'cursor of the wrong type',
      reason: 'objects, booleans and non-finite numbers are not positions',
      feed: unleash,
      entry: { ...strategy, id: { n: 1 } },
      want: undefined,
    },
    {
      name: 'infinite cursor',
      reason: 'JSON cannot say Infinity, but a parser of another feed might produce it',
      feed: unleash,
      entry: { ...strategy, id: Number.POSITIVE_INFINITY },
      want: undefined,
    },
    {
      name: 'actor missing or not text',
      reason: 'an unattributed change is by unknown, never by a number',
      feed: unleash,
      entry: { ...strategy, createdBy: 42 },
      want: { actor: 'unknown' },
    },
    {
      name: 'data not an object',
      reason: 'before and after are kept only when they are objects',
      feed: unleash,
      entry: { ...strategy, type: 'feature-metadata-updated', data: ['s-1'], preData: 'old' },
      want: { id: 'checkout-v2', type: 'features' },
      absent: ['before', 'after'],
    },
    {
      name: 'time not text',
      reason: 'a time that is not text is no time',
      feed: unleash,
      entry: { ...strategy, createdAt: 1700000000 },
      want: { time: '' },
    },
    {
      name: 'not an object',
      reason: 'nulls, strings and lists in the entries are skipped',
      feed: unleash,
      entry: null,
      want: undefined,
    },
    {
      name: "Tend's own shape",
      reason: 'seq stands in for cursor; an unknown actor kind is dropped',
      feed: native,
      entry: {
        seq: 3,
        action: 'update',
        type: 'volumes',
        id: 7,
        actor: 'ops',
        actorKind: 'wizard',
        intent: 'capacity',
        time: 't',
      },
      want: {
        cursor: '3',
        action: 'update',
        type: 'volumes',
        id: '7',
        actor: 'ops',
        intent: 'capacity',
      },
      absent: ['actorKind'],
    },
    {
      name: "Tend's own shape, unknown action",
      reason: 'only create, update and delete say what happened to an object',
      feed: native,
      entry: { cursor: 'c', action: 'archive', type: 'volumes', id: 'v' },
      want: undefined,
    },
    {
      name: 'inherited properties are not fields',
      reason: 'a path is followed through own properties only',
      feed: feedOf({ path: '/a', fields: { actor: 'toString' } }),
      entry: { cursor: 1, action: 'create', type: 't', id: 'x' },
      want: { actor: 'unknown' },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, () => {
      const got = toChange(c.feed, c.entry);
      if (c.want === undefined) expect(got).toBeUndefined();
      else expect(got).toMatchObject(c.want);
      for (const k of c.absent ?? []) expect(got).not.toHaveProperty(k);
    });
  }
});

describe('cursor order', () => {
  const cases: [a: string, b: string, after: boolean, reason: string][] = [
    ['10', '9', true, 'whole numbers compare as numbers'],
    ['9', '10', false, 'not as text'],
    ['007', '7', false, 'leading zeros do not count'],
    ['12345678901234567890123', '12345678901234567890122', true, 'beyond 2^53'],
    ['2026-01-02T00:00:00Z', '2026-01-01T23:59:59Z', true, 'ISO times as text'],
    ['b', 'b', false, 'a cursor is not after itself'],
  ];
  for (const [a, b, after, reason] of cases) {
    it(`${a} ${after ? 'comes' : 'does not come'} after ${b}: ${reason}`, () => {
      expect(cursorAfter(a, b)).toBe(after);
    });
  }
});

describe('pages of a feed', () => {
  const unleash = feedOf(UNLEASH);
  const event = (id: number, type = 'feature-metadata-updated') => ({
    id,
    type,
    createdBy: 'alice',
    featureName: `f${id}`,
    data: {},
  });

  it('keeps only entries after the cursor, oldest first, from a newest-first log', () => {
    const page = pageOf(unleash, { events: [event(12), event(11), event(10), event(9)] }, '10');
    expect(page?.changes.map((c) => c.cursor)).toEqual(['11', '12']);
    expect(page?.cursor).toBe('12');
  });

  it('reads everything the first time (no cursor yet)', () => {
    const page = pageOf(unleash, { events: [event(2), event(1)] }, '');
    expect(page?.changes.map((c) => c.id)).toEqual(['f1', 'f2']);
  });

  it('moves past entries it does not map, so they are not read again', () => {
    const page = pageOf(unleash, { events: [event(13, 'api-token-created'), event(12)] }, '11');
    expect(page?.changes.map((c) => c.cursor)).toEqual(['12']);
    expect(page?.cursor).toBe('13');
  });

  it('skips hostile entries and keeps the cursor when nothing is new', () => {
    const page = pageOf(unleash, { events: [null, 'x', [], { id: {} }, event(5)] }, '5');
    expect(page).toEqual({ changes: [], cursor: '5' });
  });

  it('says so when the answer holds no array where declared', () => {
    expect(pageOf(unleash, { events: { 0: event(1) } }, '')).toBeUndefined();
    expect(pageOf(unleash, [event(1)], '')).toBeUndefined();
  });

  it("takes the answer's own cursor in Tend's shape, and keeps the server's order", () => {
    const native = feedOf({ path: '/audit' });
    const entry = (seq: number) => ({ seq, action: 'create', type: 't', id: `o${seq}` });
    const page = pageOf(native, { entries: [entry(2), entry(1)], cursor: 'c-9' }, 'c-0');
    expect(page?.changes.map((c) => c.id)).toEqual(['o2', 'o1']);
    expect(page?.cursor).toBe('c-9');
  });
});

describe('a provider reading a mapped feed', () => {
  async function provider(answers: unknown[], seen: URL[], extra: Record<string, unknown> = {}) {
    const document = await prepareOpenApiDocument(
      {
        openapi: '3.0.3',
        info: { title: 'events', version: '1' },
        paths: { '/api/admin/events': { get: { responses: { 200: { description: 'ok' } } } } },
        'x-tend-audit': { ...UNLEASH, ...extra },
      },
      'events.json',
    );
    const time = createVirtualTime();
    let i = 0;
    const p = createOpenApiProvider({
      name: 'u',
      document,
      endpoint: 'http://127.0.0.1:1',
      workspace: 'ws',
      clock: time.clock,
      sleep: time.sleep,
      fetch: (input) => {
        seen.push(new URL(input instanceof Request ? input.url : String(input)));
        const body = answers[Math.min(i++, answers.length - 1)];
        return Promise.resolve(
          new Response(typeof body === 'string' ? body : JSON.stringify(body), {
            status: 200,
            headers: { 'content-type': 'application/json' },
          }),
        );
      },
    });
    return { p, time };
  }

  it('sends no cursor or wait parameter the feed does not take, and warns of unknown types', async () => {
    const seen: URL[] = [];
    const { p } = await provider([{ events: [] }], seen);
    expect(await p.changes!('4')).toEqual({ changes: [], cursor: '4' });
    expect(seen.map((u) => `${u.pathname}${u.search}`)).toEqual(['/api/admin/events']);
    expect(p.describe().warnings).toContain(
      'x-tend-audit.events.feature-metadata-updated.type: features is not a resource type of this provider; its entries are skipped',
    );
  });

  it('polls a feed that cannot wait until something is new (every 2 s of a fake clock)', async () => {
    const seen: URL[] = [];
    const news = {
      events: [{ id: 5, type: 'feature-archived', createdBy: 'bob', featureName: 'f' }],
    };
    const { p, time } = await provider([{ events: [] }, { events: [] }, news], seen);
    const page = await time.run(p.changes!('4', { waitMs: 10_000 }));
    expect(page.changes.map((c) => [c.actor, c.action, c.id])).toEqual([['bob', 'delete', 'f']]);
    expect(seen).toHaveLength(3);
    expect(time.clock()).toBe(4_000);
  });

  it('returns when the wait is over with nothing new', async () => {
    const seen: URL[] = [];
    const { p, time } = await provider([{ events: [] }], seen);
    expect(await time.run(p.changes!('4', { waitMs: 3_000 }))).toEqual({
      changes: [],
      cursor: '4',
    });
    expect(seen).toHaveLength(3);
  });

  it('refuses an answer holding a key that could reach a prototype', async () => {
    const { p } = await provider(
      ['{"events": [{"id": 1, "type": "feature-archived", "__proto__": {"polluted": true}}]}'],
      [],
    );
    const err = await p.changes!('').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TendError);
    expect((err as TendError).code).toBe('input.forbidden_key');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('says where it looked when the answer has no entries there', async () => {
    const { p } = await provider([{ items: [] }], []);
    const err = await p.changes!('').catch((e: unknown) => e);
    expect((err as TendError).message).toBe(
      'GET /api/admin/events answered with object, not an object with the array of entries at events; the API does not behave as its OpenAPI document says',
    );
  });
});
