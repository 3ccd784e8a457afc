import { describe, expect, it } from 'vitest';
import type { PolicyDecl, PolicyVerdict } from '../core/index.js';
import { compileExpression } from './compile.js';
import type { PolicyInput } from './evaluate.js';
import { evaluatePolicies } from './evaluate.js';

const at = { file: 'policies.yaml', line: 1, column: 1 };

function policy(
  validations: { expression: string; message?: string; messageExpression?: string }[],
  extra: Partial<PolicyDecl> = {},
): PolicyDecl {
  return {
    kind: 'Policy',
    name: 'p',
    match: {},
    variables: [],
    validations: validations.map((v) => ({ reason: 'Invalid', source: at, ...v })),
    actions: ['deny'],
    severity: 'high',
    source: at,
    ...extra,
  };
}

function input(object: Record<string, unknown>, more: Partial<PolicyInput> = {}): PolicyInput {
  return {
    subject: {
      address: 'sb.buckets/logs',
      type: 'sb.buckets',
      name: 'logs',
      labels: { env: 'prod' },
    },
    moment: 'predicted',
    object,
    declared: object,
    observed: null,
    ...more,
  };
}

const one = (p: PolicyDecl, i: PolicyInput): PolicyVerdict => {
  const all = evaluatePolicies([p], i);
  expect(all).toHaveLength(p.validations.length);
  return all[0]!;
};

