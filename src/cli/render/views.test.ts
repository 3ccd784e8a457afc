import { describe, expect, it } from 'vitest';
import type { DriftReport, ExplainReport, FieldReport } from '../../app/index.js';
import type { Change } from '../../core/index.js';
import { describeChanger, describeDecision } from './attribution.js';
import { renderDrift } from './drift.js';
import { declaredText, ownerText, renderExplain } from './explain.js';
import { renderChange } from './history.js';
import { styleFor } from './style.js';

/** No colours: what a pipe gets. */
const PLAIN = styleFor({ isTTY: false } as NodeJS.WriteStream);

const HPA: Change = {
  seq: 12,
  time: '2026-11-25T11:30:00.000Z',
  actor: 'hpa',
  actorKind: 'controller',
  intent: 'availability',
  motivation: { kind: 'traffic', ref: 'spike', expiresAt: '2026-11-25T12:30:00.000Z' },
  source: 'audit',
  address: 'sb.services/api',
  type: 'sb.services',
  objectId: 'svc-1',
  action: 'update',
  fields: ['replicas'],
  before: { replicas: 2 },
  after: { replicas: 5 },
  decision: {
    decision: 'enforce',
    rule: 'default#3',
    reason: 'replicas was changed by hpa; the intent wins',
    restore: 'declared',
    fields: ['replicas'],
  },
  prevHash: 'a',
  hash: 'b',
};

describe('renderChange', () => {
  const cases: { reason: string; change: Change; want: string[] }[] = [
    {
      reason:
        'seq, time, actor (kind), source, action, address, fields before → after, intent and motivation; the decision below',
      change: HPA,
      want: [
        '  12 2026-11-25T11:30:00.000Z  hpa (controller)  audit  update  sb.services/api  replicas 2 → 5  (intent availability, motivation traffic:spike; expires=2026-11-25T12:30:00.000Z)',
        '       ↳ enforce: replicas was changed by hpa; the intent wins (rule default#3) [replicas]',
      ],
    },
    {
      reason: 'no decision line when Tend decided nothing; no kind when none is known',
      change: {
        ...HPA,
        seq: 3,
        actor: 'someone',
        actorKind: undefined,
        intent: undefined,
        motivation: undefined,
        decision: undefined,
        source: 'unknown',
      },
      want: [
        '   3 2026-11-25T11:30:00.000Z  someone  unknown  update  sb.services/api  replicas 2 → 5',
      ],
    },
    {
      reason: 'the rule is named after a reason that does not name it',
      change: {
        ...HPA,
        decision: {
          decision: 'hold',
          rule: 'oncall#1',
          reason: 'an incident fix holds for its TTL',
          until: '2026-11-25T13:00:00.000Z',
          then: 'escalate',
          fields: [],
        },
      },
      want: [
        '  12 2026-11-25T11:30:00.000Z  hpa (controller)  audit  update  sb.services/api  replicas 2 → 5  (intent availability, motivation traffic:spike; expires=2026-11-25T12:30:00.000Z)',
        '       ↳ hold: an incident fix holds for its TTL (rule oncall#1)',
      ],
    },
    {
      reason: 'an object no resource declares is named by type and id',
      change: { ...HPA, address: undefined, decision: undefined, action: 'delete' },
      want: [
        '  12 2026-11-25T11:30:00.000Z  hpa (controller)  audit  delete  sb.services svc-1  deleted svc-1  (intent availability, motivation traffic:spike; expires=2026-11-25T12:30:00.000Z)',
      ],
    },
  ];
  it.each(cases)('$reason', ({ change, want }) => {
    expect(renderChange(change, PLAIN)).toEqual(want);
  });
});

