import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ProviderDescription } from '../core/index.js';
import { loadIntent } from './index.js';

// The Policy document as written in intent (docs/policies.md): what it reads into, every mistake
// reported at once at its file:line:column with what to write, and admission of the intent as
// written (a violated deny rule is an error at the resource's field).

const DESCRIPTION: ProviderDescription = {
  auditFeed: false,
  warnings: [],
  types: [
    {
      name: 'buckets',
      schema: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          versioning: { type: 'boolean', default: false },
          tags: { type: 'object', additionalProperties: { type: 'string' } },
        },
        required: ['name'],
      },
      identity: 'natural-key',
      naturalKey: 'name',
      idField: 'name',
      createOnly: [],
      outputOnly: [],
      sensitive: [],
      lifecycle: 'annotations',
      idempotencyKey: false,
    },
  ],
};

const PROVIDER =
  'kind: Provider\nname: sb\ntype: openapi\nspec: ./spec.json\nendpoint: http://127.0.0.1:9/\n';

/** Lines joined into a YAML text, so that a line number is the array index + 1. */
const yaml = (...lines: string[]) => lines.join('\n') + '\n';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function load(files: Record<string, string>) {
  const dir = await mkdtemp(join(tmpdir(), 'tend-policy-'));
  dirs.push(dir);
  await writeFile(join(dir, 'spec.json'), '{}');
  await writeFile(join(dir, 'providers.yaml'), PROVIDER);
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return { dir, ...(await loadIntent(dir, { describe: () => Promise.resolve(DESCRIPTION) })) };
}

/** What a test compares of a diagnostic: code, severity, where, message and hint. */
const brief = (d: {
  code: string;
  severity: string;
  line?: number;
  column?: number;
  message: string;
  hint?: string;
}) =>
  `${d.severity} ${d.code} ${d.line}:${d.column} ${d.message}${d.hint ? ` | hint: ${d.hint}` : ''}`;

const VERSIONING = yaml(
  'kind: Policy',
  'name: buckets-keep-versioning',
  'description: buckets keep their versions',
  'severity: high',
  'actions: [deny, audit]',
  'match:',
  '  types: ["sb.*"]',
  '  names: [prod-*, logs]',
  '  labels: { env: prod }',
  'variables:',
  '  - name: v',
  '    expression: object.versioning',
  'validations:',
  '  - expression: variables.v == true',
  '    message: buckets keep versioning on',
  '    reason: Forbidden',
);

const bucket = (name: string, ...spec: string[]) =>
  yaml(
    'kind: Resource',
    'type: sb.buckets',
    `name: ${name}`,
    'labels: { env: prod }',
    'spec:',
    `  name: ${name}.example`,
    ...spec,
  );

