import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PolicyDecl, PolicyVerdict } from '../src/core/index.js';
import { filledLater } from '../src/core/index.js';
import { parseDocuments } from '../src/intent/index.js';
import { readPolicyDoc } from '../src/intent/policy-doc.js';
import type { PolicyInput } from '../src/policy/index.js';
import { evaluatePolicies } from '../src/policy/index.js';
import { ROOT } from './support/cli.js';

// examples/policies (issue 28, item 6): each library file is read by the reader `tend validate`
// uses for Policy documents (parseDocuments, then readPolicyDoc: no diagnostic) and judged by
// `evaluatePolicies` on resources shaped after the examples' own (quickstart, postgres, powerdns):
// one that complies, one that violates, and the edges — so that a typo in a library file, a wrong
// field name or a wrong match fails here. test/e2e/policy-library.test.ts runs two of them through
// the built `tend validate`.

const DIR = join(ROOT, 'examples', 'policies');

/** A library file read as `tend validate` reads it; throws with every diagnostic if it has any. */
function readLibraryPolicy(file: string): PolicyDecl {
  const path = join(DIR, file);
  const parsed = parseDocuments(path, readFileSync(path, 'utf8'));
  const doc = parsed.documents[0];
  if (parsed.documents.length !== 1 || doc === undefined) {
    throw new Error(`${file}: ${parsed.documents.length} documents, not one Policy`);
  }
  const { decl, diagnostics } = readPolicyDoc(doc, doc.value as Record<string, unknown>);
  const problems = [...parsed.diagnostics, ...diagnostics];
  if (problems.length > 0 || decl === undefined) {
    const text = problems.map((d) => `${file}:${d.line}:${d.column}: ${d.message}`).join('\n');
    throw new Error(`${file} does not read as a Policy:\n${text}`);
  }
  return decl;
}

/** A resource as one of the examples declares it. */
interface Subject {
  readonly type: string;
  readonly name: string;
  readonly labels?: Record<string, string>;
  readonly spec: Record<string, unknown>;
}

/** What a resource looks like to a rule on the intent alone (as src/intent/policy-admission.ts). */
function onTheIntent(r: Subject): PolicyInput {
  return {
    subject: {
      address: `${r.type}/${r.name}`,
      type: r.type,
      name: r.name,
      labels: r.labels ?? {},
    },
    moment: 'declared',
    object: r.spec,
    unknown: new Set(Object.keys(r.spec).filter((k) => filledLater(r.spec[k]))),
    onlyDeclaredKnown: true,
    declared: r.spec,
    observed: null,
  };
}

/**
 * What it looks like on a plan that creates it (src/core/predict.ts): the declared fields over the
 * type's schema defaults, every other field unknown.
 */
function onACreate(r: Subject, defaults: Record<string, unknown>): PolicyInput {
  return { ...onTheIntent(r), moment: 'predicted', object: { ...defaults, ...r.spec } };
}

/**
 * On a plan that updates it: the observed object with the declared changes made; every field known
 * (what the platform does not hold is absent).
 */
function onAnUpdate(r: Subject, observed: Record<string, unknown>): PolicyInput {
  return {
    ...onTheIntent(r),
    moment: 'predicted',
    object: { ...observed, ...r.spec },
    unknown: new Set(),
    onlyDeclaredKnown: false,
    observed,
  };
}

/** A verdict as the table writes it: the rule (1-based, as reports say), the result, the message. */
type Expected = readonly [rule: number, result: PolicyVerdict['result'], message?: string];

interface Case {
  readonly reason: string;
  readonly input: PolicyInput;
  /** Every verdict, in order; a pass or an undecidable verdict without its message. */
  readonly want: readonly Expected[];
}

const bucket = (spec: Record<string, unknown>): Subject => ({
  type: 'sb.buckets',
  name: 'assets',
  spec: { name: 'tend-quickstart-assets', ...spec },
});
const network = (spec: Record<string, unknown>): Subject => ({
  type: 'sb.networks',
  name: 'main',
  spec: { name: 'main', cidr: '10.10.0.0/16', ...spec },
});
const service = (labels: Record<string, string>, spec: Record<string, unknown>): Subject => ({
  type: 'sb.services',
  name: 'api',
  labels,
  spec: { name: 'api', image: 'nginx:1.27', network_id: '${sb.networks/main.id}', ...spec },
});
const role = (spec: Record<string, unknown>): Subject => ({
  type: 'pg.role',
  name: 'app',
  spec: { name: 'app', ...spec },
});
const rrset = (spec: Record<string, unknown>): Subject => ({
  type: 'pdns.rrsets',
  name: 'www-a',
  spec: {
    zone_id: '${pdns.zones/example.id}',
    name: 'www.example.org.',
    type: 'A',
    records: [{ content: '192.0.2.10' }],
    ...spec,
  },
});
const PROD = { env: 'prod' };

