import { describe, expect, it } from 'vitest';
import type { Announcement, Change, FieldClaim } from '../core/index.js';
import type { FieldFacts, FieldReport } from './explain-fields.js';
import { explainFields, SECRET_TEXT } from './explain-fields.js';
import { parseTarget } from './explain.js';

function change(seq: number, fields: string[], overrides: Partial<Change> = {}): Change {
  return {
    seq,
    time: `2026-11-25T10:00:0${seq}.000Z`,
    actor: 'tend',
    actorKind: 'tend',
    source: 'tend',
    address: 'sb.services/api',
    type: 'sb.services',
    objectId: 'svc-1',
    action: 'update',
    fields,
    prevHash: '0',
    hash: String(seq),
    ...overrides,
  };
}

const CREATE = change(
  1,
  ['admin_password', 'id', 'name', 'network_id', 'replicas', 'status', 'tags'],
  {
    action: 'create',
  },
);
const HPA = change(2, ['replicas'], {
  actor: 'hpa',
  actorKind: 'controller',
  source: 'audit',
  motivation: { kind: 'traffic', ref: 'spike' },
  decision: {
    decision: 'enforce',
    rule: 'default#3',
    reason: 'the intent wins',
    fields: ['replicas'],
  },
});
const HOTFIX = change(3, ['tags'], { actor: 'alice', actorKind: 'human', source: 'audit' });

const ANNOUNCED: Announcement = {
  id: 'a1',
  address: 'sb.services/api',
  field: 'spec.replicas',
  value: 5,
  actor: 'hpa',
  actorKind: 'controller',
  createdAt: '2026-11-25T10:00:00.000Z',
  expiresAt: '2026-11-25T11:00:00.000Z',
};

/** A service declared with a reference, a tag and a secret; hpa scaled it, alice added a tag. */
const FACTS: FieldFacts = {
  written: {
    name: 'api',
    replicas: 2,
    network_id: '${sb.networks/main.id}',
    tags: { team: 'platform' },
    admin_password: { fromEnv: 'ADMIN_PASSWORD' },
  },
  desired: { name: 'api', replicas: 2, network_id: 'net-1', tags: { team: 'platform' } },
  observed: {
    id: 'svc-1',
    name: 'api',
    replicas: 5,
    network_id: 'net-1',
    tags: {
      team: 'platform',
      hotfix: 'INC-42',
      'tend.workspace': 'w',
      'tend.address': 'sb.services/api',
    },
    status: 'running',
    admin_password: 'hunter2-hunter2',
  },
  secrets: ['admin_password'],
  markerField: 'tags',
  drift: [{ path: 'replicas', before: 5, after: 2 }],
  claims: [],
  decisions: [
    {
      field: 'replicas',
      by: { actor: 'hpa', actorKind: 'controller', source: 'audit' },
      decision: { decision: 'enforce', rule: 'default#3', reason: 'the intent wins' },
      fresh: true,
    },
  ],
  changes: [CREATE, HPA, HOTFIX],
  announcements: [ANNOUNCED],
  entriesPerField: 5,
};