describe('the Policy document', () => {
  it('reads into a declaration', async () => {
    const { intent, diagnostics } = await load({ 'policy.yaml': VERSIONING });
    expect(diagnostics).toEqual([]);
    expect(intent!.policies).toEqual([
      {
        kind: 'Policy',
        name: 'buckets-keep-versioning',
        description: 'buckets keep their versions',
        match: { types: ['sb.*'], names: ['prod-*', 'logs'], labels: { env: 'prod' } },
        variables: [
          {
            name: 'v',
            expression: 'object.versioning',
            source: expect.objectContaining({ line: 12 }),
          },
        ],
        validations: [
          {
            expression: 'variables.v == true',
            message: 'buckets keep versioning on',
            reason: 'Forbidden',
            source: expect.objectContaining({ line: 14, column: 17 }),
          },
        ],
        actions: ['deny', 'audit'],
        severity: 'high',
        source: expect.objectContaining({ line: 1 }),
      },
    ]);
  });

  it('defaults: severity medium, reason Invalid, every resource matched', async () => {
    const { intent } = await load({
      'p.yaml': yaml(
        'kind: Policy',
        'name: p',
        'actions: warn',
        'validations:',
        '  - expression: "true"',
      ),
    });
    expect(intent!.policies![0]).toMatchObject({
      severity: 'medium',
      match: {},
      actions: ['warn'],
    });
    expect(intent!.policies![0]!.validations[0]!.reason).toBe('Invalid');
  });

  const bad: [string, string, string[]][] = [
    [
      'every problem at once, each at its place',
      yaml(
        'kind: Policy',
        'name: Bad Name',
        'severity: urgent',
        'actions: [deny, warn]',
        'matches: {}',
        'validations:',
        '  - expression: "object.x =="',
        '    messageExpression: "object.y +"',
        '  - expresion: "true"',
      ),
      [
        'error name.invalid 2:7 Policy name `Bad Name` is invalid: use lower-case letters, digits, - and _, starting and ending with a letter or digit | hint: e.g. name: buckets-keep-versioning',
        'error policy.severity 3:11 unknown severity `urgent`; known severities: low, medium, high, critical.',
        'error policy.action 4:10 `actions` has both deny and warn: a denied change is never only warned about | hint: keep deny (and audit, to record it), or warn',
        'error field.unknown 5:1 unknown field `matches` in a Policy document; allowed fields: kind, name, description, match, variables, validations, actions, severity. Did you mean `match`? | hint: remove the field or fix its name',
      ],
    ],
  ];
  it.each(bad)('%s', async (_w, text, expected) => {
    const { intent, diagnostics } = await load({ 'p.yaml': text });
    expect(intent).toBeUndefined();
    const got = diagnostics.map(brief);
    for (const e of expected) expect(got).toContain(e);
  });

  const messages: [string, string[], string][] = [
    [
      'no actions',
      ['validations:', '  - expression: "true"'],
      'error field.required 1:1 missing required field `actions`: what a violation does | hint: actions: [deny] (or warn, audit): deny, warn, audit',
    ],
    [
      'an unknown action',
      ['actions: [deny, block]', 'validations: [{ expression: "true" }]'],
      'error policy.action 3:17 unknown action `block`; known actions: deny, warn, audit. | hint: actions: [deny] (or warn, audit): deny, warn, audit',
    ],
    [
      'an empty actions list',
      ['actions: []', 'validations: [{ expression: "true" }]'],
      'error field.type 3:10 `actions` is an empty list: a violation would do nothing | hint: actions: [deny] (or warn, audit): deny, warn, audit',
    ],
    [
      'no validations',
      ['actions: deny'],
      'error field.required 1:1 missing required field `validations`',
    ],
    [
      'empty validations',
      ['actions: deny', 'validations: []'],
      'error field.type 4:14 `validations` must be a non-empty list of rules, got an empty list | hint: validations:\n  - expression: "object.versioning == true"\n    message: buckets keep versioning on',
    ],
    [
      'a validation without an expression',
      ['actions: deny', 'validations: [{ message: m }]'],
      'error field.required 4:15 missing required field `validations[0].expression`',
    ],
    [
      'CEL that does not parse',
      ['actions: deny', 'validations: [{ expression: "object.x ==" }]'],
      'error policy.expression 4:29 `validations[0].expression` is not valid CEL: Unexpected token: EOF (at column 12) | hint: CEL reads the resource as object.<field>, e.g. object.replicas <= 10',
    ],
    [
      'a variable not declared',
      ['actions: deny', 'validations: [{ expression: "variables.nope" }]'],
      'error policy.variable_unknown 4:29 `validations[0].expression` reads `variables.nope`, which is not declared | hint: declare it under `variables:` (a variable sees only the ones above it)',
    ],
    [
      'a misspelt input',
      ['actions: deny', 'validations: [{ expression: "objet.versioning == true" }]'],
      'error policy.name_unknown 4:29 `validations[0].expression` reads `objet`, which a rule does not have: it sees object, declared, observed, resource, variables. Did you mean `object`? | hint: read the resource as object.<field>; there is no clock (now) in a rule',
    ],
    [
      'a clock, which rules do not have',
      ['actions: warn', 'validations: [{ expression: "object.expires > now" }]'],
      'error policy.name_unknown 4:29 `validations[0].expression` reads `now`, which a rule does not have: it sees object, declared, observed, resource, variables. | hint: read the resource as object.<field>; there is no clock (now) in a rule',
    ],
    [
      'a variable read before it is declared',
      [
        'actions: deny',
        'variables:',
        '  - { name: a, expression: variables.b }',
        '  - { name: b, expression: "1" }',
        'validations: [{ expression: "true" }]',
      ],
      'error policy.variable_unknown 5:28 `variables[0].expression` reads `variables.b`, which is not declared | hint: declare it under `variables:` (a variable sees only the ones above it)',
    ],
    [
      'a variable declared twice',
      [
        'actions: deny',
        'variables:',
        '  - { name: a, expression: "1" }',
        '  - { name: a, expression: "2" }',
        'validations: [{ expression: "true" }]',
      ],
      'error policy.variable_duplicate 6:13 variable `a` is declared twice | hint: give each variable its own name',
    ],
    [
      'a variable name that is not an identifier',
      [
        'actions: deny',
        'variables: [{ name: a-b, expression: "1" }]',
        'validations: [{ expression: "true" }]',
      ],
      'error policy.variable_name 4:21 variable name `a-b` is not a CEL identifier | hint: letters, digits and _, starting with a letter or _',
    ],
    [
      'an empty match list',
      ['actions: deny', 'match: { types: [] }', 'validations: [{ expression: "true" }]'],
      'error policy.match 4:17 `match.types` is an empty list, which matches nothing | hint: leave `types` out to match every resource, or list what it should match',
    ],
    [
      'a match glob that is not a string',
      ['actions: deny', 'match: { names: [3] }', 'validations: [{ expression: "true" }]'],
      'error field.type 4:18 `match.names[0]` must be a non-empty string (a glob such as sb.*), got integer',
    ],
    [
      'an unknown match field',
      ['actions: deny', 'match: { kinds: [x] }', 'validations: [{ expression: "true" }]'],
      'error field.unknown 4:10 unknown field `kinds` in `match`; allowed fields: types, names, addresses, labels. | hint: remove the field or fix its name',
    ],
    [
      'validations not a list',
      ['actions: deny', 'validations: { expression: "true" }'],
      'error field.type 4:14 `validations` must be a non-empty list of rules, got mapping | hint: validations:\n  - expression: "object.versioning == true"\n    message: buckets keep versioning on',
    ],
  ];
  it.each(messages)('%s', async (_w, lines, expected) => {
    const { diagnostics } = await load({ 'p.yaml': yaml('kind: Policy', 'name: p', ...lines) });
    expect(diagnostics.map(brief), JSON.stringify(diagnostics.map(brief))).toContain(expected);
  });

  it('a name used twice is refused at the second', async () => {
    const p = yaml(
      'kind: Policy',
      'name: p',
      'actions: deny',
      'validations: [{ expression: "true" }]',
    );
    const { diagnostics } = await load({ 'a.yaml': p, 'b.yaml': p });
    expect(diagnostics.map(brief)).toEqual([
      expect.stringMatching(
        /^error policy\.duplicate 2:7 policy `p` is already declared at .*a\.yaml:1 \| hint: give each policy a unique name$/,
      ),
    ]);
  });
});