describe('evaluatePolicies: one rule on one resource', () => {
  const cases: [
    string,
    string,
    Record<string, unknown>,
    Partial<PolicyInput>,
    PolicyVerdict['result'],
    string,
  ][] = [
    [
      'true passes',
      'object.versioning == true',
      { versioning: true },
      {},
      'pass',
      '`object.versioning == true` is true',
    ],
    [
      'false fails with the message',
      'object.versioning == true',
      { versioning: false },
      {},
      'fail',
      'keep versioning',
    ],
    [
      'integers are CEL ints',
      'object.replicas + 1 <= 5',
      { replicas: 3 },
      {},
      'pass',
      '`object.replicas + 1 <= 5` is true',
    ],
    [
      'a non-integer is a double',
      'object.ratio < 0.5',
      { ratio: 0.25 },
      {},
      'pass',
      '`object.ratio < 0.5` is true',
    ],
    [
      'maps and in',
      "'team' in object.tags",
      { tags: { team: 'a' } },
      {},
      'pass',
      "`'team' in object.tags` is true",
    ],
    [
      'a list macro',
      'object.ports.all(p, p > 1024)',
      { ports: [8080, 22] },
      {},
      'fail',
      'keep versioning',
    ],
    [
      'the resource is there too',
      "resource.labels.env == 'prod' && resource.name == 'logs'",
      {},
      {},
      'pass',
      "`resource.labels.env == 'prod' && resource.name == 'logs'` is true",
    ],
    [
      'a missing key is an error, not a pass',
      'object.versioning == true',
      {},
      {},
      'error',
      '`object.versioning == true` failed: No such key: versioning (at column 8)',
    ],
    [
      'a non-boolean is an error',
      'object.replicas',
      { replicas: 3 },
      {},
      'error',
      '`object.replicas` returned 3, not a boolean',
    ],
    [
      'an unknown field read is undecidable, never passed',
      'object.versioning == true',
      { name: 'x' },
      { unknown: new Set(['versioning']) },
      'undecidable',
      'reads `versioning`, known only after apply: decided when the platform answers',
    ],
    [
      'even through has()',
      'has(object.versioning)',
      {},
      { unknown: new Set(['versioning']) },
      'undecidable',
      'reads `versioning`, known only after apply: decided when the platform answers',
    ],
    [
      'on the intent alone, an undeclared field is not known',
      'object.versioning == true',
      { name: 'x' },
      { moment: 'declared', onlyDeclaredKnown: true },
      'undecidable',
      "reads `versioning`, which the intent does not declare: decided on the plan's predicted result",
    ],
    [
      'on the intent alone, a declared field decides',
      'object.versioning == true',
      { versioning: false },
      { moment: 'declared', onlyDeclaredKnown: true },
      'fail',
      'keep versioning',
    ],
    [
      'the whole object read while a field is unknown',
      'size(object) > 0',
      { a: 1 },
      { unknown: new Set(['b']) },
      'undecidable',
      'reads the whole object, known only after apply: decided when the platform answers',
    ],
    [
      'the whole object read with every field known decides',
      'size(object) == 1',
      { a: 1 },
      {},
      'pass',
      '`size(object) == 1` is true',
    ],
    [
      'the whole object read with an empty set of unknown fields decides',
      'size(object) == 1',
      { a: 1 },
      { unknown: new Set() },
      'pass',
      '`size(object) == 1` is true',
    ],
    [
      'every unknown field read is named',
      'object.a == object.b',
      {},
      { unknown: new Set(['a', 'b']) },
      'undecidable',
      'reads `a`, `b`, known only after apply: decided when the platform answers',
    ],
    [
      'a null field is null',
      'object.a == null',
      { a: null },
      {},
      'pass',
      '`object.a == null` is true',
    ],
    [
      'a string that is not a boolean is an error, shown as written',
      'object.name',
      { name: 'abc' },
      {},
      'error',
      '`object.name` returned abc, not a boolean',
    ],
    [
      'a list that is not a boolean is an error, its integers shown as numbers',
      'object.ports',
      { ports: [80, 443] },
      {},
      'error',
      '`object.ports` returned [80,443], not a boolean',
    ],
    [
      'the observed object, when there is one',
      'observed.replicas == 2 && object.replicas == 3',
      { replicas: 3 },
      { observed: { replicas: 2 } },
      'pass',
      '`observed.replicas == 2 && object.replicas == 3` is true',
    ],
    [
      'declared and observed are there',
      'observed == null && declared.versioning',
      { versioning: true },
      {},
      'pass',
      '`observed == null && declared.versioning` is true',
    ],
  ];
  it.each(cases)('%s', (_w, expression, object, more, result, message) => {
    const v = one(policy([{ expression, message: 'keep versioning' }]), input(object, more));
    expect(v.result).toBe(result);
    expect(v.message).toBe(message);
  });

  it('says which fields a rule reads, for the report and the position', () => {
    const v = one(
      policy([{ expression: "has(object.tags) && object['name'] != ''" }]),
      input({ tags: {}, name: 'n' }),
    );
    expect(v.fields).toEqual(['name', 'tags']);
  });

  it('a messageExpression gives the message; one that fails falls back to the message', () => {
    const p = policy([
      {
        expression: 'object.replicas <= 3',
        messageExpression: "'replicas ' + string(object.replicas) + ' above 3'",
        message: 'too many',
      },
      { expression: 'object.replicas <= 3', messageExpression: 'object.nope', message: 'too many' },
      { expression: 'object.replicas <= 3' },
    ]);
    const [a, b, c] = evaluatePolicies([p], input({ replicas: 5 }));
    expect(a!.message).toBe('replicas 5 above 3');
    expect(b!.message).toBe('too many');
    expect(c!.message).toBe('`object.replicas <= 3` is false');
  });

  it('a messageExpression giving an empty or blank string, or no string, falls back to the message', () => {
    const p = policy(
      ["''", "'   '", 'object.replicas'].map((messageExpression) => ({
        expression: 'object.replicas <= 3',
        messageExpression,
        message: 'too many',
      })),
    );
    expect(evaluatePolicies([p], input({ replicas: 5 })).map((v) => v.message)).toEqual([
      'too many',
      'too many',
      'too many',
    ]);
  });

  it('an expression that does not compile is an internal error (the intent reader refuses it first)', () => {
    expect(() => evaluatePolicies([policy([{ expression: 'object.x ==' }])], input({}))).toThrow(
      /^internal: a policy expression that does not compile: .*\(at column \d+\)$/,
    );
  });
});

