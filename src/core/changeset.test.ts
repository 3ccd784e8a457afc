/* eslint-disable @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return -- the hostile-input table edits parsed JSON (typed any) freely */
import { describe, expect, it } from 'vitest';
import type { Address } from './address.js';
import type { Changeset, Pin } from './changeset.js';
import {
  CHANGESET_FORMAT,
  comparePin,
  intentHash,
  parseChangeset,
  pinOf,
  serializeChangeset,
  toChangeset,
  touchedAddresses,
} from './changeset.js';
import { formatDiagnostic } from './diagnostic.js';
import type { Intent } from './intent.js';
import type { Plan, PlanStep } from './plan.js';
import { assemblePlan } from './plan.js';

const NET = 'sb.networks/main' as Address;
const WEB = 'sb.instances/web' as Address;
const DATA = 'sb.volumes/data' as Address;
const ASSETS = 'sb.buckets/assets' as Address;
const SPARE = 'sb.networks/spare' as Address;
const OLD = 'sb.buckets/old' as Address;

const steps: PlanStep[] = [
  { kind: 'noop', address: NET, type: 'sb.networks', dependsOn: [], objectId: 'net-1' },
  { kind: 'noop', address: SPARE, type: 'sb.networks', dependsOn: [], objectId: 'net-2' },
  {
    kind: 'create',
    address: WEB,
    type: 'sb.instances',
    dependsOn: [NET],
    desired: { name: 'web', network_id: 'net-1', image: 'debian-12' },
  },
  {
    kind: 'create',
    address: DATA,
    type: 'sb.volumes',
    dependsOn: [WEB],
    desired: { name: 'data', instance_id: { $unknown: '${sb.instances/web.id}' }, size: 10 },
  },
  {
    kind: 'update',
    address: ASSETS,
    type: 'sb.buckets',
    dependsOn: [],
    objectId: 'assets',
    changes: [{ path: 'versioning', before: false, after: true }],
  },
];
const PLAN: Plan = assemblePlan(
  steps,
  [{ address: OLD, type: 'sb.buckets', objectId: 'old', stateful: true, dependsOn: [] }],
  false,
);

const PINS: Pin[] = [
  pinOf({ address: WEB, type: 'sb.instances' }),
  pinOf({ address: DATA, type: 'sb.volumes' }),
  pinOf({
    address: NET,
    type: 'sb.networks',
    object: { id: 'net-1' },
    fields: { name: 'main', id: 'net-1' },
  }),
  pinOf({
    address: ASSETS,
    type: 'sb.buckets',
    object: { id: 'assets', version: '7' },
    fields: { versioning: false },
  }),
  pinOf({ address: OLD, type: 'sb.buckets', object: { id: 'old' }, fields: { name: 'old' } }),
];

const changeset = (): Changeset =>
  toChangeset({
    workspace: 'prod',
    intentDir: 'infra',
    intentHash: 'a'.repeat(64),
    options: { approveDestroy: false, prune: true, targets: [] },
    plan: PLAN,
    pins: PINS,
    createdAt: new Date('2026-11-25T01:00:00Z'),
  });

describe('touchedAddresses', () => {
  it('is every step but noops, plus what creates, updates and replaces read', () => {
    // spare is a noop nothing reads; main is a noop the web create reads; old is deleted.
    expect(touchedAddresses(PLAN)).toEqual([ASSETS, OLD, WEB, NET, DATA]);
  });
});