describe('attribution words', () => {
  it.each([
    {
      by: { actor: 'hpa', actorKind: 'controller' as const, source: 'audit' as const },
      want: 'hpa (controller) (from the audit feed)',
    },
    {
      by: {
        actor: 'alice',
        intent: 'availability',
        motivation: { kind: 'incident', ref: 'INC-42' },
        source: 'announcement' as const,
      },
      want: 'alice, intent availability, motivation incident:INC-42 (announced)',
    },
    { by: { actor: 'unknown', source: 'unknown' as const }, want: 'unknown (nothing says who)' },
  ])('describeChanger → $want', ({ by, want }) => {
    expect(describeChanger(by)).toBe(want);
  });

  it.each([
    {
      reason: 'the rule is named after a reason that does not name it',
      d: { decision: 'yield' as const, rule: 'scaling#2', reason: 'hpa owns replicas' },
      want: 'yield: hpa owns replicas (rule scaling#2)',
    },
    {
      reason: 'a reason that names its rule (as the policy writes them) is not repeated',
      d: {
        decision: 'hold' as const,
        rule: 'oncall#1',
        reason: 'held replicas=5 from alice until 10:16 (incident INC-42): rule oncall#1',
      },
      want: 'hold: held replicas=5 from alice until 10:16 (incident INC-42): rule oncall#1',
    },
  ])('describeDecision: $reason', ({ d, want }) => {
    expect(describeDecision(d)).toBe(want);
  });
});

const WS = { name: 'quickstart-abc123', source: 'folder' as const };

describe('renderDrift', () => {
  const drifted: DriftReport = {
    workspace: WS,
    fields: [
      {
        address: 'sb.services/api',
        field: 'replicas',
        declared: 2,
        observed: 5,
        changedBy: { actor: 'hpa', actorKind: 'controller', source: 'audit' },
        decision: { decision: 'enforce', rule: 'default#3', reason: 'the intent wins' },
        fresh: true,
      },
      {
        address: 'sb.services/api',
        field: 'image',
        declared: 'nginx:1.27',
        observed: 'nginx:1.26',
      },
    ],
    missing: [
      {
        address: 'sb.volumes/data',
        reason: 'deleted',
        deletedBy: { actor: 'bob', actorKind: 'human', source: 'audit' },
      },
    ],
    claims: [
      {
        address: 'sb.networks/main',
        field: 'tags.team',
        value: 'sre',
        actor: 'alice',
        actorKind: 'human',
        motivation: { kind: 'incident', ref: 'INC-42' },
        decision: 'hold',
        rule: 'oncall#1',
        since: '2026-11-25T10:00:00.000Z',
        until: '2026-11-25T11:00:00.000Z',
      },
    ],
    warnings: ['audit feed: timed out; changes are attributed from what Tend last saw'],
    drifted: true,
  };
  const cases: { reason: string; report: DriftReport; want: string[] }[] = [
    {
      reason:
        'per resource: missing objects, then each field with who changed it and the decision; claims; a summary',
      report: drifted,
      want: [
        'workspace quickstart-abc123 (folder)',
        'warning: audit feed: timed out; changes are attributed from what Tend last saw',
        'sb.volumes/data',
        '  - no object: deleted by bob (human) (from the audit feed); apply creates it again',
        'sb.services/api',
        '  ~ replicas  declared 2, observed 5',
        '      changed by hpa (controller) (from the audit feed)',
        '      ↳ enforce: the intent wins (rule default#3)',
        '  ~ image  declared "nginx:1.27", observed "nginx:1.26"',
        '      nothing shows anyone changed it on the platform (the intent changed, or it was never applied): apply sets the declared value',
        'held by actors (decisions in their favour):',
        '  sb.networks/main.tags.team  "sre"  hold for alice (human) (motivation incident:INC-42), rule oncall#1, since 2026-11-25T10:00:00.000Z until 2026-11-25T11:00:00.000Z',
        '2 drifted fields on 1 resource, 1 resource without an object',
      ],
    },
    {
      reason: 'nothing drifted',
      report: { workspace: WS, fields: [], missing: [], claims: [], warnings: [], drifted: false },
      want: [
        'workspace quickstart-abc123 (folder)',
        'no drift: every declared field is as declared',
      ],
    },
    {
      reason: 'a field yielded to an actor is listed but is not drift Tend manages',
      report: {
        workspace: WS,
        fields: [
          {
            address: 'sb.services/api',
            field: 'replicas',
            declared: 2,
            observed: 7,
            changedBy: { actor: 'hpa', source: 'tend' },
            decision: {
              decision: 'yield',
              rule: 'scaling#1',
              reason: 'replicas is yielded to hpa',
            },
            fresh: false,
          },
        ],
        missing: [],
        claims: [],
        warnings: [],
        drifted: false,
      },
      want: [
        'workspace quickstart-abc123 (folder)',
        'sb.services/api',
        '  ~ replicas  declared 2, observed 7',
        '      changed by hpa (as recorded when it was decided)',
        '      ↳ yield: replicas is yielded to hpa (rule scaling#1) (decided earlier, kept)',
        'no drift Tend manages: 1 field yielded to actors',
      ],
    },
  ];
  it.each(cases)('$reason', ({ report, want }) => {
    expect(renderDrift(report, PLAIN)).toEqual(want);
  });
});

