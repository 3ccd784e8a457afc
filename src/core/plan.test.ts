import { describe, expect, it } from 'vitest';
import type { Address } from './address.js';
import {
  assemblePlan,
  canHoldBoth,
  decideStep,
  blockedReason,
  destructive,
  gateOf,
  isDestructive,
  hasChanges,
  noDeleteReason,
  type Plan,
  type PlanStep,
  type StepInput,
} from './plan.js';

const base: StepInput = {
  address: 'sb.volumes/data',
  type: 'sb.volumes',
  dependsOn: [],
  stateful: false,
  objectId: 'vol-1',
  desired: { size: 10 },
  changes: [],
  canCreateBeforeDestroy: true,
  approveDestroy: false,
};

describe('decideStep', () => {
  const cases: {
    name: string;
    reason: string;
    input: Partial<StepInput>;
    want: Record<string, unknown>;
  }[] = [
    {
      name: 'create',
      reason: 'no observed object means create',
      input: { objectId: undefined },
      want: { kind: 'create' },
    },
    { name: 'noop', reason: 'no changes means nothing to do', input: {}, want: { kind: 'noop' } },
    {
      name: 'update',
      reason: 'the platform says the change fits in place',
      input: {
        changes: [{ path: 'size', before: 5, after: 10 }],
        evaluation: { action: 'update', fields: ['size'], source: 'platform' },
      },
      want: { kind: 'update' },
    },
    {
      name: 'replace by platform',
      reason: 'the lifecycle endpoint says the change needs a new object',
      input: {
        changes: [{ path: 'size', before: 20, after: 10 }],
        evaluation: { action: 'replace', fields: ['size'], source: 'platform', reason: 'shrink' },
      },
      want: {
        kind: 'replace',
        decidedBy: 'platform',
        forcedBy: ['size'],
        gated: false,
        strategy: 'create-before-destroy',
      },
    },
    {
      name: 'stateful replace is gated',
      reason: 'a destructive step on a stateful resource waits for approval',
      input: {
        stateful: true,
        changes: [{ path: 'size', before: 20, after: 10 }],
        evaluation: { action: 'replace', fields: ['size'], source: 'platform' },
      },
      want: { kind: 'replace', gated: true },
    },
    {
      name: 'approved stateful replace',
      reason: '--approve-destroy lifts the gate',
      input: {
        stateful: true,
        approveDestroy: true,
        changes: [{ path: 'size', before: 20, after: 10 }],
        evaluation: { action: 'replace', fields: ['size'], source: 'annotation' },
      },
      want: { kind: 'replace', gated: false, decidedBy: 'annotation' },
    },
    {
      name: 'natural key',
      reason: 'a type whose identity is its name cannot hold old and new at once',
      input: {
        canCreateBeforeDestroy: false,
        changes: [{ path: 'name', before: 'a', after: 'b' }],
        evaluation: { action: 'replace', fields: ['name'], source: 'annotation' },
      },
      want: {
        kind: 'replace',
        strategy: 'delete-before-create',
        gated: true,
        gate: expect.stringContaining('deleted first'),
      },
    },
    {
      name: 'no guessed replace',
      reason: 'a default evaluation never replaces',
      input: {
        changes: [{ path: 'size', before: 20, after: 10 }],
        evaluation: { action: 'replace', fields: ['size'], source: 'default' },
      },
      want: { kind: 'update' },
    },
    {
      name: 'rename',
      reason: 'an object recorded under another address is moved, never deleted and created',
      input: { movedFrom: 'sb.volumes/old' },
      want: { kind: 'move', from: 'sb.volumes/old', objectId: 'vol-1', changes: [] },
    },
    {
      name: 'rename with changes',
      reason: 'a move carries the in-place changes of declared fields',
      input: {
        movedFrom: 'sb.volumes/old',
        changes: [{ path: 'size', before: 5, after: 10 }],
        evaluation: { action: 'update', fields: ['size'], source: 'platform' },
      },
      want: { kind: 'move', changes: [{ path: 'size', before: 5, after: 10 }] },
    },
    {
      name: 'rename that needs a replace',
      reason: 'the lifecycle still decides: a replace remembers where the object moved from',
      input: {
        movedFrom: 'sb.volumes/old',
        changes: [{ path: 'size', before: 20, after: 10 }],
        evaluation: { action: 'replace', fields: ['size'], source: 'platform' },
      },
      want: { kind: 'replace', movedFrom: 'sb.volumes/old' },
    },
    {
      name: 'adopt by marker',
      reason: 'an object Tend has no record of is adopted explicitly, never silently',
      input: { adoptedBy: 'marker' },
      want: { kind: 'adopt', foundBy: 'marker', changes: [] },
    },
    {
      name: 'adopt with drift',
      reason: 'an adoption carries the in-place changes the object needs',
      input: {
        adoptedBy: 'natural-key',
        changes: [{ path: 'size', before: 5, after: 10 }],
        evaluation: { action: 'update', fields: ['size'], source: 'platform' },
      },
      want: { kind: 'adopt', foundBy: 'natural-key' },
    },
    {
      name: 'conflict',
      reason: "an object with another workspace's marker is never matched nor created over",
      input: { objectId: undefined, conflict: { objectId: 'vol-9', owner: 'prod' } },
      want: { kind: 'conflict', objectId: 'vol-9', owner: 'prod' },
    },
    {
      name: 'move without an object',
      reason: 'nothing found means create, whatever observe said',
      input: { objectId: undefined, movedFrom: 'sb.volumes/old' },
      want: { kind: 'create' },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, () => {
      expect(decideStep({ ...base, ...c.input })).toMatchObject(c.want);
    });
  }
});