describe('intentHash', () => {
  const provider = (dir: string) => ({
    kind: 'Provider' as const,
    name: 'sb',
    type: 'openapi' as const,
    spec: `${dir}/specs/sb.json`,
    overlay: 'https://example.org/overlay.yaml',
    endpoint: 'http://127.0.0.1:7781',
    concurrency: 8,
    rateLimit: 0,
    timeoutMs: 10000,
    maxResponseBytes: 16 * 1024 * 1024,
    source: { file: `${dir}/provider.yaml`, line: 1, column: 1 },
  });
  const intent: Intent = {
    dir: '/a',
    contentHash: 'sha256:a',
    providers: [provider('/a')],
    resources: [
      {
        kind: 'Resource',
        address: NET,
        type: 'sb.networks',
        provider: 'sb',
        resourceType: 'networks',
        name: 'main',
        spec: { name: 'main', source: 'kept: a field named source is content' },
        lifecycle: { stateful: false },
        checks: [
          { kind: 'cel', name: 'c', expr: 'true', source: { file: 'a.yaml', line: 9, column: 1 } },
        ],
        dependsOn: [],
        source: { file: 'a.yaml', line: 3, column: 1 },
      },
    ],
  };
  const r = intent.resources[0]!;
  const cases: { name: string; reason: string; other: Intent; same: boolean }[] = [
    {
      name: 'moved documents',
      reason: 'where a document was written (dir, file, line) is not its content',
      other: {
        ...intent,
        dir: '/b',
        providers: [provider('/b')],
        resources: [
          {
            ...r,
            source: { file: 'b.yaml', line: 30, column: 2 },
            checks: [{ ...r.checks[0]!, source: { file: 'b.yaml', line: 1, column: 1 } }],
          },
        ],
      },
      same: true,
    },
    {
      name: 'another document',
      reason: 'a spec outside the intent directory is named as it is',
      other: { ...intent, providers: [{ ...provider('/a'), spec: '/elsewhere/sb.json' }] },
      same: false,
    },
    {
      name: 'a changed field',
      reason: 'a declared value is content',
      other: { ...intent, resources: [{ ...r, spec: { ...r.spec, name: 'other' } }] },
      same: false,
    },
    {
      name: 'a spec field named source',
      reason: 'only the location members are left out, not fields that happen to be called source',
      other: { ...intent, resources: [{ ...r, spec: { name: 'main', source: 'changed' } }] },
      same: false,
    },
    {
      name: 'labels',
      reason: 'labels steer arbitration, not the plan: a saved changeset stays valid',
      other: { ...intent, resources: [{ ...r, labels: { tier: 'web' } }] },
      same: true,
    },
    {
      name: 'stateful',
      reason: 'lifecycle settings change what a plan may do',
      other: { ...intent, resources: [{ ...r, lifecycle: { stateful: true } }] },
      same: false,
    },
  ];
  it.each(cases)('$name: $reason', ({ other, same }) => {
    expect(intentHash(other) === intentHash(intent)).toBe(same);
    expect(intentHash(intent)).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('comparePin', () => {
  const present = (over: Partial<{ id: string; version: string; fields: object }> = {}): Pin =>
    pinOf({
      address: NET,
      type: 'sb.networks',
      object: {
        id: over.id ?? 'net-1',
        ...(over.version !== undefined ? { version: over.version } : {}),
      },
      fields: (over.fields ?? { cidr: '10.0.0.0/16', 'tags.team': 'core' }) as Record<
        string,
        unknown
      >,
    });
  const absent = pinOf({ address: NET, type: 'sb.networks' });
  const cases: {
    name: string;
    reason: string;
    pinned: Pin;
    now: Pin;
    want: { kind: string; fields: string[] } | undefined;
    message?: string;
  }[] = [
    {
      name: 'still absent',
      reason: 'nothing appeared',
      pinned: absent,
      now: absent,
      want: undefined,
    },
    {
      name: 'appeared',
      reason: 'an object at an address the plan creates is a change',
      pinned: absent,
      now: present(),
      want: { kind: 'appeared', fields: [] },
      message: 'sb.networks/main: an object (net-1) exists there now; the plan was to create it',
    },
    {
      name: 'deleted',
      reason: 'the object the plan acts on is gone',
      pinned: present(),
      now: absent,
      want: { kind: 'deleted', fields: [] },
      message: 'sb.networks/main: the object net-1 was deleted since the plan was made',
    },
    {
      name: 'same fields',
      reason: 'no version on either side: equal hashes mean unchanged',
      pinned: present(),
      now: present(),
      want: undefined,
    },
    {
      name: 'a moved field',
      reason: 'the hashes tell which field moved',
      pinned: present(),
      now: present({ fields: { cidr: '10.0.0.0/16', 'tags.team': 'edge' } }),
      want: { kind: 'changed', fields: ['tags.team'] },
      message: 'sb.networks/main: changed since the plan was made: tags.team',
    },
    {
      name: 'another object',
      reason: 'the address holds an object with another id (deleted and recreated)',
      pinned: present(),
      now: present({ id: 'net-9' }),
      want: { kind: 'changed', fields: [] },
      message: 'sb.networks/main: is another object now (net-9, was net-1)',
    },
    {
      name: 'same version, other hashes',
      reason: 'the platform version decides when both sides have one',
      pinned: present({ version: '3' }),
      now: present({ version: '3', fields: { cidr: 'x' } }),
      want: undefined,
    },
    {
      name: 'new version, same fields',
      reason: 'the platform says the object changed, even where Tend compares nothing',
      pinned: present({ version: '3' }),
      now: present({ version: '4' }),
      want: { kind: 'changed', fields: [] },
      message: 'sb.networks/main: changed since the plan was made (version 3 → 4)',
    },
    {
      name: 'version on one side only',
      reason: 'a list without versions after a read with one: the hashes decide',
      pinned: present({ version: '3' }),
      now: present(),
      want: undefined,
    },
  ];
  it.each(cases)('$name: $reason', ({ pinned, now, want, message }) => {
    const got = comparePin(pinned, now);
    expect(got && { kind: got.kind, fields: got.fields }).toEqual(want);
    if (message !== undefined) expect(got?.message).toBe(message);
  });
});

describe('toChangeset and serializeChangeset', () => {
  it('is frozen data that survives the file, Unknown placeholders included', () => {
    const c = changeset();
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.plan.steps[0])).toBe(true);
    expect(c.format).toBe(CHANGESET_FORMAT);
    expect(c.createdAt).toBe('2026-11-25T01:00:00.000Z');
    expect(c.pins.map((p) => p.address)).toEqual([...c.pins.map((p) => p.address)].sort());
    const text = serializeChangeset(c);
    expect(text.endsWith('}\n')).toBe(true);
    expect(text.indexOf('"createdAt"')).toBeLessThan(text.indexOf('"format"'));
    const back = parseChangeset(text, 'p.json');
    expect(back).toEqual({ kind: 'ok', changeset: c });
    expect(serializeChangeset((back as { changeset: Changeset }).changeset)).toBe(text);
  });

  it('keeps the gate of a delete that waits for a stateful parent removed with it', () => {
    // A zone (stateful) and one of its rrsets both removed: the rrset's delete is gated by the zone.
    const ZONE = 'dns.zones/example' as Address;
    const RRSET = 'dns.rrsets/www' as Address;
    const plan = assemblePlan(
      [],
      [
        { address: ZONE, type: 'dns.zones', objectId: 'example.', stateful: true, dependsOn: [] },
        {
          address: RRSET,
          type: 'dns.rrsets',
          objectId: 'www/A',
          stateful: false,
          dependsOn: [ZONE],
        },
      ],
      false,
    );
    const rrset = plan.steps.find((s) => s.address === RRSET);
    expect(rrset).toMatchObject({ kind: 'delete', gated: true, gatedBy: ZONE });
    const c = toChangeset({
      workspace: 'prod',
      intentDir: 'infra',
      intentHash: 'a'.repeat(64),
      options: { approveDestroy: false, prune: true, targets: [] },
      plan,
      pins: [
        pinOf({ address: ZONE, type: 'dns.zones', object: { id: 'example.' }, fields: {} }),
        pinOf({ address: RRSET, type: 'dns.rrsets', object: { id: 'www/A' }, fields: {} }),
      ],
      createdAt: '2026-11-25T01:00:00Z',
    });
    const text = serializeChangeset(c);
    expect(parseChangeset(text, 'p.json')).toEqual({ kind: 'ok', changeset: c });
  });

  it('refuses pins that do not cover what the plan touches (a caller bug)', () => {
    expect(() =>
      toChangeset({
        workspace: 'prod',
        intentDir: 'infra',
        intentHash: 'a'.repeat(64),
        options: { approveDestroy: false, prune: true, targets: [] },
        plan: PLAN,
        pins: PINS.filter((p) => p.address !== NET),
        createdAt: '2026-11-25T01:00:00Z',
      }),
    ).toThrow('$.pins: sb.networks/main is touched by the plan but not pinned');
  });
});

// --- hostile input ------------------------------------------------------------------------------

// The table below edits parsed JSON freely, as a person editing the file would.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
type Json = Record<string, any>;
const valid = (): Json => JSON.parse(serializeChangeset(changeset()));
const stepOf = (doc: Json, address: string): Json =>
  doc['plan'].steps.find((s: Json) => s['address'] === address);
const pinAt = (doc: Json, address: string): Json =>
  doc['pins'].find((p: Json) => p['address'] === address);
const indexOfStep = (address: string) =>
  (valid()['plan'].steps as Json[]).findIndex((s) => s['address'] === address);
const indexOfPin = (address: string) =>
  (valid()['pins'] as Json[]).findIndex((p) => p['address'] === address);

const MALFORMED: {
  name: string;
  reason: string;
  text: string | ((doc: Json) => void);
  want: string[];
}[] = [
  {
    name: 'empty file',
    reason: 'an empty file is not JSON',
    text: '',
    want: ['p.json: $: is not JSON (Unexpected end of JSON input)'],
  },
  {
    name: 'not JSON',
    reason: 'a YAML or truncated file',
    text: '{"format": "tend.changeset/1",',
    want: [expect.stringMatching(/^p\.json: \$: is not JSON \(/)],
  },
  {
    name: 'an array',
    reason: 'the top level is an object',
    text: '[]',
    want: ['p.json: $: must be an object, not an array'],
  },
  {
    name: 'no format',
    reason: 'a JSON file that is not a changeset says so, not a list of missing members',
    text: '{"steps": []}',
    want: [
      'p.json: $.format: is missing: this is not a Tend changeset (expected format "tend.changeset/1")',
    ],
  },
  {
    name: 'a newer format',
    reason: 'a changeset from another Tend version is named as such',
    text: (d) => (d['format'] = 'tend.changeset/2'),
    want: [
      'p.json: $.format: is "tend.changeset/2", a changeset format this Tend does not read (it reads "tend.changeset/1")',
    ],
  },
  {
    name: 'a format of the wrong type',
    reason: 'only the format string identifies a changeset',
    text: (d) => (d['format'] = 1),
    want: [
      'p.json: $.format: is number 1: this is not a Tend changeset (expected "tend.changeset/1")',
    ],
  },
  {
    name: '__proto__ at the top',
    reason: 'a key that could reach a prototype when copied is refused wherever it is',
    text: '{"__proto__": {"polluted": true}, "format": "tend.changeset/1"}',
    want: ['p.json: $.__proto__: the key "__proto__" is refused'],
  },
  {
    name: 'constructor inside a desired value',
    reason: 'refused in free-form values too',
    text: (d) => (stepOf(d, WEB)['desired'].tags = { constructor: 'x' }),
    want: [
      `p.json: $.plan.steps[${indexOfStep(WEB)}].desired.tags.constructor: the key "constructor" is refused`,
    ],
  },
  {
    name: 'prototype as a pinned field',
    reason: 'pins are keyed by field path; this one is refused',
    text: (d) => (pinAt(d, NET)['fields'].prototype = '0123456789abcdef'),
    want: [`p.json: $.pins[${indexOfPin(NET)}].fields.prototype: the key "prototype" is refused`],
  },
  {
    name: 'missing workspace',
    reason: 'a changeset without its workspace cannot be checked against one',
    text: (d) => delete d['workspace'],
    want: ['p.json: $.workspace: is missing'],
  },
  {
    name: 'workspace of the wrong type',
    reason: 'types are checked member by member',
    text: (d) => (d['workspace'] = ['prod']),
    want: ['p.json: $.workspace: must be a non-empty string, not an array'],
  },
  {
    name: 'an unknown member',
    reason: 'a misspelt or invented member is not silently ignored',
    text: (d) => (d['aprove'] = true),
    want: [
      'p.json: $.aprove: is not a member this format knows (expected format, workspace, intent, policyVerdicts, options, createdAt, plan, pins)',
    ],
  },
  {
    name: 'intent hash not a SHA-256',
    reason: 'the hash apply compares must have the right shape',
    text: (d) => (d['intent'].hash = 'abc'),
    want: ['p.json: $.intent.hash: must be 64 lower-case hex digits (a SHA-256)'],
  },
  {
    name: 'policies hash not a SHA-256',
    reason: 'the policies hash apply compares must have the right shape too',
    text: (d) => (d['intent'].policies = 'xyz'),
    want: ['p.json: $.intent.policies: must be 64 lower-case hex digits (a SHA-256)'],
  },
  {
    name: 'policy verdicts not strings',
    reason: 'what a saved plan recorded is words, one per verdict',
    text: (d) => (d['policyVerdicts'] = ['ok', 7]),
    want: ['p.json: $.policyVerdicts[1]: must be a string, not number 7'],
  },
  {
    name: 'approveDestroy as a string',
    reason: '"false" is not false',
    text: (d) => (d['options'].approveDestroy = 'false'),
    want: ['p.json: $.options.approveDestroy: must be true or false, not string "false"'],
  },
  {
    name: 'a target that is not an address',
    reason: 'targets must be provider.type/name',
    text: (d) => (d['options'].targets = ['main']),
    want: ['p.json: $.options.targets[0]: "main" is not an address (provider.type/name)'],
  },
  {
    name: 'createdAt not a date',
    reason: 'a creation time must be a time',
    text: (d) => (d['createdAt'] = 'yesterday'),
    want: ['p.json: $.createdAt: "yesterday" is not a date and time'],
  },
  {
    name: 'a very long value',
    reason: 'values are quoted cut short: a file cannot flood the terminal',
    text: (d) => (d['createdAt'] = 'z'.repeat(10000)),
    want: [`p.json: $.createdAt: "${'z'.repeat(76)}... is not a date and time`],
  },
  {
    name: 'a very long string where an address goes',
    reason: 'the message quotes the first 77 characters',
    text: (d) => (d['options'].targets = ['y'.repeat(500)]),
    want: [
      `p.json: $.options.targets[0]: "${'y'.repeat(76)}... is not an address (provider.type/name)`,
    ],
  },
  {
    name: 'an unknown step kind',
    reason: 'only the known step kinds exist',
    text: (d) => (stepOf(d, ASSETS)['kind'] = 'drop'),
    want: [
      `p.json: $.plan.steps[${indexOfStep(ASSETS)}].kind: must be one of create, update, replace, delete, move, adopt, conflict, noop, not string "drop"`,
    ],
  },
  {
    name: 'a step without an address',
    reason: 'every step names its resource',
    text: (d) => delete stepOf(d, ASSETS)['address'],
    want: [`p.json: $.plan.steps[${indexOfStep(ASSETS)}].address: is missing`],
  },
  {
    name: 'a step type that is not its address type',
    reason: 'a step cannot act on one type under another type address',
    text: (d) => (stepOf(d, ASSETS)['type'] = 'sb.networks'),
    want: [
      `p.json: $.plan.steps[${indexOfStep(ASSETS)}].type: "sb.networks" is not the type of sb.buckets/assets`,
    ],
  },
  {
    name: 'changes not a list',
    reason: 'an update carries its field changes',
    text: (d) => (stepOf(d, ASSETS)['changes'] = { versioning: true }),
    want: [`p.json: $.plan.steps[${indexOfStep(ASSETS)}].changes: must be an array, not an object`],
  },
  {
    name: 'a delete whose gate was removed',
    reason: 'the gated list and the steps must agree (a hand edit cannot ungate a stateful delete)',
    text: (d) => (stepOf(d, OLD)['gated'] = false),
    want: ['p.json: $.plan.gated: must list exactly the gated steps (none)'],
  },
  {
    name: 'counts that disagree',
    reason: 'counts are shown to people: they must be the steps counted',
    text: (d) => (d['plan'].counts.create = 0),
    want: ['p.json: $.plan.counts.create: is 0, but the plan has 2 create steps'],
  },
  {
    name: 'two steps for one address',
    reason: 'one resource has one step',
    text: (d) => {
      d['plan'].steps.push({ ...stepOf(d, SPARE) });
      d['plan'].counts.noop = 3;
    },
    want: [
      `p.json: $.plan.steps[${PLAN.steps.length}].address: sb.networks/spare has more than one step`,
    ],
  },
  {
    name: 'a touched resource not pinned',
    reason: 'dropping a pin would let a moved object through',
    text: (d) => (d['pins'] = d['pins'].filter((p: Json) => p['address'] !== NET)),
    want: ['p.json: $.pins: sb.networks/main is touched by the plan but not pinned'],
  },
  {
    name: 'a pin of an untouched resource',
    reason: 'pins are exactly what the plan touches',
    text: (d) =>
      d['pins'].push({ kind: 'absent', address: 'sb.networks/spare', type: 'sb.networks' }),
    want: [
      `p.json: $.pins[${PINS.length}]: sb.networks/spare is pinned but the plan does not touch it`,
    ],
  },
  {
    name: 'a create over a present pin',
    reason: 'a create was planned because nothing existed',
    text: (d) => {
      const i = d['pins'].findIndex((p: Json) => p['address'] === WEB);
      d['pins'][i] = {
        kind: 'present',
        address: WEB,
        type: 'sb.instances',
        objectId: 'i-1',
        fields: {},
      };
    },
    want: [
      `p.json: $.plan.steps[${indexOfStep(WEB)}]: creates sb.instances/web, but its pin says an object existed`,
    ],
  },
  {
    name: 'a step on another object than its pin',
    reason: 'an update must act on the object that was pinned',
    text: (d) => (stepOf(d, ASSETS)['objectId'] = 'someone-elses'),
    want: [
      `p.json: $.plan.steps[${indexOfStep(ASSETS)}].objectId: acts on "someone-elses", but the pin of sb.buckets/assets is "assets"`,
    ],
  },
  {
    name: 'a pin kind that does not exist',
    reason: 'pins are absent or present',
    text: (d) => (pinAt(d, NET)['kind'] = 'maybe'),
    want: [
      `p.json: $.pins[${indexOfPin(NET)}].kind: must be absent or present, not string "maybe"`,
    ],
  },
  {
    name: 'a field hash of the wrong shape',
    reason: 'hashes are 16 hex digits',
    text: (d) => (pinAt(d, NET)['fields'].name = 42),
    want: [
      `p.json: $.pins[${indexOfPin(NET)}].fields.name: must be a field hash (16 hex digits), not number 42`,
    ],
  },
  {
    name: 'pins not a list',
    reason: 'the pins are an array',
    text: (d) => (d['pins'] = {}),
    want: ['p.json: $.pins: must be an array, not an object'],
  },
  {
    name: 'nesting too deep',
    reason: 'a file cannot make the checks overflow the stack',
    text: (d) => {
      let v: Json = {};
      const top = v;
      for (let i = 0; i < 100; i++) v = v['a'] = {};
      stepOf(d, WEB)['desired'].deep = top;
    },
    want: [
      expect.stringMatching(
        /^p\.json: \$\.plan\.steps\[\d+\]\.desired\.deep(\.a)+: is nested deeper than 64 levels$/,
      ),
    ],
  },
];

describe('parseChangeset: hostile input', () => {
  it.each(MALFORMED)('$name: $reason', ({ text, want }) => {
    let input: string;
    if (typeof text === 'string') input = text;
    else {
      const doc = valid();
      text(doc);
      input = JSON.stringify(doc);
    }
    const got = parseChangeset(input, 'p.json');
    expect(got.kind).toBe('invalid');
    const diagnostics = got.kind === 'invalid' ? got.diagnostics : [];
    expect(diagnostics.map((d) => d.message)).toEqual(want);
    for (const d of diagnostics) {
      expect(d.file).toBe('p.json');
      expect(d.path).toMatch(/^\$/);
      expect(formatDiagnostic(d)).toContain(`p.json`);
    }
  });

  it('never pollutes a prototype', () => {
    parseChangeset('{"__proto__": {"polluted": true}}', 'p.json');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('reports at most 20 shape problems, for 200,000 refused keys too', () => {
    const text = `{"steps": [${Array<string>(200_000).fill('{"__proto__": 1}').join(',')}]}`;
    const parsed = parseChangeset(text, 'p.json');
    expect(parsed.kind).toBe('invalid');
    if (parsed.kind !== 'invalid') return;
    expect(parsed.diagnostics).toHaveLength(20);
    expect(parsed.diagnostics[0]!.message).toBe(
      'p.json: $.steps[0].__proto__: the key "__proto__" is refused',
    );
  });

  // A property test in the spirit of fast-check (not installed): thousands of seeded mutations of a
  // valid changeset. The property: parsing never throws, and every answer is a changeset or
  // diagnostics that name the file and a JSON path. With fast-check, replace `mutations` by
  // `fc.assert(fc.property(fc.jsonValue(), fc.integer(), (v, i) => ...))` over the same body.
  it('never throws on thousands of mutated changesets', () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const values: unknown[] = [null, 0, -1, 1.5, '', 'x', true, [], {}, [null], { kind: 'noop' }];
    const keys = ['__proto__', 'constructor', 'prototype', 'kind', 'x', ''];
    const containers = (v: unknown, out: Json[] = []): Json[] => {
      if (v !== null && typeof v === 'object') {
        out.push(v);
        for (const c of Object.values(v)) containers(c, out);
      }
      return out;
    };
    let ok = 0;
    for (let n = 0; n < 3000; n++) {
      const doc = valid();
      for (let m = 0; m < 1 + Math.floor(random() * 3); m++) {
        const target = pick(containers(doc));
        const members = Object.keys(target);
        const op = random();
        if (op < 0.35 && members.length > 0) delete target[pick(members)];
        // A fresh copy each time: a shared value assigned twice would let a later mutation make a cycle.
        else if (op < 0.75 && members.length > 0)
          target[pick(members)] = structuredClone(pick(values));
        else target[pick(keys)] = structuredClone(pick(values));
      }
      const text = random() < 0.05 ? JSON.stringify(doc).slice(0, -3) : JSON.stringify(doc);
      const got = parseChangeset(text, 'p.json');
      if (got.kind === 'ok') ok++;
      else {
        expect(got.diagnostics.length).toBeGreaterThan(0);
        for (const d of got.diagnostics) {
          expect(d.message.startsWith('p.json: $')).toBe(true);
        }
      }
    }
    // Some mutations are harmless (a free-form value replaced by another); most are not.
    expect(ok).toBeLessThan(3000);
  });
});
