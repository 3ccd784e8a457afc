import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { anyValue, hostileScalar, withExtras, yamlDocuments } from '../../test/support/hostile.js';
import type { Intent, ProviderDescription } from '../core/index.js';
import { DEFAULT_POLICY, decide, intentHash, isForbiddenKey, policyOf } from '../core/index.js';
import { checkArbitration, readArbitrationDoc } from './arbitration-doc.js';
import type { ArbitrationDraft } from './arbitration-doc.js';
import { isRecord } from './fields.js';
import { loadIntent } from './index.js';
import { parseDocuments } from './parse-documents.js';

// The Arbitration document and resource labels as written in intent: what they read into, and every
// mistake refused (or warned about) at its file:line:column with a message that says what to write.

const DESCRIPTION: ProviderDescription = {
  auditFeed: true,
  warnings: [],
  types: [
    {
      name: 'services',
      schema: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          replicas: { type: 'integer' },
          image: { type: 'string' },
        },
        required: ['name'],
      },
      identity: 'natural-key',
      naturalKey: 'name',
      idField: 'id',
      createOnly: [],
      outputOnly: [],
      sensitive: [],
      lifecycle: 'annotations',
      idempotencyKey: false,
    },
  ],
};
const describeProvider = () => Promise.resolve(DESCRIPTION);

const PROVIDER = [
  'kind: Provider',
  'name: sb',
  'type: openapi',
  'spec: ./spec.json',
  'endpoint: http://127.0.0.1:9/',
  '',
].join('\n');

/** Lines joined into a YAML text, so that a line number is the array index + 1. */
const yaml = (...lines: string[]) => lines.join('\n') + '\n';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function load(files: Record<string, string>) {
  const dir = await mkdtemp(join(tmpdir(), 'tend-arbitration-'));
  dirs.push(dir);
  await writeFile(join(dir, 'spec.json'), '{}');
  await writeFile(join(dir, 'providers.yaml'), PROVIDER);
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return { dir, ...(await loadIntent(dir, { describe: describeProvider })) };
}

/** An Arbitration document named `p` whose `rules:` are the given lines (line 4 is the first). */
const rules = (...lines: string[]) => yaml('kind: Arbitration', 'name: p', 'rules:', ...lines);

