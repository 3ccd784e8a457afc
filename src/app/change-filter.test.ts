import { describe, expect, it } from 'vitest';
import type { Change } from '../core/index.js';
import { TendError } from '../core/index.js';
import type { ChangeFilter } from './change-filter.js';
import {
  addressMatches,
  isPlainQuery,
  matchesChange,
  readChangeFilter,
  timeBound,
  touchesField,
} from './change-filter.js';
import type { LedgerReader } from './history.js';
import { readChanges } from './history.js';

const NOW = new Date('2026-11-25T12:00:00.000Z');

/** A ledger entry; every test case overrides what it is about. */
function entry(seq: number, overrides: Partial<Change> = {}): Change {
  return {
    seq,
    time: '2026-11-25T10:00:00.000Z',
    actor: 'tend',
    actorKind: 'tend',
    intent: 'consistency',
    motivation: { kind: 'update' },
    source: 'tend',
    address: 'sb.services/api',
    type: 'sb.services',
    objectId: 'svc-1',
    action: 'update',
    fields: ['replicas'],
    prevHash: '0',
    hash: String(seq),
    ...overrides,
  };
}

const HPA = entry(7, {
  time: '2026-11-25T11:30:00.000Z',
  actor: 'hpa',
  actorKind: 'controller',
  intent: 'availability',
  motivation: { kind: 'traffic', ref: 'spike', expiresAt: '2026-11-25T12:30:00.000Z' },
  source: 'audit',
  fields: ['replicas'],
  decision: {
    decision: 'enforce',
    rule: 'default#3',
    reason: 'the intent wins',
    restore: 'declared',
    fields: ['replicas'],
  },
});
const TAGS = entry(8, {
  actor: 'alice',
  actorKind: 'human',
  source: 'announcement',
  motivation: { kind: 'incident', ref: 'INC-42' },
  intent: 'availability',
  address: 'sb.networks/main',
  type: 'sb.networks',
  fields: ['tags'],
  decision: { decision: 'hold', rule: 'oncall#1', reason: 'held', fields: ['tags.team'] },
});
const UNMANAGED = entry(9, { address: undefined, fields: ['size'] });

describe('matchesChange', () => {
  const cases: { reason: string; filter: ChangeFilter; change: Change; want: boolean }[] = [
    { reason: 'an empty filter keeps everything', filter: {}, change: HPA, want: true },
    { reason: 'the actor named', filter: { actor: ['hpa'] }, change: HPA, want: true },
    {
      reason: 'any actor of a list',
      filter: { actor: ['alice', 'hpa'] },
      change: HPA,
      want: true,
    },
    { reason: 'another actor', filter: { actor: ['alice'] }, change: HPA, want: false },
    {
      reason: 'the actor kind',
      filter: { actorKind: ['controller'] },
      change: HPA,
      want: true,
    },
    {
      reason: 'an entry without a kind never matches a kind',
      filter: { actorKind: ['human'] },
      change: entry(1, { actorKind: undefined }),
      want: false,
    },
    { reason: 'the intent', filter: { intent: ['availability'] }, change: HPA, want: true },
    { reason: 'another intent', filter: { intent: ['cost'] }, change: HPA, want: false },
    {
      reason: 'the motivation kind, whatever its ref and expiry',
      filter: { motivation: ['traffic'] },
      change: HPA,
      want: true,
    },
    {
      reason: 'an entry without a motivation never matches one',
      filter: { motivation: ['traffic'] },
      change: entry(1, { motivation: undefined }),
      want: false,
    },
    { reason: 'the source', filter: { source: ['audit'] }, change: HPA, want: true },
    { reason: 'another source', filter: { source: ['tend'] }, change: HPA, want: false },
    { reason: 'the decision', filter: { decision: ['enforce'] }, change: HPA, want: true },
    {
      reason: 'an entry Tend decided nothing about never matches a decision',
      filter: { decision: ['enforce'] },
      change: entry(1),
      want: false,
    },
    {
      reason: 'an address glob over a type',
      filter: { address: ['sb.services/*'] },
      change: HPA,
      want: true,
    },
    {
      reason: 'an entry without an address never matches an address',
      filter: { address: ['sb.services/*'] },
      change: UNMANAGED,
      want: false,
    },
    {
      reason: 'a field the decision names (a tag below a changed map)',
      filter: { field: ['tags.team'] },
      change: TAGS,
      want: true,
    },
    { reason: 'a field it did not touch', filter: { field: ['image'] }, change: HPA, want: false },
    {
      reason: 'since is inclusive',
      filter: { since: '2026-11-25T11:30:00.000Z' },
      change: HPA,
      want: true,
    },
    {
      reason: 'until is exclusive',
      filter: { until: '2026-11-25T11:30:00.000Z' },
      change: HPA,
      want: false,
    },
    {
      reason: 'a time Tend cannot read never matches a time bound',
      filter: { since: '2026-01-01T00:00:00.000Z' },
      change: entry(1, { time: 'yesterday' }),
      want: false,
    },
    {
      reason: 'every condition must hold',
      filter: { actor: ['hpa'], source: ['tend'] },
      change: HPA,
      want: false,
    },
  ];
  it.each(cases)('$reason', ({ filter, change, want }) => {
    expect(matchesChange(filter, change)).toBe(want);
  });
});