describe('explainFields', () => {
  const reports = explainFields(FACTS);
  const byField = new Map(reports.map((r) => [r.field, r]));

  it('lists the declared fields in declaration order, then what the object holds besides, sorted', () => {
    expect(reports.map((r) => r.field)).toEqual([
      'name',
      'replicas',
      'network_id',
      'tags.team',
      'admin_password',
      'id',
      'status',
      'tags.hotfix',
      'tags.tend.address',
      'tags.tend.workspace',
    ]);
  });

  const cases: { field: string; want: Partial<FieldReport>; entries: number[]; reason: string }[] =
    [
      {
        field: 'name',
        reason: 'a declared field observed as declared is the intent’s',
        want: {
          state: 'as-declared',
          declared: { written: 'api' },
          observed: 'api',
          owner: { kind: 'intent' },
        },
        entries: [1],
      },
      {
        field: 'replicas',
        reason: 'a drifted field says who changed it and what the policy decides',
        want: {
          state: 'drifted',
          declared: { written: 2 },
          observed: 5,
          owner: { kind: 'intent' },
          decisionNow: {
            changedBy: { actor: 'hpa', actorKind: 'controller', source: 'audit' },
            decision: { decision: 'enforce', rule: 'default#3', reason: 'the intent wins' },
            fresh: true,
          },
          announcements: [ANNOUNCED],
        },
        entries: [1, 2],
      },
      {
        field: 'network_id',
        reason: 'a reference is shown as written and as resolved',
        want: {
          state: 'as-declared',
          declared: { written: '${sb.networks/main.id}', resolved: 'net-1' },
          observed: 'net-1',
        },
        entries: [1],
      },
      {
        field: 'tags.team',
        reason: 'each declared key of a declared map is a field; a change of the map touches it',
        want: {
          state: 'as-declared',
          declared: { written: 'platform' },
          owner: { kind: 'intent' },
        },
        entries: [1, 3],
      },
      {
        field: 'admin_password',
        reason: 'a secret never shows a value, declared or observed',
        want: {
          state: 'secret',
          secret: true,
          declared: { written: SECRET_TEXT },
          observed: SECRET_TEXT,
          owner: { kind: 'intent' },
        },
        entries: [1],
      },
      {
        field: 'status',
        reason: 'a field the intent does not declare is nobody’s: left alone',
        want: { state: 'undeclared', observed: 'running', owner: { kind: 'unowned' } },
        entries: [1],
      },
      {
        field: 'tags.hotfix',
        reason: 'an undeclared key of a declared map is left alone too',
        want: { state: 'undeclared', observed: 'INC-42', owner: { kind: 'unowned' } },
        entries: [1, 3],
      },
      {
        field: 'tags.tend.workspace',
        reason: 'the ownership marker is Tend’s',
        want: { state: 'undeclared', owner: { kind: 'marker' } },
        entries: [1, 3],
      },
    ];
  it.each(cases)('$field: $reason', ({ field, want, entries }) => {
    const r = byField.get(field);
    expect(r).toMatchObject(want);
    expect(r!.entries.map((c) => c.seq)).toEqual(entries);
  });

  it('never carries a secret value anywhere in a report', () => {
    expect(JSON.stringify(reports)).not.toContain('hunter2');
  });

  it('shows a reference to something not created yet as pending', () => {
    const [r] = explainFields({
      ...FACTS,
      written: { network_id: '${sb.networks/main.id}' },
      desired: { network_id: { $unknown: '${sb.networks/main.id}' } },
      drift: [],
    });
    expect(r).toMatchObject({
      state: 'pending',
      declared: {
        written: '${sb.networks/main.id}',
        resolved: { $unknown: '${sb.networks/main.id}' },
      },
    });
  });

  it('says a declared field of a resource without an object is absent, with no observed value', () => {
    const [r] = explainFields({
      ...FACTS,
      written: { replicas: 2 },
      desired: { replicas: 2 },
      observed: undefined,
      drift: [],
    });
    expect(r).toMatchObject({ field: 'replicas', state: 'absent', owner: { kind: 'intent' } });
    expect(r).not.toHaveProperty('observed');
  });

  describe('claims', () => {
    const claim: FieldClaim = {
      address: 'sb.services/api',
      field: 'replicas',
      value: 5,
      actor: 'hpa',
      actorKind: 'controller',
      decision: 'yield',
      rule: 'scaling#1',
      since: '2026-11-25T10:00:05.000Z',
    };
    const cases: { reason: string; facts: Partial<FieldFacts>; owner: string }[] = [
      {
        reason: 'an actor holds a drifted field it has a claim on',
        facts: { claims: [claim] },
        owner: 'actor',
      },
      {
        reason: 'a claim given with the spec. prefix covers the field too',
        facts: { claims: [{ ...claim, field: 'spec.replicas' }] },
        owner: 'actor',
      },
      {
        reason: 'a claim on a field that is as declared again lapses: the intent owns it',
        facts: { claims: [claim], drift: [] },
        owner: 'intent',
      },
      {
        reason: 'a claim on another field does not cover this one',
        facts: { claims: [{ ...claim, field: 'replicas_max' }] },
        owner: 'intent',
      },
    ];
    it.each(cases)('$reason', ({ facts, owner }) => {
      const r = explainFields({ ...FACTS, ...facts }).find((x) => x.field === 'replicas');
      expect(r!.owner.kind).toBe(owner);
      if (owner === 'actor') expect(r!.owner).toMatchObject({ claim: { actor: 'hpa' } });
    });
  });

  it('keeps the latest entries of each field, oldest first', () => {
    const many = Array.from({ length: 9 }, (_, i) => change(i + 1, ['replicas']));
    const r = explainFields({ ...FACTS, changes: many, entriesPerField: 3 }).find(
      (x) => x.field === 'replicas',
    );
    expect(r!.entries.map((c) => c.seq)).toEqual([7, 8, 9]);
  });
});

describe('parseTarget', () => {
  const cases: { text: string; want: ReturnType<typeof parseTarget>; reason: string }[] = [
    { text: 'sb.services/api', want: { address: 'sb.services/api' }, reason: 'an address alone' },
    {
      text: 'sb.services/api.replicas',
      want: { address: 'sb.services/api', field: 'replicas' },
      reason: 'the first dot after the slash starts the field',
    },
    {
      text: 'sb.services/api.spec.replicas',
      want: { address: 'sb.services/api', field: 'replicas' },
      reason: 'spec. is stripped',
    },
    {
      text: 'sb.services/api.tags.team',
      want: { address: 'sb.services/api', field: 'tags.team' },
      reason: 'a nested field',
    },
    {
      text: 'sb.services/api.spec',
      want: { address: 'sb.services/api' },
      reason: 'spec alone is the whole resource',
    },
  ];
  it.each(cases)('$text: $reason', ({ text, want }) => {
    expect(parseTarget(text)).toEqual(want);
  });

  it.each(['api', 'sb.services', 'sb.services/API', 'sb.services/api.', 'sb.services/api..x'])(
    'refuses %j as explain.bad_target',
    (text) => {
      expect(() => parseTarget(text)).toThrow(
        expect.objectContaining({ code: 'explain.bad_target' }),
      );
    },
  );
});