describe('assemblePlan', () => {
  const step = (address: Address, dependsOn: Address[], kind: 'noop' | 'replace' = 'noop') =>
    decideStep({
      ...base,
      address,
      dependsOn,
      ...(kind === 'replace'
        ? {
            changes: [{ path: 'size', before: 2, after: 1 }],
            evaluation: {
              action: 'replace' as const,
              fields: ['size'],
              source: 'platform' as const,
            },
          }
        : {}),
    });

  it('orders by references and gives a replace its blast radius', () => {
    const plan = assemblePlan(
      [
        step('sb.volumes/v', ['sb.instances/i']),
        step('sb.instances/i', ['sb.networks/n'], 'replace'),
        step('sb.networks/n', []),
      ],
      [],
      false,
    );
    expect(plan.steps.map((s) => s.address)).toEqual([
      'sb.networks/n',
      'sb.instances/i',
      'sb.volumes/v',
    ]);
    const replace = plan.steps[1]!;
    expect(replace.kind === 'replace' && replace.blastRadius).toEqual(['sb.volumes/v']);
    expect(plan.blastRadius).toEqual(['sb.volumes/v']);
    expect(plan.counts).toMatchObject({ create: 0, update: 0, replace: 1, delete: 0, noop: 2 });
    expect(plan.counts).toMatchObject({ move: 0, adopt: 0, conflict: 0 });
    expect(hasChanges(plan)).toBe(true);
  });

  it('deletes removed resources last, dependents first, gating stateful ones', () => {
    const plan = assemblePlan(
      [step('sb.networks/n', [])],
      [
        {
          address: 'sb.instances/i',
          type: 'sb.instances',
          objectId: 'i-1',
          stateful: false,
          dependsOn: ['sb.networks/n'],
        },
        {
          address: 'sb.volumes/v',
          type: 'sb.volumes',
          objectId: 'v-1',
          stateful: true,
          dependsOn: ['sb.instances/i'],
        },
      ],
      false,
    );
    expect(plan.steps.map((s) => `${s.kind} ${s.address}`)).toEqual([
      'noop sb.networks/n',
      'delete sb.volumes/v',
      'delete sb.instances/i',
    ]);
    expect(plan.gated).toEqual(['sb.volumes/v']);
    const del = plan.steps.find((s) => s.address === 'sb.instances/i')!;
    expect(del.kind === 'delete' && del.blastRadius).toEqual(['sb.volumes/v']);
  });

  describe('a stateful resource removed with what lives under it waits whole', () => {
    const zone = {
      address: 'pdns.zones/z' as Address,
      type: 'pdns.zones',
      objectId: 'z.',
      stateful: true,
      dependsOn: [] as Address[],
    };
    const rrset = (name: string, dependsOn: Address[]) => ({
      address: `pdns.rrsets/${name}` as Address,
      type: 'pdns.rrsets',
      objectId: `z./${name}.z./A`,
      stateful: false,
      dependsOn,
    });
    const GATE = (by: string) =>
      `it lives under ${by}, a stateful resource also removed: nothing of it is deleted until that deletion is approved`;
    it.each([
      {
        name: 'the zone and its rrsets: all gated, the rrsets naming the zone',
        removed: [zone, rrset('a', ['pdns.zones/z']), rrset('b', ['pdns.zones/z'])],
        approve: false,
        gated: { 'pdns.zones/z': true, 'pdns.rrsets/a': true, 'pdns.rrsets/b': true },
        gates: { 'pdns.rrsets/a': GATE('pdns.zones/z'), 'pdns.rrsets/b': GATE('pdns.zones/z') },
      },
      {
        name: 'transitively: under something under the zone',
        removed: [zone, rrset('a', ['pdns.zones/z']), rrset('c', ['pdns.rrsets/a'])],
        approve: false,
        gated: { 'pdns.zones/z': true, 'pdns.rrsets/a': true, 'pdns.rrsets/c': true },
        gates: { 'pdns.rrsets/a': GATE('pdns.zones/z'), 'pdns.rrsets/c': GATE('pdns.zones/z') },
      },
      {
        name: 'approved: nothing gated',
        removed: [zone, rrset('a', ['pdns.zones/z'])],
        approve: true,
        gated: { 'pdns.zones/z': false, 'pdns.rrsets/a': false },
        gates: {},
      },
      {
        name: 'rrsets removed from a zone that stays: not gated',
        removed: [rrset('a', ['pdns.zones/z'])],
        approve: false,
        gated: { 'pdns.rrsets/a': false },
        gates: {},
      },
      {
        name: 'a removed zone that is not stateful: nothing gated',
        removed: [{ ...zone, stateful: false }, rrset('a', ['pdns.zones/z'])],
        approve: false,
        gated: { 'pdns.zones/z': false, 'pdns.rrsets/a': false },
        gates: {},
      },
    ])('$name', ({ removed, approve, gated, gates }) => {
      const plan = assemblePlan([], removed, approve);
      const got = Object.fromEntries(
        plan.steps.map((s) => [s.address, s.kind === 'delete' && s.gated]),
      );
      expect(got).toEqual(gated);
      const reasons = Object.fromEntries(
        plan.steps.flatMap((s) => (s.kind === 'delete' && s.gate ? [[s.address, s.gate]] : [])),
      );
      expect(reasons).toEqual(gates);
      expect([...plan.gated].sort()).toEqual(
        Object.entries(gated)
          .filter(([, g]) => g)
          .map(([a]) => a)
          .sort(),
      );
    });
  });

  it('gives the same plan whether the steps arrive in dependency order or not', () => {
    const inOrder = [
      step('sb.networks/n', []),
      step('sb.instances/i', ['sb.networks/n'], 'replace'),
      step('sb.volumes/v', ['sb.instances/i']),
    ];
    const removed = [
      {
        address: 'sb.volumes/old' as Address,
        type: 'sb.volumes',
        objectId: 'v-0',
        stateful: false,
        dependsOn: ['sb.instances/i' as Address],
      },
    ];
    const given = assemblePlan(inOrder, removed, false);
    expect(given).toEqual(assemblePlan([...inOrder].reverse(), removed, false));
    expect(given.steps.map((s) => `${s.kind} ${s.address}`)).toEqual([
      'noop sb.networks/n',
      'replace sb.instances/i',
      'noop sb.volumes/v',
      'delete sb.volumes/old',
    ]);
    const replace = given.steps[1]!;
    expect(replace.kind === 'replace' && replace.blastRadius).toEqual([
      'sb.volumes/old',
      'sb.volumes/v',
    ]);
  });

  describe('what a delete waits for', () => {
    const removed = (address: Address, dependsOn: Address[] = []) => ({
      address,
      type: 'sb.networks',
      objectId: `id-${address}`,
      stateful: false,
      dependsOn,
    });
    const cases: {
      name: string;
      reason: string;
      declared: [Address, Address[]][];
      removed: ReturnType<typeof removed>[];
      previous: [Address, Address[]][];
      want: Record<string, string[]>;
      wantOrder: string[];
    }[] = [
      {
        name: 'repointed dependent',
        reason: 'a declared resource that referenced the removed one is updated away from it first',
        declared: [
          ['sb.networks/b', []],
          ['sb.services/api', ['sb.networks/b']],
        ],
        removed: [removed('sb.networks/a')],
        previous: [['sb.services/api', ['sb.networks/a']]],
        want: { 'sb.networks/a': ['sb.services/api'] },
        wantOrder: ['sb.networks/b', 'sb.services/api', 'sb.networks/a'],
      },
      {
        name: 'removed chain',
        reason: 'removed resources that referenced it are deleted before it (old graph)',
        declared: [],
        removed: [removed('sb.networks/n'), removed('sb.instances/i', ['sb.networks/n'])],
        previous: [],
        want: { 'sb.networks/n': ['sb.instances/i'], 'sb.instances/i': [] },
        wantOrder: ['sb.instances/i', 'sb.networks/n'],
      },
      {
        name: 'unrelated',
        reason: 'a delete nothing referenced waits for nothing',
        declared: [['sb.services/api', []]],
        removed: [removed('sb.networks/a')],
        previous: [['sb.services/api', []]],
        want: { 'sb.networks/a': [] },
        wantOrder: ['sb.services/api', 'sb.networks/a'],
      },
    ];
    for (const c of cases) {
      it(`${c.name}: ${c.reason}`, () => {
        const plan = assemblePlan(
          c.declared.map(([a, deps]) => step(a, deps)),
          c.removed,
          false,
          new Map(c.previous),
        );
        const got = Object.fromEntries(
          plan.steps.flatMap((s) => (s.kind === 'delete' ? [[s.address, s.waitsFor]] : [])),
        );
        expect(got).toEqual(c.want);
        expect(plan.steps.map((s) => s.address)).toEqual(c.wantOrder);
      });
    }
  });

  it('counts moves, adoptions and conflicts, and they are changes', () => {
    const plan = assemblePlan(
      [
        decideStep({ ...base, address: 'sb.volumes/a', movedFrom: 'sb.volumes/z' }),
        decideStep({ ...base, address: 'sb.volumes/b', adoptedBy: 'marker' }),
        decideStep({
          ...base,
          address: 'sb.volumes/c',
          conflict: { objectId: 'v-c', owner: 'other' },
        }),
      ],
      [],
      false,
    );
    expect(plan.counts).toMatchObject({ move: 1, adopt: 1, conflict: 1, noop: 0 });
    expect(hasChanges(plan)).toBe(true);
  });

  it('an all-noop plan has no changes', () => {
    expect(hasChanges(assemblePlan([step('sb.networks/n', [])], [], false))).toBe(false);
  });
});