describe('variables', () => {
  const withVars = (variables: { name: string; expression: string }[], expression: string) =>
    policy([{ expression, message: 'm' }], {
      variables: variables.map((v) => ({ ...v, source: at })),
    });

  it('are read as variables.<name>, each seeing the ones before it', () => {
    const p = withVars(
      [
        { name: 'tags', expression: 'object.tags' },
        { name: 'hasTeam', expression: "'team' in variables.tags" },
      ],
      'variables.hasTeam',
    );
    expect(one(p, input({ tags: { team: 'a' } })).result).toBe('pass');
    expect(one(p, input({ tags: {} })).result).toBe('fail');
  });

  it('a rule through a variable that reads an unknown field is undecidable', () => {
    const p = withVars([{ name: 'v', expression: 'object.versioning' }], 'variables.v == true');
    const v = one(p, input({}, { unknown: new Set(['versioning']) }));
    expect(v.result).toBe('undecidable');
    expect(v.fields).toEqual(['versioning']);
  });

  it('a rule through a chain of variables reads what the first one reads', () => {
    const p = withVars(
      [
        { name: 'a', expression: 'object.versioning' },
        { name: 'b', expression: 'variables.a == true' },
      ],
      'variables.b',
    );
    const v = one(p, input({}, { unknown: new Set(['versioning']) }));
    expect(v.result).toBe('undecidable');
    expect(v.fields).toEqual(['versioning']);
    expect(one(p, input({ versioning: true })).result).toBe('pass');
  });

  it('a rule reading the variables whole reads what every variable reads', () => {
    const p = withVars([{ name: 'v', expression: 'object.versioning' }], 'size(variables) == 1');
    const v = one(p, input({}, { unknown: new Set(['versioning']) }));
    expect(v.result).toBe('undecidable');
    expect(v.fields).toEqual(['versioning']);
    expect(one(p, input({ versioning: true })).result).toBe('pass');
  });

  it('a rule through one variable reads what that variable reads, not what the others read', () => {
    const p = withVars(
      [
        { name: 'n', expression: 'object.name' },
        { name: 'v', expression: 'object.versioning' },
      ],
      "variables.n == 'logs'",
    );
    const v = one(p, input({ name: 'logs' }, { unknown: new Set(['versioning']) }));
    expect(v.result).toBe('pass');
    expect(v.fields).toEqual(['name']);
  });

  it('a variable not declared (the intent reader refuses it first) adds no field read', () => {
    const p = withVars([{ name: 'v', expression: 'variables.nope' }], 'variables.v == 1');
    expect(one(p, input({})).fields).toEqual([]);
    const q = withVars([], 'variables.nope == 1');
    expect(one(q, input({})).fields).toEqual([]);
  });

  it('a variable that fails fails the variables built on it, naming the first', () => {
    const p = withVars(
      [
        { name: 'a', expression: 'object.missing' },
        { name: 'b', expression: 'variables.a + 1' },
      ],
      'variables.b > 0',
    );
    const v = one(p, input({}));
    expect(v.result).toBe('error');
    expect(v.message).toBe('variable a: No such key: missing (at column 8)');
  });

  it('a variable that fails makes the rules using it errors, naming it', () => {
    const p = withVars([{ name: 'v', expression: 'object.missing' }], 'variables.v == true');
    const v = one(p, input({}));
    expect(v.result).toBe('error');
    expect(v.message).toBe('variable v: No such key: missing (at column 8)');
  });
});

describe('matching and the verdict', () => {
  it('a policy that does not match gives no verdict', () => {
    const p = policy([{ expression: 'false' }], { match: { types: ['sb.services'] } });
    expect(evaluatePolicies([p], input({}))).toEqual([]);
  });

  it('a verdict carries the policy, the rule, the address, the moment, the actions and where the rule is', () => {
    const p = policy([{ expression: 'true' }, { expression: 'false', message: 'no' }], {
      actions: ['warn', 'audit'],
      severity: 'low',
    });
    const [, v] = evaluatePolicies([p], input({}, { moment: 'observed' }));
    expect(v).toEqual({
      policy: 'p',
      rule: 1,
      address: 'sb.buckets/logs',
      moment: 'observed',
      result: 'fail',
      message: 'no',
      reason: 'Invalid',
      actions: ['warn', 'audit'],
      severity: 'low',
      fields: [],
      source: at,
    });
  });

  it('a hostile key in the fields cannot reach a prototype', () => {
    const object = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<
      string,
      unknown
    >;
    const v = one(policy([{ expression: 'object.a == 1' }]), input(object));
    expect(v.result).toBe('pass');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});

describe('compileExpression', () => {
  it('compiles once: the same text gives the same compiled expression', () => {
    const a = compileExpression('object.x == 1');
    expect(compileExpression('object.x == 1')).toBe(a);
  });

  it('says why an expression does not parse, with the column', () => {
    const c = compileExpression('object.x ==');
    expect('error' in c && c.error).toMatch(/\(at column \d+\)$/);
  });
});