describe('addressMatches', () => {
  const cases: { pattern: string; address: string; want: boolean; reason: string }[] = [
    { pattern: 'sb.services/api', address: 'sb.services/api', want: true, reason: 'itself' },
    { pattern: 'sb.services/api', address: 'sb.services/api2', want: false, reason: 'exact' },
    { pattern: 'sb.services', address: 'sb.services/api', want: true, reason: 'a type' },
    {
      pattern: 'sb.service',
      address: 'sb.services/api',
      want: false,
      reason: 'a type is whole, not a prefix',
    },
    { pattern: 'sb.services/*', address: 'sb.services/api', want: true, reason: 'a name glob' },
    {
      pattern: 'sb.services/*',
      address: 'sb.networks/api',
      want: false,
      reason: 'a name glob keeps its type',
    },
    { pattern: 'sb.*', address: 'sb.networks/main', want: true, reason: 'a type glob' },
    { pattern: 'sb.*/main', address: 'sb.networks/main', want: true, reason: 'both parts' },
    { pattern: 'sb.*/main', address: 'sb.networks/mainx', want: false, reason: 'anchored' },
    {
      pattern: 'sb.services/a.c',
      address: 'sb.services/abc',
      want: false,
      reason: 'a dot is a dot',
    },
    { pattern: '*/api', address: 'sb.services/api', want: true, reason: 'any type' },
    { pattern: '*/api', address: 'sb.services/web', want: false, reason: 'the name still counts' },
    { pattern: '*', address: 'sb.services/api', want: true, reason: 'every type' },
    { pattern: 'sb.services/a*', address: 'sb.services/api', want: true, reason: 'a prefix' },
    { pattern: '**', address: 'sb.services/api', want: true, reason: '** is * too' },
  ];
  it.each(cases)('$pattern ~ $address: $reason', ({ pattern, address, want }) => {
    expect(addressMatches(pattern, address)).toBe(want);
  });
});

describe('touchesField', () => {
  const cases: {
    fields: string[];
    decided?: string[];
    field: string;
    want: boolean;
    reason: string;
  }[] = [
    { fields: ['replicas'], field: 'replicas', want: true, reason: 'the field itself' },
    { fields: ['replicas'], field: 'spec.replicas', want: true, reason: 'spec. is stripped' },
    { fields: ['tags'], field: 'tags.team', want: true, reason: 'a change of the whole map' },
    { fields: ['tags.team'], field: 'tags', want: true, reason: 'a change below it' },
    { fields: ['tagsx'], field: 'tags', want: false, reason: 'a prefix of a name is not a path' },
    {
      fields: [],
      decided: ['replicas'],
      field: 'replicas',
      want: true,
      reason: 'a field only the decision names',
    },
    { fields: ['image'], field: 'replicas', want: false, reason: 'another field' },
  ];
  it.each(cases)('$field in $fields: $reason', ({ fields, decided, field, want }) => {
    const decision = decided
      ? { decision: 'enforce' as const, rule: 'r', reason: 'x', fields: decided }
      : undefined;
    expect(touchesField({ fields, ...(decision ? { decision } : {}) }, field)).toBe(want);
  });
});

describe('timeBound', () => {
  const cases: { text: string; want: string; reason: string }[] = [
    { text: '2h', want: '2026-11-25T10:00:00.000Z', reason: 'a duration counts back from now' },
    { text: '1h30m', want: '2026-11-25T10:30:00.000Z', reason: 'a compound duration' },
    { text: '7d', want: '2026-11-18T12:00:00.000Z', reason: 'days' },
    {
      text: '2026-11-24T14:00:00Z',
      want: '2026-11-24T14:00:00.000Z',
      reason: 'an ISO time, normalised',
    },
    {
      text: '2026-11-24T15:00:00+01:00',
      want: '2026-11-24T14:00:00.000Z',
      reason: 'an offset becomes UTC',
    },
    { text: '2026-11-24', want: '2026-11-24T00:00:00.000Z', reason: 'a date is midnight UTC' },
  ];
  it.each(cases)('$text: $reason', ({ text, want }) => {
    expect(timeBound(text, NOW, '--since')).toBe(want);
  });

  it.each(['yesterday', '2', '0h', '24/11/2026', '2026-13-45'])(
    'refuses %j naming the flag and both forms',
    (text) => {
      expect(() => timeBound(text, NOW, '--since')).toThrow(TendError);
      expect(() => timeBound(text, NOW, '--since')).toThrow(/--since ".*" is neither an ISO time/);
    },
  );
});