describe('explain words', () => {
  const base: FieldReport = {
    field: 'network_id',
    state: 'as-declared',
    secret: false,
    owner: { kind: 'intent' },
    entries: [],
    announcements: [],
  };
  it.each([
    { reason: 'a plain value', report: { ...base, declared: { written: 2 } }, want: '2' },
    {
      reason: 'a reference as written and resolved',
      report: { ...base, declared: { written: '${sb.networks/main.id}', resolved: 'net-1' } },
      want: '"${sb.networks/main.id}" → "net-1"',
    },
    {
      reason: 'a reference not known until apply',
      report: {
        ...base,
        declared: {
          written: '${sb.networks/main.id}',
          resolved: { $unknown: '${sb.networks/main.id}' },
        },
      },
      want: '"${sb.networks/main.id}" → (known after apply)',
    },
    {
      reason: 'a secret is (secret), never quoted as if it were a value',
      report: { ...base, secret: true, declared: { written: '(secret)' } },
      want: '(secret)',
    },
    { reason: 'an undeclared field', report: base, want: '(not declared)' },
  ])('declaredText: $reason', ({ report, want }) => {
    expect(declaredText(report)).toBe(want);
  });

  it.each([
    { owner: { kind: 'intent' as const }, want: 'the intent' },
    {
      owner: { kind: 'unowned' as const },
      want: 'nobody: the intent does not declare it, so Tend leaves it alone',
    },
    {
      owner: {
        kind: 'actor' as const,
        claim: {
          address: 'sb.services/api' as const,
          field: 'replicas',
          value: 5,
          actor: 'alice',
          actorKind: 'human' as const,
          motivation: { kind: 'incident' },
          decision: 'hold' as const,
          rule: 'oncall#1',
          since: '2026-11-25T10:00:00.000Z',
          until: '2026-11-25T11:00:00.000Z',
          then: 'escalate' as const,
        },
      },
      want: 'alice (human) (motivation incident): hold by rule oncall#1 since 2026-11-25T10:00:00.000Z until 2026-11-25T11:00:00.000Z, then escalate',
    },
  ])('ownerText: $want', ({ owner, want }) => {
    expect(ownerText(owner)).toBe(want);
  });
});