describe('the Arbitration document', () => {
  it('reads the example of docs/arbitration.md into declarations', async () => {
    const { intent, diagnostics } = await load({
      'policy.yaml': yaml(
        'kind: Arbitration',
        'name: scaling',
        'precedence: [incident, cve, traffic, budget]',
        'windows:',
        '  - { name: freeze, from: 2026-11-27T00:00:00Z, to: 2026-11-30T00:00:00Z }',
        '  - { name: weekend, days: [sat, Sunday] }',
        '  - { name: nights, hours: "22:00-06:00" }',
        'rules:',
        '  - when: { actorKind: controller, motivation: traffic, field: spec.replicas }',
        '    decide: yield',
        '  - when: { motivation: incident, actorKind: human }',
        '    decide: hold',
        '    until: ttl',
        '    then: escalate',
        '  - when: { motivation: cve, window: [freeze, nights], urgency: high, ref: "CVE-*" }',
        '    decide: escalate',
        '  - when: { actor: [ci, deployer], intent: cost, type: "sb.*", labels: { tier: web } }',
        '    decide: hold',
        '    until: 30m',
        '  - when: { field: [image, "tags.*"] }',
        '    decide: hold',
        '    until: 2026-11-27T14:00:00+01:00',
        '    then: accept',
        '  - name: otherwise',
        '    decide: enforce',
      ),
    });
    expect(diagnostics).toEqual([]);
    const [doc] = intent!.arbitration!;
    expect(doc!.name).toBe('scaling');
    expect(doc!.precedence).toEqual(['incident', 'cve', 'traffic', 'budget']);
    expect(doc!.windows.map(({ source: _s, ...w }) => w)).toEqual([
      { name: 'freeze', from: '2026-11-27T00:00:00.000Z', to: '2026-11-30T00:00:00.000Z' },
      { name: 'weekend', days: ['sat', 'sun'] },
      { name: 'nights', hours: '22:00-06:00' },
    ]);
    expect(doc!.rules.map(({ source: _s, ...r }) => r)).toEqual([
      {
        id: 'scaling#1',
        when: { actorKind: ['controller'], motivation: ['traffic'], field: ['replicas'] },
        decide: 'yield',
      },
      {
        id: 'scaling#2',
        when: { motivation: ['incident'], actorKind: ['human'] },
        decide: 'hold',
        until: { kind: 'ttl' },
        then: 'escalate',
      },
      {
        id: 'scaling#3',
        when: {
          motivation: ['cve'],
          window: ['freeze', 'nights'],
          urgency: 'high',
          ref: ['CVE-*'],
        },
        decide: 'escalate',
      },
      {
        id: 'scaling#4',
        when: {
          actor: ['ci', 'deployer'],
          intent: ['cost'],
          type: ['sb.*'],
          labels: { tier: 'web' },
        },
        decide: 'hold',
        until: { kind: 'duration', ms: 1_800_000 },
      },
      {
        id: 'scaling#5',
        when: { field: ['image', 'tags.*'] },
        decide: 'hold',
        until: { kind: 'time', at: '2026-11-27T13:00:00.000Z' },
        then: 'accept',
      },
      { id: 'scaling#otherwise', when: {}, decide: 'enforce' },
    ]);
    expect(doc!.rules[1]!.source).toMatchObject({ line: 11, column: 5 });
  });

  it('reads every Arbitration example of the docs without a diagnostic', async () => {
    const examples: string[] = [];
    for (const file of ['docs/arbitration.md', 'docs/intent.md']) {
      const text = await readFile(join(import.meta.dirname, '../..', file), 'utf8');
      for (const m of text.matchAll(/```yaml\n(kind: Arbitration\n[\s\S]*?)```/g))
        examples.push(m[1]!);
    }
    expect(examples.length).toBeGreaterThanOrEqual(5);
    for (const example of examples) {
      const { diagnostics } = await load({ 'policy.yaml': example });
      expect(diagnostics, example).toEqual([]);
    }
  });

  it('leaves the default policy in place without a document', async () => {
    const { intent } = await load({});
    expect(intent!.arbitration).toEqual([]);
    expect(policyOf(intent!.arbitration!)).toBe(DEFAULT_POLICY);
  });

  it('concatenates documents in load order (file name, then position)', async () => {
    const { intent, diagnostics } = await load({
      'b.yaml': yaml('kind: Arbitration', 'name: late', 'rules:', '  - decide: enforce'),
      'a.yaml': yaml(
        'kind: Arbitration',
        'name: early',
        'rules:',
        '  - { when: { actor: hpa }, decide: yield }',
        '---',
        'kind: Arbitration',
        'name: middle',
        'precedence: [cve]',
        'windows: [{ name: freeze, days: fri }]',
      ),
    });
    expect(diagnostics).toEqual([]);
    const policy = policyOf(intent!.arbitration!);
    expect(policy.rules.map((r) => r.id)).toEqual(['early#1', 'late#1']);
    expect(policy.precedence).toEqual(['cve']);
    expect(policy.windows.map((w) => w.name)).toEqual(['freeze']);
  });

  it('makes a policy the engine can decide with', async () => {
    const { intent } = await load({
      'policy.yaml': yaml(
        'kind: Arbitration',
        'name: security',
        'windows: [{ name: freeze, from: 2026-11-27, to: 2026-11-30 }]',
        'rules:',
        '  - { when: { motivation: cve, window: freeze }, decide: escalate }',
        '  - { when: { motivation: cve }, decide: yield }',
        '  - decide: enforce',
      ),
    });
    const policy = policyOf(intent!.arbitration!);
    const facts = (at: string) => ({
      address: 'sb.services/web' as const,
      type: 'sb.services',
      labels: {},
      field: 'image',
      declared: 'nginx:1.27.2',
      observed: 'nginx:1.27.3',
      change: {
        actor: 'scanner',
        source: 'audit' as const,
        at,
        motivation: { kind: 'cve', ref: 'CVE-2026-1234' },
      },
      now: at,
    });
    expect(decide(policy, facts('2026-11-24T10:00:00Z'))).toMatchObject({
      decision: 'yield',
      rule: 'security#2',
    });
    expect(decide(policy, facts('2026-11-28T10:00:00Z'))).toMatchObject({
      decision: 'escalate',
      rule: 'security#1',
    });
  });

  interface Expected {
    code: string;
    file?: string;
    line: number;
    /** A column, or text on the line the diagnostic points at (its first occurrence). */
    column: number | string;
    path?: string;
    has?: string[];
    severity?: 'warning';
  }
  interface Case {
    name: string;
    reason: string;
    files: Record<string, string>;
    expected: Expected[];
  }
  const cases: Case[] = [
    {
      name: 'unknown top-level field',
      reason: 'a typo is named, with the closest field',
      files: { 'main.yaml': yaml('kind: Arbitration', 'name: p', 'rule:', '  - decide: enforce') },
      expected: [
        { code: 'field.unknown', line: 3, column: 1, path: 'rule', has: ['Did you mean `rules`?'] },
      ],
    },
    {
      name: 'name missing',
      reason: 'rule ids are <name>#<n>: the name is required',
      files: { 'main.yaml': yaml('kind: Arbitration', 'rules: [{ decide: enforce }]') },
      expected: [{ code: 'field.required', line: 1, column: 1, path: 'name' }],
    },
    {
      name: 'bad name',
      reason: 'names are lower-case like resource names',
      files: { 'main.yaml': yaml('kind: Arbitration', 'name: Scaling Rules') },
      expected: [{ code: 'name.invalid', line: 2, column: 7, path: 'name' }],
    },
    {
      name: 'duplicate names',
      reason: 'two documents with one name would give two rules one id',
      files: {
        'a.yaml': yaml('kind: Arbitration', 'name: p'),
        'b.yaml': yaml('kind: Arbitration', 'name: p'),
      },
      expected: [
        {
          code: 'arbitration.duplicate',
          file: 'b.yaml',
          line: 2,
          column: 7,
          path: 'name',
          has: ['already declared at', 'a.yaml:1'],
        },
      ],
    },
    {
      name: 'rules not a list',
      reason: 'first match wins needs an order',
      files: { 'main.yaml': yaml('kind: Arbitration', 'name: p', 'rules: { decide: enforce }') },
      expected: [{ code: 'field.type', line: 3, column: 8, path: 'rules' }],
    },
    {
      name: 'a rule that is not a mapping',
      reason: 'a rule is a mapping with decide',
      files: { 'main.yaml': rules('  - enforce') },
      expected: [{ code: 'field.type', line: 4, column: 5, path: 'rules[0]' }],
    },
    {
      name: 'decide missing',
      reason: 'a rule must decide something',
      files: { 'main.yaml': rules('  - when: { actor: hpa }') },
      expected: [{ code: 'field.required', line: 4, column: 5, path: 'rules[0].decide' }],
    },
    {
      name: 'unknown decision',
      reason: 'the five decisions are listed, the closest suggested',
      files: { 'main.yaml': rules('  - decide: enforse') },
      expected: [
        {
          code: 'arbitration.decision',
          line: 4,
          column: 13,
          path: 'rules[0].decide',
          has: ['enforce, accept, yield, hold, escalate', 'Did you mean `enforce`?'],
        },
      ],
    },
    {
      name: 'unknown rule field',
      reason: 'a typo in a rule is named at its key',
      files: { 'main.yaml': rules('  - decide: hold', '    untill: 2h') },
      expected: [
        {
          code: 'field.unknown',
          line: 5,
          column: 5,
          path: 'rules[0].untill',
          has: ['Did you mean `until`?'],
        },
      ],
    },
    {
      name: 'unknown condition',
      reason: 'a typo in when is named, with the closest condition',
      files: { 'main.yaml': rules('  - when: { motivaton: incident }', '    decide: hold') },
      expected: [
        {
          code: 'field.unknown',
          line: 4,
          column: 'motivaton',
          path: 'rules[0].when.motivaton',
          has: ['Did you mean `motivation`?'],
        },
      ],
    },
    {
      name: 'when not a mapping',
      reason: 'conditions are named',
      files: { 'main.yaml': rules('  - when: incident', '    decide: hold') },
      expected: [{ code: 'field.type', line: 4, column: 11, path: 'rules[0].when' }],
    },
    {
      name: 'unknown actor kind',
      reason: 'actor kinds are a closed list',
      files: {
        'main.yaml': rules('  - when: { actorKind: [human, contoller] }', '    decide: hold'),
      },
      expected: [
        {
          code: 'arbitration.actor_kind',
          line: 4,
          column: 32,
          path: 'rules[0].when.actorKind[1]',
          has: ['not one of human, controller', 'Did you mean `controller`?'],
        },
      ],
    },
    {
      name: 'unknown urgency',
      reason: 'urgencies are a closed list',
      files: { 'main.yaml': rules('  - when: { urgency: hihg }', '    decide: hold') },
      expected: [
        {
          code: 'arbitration.urgency',
          line: 4,
          column: 'hihg',
          path: 'rules[0].when.urgency',
          has: ['Did you mean `high`?'],
        },
      ],
    },
    {
      name: 'a list of urgencies',
      reason: 'urgency is a minimum: one value',
      files: { 'main.yaml': rules('  - when: { urgency: [high, critical] }', '    decide: hold') },
      expected: [
        {
          code: 'field.type',
          line: 4,
          column: '[high',
          path: 'rules[0].when.urgency',
          has: ['is a minimum'],
        },
      ],
    },
    {
      name: 'bad intent word',
      reason: 'an intent must be a word Tend can record',
      files: { 'main.yaml': rules('  - when: { intent: Cost Saving }', '    decide: hold') },
      expected: [
        {
          code: 'arbitration.intent',
          line: 4,
          column: 'Cost',
          path: 'rules[0].when.intent',
          has: ['not a word Tend can record'],
        },
      ],
    },
    {
      name: 'bad motivation kind',
      reason: 'a motivation must be a kind Tend can record',
      files: { 'main.yaml': rules('  - when: { motivation: "INC 42" }', '    decide: hold') },
      expected: [
        {
          code: 'arbitration.motivation',
          line: 4,
          column: '"INC',
          path: 'rules[0].when.motivation',
          has: ['not a kind Tend can record'],
        },
      ],
    },
    {
      name: 'custom words close to known ones',
      reason: 'a custom word one typo away from a known word is a warning: it would never match',
      files: {
        'main.yaml': rules(
          '  - when: { motivation: incdent, intent: securty }',
          '    decide: hold',
        ),
      },
      expected: [
        {
          code: 'arbitration.custom_word',
          line: 4,
          column: 'incdent',
          path: 'rules[0].when.motivation',
          has: ['Did you mean `incident`?'],
          severity: 'warning',
        },
        {
          code: 'arbitration.custom_word',
          line: 4,
          column: 'securty',
          path: 'rules[0].when.intent',
          has: ['Did you mean `security`?'],
          severity: 'warning',
        },
      ],
    },
    {
      name: 'an empty condition list',
      reason: 'an empty list would match nothing',
      files: { 'main.yaml': rules('  - when: { actor: [] }', '    decide: yield') },
      expected: [
        { code: 'arbitration.condition', line: 4, column: '[]', path: 'rules[0].when.actor' },
      ],
    },
    {
      name: 'a condition of the wrong type',
      reason: 'conditions are strings; a number is refused with a hint to quote it',
      files: { 'main.yaml': rules('  - when: { actor: [hpa, 42] }', '    decide: yield') },
      expected: [
        {
          code: 'field.type',
          line: 4,
          column: '42',
          path: 'rules[0].when.actor[1]',
          has: ['got integer'],
        },
      ],
    },
    {
      name: 'bad type glob',
      reason: 'a type must look like provider.type',
      files: {
        'main.yaml': rules('  - when: { type: [sb.services, services] }', '    decide: yield'),
      },
      expected: [
        {
          code: 'arbitration.type',
          line: 4,
          column: 33,
          path: 'rules[0].when.type[1]',
          has: ['<provider>.<resourceType>'],
        },
      ],
    },
    {
      name: 'bad field path',
      reason: 'a field is a dotted path without empty segments',
      files: { 'main.yaml': rules('  - when: { field: "spec.tags..team" }', '    decide: yield') },
      expected: [
        {
          code: 'arbitration.field',
          line: 4,
          column: '"spec',
          path: 'rules[0].when.field',
          has: ['`spec.tags..team` is not a field path'],
        },
      ],
    },
    {
      name: 'field: spec',
      reason: 'the whole spec is every field: leave field out',
      files: { 'main.yaml': rules('  - when: { field: spec }', '    decide: yield') },
      expected: [
        { code: 'arbitration.field', line: 4, column: 'spec }', path: 'rules[0].when.field' },
      ],
    },
    {
      name: 'bad label selector',
      reason: 'label keys and values follow the label syntax',
      files: {
        'main.yaml': rules(
          '  - when: { labels: { "-tier": web, team: "a b" } }',
          '    decide: yield',
        ),
      },
      expected: [
        {
          code: 'label.invalid_key',
          line: 4,
          column: '"-tier"',
          path: 'rules[0].when.labels.-tier',
        },
        {
          code: 'label.invalid_value',
          line: 4,
          column: '"a b"',
          path: 'rules[0].when.labels.team',
        },
      ],
    },
    {
      name: 'until without hold',
      reason: 'until and then belong to hold',
      files: { 'main.yaml': rules('  - decide: enforce', '    until: 2h', '    then: accept') },
      expected: [
        {
          code: 'arbitration.hold_only',
          line: 5,
          column: 5,
          path: 'rules[0].until',
          has: ['this one decides enforce'],
        },
        { code: 'arbitration.hold_only', line: 6, column: 5, path: 'rules[0].then' },
      ],
    },
    {
      name: 'then: hold',
      reason: 'a hold that ends in a hold never ends',
      files: { 'main.yaml': rules('  - decide: hold', '    then: hold') },
      expected: [{ code: 'arbitration.then_hold', line: 5, column: 11, path: 'rules[0].then' }],
    },
    {
      name: 'unknown then',
      reason: 'then is a decision other than hold',
      files: { 'main.yaml': rules('  - decide: hold', '    then: escalte') },
      expected: [
        {
          code: 'arbitration.decision',
          line: 5,
          column: 11,
          path: 'rules[0].then',
          has: ['Did you mean `escalate`?'],
        },
      ],
    },
    {
      name: 'bad until',
      reason: 'ttl, a duration or an ISO time with a zone',
      files: {
        'main.yaml': rules(
          '  - decide: hold',
          '    until: 2 hours',
          '  - decide: hold',
          '    until: 2026-11-27T14:00:00',
          '  - decide: hold',
          '    until: 30',
        ),
      },
      expected: [
        { code: 'arbitration.until', line: 5, column: 12, path: 'rules[0].until' },
        { code: 'arbitration.until', line: 7, column: 12, path: 'rules[1].until', has: ['ISO'] },
        { code: 'arbitration.until', line: 9, column: 12, path: 'rules[2].until' },
      ],
    },
    {
      name: 'bad rule names',
      reason: 'rule names are lower-case words, unique within their document',
      files: {
        'main.yaml': rules(
          '  - { name: hot-fix, decide: hold }',
          '  - { name: hot-fix, decide: hold }',
          '  - { name: "2", decide: hold }',
        ),
      },
      expected: [
        {
          code: 'arbitration.duplicate_rule',
          line: 5,
          column: 13,
          path: 'rules[1].name',
          has: ['already used by `rules[0]`'],
        },
        { code: 'name.invalid', line: 6, column: 13, path: 'rules[2].name' },
      ],
    },
    {
      name: 'unknown window',
      reason: 'a rule may only name a declared window; the closest is suggested',
      files: {
        'main.yaml': yaml(
          'kind: Arbitration',
          'name: p',
          'windows: [{ name: freeze, days: [sat] }]',
          'rules:',
          '  - { when: { window: frezee }, decide: escalate }',
        ),
      },
      expected: [
        {
          code: 'arbitration.unknown_window',
          line: 5,
          column: 'frezee',
          path: 'rules[0].when.window',
          has: ['declared windows: freeze', 'Did you mean `freeze`?'],
        },
      ],
    },
    {
      name: 'a window of another document',
      reason: 'windows are shared: a rule may name one declared elsewhere; two with one name clash',
      files: {
        'a.yaml': yaml(
          'kind: Arbitration',
          'name: windows',
          'windows: [{ name: freeze, days: sat }]',
        ),
        'b.yaml': yaml(
          'kind: Arbitration',
          'name: rules',
          'windows: [{ name: freeze, days: sun }]',
          'rules: [{ when: { window: freeze }, decide: escalate }]',
        ),
      },
      expected: [
        {
          code: 'arbitration.duplicate_window',
          file: 'b.yaml',
          line: 3,
          column: 19,
          path: 'windows[0].name',
          has: ['a.yaml:3'],
        },
      ],
    },
    {
      name: 'bad windows',
      reason: 'times need a zone, days are weekdays, hours HH:MM-HH:MM, an end after the start',
      files: {
        'main.yaml': yaml(
          'kind: Arbitration',
          'name: p',
          'windows:',
          '  - { name: a, from: 2026-11-27T00:00:00 }',
          '  - { name: b, days: [sat, sunday, holiday] }',
          '  - { name: c, hours: 22-06 }',
          '  - { name: d, from: 2026-11-30, to: 2026-11-27 }',
          '  - { name: e }',
          '  - { name: Freeze, days: mon }',
          '  - { name: f, day: mon }',
          '  - { name: g, days: satt }',
        ),
      },
      expected: [
        { code: 'arbitration.time', line: 4, column: '2026-11-27T00', path: 'windows[0].from' },
        {
          code: 'arbitration.day',
          line: 5,
          column: 'holiday',
          path: 'windows[1].days[2]',
          has: ['`holiday` is not a day'],
        },
        { code: 'arbitration.hours', line: 6, column: '22-06', path: 'windows[2].hours' },
        {
          code: 'arbitration.window',
          line: 7,
          column: '2026-11-27 }',
          path: 'windows[3].to',
          has: ['before it begins'],
        },
        {
          code: 'arbitration.window',
          line: 8,
          column: '{ name: e',
          path: 'windows[4]',
          has: ['no bounds'],
        },
        { code: 'name.invalid', line: 9, column: 'Freeze', path: 'windows[5].name' },
        {
          code: 'field.unknown',
          line: 10,
          column: 'day:',
          path: 'windows[6].day',
          has: ['Did you mean `days`?'],
        },
        {
          code: 'arbitration.day',
          line: 11,
          column: 'satt',
          path: 'windows[7].days',
          has: ['Did you mean `sat`?'],
        },
      ],
    },
    {
      name: 'duplicate windows in one document',
      reason: 'one name, one window',
      files: {
        'main.yaml': yaml(
          'kind: Arbitration',
          'name: p',
          'windows: [{ name: w, days: sat }, { name: w, days: sun }]',
        ),
      },
      expected: [
        {
          code: 'arbitration.duplicate_window',
          line: 3,
          column: 'w, days: sun',
          path: 'windows[1].name',
        },
      ],
    },
    {
      name: 'bad precedence',
      reason: 'motivation kinds, each once',
      files: {
        'main.yaml': yaml(
          'kind: Arbitration',
          'name: p',
          'precedence: [incident, "Budget!", incident]',
        ),
      },
      expected: [
        { code: 'arbitration.motivation', line: 3, column: 24, path: 'precedence[1]' },
        {
          code: 'arbitration.precedence',
          line: 3,
          column: 35,
          path: 'precedence[2]',
          has: ['already ranked at `precedence[0]`'],
        },
      ],
    },
    {
      name: 'precedence twice',
      reason: 'the workspace has one precedence',
      files: {
        'main.yaml': yaml(
          'kind: Arbitration',
          'name: a',
          'precedence: [incident]',
          '---',
          'kind: Arbitration',
          'name: b',
          'precedence: [cve]',
        ),
      },
      expected: [
        {
          code: 'arbitration.precedence_twice',
          line: 7,
          column: 1,
          path: 'precedence',
          has: ['already set by Arbitration `a`'],
        },
      ],
    },
    {
      name: 'a rule after a catch-all',
      reason: 'first match wins: the rules after it are never tried (a warning, in any document)',
      files: {
        'a.yaml': rules(
          '  - decide: enforce',
          '  - { when: { actor: hpa }, decide: yield }',
          '  - decide: accept',
        ),
        'b.yaml': yaml('kind: Arbitration', 'name: q', 'rules: [{ decide: escalate }]'),
      },
      expected: [
        {
          code: 'arbitration.unreachable',
          file: 'a.yaml',
          line: 5,
          column: 5,
          path: 'rules[1]',
          has: ['rule p#2 and the rule after it can never decide', 'rule p#1'],
          severity: 'warning',
        },
        {
          code: 'arbitration.unreachable',
          file: 'b.yaml',
          line: 3,
          column: 9,
          path: 'rules[0]',
          has: ['rule q#1 can never decide'],
          severity: 'warning',
        },
      ],
    },
  ];

  it.each(cases)('$name: $reason', async (c) => {
    const { dir, intent, diagnostics } = await load(c.files);
    const got = diagnostics.map((d) => ({
      code: d.code,
      file: d.file,
      line: d.line,
      column: d.column,
      path: d.path,
    }));
    const want = c.expected.map((e) => {
      const file = e.file ?? 'main.yaml';
      const line = c.files[file]!.split('\n')[e.line - 1]!;
      const column = typeof e.column === 'number' ? e.column : line.indexOf(e.column) + 1;
      return { code: e.code, file: join(dir, file), line: e.line, column, path: e.path };
    });
    expect(got, c.reason).toEqual(want);
    c.expected.forEach((e, i) => {
      const d = diagnostics[i]!;
      expect(d.severity).toBe(e.severity ?? 'error');
      for (const text of e.has ?? []) expect(d.message).toContain(text);
    });
    const errors = c.expected.some((e) => e.severity === undefined);
    expect(intent === undefined).toBe(errors);
  });

  it.each([
    ['a hold without then', '  - decide: hold', 'it gives way to the next rule once it has ended'],
    ['a conditional rule', '  - { when: { actor: hpa }, decide: yield }', 'it may not match'],
  ])('%s before other rules is no catch-all: %s', async (_name, first) => {
    const { diagnostics } = await load({ 'main.yaml': rules(first, '  - decide: enforce') });
    expect(diagnostics).toEqual([]);
  });
});