describe('readChangeFilter', () => {
  it('reads every flag: words kept, spec. stripped, durations resolved', () => {
    expect(
      readChangeFilter(
        {
          actor: ['hpa', ' '],
          actorKind: ['controller'],
          intent: ['availability'],
          motivation: ['traffic'],
          address: ['sb.services/*'],
          field: ['spec.replicas'],
          source: ['audit'],
          decision: ['enforce', 'hold'],
          since: '2h',
          until: '2026-11-25T11:00:00Z',
        },
        NOW,
      ),
    ).toEqual({
      actor: ['hpa'],
      actorKind: ['controller'],
      intent: ['availability'],
      motivation: ['traffic'],
      address: ['sb.services/*'],
      field: ['replicas'],
      source: ['audit'],
      decision: ['enforce', 'hold'],
      since: '2026-11-25T10:00:00.000Z',
      until: '2026-11-25T11:00:00.000Z',
    });
  });

  it('leaves out what was not given (an empty list is no filter)', () => {
    expect(readChangeFilter({ actor: [] }, NOW)).toEqual({});
  });

  const bad: { input: Parameters<typeof readChangeFilter>[0]; message: RegExp; reason: string }[] =
    [
      {
        input: { decision: ['enforced'] },
        message: /--decision "enforced" is not one of .*; did you mean enforce\?/,
        reason: 'a typo of a decision is an error, never a filter that matches nothing',
      },
      {
        input: { source: ['feed'] },
        message: /--source "feed" is not one of tend, audit, announcement, unknown/,
        reason: 'an unknown source',
      },
      {
        input: { actorKind: ['controler'] },
        message: /did you mean controller\?/,
        reason: 'a typo of an actor kind',
      },
      {
        input: { since: '1h', until: '2h' },
        message: /--since .* is not before --until/,
        reason: 'a window that is empty',
      },
    ];
  it.each(bad)('$reason', ({ input, message }) => {
    expect(() => readChangeFilter(input, NOW)).toThrow(message);
  });
});

describe('isPlainQuery', () => {
  it.each([
    { filter: {}, want: true },
    { filter: { address: ['sb.services/api'] }, want: true },
    { filter: { address: ['sb.services/*'] }, want: false },
    { filter: { address: ['sb.services'] }, want: false },
    { filter: { address: ['sb.services/api', 'sb.networks/main'] }, want: false },
    { filter: { actor: ['hpa'] }, want: false },
  ])('$filter → $want', ({ filter, want }) => {
    expect(isPlainQuery(filter)).toBe(want);
  });
});

describe('readChanges', () => {
  /** A ledger of `n` entries; every `every`-th is by hpa. Records the queries it is asked. */
  function ledger(n: number, every: number): LedgerReader & { queries: unknown[] } {
    const all = Array.from({ length: n }, (_, i) =>
      entry(i + 1, (i + 1) % every === 0 ? { actor: 'hpa', address: 'sb.services/web' } : {}),
    );
    const queries: unknown[] = [];
    return {
      queries,
      changes: (q = {}) => {
        queries.push(q);
        const mine = q.address ? all.filter((c) => c.address === q.address) : all;
        return Promise.resolve(q.limit === undefined ? mine : mine.slice(-q.limit));
      },
    };
  }

  it('asks the store directly for a plain query (at most one exact address)', async () => {
    const l = ledger(100, 10);
    const got = await readChanges(l, { address: ['sb.services/web'] }, 3);
    expect(got.map((c) => c.seq)).toEqual([80, 90, 100]);
    expect(l.queries).toEqual([{ address: 'sb.services/web', limit: 3 }]);
  });

  it('returns the latest matches, oldest first, from one window when it holds enough', async () => {
    const l = ledger(1000, 10);
    const got = await readChanges(l, { actor: ['hpa'] }, 5);
    expect(got.map((c) => c.seq)).toEqual([960, 970, 980, 990, 1000]);
    expect(l.queries).toHaveLength(1);
  });

  it('grows the window until enough entries match', async () => {
    const l = ledger(5000, 1000);
    const got = await readChanges(l, { actor: ['hpa'] }, 3);
    expect(got.map((c) => c.seq)).toEqual([3000, 4000, 5000]);
    expect(l.queries.map((q) => (q as { limit: number }).limit)).toEqual([256, 1024, 4096]);
  });

  it('stops at the start of the ledger with fewer matches than asked', async () => {
    const l = ledger(300, 100);
    const got = await readChanges(l, { actor: ['hpa'] }, 50);
    expect(got.map((c) => c.seq)).toEqual([100, 200, 300]);
    // 256 entries (a full window: there may be more), then all 300 (fewer than asked: the start).
    expect(l.queries.map((q) => (q as { limit: number }).limit)).toEqual([256, 1024]);
  });

  it('keeps the exact address in the store query when other filters apply', async () => {
    const l = ledger(50, 10);
    await readChanges(l, { address: ['sb.services/web'], actor: ['hpa'] }, 2);
    expect(l.queries).toEqual([{ address: 'sb.services/web', limit: 256 }]);
  });

  it('reads nothing for a limit of 0', async () => {
    const l = ledger(10, 1);
    expect(await readChanges(l, { actor: ['hpa'] }, 0)).toEqual([]);
    expect(l.queries).toEqual([]);
  });
});