/** Per library file: its cases. Every file in examples/policies must have an entry. */
const LIBRARY: Record<string, readonly Case[]> = {
  'buckets-keep-versioning.yaml': [
    {
      reason: 'versioning declared on',
      input: onTheIntent(bucket({ versioning: true })),
      want: [[1, 'pass']],
    },
    {
      reason: 'versioning declared off',
      input: onTheIntent(bucket({ versioning: false })),
      want: [[1, 'fail', 'bucket tend-quickstart-assets has versioning off']],
    },
    {
      reason: 'versioning left out: not known on the intent',
      input: onTheIntent(bucket({})),
      want: [[1, 'undecidable']],
    },
    {
      reason: "versioning left out: the sandbox's default (false) on a create",
      input: onACreate(bucket({}), { versioning: false }),
      want: [[1, 'fail', 'bucket tend-quickstart-assets has versioning off']],
    },
    {
      reason: 'another type is not matched',
      input: onTheIntent(network({ tags: {} })),
      want: [],
    },
  ],
  'required-tags.yaml': [
    {
      reason: 'both tags, with values',
      input: onTheIntent(network({ tags: { owner: 'platform', 'cost-center': 'cc-42' } })),
      want: [[1, 'pass']],
    },
    {
      reason: "the quickstart's network: neither tag",
      input: onTheIntent(network({ tags: { team: 'platform' } })),
      want: [[1, 'fail', 'tags lack owner, cost-center']],
    },
    {
      reason: 'an empty owner counts as missing',
      input: onTheIntent(network({ tags: { owner: '', 'cost-center': 'cc-42' } })),
      want: [[1, 'fail', 'tags lack owner']],
    },
    {
      reason: 'any sandbox type (sb.*)',
      input: onTheIntent(bucket({ versioning: true, tags: { owner: 'web' } })),
      want: [[1, 'fail', 'tags lack cost-center']],
    },
    {
      reason: 'no tags declared: not known on the intent',
      input: onTheIntent(network({})),
      want: [[1, 'undecidable']],
    },
    {
      reason: 'no tags map on the platform either: left alone',
      input: onAnUpdate(network({}), { id: 'net-1', name: 'main', cidr: '10.10.0.0/16' }),
      want: [[1, 'pass']],
    },
    {
      reason: 'a tags map on the platform, none declared: judged',
      input: onAnUpdate(network({}), { id: 'net-1', name: 'main', tags: { owner: 'x' } }),
      want: [[1, 'fail', 'tags lack cost-center']],
    },
    {
      reason: "an empty tags map on the platform (the sandbox's, when none is sent)",
      input: onAnUpdate(network({}), { id: 'net-1', name: 'main', tags: {} }),
      want: [[1, 'fail', 'tags lack owner, cost-center']],
    },
    {
      reason: 'a type outside sb.* is not matched',
      input: onTheIntent(rrset({ ttl: 300 })),
      want: [],
    },
  ],
  'prod-replica-bounds.yaml': [
    {
      reason: 'the lower bound',
      input: onTheIntent(service(PROD, { replicas: 2 })),
      want: [[1, 'pass']],
    },
    {
      reason: 'the upper bound',
      input: onTheIntent(service(PROD, { replicas: 20 })),
      want: [[1, 'pass']],
    },
    {
      reason: 'one replica in prod',
      input: onTheIntent(service(PROD, { replicas: 1 })),
      want: [[1, 'fail', 'service api runs 1 replicas; production runs 2 to 20']],
    },
    {
      reason: 'above the upper bound',
      input: onTheIntent(service(PROD, { replicas: 21 })),
      want: [[1, 'fail', 'service api runs 21 replicas; production runs 2 to 20']],
    },
    {
      reason: "replicas left out: the sandbox's default (1) on a create",
      input: onACreate(service(PROD, {}), { size: 'small', replicas: 1 }),
      want: [[1, 'fail', 'service api runs 1 replicas; production runs 2 to 20']],
    },
    {
      reason: 'an autoscaler left 30 on the platform',
      input: onAnUpdate(service(PROD, {}), { id: 's-1', name: 'api', replicas: 30 }),
      want: [[1, 'fail', 'service api runs 30 replicas; production runs 2 to 20']],
    },
    {
      reason: 'not labelled prod: not matched',
      input: onTheIntent(service({ env: 'staging' }, { replicas: 1 })),
      want: [],
    },
    {
      reason: 'no labels: not matched',
      input: onTheIntent(service({}, { replicas: 1 })),
      want: [],
    },
  ],
  'pg-roles-least-privilege.yaml': [
    {
      reason: 'a login role, no superuser, a limit',
      input: onTheIntent(role({ login: true, superuser: false, connection_limit: 20 })),
      want: [
        [1, 'pass'],
        [2, 'pass'],
        [3, 'pass'],
      ],
    },
    {
      reason: 'a superuser',
      input: onTheIntent(role({ login: true, superuser: true, connection_limit: 20 })),
      want: [
        [1, 'fail', 'roles are not superusers'],
        [2, 'pass'],
        [3, 'pass'],
      ],
    },
    {
      reason: 'a login role without a connection limit',
      input: onTheIntent(role({ login: true, superuser: false })),
      want: [
        [1, 'pass'],
        [
          2,
          'fail',
          "a login role declares connection_limit (PostgreSQL's default, -1, is no limit)",
        ],
        [3, 'undecidable'],
      ],
    },
    {
      reason: 'connection_limit -1',
      input: onTheIntent(role({ login: true, connection_limit: -1 })),
      want: [
        [1, 'undecidable'],
        [2, 'pass'],
        [3, 'fail', 'connection_limit -1 is no limit; give the role a number of connections'],
      ],
    },
    {
      reason: "examples/postgres's group role: no login, no limit needed",
      input: onTheIntent(role({ login: false })),
      want: [
        [1, 'undecidable'],
        [2, 'pass'],
        [3, 'undecidable'],
      ],
    },
    {
      reason: 'made superuser on the platform, kept by an update',
      input: onAnUpdate(role({ login: true, connection_limit: 20 }), {
        name: 'app',
        login: true,
        superuser: true,
        connection_limit: 20,
      }),
      want: [
        [1, 'fail', 'roles are not superusers'],
        [2, 'pass'],
        [3, 'pass'],
      ],
    },
  ],
  'pg-login-roles-expire.yaml': [
    {
      reason: 'a login role with a date',
      input: onTheIntent(role({ login: true, valid_until: '2027-06-30T00:00:00Z' })),
      want: [[1, 'pass']],
    },
    {
      reason: 'a login role without one',
      input: onTheIntent(role({ login: true })),
      want: [
        [
          1,
          'fail',
          'a login role declares valid_until, a date (left out or `infinity`, it never expires)',
        ],
      ],
    },
    {
      reason: 'a login role valid until infinity',
      input: onTheIntent(role({ login: true, valid_until: 'infinity' })),
      want: [
        [
          1,
          'fail',
          'a login role declares valid_until, a date (left out or `infinity`, it never expires)',
        ],
      ],
    },
    {
      reason: 'a group role',
      input: onTheIntent(role({ login: false })),
      want: [[1, 'pass']],
    },
  ],
  'dns-ttl-bounds.yaml': [
    {
      reason: "examples/powerdns's TTL",
      input: onTheIntent(rrset({ ttl: 300 })),
      want: [[1, 'pass']],
    },
    { reason: 'the lower bound', input: onTheIntent(rrset({ ttl: 60 })), want: [[1, 'pass']] },
    { reason: 'the upper bound', input: onTheIntent(rrset({ ttl: 86400 })), want: [[1, 'pass']] },
    {
      reason: 'below',
      input: onTheIntent(rrset({ ttl: 30 })),
      want: [[1, 'fail', 'TTL 30 of www.example.org. A is outside 60..86400 seconds']],
    },
    {
      reason: 'above',
      input: onTheIntent(rrset({ ttl: 86401 })),
      want: [[1, 'fail', 'TTL 86401 of www.example.org. A is outside 60..86400 seconds']],
    },
    {
      reason: 'a zone is not matched',
      input: onTheIntent({ type: 'pdns.zones', name: 'example', spec: { name: 'example.org.' } }),
      want: [],
    },
  ],
};