describe('admission of the intent as written', () => {
  it('a violated deny rule is an error at the field it reads, naming the policy and where the rule is', async () => {
    const { intent, diagnostics, dir } = await load({
      'policy.yaml': VERSIONING,
      'buckets.yaml': bucket('logs', '  versioning: false'),
    });
    expect(intent).toBeUndefined();
    expect(diagnostics).toEqual([
      {
        code: 'policy.denied',
        severity: 'error',
        message:
          'policy buckets-keep-versioning (deny, audit) rule 1 violated: buckets keep versioning on',
        hint: `the rule is at ${join(dir, 'policy.yaml')}:14:17; change the resource, or the policy if the rule is wrong`,
        file: join(dir, 'buckets.yaml'),
        line: 7,
        column: 15,
        path: 'spec.versioning',
        address: 'sb.buckets/logs',
      },
    ]);
  });

  it('a field the intent does not declare is left to the plan (no verdict on the intent)', async () => {
    const { intent, diagnostics } = await load({
      'policy.yaml': VERSIONING,
      'buckets.yaml': bucket('logs'),
    });
    expect(diagnostics).toEqual([]);
    expect(intent).toBeDefined();
  });

  it('a warn rule is a warning; the intent loads', async () => {
    const { intent, diagnostics } = await load({
      'policy.yaml': VERSIONING.replace('actions: [deny, audit]', 'actions: [warn]'),
      'buckets.yaml': bucket('logs', '  versioning: false'),
    });
    expect(intent).toBeDefined();
    expect(diagnostics.map((d) => `${d.severity} ${d.code} ${d.line}`)).toEqual([
      'warning policy.warned 7',
    ]);
  });

  it('resources the policy does not match are not judged by it', async () => {
    const { diagnostics } = await load({
      'policy.yaml': VERSIONING,
      'buckets.yaml': bucket('other', '  versioning: false'),
    });
    expect(diagnostics).toEqual([]);
  });

  it('a value filled in later (a reference) is not judged on the intent', async () => {
    const { diagnostics } = await load({
      'policy.yaml': yaml(
        'kind: Policy',
        'name: p',
        'actions: deny',
        'validations: [{ expression: "object.tags.team == \'web\'" }]',
      ),
      'buckets.yaml':
        bucket('logs', '  tags: { team: "${sb.buckets/other.name}" }') + '---\n' + bucket('other'),
    });
    expect(diagnostics.filter((d) => d.code.startsWith('policy'))).toEqual([]);
  });
});