describe('resource labels', () => {
  const resource = (...extra: string[]) =>
    yaml(
      'kind: Resource',
      'type: sb.services',
      'name: web',
      'spec: { name: web, replicas: 2 }',
      ...extra,
    );

  it('are read beside the spec, and default to none', async () => {
    const { intent, diagnostics } = await load({
      'main.yaml': resource('labels: { tier: web, example.com/team: shop, empty: "" }'),
      'other.yaml': yaml('kind: Resource', 'type: sb.services', 'name: api', 'spec: { name: api }'),
    });
    expect(diagnostics).toEqual([]);
    const [web, api] = intent!.resources;
    expect(web!.labels).toEqual({ tier: 'web', 'example.com/team': 'shop', empty: '' });
    expect(web!.spec).toEqual({ name: 'web', replicas: 2 });
    expect(api!.labels).toEqual({});
  });

  it('change neither the spec nor the plan content: only the file hash', async () => {
    const plain = await load({ 'main.yaml': resource() });
    const labelled = await load({ 'main.yaml': resource('labels: { tier: web }') });
    const a = plain.intent!;
    const b = labelled.intent!;
    expect(b.resources[0]!.spec).toEqual(a.resources[0]!.spec);
    expect(b.contentHash).not.toBe(a.contentHash); // the files differ
    // The hash a saved changeset is pinned to: what a plan does, which labels do not change.
    const moved = (i: Intent) => ({ ...i, dir: '/x', providers: [] });
    expect(intentHash(moved(b))).toBe(intentHash(moved(a)));
  });

  it('drive rules that match labels', async () => {
    const { intent } = await load({
      'main.yaml': resource('labels: { tier: web }'),
      'policy.yaml': yaml(
        'kind: Arbitration',
        'name: tiers',
        'rules: [{ when: { labels: { tier: web } }, decide: yield }]',
      ),
    });
    const web = intent!.resources[0]!;
    const got = decide(policyOf(intent!.arbitration!), {
      address: web.address,
      type: web.type,
      labels: web.labels ?? {},
      field: 'replicas',
      declared: 2,
      observed: 4,
      change: { actor: 'hpa', source: 'audit', at: '2026-11-24T12:00:00Z' },
      now: '2026-11-24T12:00:00Z',
    });
    expect(got).toMatchObject({ decision: 'yield', rule: 'tiers#1' });
  });

  const bad: { name: string; labels: string; code: string; column: number; path: string }[] = [
    {
      name: 'not a mapping',
      labels: 'labels: [web]',
      code: 'field.type',
      column: 9,
      path: 'labels',
    },
    {
      name: 'a key with a space',
      labels: 'labels: { "my tier": web }',
      code: 'label.invalid_key',
      column: 11,
      path: 'labels.my tier',
    },
    {
      name: 'an upper-case prefix',
      labels: 'labels: { Example.com/team: shop }',
      code: 'label.invalid_key',
      column: 11,
      path: 'labels.Example.com/team',
    },
    {
      name: 'a key over 63 characters',
      labels: `labels: { ${'k'.repeat(64)}: v }`,
      code: 'label.invalid_key',
      column: 11,
      path: `labels.${'k'.repeat(64)}`,
    },
    {
      name: 'a number value',
      labels: 'labels: { tier: 1 }',
      code: 'field.type',
      column: 17,
      path: 'labels.tier',
    },
    {
      name: 'a value with a slash',
      labels: 'labels: { tier: a/b }',
      code: 'label.invalid_value',
      column: 17,
      path: 'labels.tier',
    },
  ];
  it.each(bad)('refuses $name', async ({ labels, code, column, path }) => {
    const { dir, intent, diagnostics } = await load({ 'main.yaml': resource(labels) });
    expect(intent).toBeUndefined();
    expect(diagnostics.map((d) => [d.code, d.file, d.line, d.column, d.path])).toEqual([
      [code, join(dir, 'main.yaml'), 5, column, path],
    ]);
  });
});