const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .sort();

describe('examples/policies', () => {
  it('every library file has cases here, and every case a file', () => {
    expect(FILES).toEqual(Object.keys(LIBRARY).sort());
  });

  it.each(FILES)(
    '%s: a comment header (what, which types, how to adapt); named after its file',
    (file) => {
      const text = readFileSync(join(DIR, file), 'utf8');
      const header = text.slice(0, text.indexOf('\nkind: Policy'));
      expect(header.split('\n').every((l) => l.startsWith('#'))).toBe(true);
      for (const part of ['Enforces:', 'Matches:', 'Adapt:']) expect(header).toContain(part);
      expect(readLibraryPolicy(file).name).toBe(file.replace(/\.yaml$/, ''));
    },
  );

  it('the README lists every file', () => {
    const readme = readFileSync(join(DIR, 'README.md'), 'utf8');
    for (const file of FILES) expect(readme).toContain(`(${file})`);
  });

  describe.each(Object.entries(LIBRARY))('%s', (file, cases) => {
    const policy = readLibraryPolicy(file);
    it.each(cases)('$reason', ({ input, want }) => {
      const got = evaluatePolicies([policy], input).map((v) =>
        v.result === 'fail' || v.result === 'error'
          ? [v.rule + 1, v.result, v.message]
          : [v.rule + 1, v.result],
      );
      expect(got).toEqual(want);
    });
  });
});