describe('types whose API offers no DELETE', () => {
  const price = (over: Record<string, unknown> = {}) => ({
    address: 'stripe.prices/basic' as Address,
    type: 'stripe.prices',
    objectId: 'price_1',
    stateful: false,
    dependsOn: [] as Address[],
    noDelete: true,
    ...over,
  });
  const NO_DELETE =
    'the API offers no DELETE for stripe.prices: remove it in the platform, or keep it in the intent';

  it('says what to do, naming the type', () => {
    expect(noDeleteReason('stripe.prices')).toBe(NO_DELETE);
  });

  it.each([
    {
      name: 'removed',
      reason:
        'a removed resource of such a type is a delete that cannot happen: blocked, with the reason',
      removed: [price()],
      approve: false,
      want: { 'stripe.prices/basic': { blocked: NO_DELETE, gated: false } },
      gated: [],
    },
    {
      name: 'removed and stateful',
      reason: 'blocked, not gated: no approval makes it possible',
      removed: [price({ stateful: true })],
      approve: false,
      want: { 'stripe.prices/basic': { blocked: NO_DELETE, gated: false } },
      gated: [],
    },
    {
      name: 'removed, destroy approved',
      reason: '--approve-destroy does not make a DELETE exist',
      removed: [price({ stateful: true })],
      approve: true,
      want: { 'stripe.prices/basic': { blocked: NO_DELETE, gated: false } },
      gated: [],
    },
    {
      name: 'removed with a deletable resource it uses',
      reason: 'only the type without DELETE is blocked; the other is deleted after it, as planned',
      removed: [
        price({ dependsOn: ['stripe.products/p'] }),
        price({
          address: 'stripe.products/p',
          type: 'stripe.products',
          objectId: 'prod_1',
          noDelete: undefined,
        }),
      ],
      approve: false,
      want: {
        'stripe.prices/basic': { blocked: NO_DELETE, gated: false },
        'stripe.products/p': {
          blocked: undefined,
          gated: false,
          waitsFor: ['stripe.prices/basic'],
        },
      },
      gated: [],
    },
    {
      name: 'a stateful type without DELETE above a deletable one',
      reason: 'what lives under it is not held for an approval that cannot help',
      removed: [
        price({ address: 'stripe.products/p', type: 'stripe.products', stateful: true }),
        price({
          dependsOn: ['stripe.products/p'],
          noDelete: undefined,
        }),
      ],
      approve: false,
      want: {
        'stripe.products/p': {
          blocked:
            'the API offers no DELETE for stripe.products: remove it in the platform, or keep it in the intent',
          gated: false,
        },
        'stripe.prices/basic': { blocked: undefined, gated: false },
      },
      gated: [],
    },
  ])('$name: $reason', ({ removed, approve, want, gated }) => {
    const plan = assemblePlan([], removed, approve);
    const got = Object.fromEntries(
      plan.steps.map((s) => [
        s.address,
        s.kind === 'delete'
          ? {
              blocked: s.blocked,
              gated: s.gated,
              ...('waitsFor' in (want[s.address as keyof typeof want] ?? {})
                ? { waitsFor: s.waitsFor }
                : {}),
            }
          : s.kind,
      ]),
    );
    expect(got).toEqual(want);
    expect(plan.gated).toEqual(gated);
    expect(plan.counts.delete).toBe(removed.length);
  });

  it('blocks a replace, which would delete the old object, instead of gating it', () => {
    const step = decideStep({
      ...base,
      type: 'stripe.prices',
      stateful: true,
      noDelete: true,
      changes: [{ path: 'currency', before: 'usd', after: 'eur' }],
      evaluation: { action: 'replace', fields: ['currency'], source: 'annotation' },
    });
    expect(step).toMatchObject({ kind: 'replace', gated: false });
    expect(blockedReason(step)).toBe(
      'replacing it would delete the old object, but the API offers no DELETE for stripe.prices: declare the old value again, or remove the object in the platform first (Tend then creates it anew)',
    );
  });

  it('leaves updates, creates and deletable types alone', () => {
    const update = decideStep({
      ...base,
      noDelete: true,
      changes: [{ path: 'size', before: 5, after: 10 }],
      evaluation: { action: 'update', fields: ['size'], source: 'default' },
    });
    expect(blockedReason(update)).toBeUndefined();
    expect(
      blockedReason(decideStep({ ...base, noDelete: true, objectId: undefined })),
    ).toBeUndefined();
    const plan = assemblePlan([], [price({ noDelete: undefined })], false);
    expect(blockedReason(plan.steps[0]!)).toBeUndefined();
  });
});