describe('any Arbitration document', () => {
  const word = fc.oneof(
    fc.constantFrom('incident', 'cve', 'hold', 'enforce', 'human', 'freeze', 'ttl', '2h', 'high'),
    hostileScalar,
  );
  const listOrOne = fc.oneof(word, fc.array(word, { maxLength: 3 }), anyValue);
  const rule = withExtras(
    fc.record(
      {
        name: word,
        when: fc.oneof(
          withExtras(
            fc.record(
              {
                actor: listOrOne,
                actorKind: listOrOne,
                intent: listOrOne,
                motivation: listOrOne,
                ref: listOrOne,
                urgency: listOrOne,
                field: listOrOne,
                type: listOrOne,
                labels: fc.oneof(fc.dictionary(fc.string({ maxLength: 8 }), word), anyValue),
                window: listOrOne,
              },
              { requiredKeys: [] },
            ),
          ),
          anyValue,
        ),
        decide: word,
        until: fc.oneof(word, fc.constantFrom('2026-11-27T14:00:00Z', '2026-02-30', '0s')),
        then: word,
      },
      { requiredKeys: [] },
    ),
  );
  const windowDoc = withExtras(
    fc.record(
      {
        name: word,
        from: fc.oneof(fc.constantFrom('2026-11-27T00:00:00Z', '2026-11-27'), word),
        to: fc.oneof(fc.constantFrom('2026-11-30T00:00:00Z'), word),
        days: listOrOne,
        hours: fc.oneof(fc.constantFrom('22:00-06:00', '24:00-01:00'), word),
      },
      { requiredKeys: [] },
    ),
  );
  const arbitration = withExtras(
    fc.record(
      {
        kind: fc.constant('Arbitration'),
        name: fc.oneof(fc.constantFrom('a', 'b'), word),
        precedence: listOrOne,
        windows: fc.oneof(fc.array(windowDoc, { maxLength: 3 }), anyValue),
        rules: fc.oneof(fc.array(rule, { maxLength: 4 }), anyValue),
      },
      { requiredKeys: ['kind'] },
    ),
  );

  it('is read into diagnostics and declarations without throwing or touching prototypes', () => {
    fc.assert(
      fc.property(yamlDocuments(arbitration, 3), (text) => {
        const parsed = parseDocuments('/intent/policy.yaml', text);
        const drafts: ArbitrationDraft[] = [];
        for (const doc of parsed.documents) {
          if (!isRecord(doc.value)) continue;
          const read = readArbitrationDoc(doc, doc.value);
          drafts.push(read.draft);
          for (const d of read.diagnostics) expect(d.line).toBeGreaterThan(0);
        }
        for (const d of checkArbitration(drafts)) expect(d.line).toBeGreaterThan(0);
        for (const draft of drafts) {
          for (const { rule } of draft.rules) {
            for (const key of Object.keys(rule.when.labels ?? {})) {
              expect(isForbiddenKey(key)).toBe(false);
            }
          }
        }
        expect(Object.prototype).not.toHaveProperty('polluted');
      }),
      { numRuns: 300 },
    );
  });
});