describe('renderExplain', () => {
  const CREATE: Change = {
    ...HPA,
    seq: 4,
    time: '2026-11-25T10:00:00.000Z',
    actor: 'tend',
    actorKind: 'tend',
    source: 'tend',
    action: 'create',
    intent: undefined,
    motivation: undefined,
    decision: undefined,
  };
  const report: ExplainReport = {
    workspace: WS,
    address: 'sb.services/api',
    type: 'sb.services',
    observedFrom: 'platform',
    objectId: 'svc-1',
    status: {
      address: 'sb.services/api',
      state: 'converged',
      checks: [],
      updatedAt: '2026-11-25T11:00:00.000Z',
    },
    policy: 'default',
    notes: [],
    fields: [
      {
        field: 'replicas',
        state: 'drifted',
        secret: false,
        declared: { written: 2 },
        observed: 5,
        owner: { kind: 'intent' },
        decisionNow: {
          changedBy: { actor: 'hpa', actorKind: 'controller', source: 'audit' },
          decision: { decision: 'enforce', rule: 'default#3', reason: 'the intent wins' },
          fresh: true,
        },
        entries: [CREATE, HPA],
        announcements: [],
      },
      {
        field: 'admin_password',
        state: 'secret',
        secret: true,
        declared: { written: '(secret)' },
        observed: '(secret)',
        owner: { kind: 'intent' },
        entries: [CREATE],
        announcements: [],
      },
      {
        field: 'status',
        state: 'undeclared',
        secret: false,
        observed: 'running',
        owner: { kind: 'unowned' },
        entries: [HPA],
        announcements: [],
      },
      {
        field: 'tags.tend.workspace',
        state: 'undeclared',
        secret: false,
        observed: 'w',
        owner: { kind: 'marker' },
        entries: [],
        announcements: [],
      },
    ],
  };

  it('shows the resource (its create once), each declared field in full, and the undeclared ones in a list', () => {
    expect(renderExplain(report, PLAIN)).toEqual([
      'sb.services/api  sb.services, object svc-1, read now',
      '  status   converged (since the pass at 2026-11-25T11:00:00.000Z)',
      '  policy   the default (the intent has no Arbitration document)',
      '  object',
      '       4 2026-11-25T10:00:00.000Z  tend (tend)  tend  create  sb.services/api  created svc-1',
      '',
      'replicas  drifted',
      '  declared   2',
      '  observed   5',
      '  owner      the intent',
      '  changed by hpa (controller) (from the audit feed)',
      '  decision   enforce: the intent wins (rule default#3)',
      '  history',
      '      12 2026-11-25T11:30:00.000Z  hpa (controller)  audit  update  sb.services/api  replicas 2 → 5  (intent availability, motivation traffic:spike; expires=2026-11-25T12:30:00.000Z)',
      '           ↳ enforce: replicas was changed by hpa; the intent wins (rule default#3) [replicas]',
      '',
      'admin_password  secret: never read back nor compared',
      '  declared   (secret)',
      '  observed   (secret)',
      '  owner      the intent',
      '',
      'not declared (nobody owns them; Tend leaves them alone):',
      '  status               "running"',
      '  tags.tend.workspace  "w"  (Tend\'s ownership marker)',
    ]);
  });

  it('shows an undeclared field asked for in full, and notes on how values were found', () => {
    const one: ExplainReport = {
      ...report,
      field: 'status',
      observedFrom: 'store',
      recordedAt: '2026-11-25T09:00:00.000Z',
      notes: ['the platform could not be read (refused)'],
      fields: [report.fields[2]!],
    };
    const lines = renderExplain(one, PLAIN);
    expect(lines[0]).toBe(
      'sb.services/api  sb.services, object svc-1, as recorded at 2026-11-25T09:00:00.000Z',
    );
    expect(lines).toContain('  note: the platform could not be read (refused)');
    expect(lines).toContain('status  not declared');
    expect(lines).toContain(
      '  owner      nobody: the intent does not declare it, so Tend leaves it alone',
    );
    expect(lines.some((l) => l.includes('  12 2026-11-25T11:30:00.000Z  hpa'))).toBe(true);
  });

  it('shows the object’s create under the field asked about, not in a header', () => {
    const lines = renderExplain(
      { ...report, field: 'replicas', fields: [report.fields[0]!] },
      PLAIN,
    );
    expect(lines).not.toContain('  object');
    expect(lines.filter((l) => l.includes('create  sb.services/api'))).toHaveLength(1);
    expect(lines.indexOf('  history')).toBeLessThan(
      lines.findIndex((l) => l.includes('create  sb.services/api')),
    );
  });
});