describe('canHoldBoth', () => {
  const cases: {
    name: string;
    reason: string;
    info: Parameters<typeof canHoldBoth>[0];
    forced: string[];
    unknown?: string[];
    want: boolean;
  }[] = [
    {
      name: 'server id',
      reason: 'two objects with server ids always coexist',
      info: { identity: 'server-id' },
      forced: ['image'],
      want: true,
    },
    {
      name: 'marker',
      reason: 'marker identity does not depend on the name',
      info: { identity: 'marker' },
      forced: ['cidr'],
      want: true,
    },
    {
      name: 'rename',
      reason: 'a new natural key is a different object (zone rename)',
      info: { identity: 'natural-key', naturalKey: 'name' },
      forced: ['name'],
      want: true,
    },
    {
      name: 'same key',
      reason: 'the same natural key cannot exist twice',
      info: { identity: 'natural-key', naturalKey: 'name' },
      forced: ['kind'],
      want: false,
    },
    {
      name: 'composite key',
      reason: 'moving an rrset to a new zone changes its key',
      info: { identity: 'natural-key', naturalKeyFields: ['zone_id', 'name', 'type'] },
      forced: ['zone_id'],
      want: true,
    },
    {
      name: 'unknown key',
      reason:
        'a key known only after apply may be the old one (a grant on a database replaced under its name)',
      info: { identity: 'natural-key', naturalKeyFields: ['role', 'on'] },
      forced: ['on'],
      unknown: ['on'],
      want: false,
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, () => {
      expect(canHoldBoth(c.info, c.forced, c.unknown)).toBe(c.want);
    });
  }
});

describe('gateOf', () => {
  const cases: {
    name: string;
    reason: string;
    args: Parameters<typeof gateOf>;
    want: string | undefined;
  }[] = [
    {
      name: 'plain replace',
      reason: 'create-before-destroy of a stateless resource needs no approval',
      args: [false, 'create-before-destroy', false],
      want: undefined,
    },
    {
      name: 'stateful',
      reason: 'replacing a stateful resource loses its data',
      args: [true, 'create-before-destroy', false],
      want: 'stateful resource',
    },
    {
      name: 'delete first',
      reason: 'delete-before-create is an outage',
      args: [false, 'delete-before-create', false],
      want: 'the platform cannot hold old and new at once: the old object is deleted first',
    },
    {
      name: 'approved',
      reason: '--approve-destroy lifts every gate',
      args: [true, 'delete-before-create', true],
      want: undefined,
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, () => {
      expect(gateOf(...c.args)).toBe(c.want);
    });
  }
});

describe('destructive', () => {
  const step = (kind: PlanStep['kind'], address: Address): PlanStep =>
    ({ kind, address, type: 'sb.services', dependsOn: [], objectId: 'x' }) as unknown as PlanStep;
  it.each([
    {
      kinds: ['create', 'update', 'move', 'adopt', 'conflict', 'noop'],
      want: [],
      reason: 'nothing deleted',
    },
    { kinds: ['replace'], want: ['sb.services/a'], reason: 'a replace deletes the old object' },
    { kinds: ['delete'], want: ['sb.services/a'], reason: 'a delete' },
  ] as const)('$reason', ({ kinds, want }) => {
    const plan = {
      steps: kinds.map((k) => step(k, 'sb.services/a')),
      counts: {} as Plan['counts'],
      gated: [],
      blastRadius: [],
    } satisfies Plan;
    expect(destructive(plan)).toEqual(want);
  });
  it('is sorted, so the same plan always names them in the same order', () => {
    const plan: Plan = {
      steps: [step('delete', 'sb.services/b'), step('replace', 'sb.services/a')],
      counts: {} as Plan['counts'],
      gated: [],
      blastRadius: [],
    };
    expect(destructive(plan)).toEqual(['sb.services/a', 'sb.services/b']);
    expect(plan.steps.filter(isDestructive).map((s) => s.kind)).toEqual(['delete', 'replace']);
  });
});
