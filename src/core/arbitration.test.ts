import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type {
  ArbitrationDecl,
  ArbitrationPolicy,
  ArbitrationRule,
  Decision,
  DriftFacts,
  FieldClaim,
  TimeWindow,
} from './arbitration.js';
import {
  DECISIONS,
  DEFAULT_HOLD_MS,
  DEFAULT_POLICY,
  DEFAULT_PRECEDENCE,
  decide,
  fieldPath,
  inWindow,
  matchGlob,
  parseHoldUntil,
  parseHours,
  parseTime,
  policyOf,
  shortValue,
} from './arbitration.js';
import { ACTOR_KINDS, MOTIVATION_KINDS, URGENCIES } from './attribution.js';

// The arbitration policy as a specification: which decision each kind of drift gets, and the one
// line of reason a person on call reads. Times are UTC; "now" is 2026-11-24 (a Tuesday) 12:00.

const NOW = '2026-11-24T12:00:00.000Z';
const AT = '2026-11-24T11:55:00.000Z';

type Change = DriftFacts['change'];

/** A drift of `replicas` (declared 2, observed 5) on a labelled deployment, by `console`. */
function facts(
  change: Partial<Change> = {},
  rest: Partial<Omit<DriftFacts, 'change'>> = {},
): DriftFacts {
  return {
    address: 'k8s.deployments/web',
    type: 'k8s.deployments',
    labels: { tier: 'web', team: 'shop' },
    field: 'replicas',
    declared: 2,
    observed: 5,
    change: { actor: 'console', source: 'audit', at: AT, ...change },
    now: NOW,
    ...rest,
  };
}

/** A policy of rules named `p#1`, `p#2`, … (a rule's own id wins). */
function policy(
  rules: (Partial<ArbitrationRule> & Pick<ArbitrationRule, 'decide'>)[],
  extra: Partial<ArbitrationPolicy> = {},
): ArbitrationPolicy {
  return {
    rules: rules.map((r, i) => ({ id: `p#${i + 1}`, when: {}, ...r })),
    precedence: DEFAULT_PRECEDENCE,
    windows: [],
    isDefault: false,
    ...extra,
  };
}

function claim(c: Partial<FieldClaim> & Pick<FieldClaim, 'actor' | 'decision'>): FieldClaim {
  return {
    address: 'k8s.deployments/web',
    field: 'replicas',
    value: 5,
    rule: 'p#1',
    since: AT,
    ...c,
  };
}

const FREEZE: TimeWindow = {
  name: 'freeze',
  from: '2026-11-24T00:00:00Z',
  to: '2026-11-27T00:00:00Z',
};

interface Case {
  name: string;
  reason: string;
  policy: ArbitrationPolicy;
  facts: DriftFacts;
  want: Partial<Decision>;
  /** Parts the reason must contain (the whole reason when `reasonIs`). */
  reasonHas?: string[];
  reasonIs?: string;
}

/** One rule deciding `accept` under a condition, and the default after it. */
const onlyIf = (when: ArbitrationRule['when'], extra: Partial<ArbitrationPolicy> = {}) =>
  policy([{ when, decide: 'accept' }], extra);
const accepted: Partial<Decision> = { decision: 'accept', rule: 'p#1' };
const fellThrough: Partial<Decision> = { decision: 'enforce', rule: 'default' };

const conditions: Case[] = [
  {
    name: 'empty when',
    reason: 'a rule without conditions matches every change',
    policy: onlyIf({}),
    facts: facts(),
    want: accepted,
  },
  {
    name: 'actor matches',
    reason: 'any actor of the list',
    policy: onlyIf({ actor: ['hpa', 'console'] }),
    facts: facts(),
    want: accepted,
  },
  {
    name: 'actor differs',
    reason: 'another actor does not match: no rule, the intent wins',
    policy: onlyIf({ actor: ['hpa'] }),
    facts: facts(),
    want: fellThrough,
  },
  {
    name: 'actorKind matches',
    reason: 'any kind of the list',
    policy: onlyIf({ actorKind: ['controller', 'human'] }),
    facts: facts({ actorKind: 'human' }),
    want: accepted,
  },
  {
    name: 'actorKind differs',
    reason: 'an agent is not a human',
    policy: onlyIf({ actorKind: ['human'] }),
    facts: facts({ actorKind: 'agent' }),
    want: fellThrough,
  },
  {
    name: 'actorKind unknown',
    reason: 'a change that does not say its kind of actor matches no actorKind condition',
    policy: onlyIf({ actorKind: ['human'] }),
    facts: facts(),
    want: fellThrough,
  },
  {
    name: 'intent matches',
    reason: 'the goal the change serves',
    policy: onlyIf({ intent: ['cost'] }),
    facts: facts({ intent: 'cost' }),
    want: accepted,
  },
  {
    name: 'intent differs or missing',
    reason: 'no intent matches no intent condition',
    policy: onlyIf({ intent: ['cost'] }),
    facts: facts(),
    want: fellThrough,
  },
  {
    name: 'motivation matches',
    reason: 'the kind of the motivation',
    policy: onlyIf({ motivation: ['incident', 'cve'] }),
    facts: facts({ motivation: { kind: 'cve' } }),
    want: accepted,
  },
  {
    name: 'motivation missing',
    reason: 'a change without motivation matches no motivation condition',
    policy: onlyIf({ motivation: ['incident'] }),
    facts: facts(),
    want: fellThrough,
  },
  {
    name: 'ref glob matches',
    reason: 'ref is a glob over the motivation reference',
    policy: onlyIf({ ref: ['INC-*'] }),
    facts: facts({ motivation: { kind: 'incident', ref: 'INC-42' } }),
    want: accepted,
  },
  {
    name: 'ref glob differs',
    reason: 'CHG-7 is not INC-*',
    policy: onlyIf({ ref: ['INC-*'] }),
    facts: facts({ motivation: { kind: 'incident', ref: 'CHG-7' } }),
    want: fellThrough,
  },
  {
    name: 'ref missing',
    reason: 'a motivation without a reference matches no ref condition, not even *',
    policy: onlyIf({ ref: ['*'] }),
    facts: facts({ motivation: { kind: 'incident' } }),
    want: fellThrough,
  },
  {
    name: 'urgency above the minimum',
    reason: 'urgency is a minimum: high matches critical',
    policy: onlyIf({ urgency: 'high' }),
    facts: facts({ motivation: { kind: 'incident', urgency: 'critical' } }),
    want: accepted,
  },
  {
    name: 'urgency equal to the minimum',
    reason: 'the minimum itself matches',
    policy: onlyIf({ urgency: 'high' }),
    facts: facts({ motivation: { kind: 'incident', urgency: 'high' } }),
    want: accepted,
  },
  {
    name: 'urgency below the minimum',
    reason: 'normal is below high',
    policy: onlyIf({ urgency: 'high' }),
    facts: facts({ motivation: { kind: 'incident', urgency: 'normal' } }),
    want: fellThrough,
  },
  {
    name: 'urgency not given counts as normal',
    reason: 'a motivation without urgency meets a normal minimum',
    policy: onlyIf({ urgency: 'normal' }),
    facts: facts({ motivation: { kind: 'incident' } }),
    want: accepted,
  },
  {
    name: 'urgency not given is below high',
    reason: 'normal is below high',
    policy: onlyIf({ urgency: 'high' }),
    facts: facts({ motivation: { kind: 'incident' } }),
    want: fellThrough,
  },
  {
    name: 'urgency without motivation',
    reason: 'no motivation has no urgency, not even low',
    policy: onlyIf({ urgency: 'low' }),
    facts: facts(),
    want: fellThrough,
  },
  {
    name: 'field with spec. prefix',
    reason: 'spec.replicas and replicas name the same field',
    policy: onlyIf({ field: ['spec.replicas'] }),
    facts: facts(),
    want: accepted,
  },
  {
    name: 'field of the facts with spec. prefix',
    reason: 'the prefix is stripped on both sides',
    policy: onlyIf({ field: ['replicas'] }),
    facts: facts({}, { field: 'spec.replicas' }),
    want: accepted,
  },
  {
    name: 'field covers the fields below it',
    reason: 'a rule on tags is a rule on every tag',
    policy: onlyIf({ field: ['tags'] }),
    facts: facts({}, { field: 'tags.team' }),
    want: accepted,
  },
  {
    name: 'field glob within a segment',
    reason: 'tags.* matches one tag',
    policy: onlyIf({ field: ['tags.*'] }),
    facts: facts({}, { field: 'tags.team' }),
    want: accepted,
  },
  {
    name: 'field is not a prefix of a longer name',
    reason: 'tag does not cover tags.team: coverage stops at dots',
    policy: onlyIf({ field: ['tag'] }),
    facts: facts({}, { field: 'tags.team' }),
    want: fellThrough,
  },
  {
    name: 'field differs',
    reason: 'image is not replicas',
    policy: onlyIf({ field: ['image'] }),
    facts: facts(),
    want: fellThrough,
  },
  {
    name: 'type glob matches',
    reason: 'k8s.* covers every type of the provider',
    policy: onlyIf({ type: ['k8s.*'] }),
    facts: facts(),
    want: accepted,
  },
  {
    name: 'type glob differs',
    reason: 'another provider',
    policy: onlyIf({ type: ['sb.*', 'k8s.services'] }),
    facts: facts(),
    want: fellThrough,
  },
  {
    name: 'labels match',
    reason: 'every label given must be on the resource with that value',
    policy: onlyIf({ labels: { tier: 'web' } }),
    facts: facts(),
    want: accepted,
  },
  {
    name: 'label value differs',
    reason: 'tier=db is not tier=web',
    policy: onlyIf({ labels: { tier: 'db' } }),
    facts: facts(),
    want: fellThrough,
  },
  {
    name: 'label missing',
    reason: 'a label the resource does not carry never matches',
    policy: onlyIf({ labels: { tier: 'web', env: 'prod' } }),
    facts: facts(),
    want: fellThrough,
  },
  {
    name: 'label named like a prototype member',
    reason: 'labels are looked up as own members only',
    policy: onlyIf({ labels: { toString: 'x' } }),
    facts: facts(),
    want: fellThrough,
  },
  {
    name: 'inside a window',
    reason: 'the change was made inside the freeze',
    policy: onlyIf({ window: ['freeze'] }, { windows: [FREEZE] }),
    facts: facts(),
    want: accepted,
    reasonHas: ['(inside window freeze)'],
  },
  {
    name: 'outside a window',
    reason: 'a change made before the freeze began is not inside it, even if decided during it',
    policy: onlyIf({ window: ['freeze'] }, { windows: [FREEZE] }),
    facts: facts({ at: '2026-11-23T23:59:00Z' }),
    want: fellThrough,
  },
  {
    name: 'an undeclared window',
    reason: 'a name no window has never holds (loading the intent reports it)',
    policy: onlyIf({ window: ['nope'] }, { windows: [FREEZE] }),
    facts: facts(),
    want: fellThrough,
  },
  {
    name: 'all conditions together',
    reason: 'every condition given must hold',
    policy: onlyIf({
      actor: ['alice'],
      actorKind: ['human'],
      intent: ['availability'],
      motivation: ['incident'],
      ref: ['INC-*'],
      urgency: 'high',
      field: ['replicas'],
      type: ['k8s.deployments'],
      labels: { tier: 'web' },
    }),
    facts: facts({
      actor: 'alice',
      actorKind: 'human',
      intent: 'availability',
      motivation: { kind: 'incident', ref: 'INC-42', urgency: 'high' },
    }),
    want: accepted,
  },
  {
    name: 'all conditions but one',
    reason: 'one condition failing fails the rule',
    policy: onlyIf({
      actor: ['alice'],
      actorKind: ['human'],
      motivation: ['incident'],
      type: ['k8s.services'],
    }),
    facts: facts({ actor: 'alice', actorKind: 'human', motivation: { kind: 'incident' } }),
    want: fellThrough,
  },
  {
    name: 'first match wins',
    reason: 'rules are tried in order',
    policy: policy([
      { when: { actor: ['hpa'] }, decide: 'yield' },
      { when: { field: ['replicas'] }, decide: 'escalate' },
      { when: {}, decide: 'accept' },
    ]),
    facts: facts(),
    want: { decision: 'escalate', rule: 'p#2' },
  },
];

const INCIDENT = {
  kind: 'incident',
  ref: 'INC-42',
  expiresAt: '2026-11-24T14:30:00.000Z',
} as const;

const decisions: Case[] = [
  {
    name: 'enforce',
    reason: 'enforce puts the declared value back, and says who changed it to what',
    policy: policy([{ decide: 'enforce', id: 'scaling#3' }]),
    facts: facts(),
    want: { decision: 'enforce', rule: 'scaling#3', restore: 'declared' },
    reasonIs:
      "put replicas back to 2: console's change to 5 (no motivation) matched rule scaling#3 enforce",
  },
  {
    name: 'accept',
    reason: 'accept takes the observed value into the intent',
    policy: policy([{ decide: 'accept' }]),
    facts: facts({ actor: 'alice', motivation: { kind: 'traffic', ref: 'black friday' } }),
    want: { decision: 'accept', rule: 'p#1' },
    reasonIs:
      'accepted replicas=5 from alice (traffic black friday) into the intent: rule p#1 accept',
  },
  {
    name: 'yield',
    reason: 'yield keeps the value and names the motivation it yields to',
    policy: policy([{ decide: 'yield', id: 'security#1' }]),
    facts: facts(
      { actor: 'scanner', motivation: { kind: 'cve', ref: 'CVE-2026-1234' } },
      { field: 'image', declared: 'nginx:1.27.2', observed: 'nginx:1.27.3' },
    ),
    want: { decision: 'yield', rule: 'security#1' },
    reasonIs: 'kept image=nginx:1.27.3 from scanner: rule security#1 yields to cve CVE-2026-1234',
  },
  {
    name: 'yield without motivation',
    reason: 'the actor is named when there is no motivation to name',
    policy: policy([{ decide: 'yield' }]),
    facts: facts({ actor: 'hpa' }),
    want: { decision: 'yield' },
    reasonIs: 'kept replicas=5 from hpa: rule p#1 yields to hpa (no motivation)',
  },
  {
    name: 'escalate',
    reason: 'escalate keeps the value for a human',
    policy: policy([{ decide: 'escalate' }]),
    facts: facts({ actor: 'agent-7', motivation: { kind: 'experiment' } }),
    want: { decision: 'escalate', rule: 'p#1' },
    reasonIs: 'kept replicas=5 from agent-7 (experiment) for a human to decide: rule p#1 escalate',
  },
  {
    name: 'hold until ttl',
    reason: "ttl is the motivation's expiry; then is carried",
    policy: policy([{ decide: 'hold', until: { kind: 'ttl' }, then: 'escalate', id: 'ops#1' }]),
    facts: facts({ actor: 'alice', motivation: INCIDENT }),
    want: {
      decision: 'hold',
      rule: 'ops#1',
      until: '2026-11-24T14:30:00.000Z',
      then: 'escalate',
    },
    reasonIs: 'held replicas=5 from alice until 14:30 (incident INC-42): rule ops#1, then escalate',
  },
  {
    name: 'hold until ttl, no expiry',
    reason: 'without an expiry a ttl hold lasts DEFAULT_HOLD_MS from the change',
    policy: policy([{ decide: 'hold', until: { kind: 'ttl' } }]),
    facts: facts({ actor: 'alice', motivation: { kind: 'incident' } }),
    want: {
      decision: 'hold',
      until: new Date(Date.parse(AT) + DEFAULT_HOLD_MS).toISOString(),
      then: undefined,
    },
    reasonHas: ['until 12:55', 'then decide again'],
  },
  {
    name: 'hold with no until',
    reason: 'until defaults to ttl',
    policy: policy([{ decide: 'hold' }]),
    facts: facts({ motivation: INCIDENT }),
    want: { decision: 'hold', until: INCIDENT.expiresAt },
  },
  {
    name: 'hold for a duration',
    reason: 'a duration counts from the change',
    policy: policy([{ decide: 'hold', until: { kind: 'duration', ms: 30 * 60_000 } }]),
    facts: facts(),
    want: { decision: 'hold', until: '2026-11-24T12:25:00.000Z' },
  },
  {
    name: 'hold until a time',
    reason: 'an absolute time; on another day the reason shows the date',
    policy: policy([{ decide: 'hold', until: { kind: 'time', at: '2026-11-27T09:00:00.000Z' } }]),
    facts: facts(),
    want: { decision: 'hold', until: '2026-11-27T09:00:00.000Z' },
    reasonHas: ['until 2026-11-27 09:00'],
  },
  {
    name: 'hold already over, with then',
    reason: 'a change found after its hold would have ended takes the then at once',
    policy: policy([{ decide: 'hold', until: { kind: 'duration', ms: 60_000 }, then: 'accept' }]),
    facts: facts(),
    want: { decision: 'accept', rule: 'p#1', until: undefined },
    reasonHas: ['ended at 11:56', 'accept replicas=5 into the intent'],
  },
  {
    name: 'hold already over, without then',
    reason: 'the next matching rule decides, and the reason says the hold has ended',
    policy: policy([
      { decide: 'hold', until: { kind: 'duration', ms: 60_000 } },
      { decide: 'escalate' },
    ]),
    facts: facts(),
    want: { decision: 'escalate', rule: 'p#2' },
    reasonHas: ['rule p#2 escalate', 'by rule p#1 ended at 11:56'],
  },
  {
    name: 'no rule matched',
    reason: 'the intent wins by default',
    policy: policy([]),
    facts: facts(),
    want: { decision: 'enforce', rule: 'default', restore: 'declared' },
    reasonIs: "put replicas back to 2: no rule matched console's change to 5 (no motivation)",
  },
  {
    name: 'values are shortened',
    reason: 'a reason is one line: long values are cut to 40 characters, newlines removed',
    policy: policy([]),
    facts: facts({}, { field: 'spec.motd', declared: 'a'.repeat(100), observed: 'two\nlines' }),
    want: { decision: 'enforce' },
    reasonIs: `put motd back to ${'a'.repeat(39)}…: no rule matched console's change to two lines (no motivation)`,
  },
];

const defaults: Case[] = [
  {
    name: 'a human hotfix for an incident',
    reason: 'the default policy holds it for its TTL, then escalates',
    policy: DEFAULT_POLICY,
    facts: facts({ actor: 'alice', actorKind: 'human', motivation: INCIDENT }),
    want: { decision: 'hold', rule: 'default#1', until: INCIDENT.expiresAt, then: 'escalate' },
    reasonIs:
      'held replicas=5 from alice until 14:30 (incident INC-42): rule default#1, then escalate',
  },
  {
    name: 'a human change without incident',
    reason: 'the default policy enforces',
    policy: DEFAULT_POLICY,
    facts: facts({ actor: 'alice', actorKind: 'human', motivation: { kind: 'traffic' } }),
    want: { decision: 'enforce', rule: 'default#2', restore: 'declared' },
  },
  {
    name: 'a controller acting on an incident',
    reason: 'only humans get the incident hold',
    policy: DEFAULT_POLICY,
    facts: facts({ actor: 'remediator', actorKind: 'controller', motivation: INCIDENT }),
    want: { decision: 'enforce', rule: 'default#2' },
  },
  {
    name: 'an unknown change',
    reason: 'nothing explains it: enforce',
    policy: DEFAULT_POLICY,
    facts: facts({ actor: 'unknown', source: 'unknown' }),
    want: { decision: 'enforce', rule: 'default#2' },
  },
];

const HPA = claim({
  actor: 'hpa',
  actorKind: 'controller',
  decision: 'yield',
  rule: 'scaling#1',
  motivation: { kind: 'traffic', ref: 'spike', expiresAt: '2026-11-24T14:00:00.000Z' },
});
const optimiser: Partial<Change> = {
  actor: 'kubecost',
  actorKind: 'controller',
  intent: 'cost',
  motivation: { kind: 'budget' },
};
const SCALING = policy([
  {
    id: 'scaling#1',
    when: { actorKind: ['controller'], motivation: ['traffic'], field: ['replicas'] },
    decide: 'yield',
  },
  { id: 'scaling#2', when: { actor: ['kubecost'], motivation: ['budget'] }, decide: 'accept' },
  { id: 'scaling#3', when: {}, decide: 'enforce' },
]);

const precedence: Case[] = [
  {
    name: 'an outranking active claim',
    reason: "the autoscaler's traffic outranks the optimiser's budget: its value is put back",
    policy: SCALING,
    facts: facts(optimiser, { observed: 3, claim: HPA }),
    want: { decision: 'enforce', rule: 'precedence', restore: 'claim' },
    reasonIs:
      "kept replicas=5 from hpa over kubecost's 3: motivation traffic outranks budget until 14:00",
  },
  {
    name: 'the outranking motivation expired',
    reason: 'once the spike is over, the optimiser is decided by its rule',
    policy: SCALING,
    facts: facts(optimiser, { observed: 3, claim: HPA, now: '2026-11-24T14:30:00.000Z' }),
    want: { decision: 'accept', rule: 'scaling#2' },
  },
  {
    name: 'a claim with no expiry',
    reason: 'a motivation without an expiry stays active',
    policy: SCALING,
    facts: facts(optimiser, {
      claim: { ...HPA, motivation: { kind: 'traffic' } },
      now: '2030-01-01T00:00:00Z',
    }),
    want: { decision: 'enforce', rule: 'precedence', restore: 'claim' },
    reasonHas: ['outranks budget'],
  },
  {
    name: 'equal motivations',
    reason: 'only a higher rank outranks; equals are decided by the rules (here the traffic rule)',
    policy: SCALING,
    facts: facts({ ...optimiser, motivation: { kind: 'traffic' } }, { claim: HPA }),
    want: { decision: 'yield', rule: 'scaling#1' },
  },
  {
    name: 'the new change ranks higher',
    reason: 'an incident outranks traffic: the rules decide the new change',
    policy: SCALING,
    facts: facts({ actor: 'alice', motivation: { kind: 'incident' } }, { claim: HPA }),
    want: { decision: 'enforce', rule: 'scaling#3' },
  },
  {
    name: 'the claim holder changes it again',
    reason: 'an actor never outranks itself',
    policy: SCALING,
    facts: facts(
      { actor: 'hpa', actorKind: 'controller', motivation: { kind: 'budget' } },
      {
        claim: HPA,
      },
    ),
    want: { decision: 'enforce', rule: 'scaling#3' },
  },
  {
    name: 'a new change without motivation',
    reason: 'no motivation ranks below every listed kind',
    policy: SCALING,
    facts: facts({ actor: 'console' }, { claim: HPA }),
    want: { decision: 'enforce', rule: 'precedence', restore: 'claim' },
    reasonHas: ['outranks a change with no motivation'],
  },
  {
    name: 'an unlisted kind against a listed one',
    reason: 'a kind not in the precedence ranks below every listed one',
    policy: SCALING,
    facts: facts({ ...optimiser, motivation: { kind: 'whim' } }, { claim: HPA }),
    want: { decision: 'enforce', rule: 'precedence' },
  },
  {
    name: 'a claim of an unlisted kind',
    reason: 'an unlisted claim outranks nothing',
    policy: SCALING,
    facts: facts(optimiser, { claim: { ...HPA, motivation: { kind: 'whim' } } }),
    want: { decision: 'accept', rule: 'scaling#2' },
  },
  {
    name: 'a claim without motivation',
    reason: 'a claim without a motivation outranks nothing',
    policy: SCALING,
    facts: facts({ actor: 'console' }, { claim: { ...HPA, motivation: undefined } }),
    want: { decision: 'enforce', rule: 'scaling#3' },
  },
  {
    name: "the policy's own precedence",
    reason: 'precedence comes from the policy, not from the built-in order',
    policy: { ...SCALING, precedence: ['budget', 'traffic'] },
    facts: facts(
      { actor: 'hpa2', motivation: { kind: 'traffic' } },
      {
        claim: { ...HPA, motivation: { kind: 'budget' } },
      },
    ),
    want: { decision: 'enforce', rule: 'precedence' },
    reasonHas: ['motivation budget outranks traffic'],
  },
  {
    name: 'a claim recorded as enforce',
    reason: 'enforce is the intent owning the field: no claim',
    policy: SCALING,
    facts: facts({ actor: 'console' }, { claim: { ...HPA, decision: 'enforce' } }),
    want: { decision: 'enforce', rule: 'scaling#3', restore: 'declared' },
  },
];

const ALICE_HOLD = claim({
  actor: 'alice',
  actorKind: 'human',
  decision: 'hold',
  rule: 'default#1',
  motivation: { kind: 'incident', ref: 'INC-42', expiresAt: '2026-11-24T14:00:00.000Z' },
  until: '2026-11-24T14:00:00.000Z',
  then: 'escalate',
});
const alice: Partial<Change> = {
  actor: 'alice',
  actorKind: 'human',
  motivation: ALICE_HOLD.motivation!,
};
const LATER = '2026-11-24T14:05:00.000Z';
const INCIDENT_RULES = (then?: 'accept') =>
  policy([
    {
      id: 'ops#1',
      when: { motivation: ['incident'], actorKind: ['human'] },
      decide: 'hold',
      until: { kind: 'ttl' },
      ...(then ? { then } : {}),
    },
    { id: 'ops#2', when: {}, decide: 'enforce' },
  ]);

const holds: Case[] = [
  {
    name: 'a hold still running',
    reason: 'before its end a hold is decided like any change: held again until the same time',
    policy: DEFAULT_POLICY,
    facts: facts(alice, { claim: ALICE_HOLD }),
    want: { decision: 'hold', until: '2026-11-24T14:00:00.000Z', then: 'escalate' },
  },
  {
    name: 'a hold ended, then escalate',
    reason: "the claim's then decides",
    policy: DEFAULT_POLICY,
    facts: facts(alice, { claim: ALICE_HOLD, now: LATER }),
    want: { decision: 'escalate', rule: 'default#1', restore: undefined },
    reasonIs:
      'hold of replicas=5 by alice (incident INC-42) ended at 14:00: escalate replicas=5 for a human to decide (rule default#1)',
  },
  {
    name: 'a hold ended, then accept',
    reason: 'then: accept takes the hotfix into the intent',
    policy: INCIDENT_RULES('accept'),
    facts: facts(alice, { claim: { ...ALICE_HOLD, rule: 'ops#1', then: 'accept' }, now: LATER }),
    want: { decision: 'accept', rule: 'ops#1' },
    reasonHas: ['ended at 14:00: accept replicas=5 into the intent'],
  },
  {
    name: 'a hold ended, then enforce',
    reason: 'then: enforce restores the declared value',
    policy: DEFAULT_POLICY,
    facts: facts(alice, { claim: { ...ALICE_HOLD, then: 'enforce' }, now: LATER }),
    want: { decision: 'enforce', restore: 'declared', rule: 'default#1' },
    reasonHas: ['ended at 14:00: put replicas back to 2'],
  },
  {
    name: 'a hold ended, no then',
    reason: 'decided again by the rules: the hold rule is over, the next rule enforces',
    policy: INCIDENT_RULES(),
    facts: facts(alice, {
      claim: { ...ALICE_HOLD, rule: 'ops#1', then: undefined },
      now: LATER,
    }),
    want: { decision: 'enforce', rule: 'ops#2', restore: 'declared' },
    reasonHas: [
      'hold of replicas=5 by alice (incident INC-42) ended at 14:00; put replicas back to 2',
      'rule ops#2 enforce',
    ],
  },
  {
    name: 'a hold ended, met by another actor',
    reason: "an ended hold no longer counts; its then is not applied to someone else's change",
    policy: SCALING,
    facts: facts(optimiser, { claim: ALICE_HOLD, now: LATER }),
    want: { decision: 'accept', rule: 'scaling#2' },
  },
  {
    name: 'a running hold outranks a lower motivation',
    reason: "an incident hold keeps its value against a budget change until the incident's expiry",
    policy: SCALING,
    facts: facts(optimiser, { observed: 3, claim: ALICE_HOLD }),
    want: { decision: 'enforce', rule: 'precedence', restore: 'claim' },
    reasonIs:
      "kept replicas=5 from alice over kubecost's 3: motivation incident outranks budget until 14:00",
  },
];

// The scenarios of issue 11, item 4.
const SECURITY = policy(
  [
    { id: 'freeze#1', when: { motivation: ['cve'], window: ['freeze'] }, decide: 'escalate' },
    { id: 'security#1', when: { motivation: ['cve'] }, decide: 'yield' },
    { id: 'security#2', when: {}, decide: 'enforce' },
  ],
  {
    windows: [{ name: 'freeze', from: '2026-11-27T00:00:00Z', to: '2026-11-30T00:00:00Z' }],
  },
);
const patch = (at: string, now: string): DriftFacts =>
  facts(
    {
      actor: 'scanner',
      actorKind: 'pipeline',
      intent: 'security',
      motivation: { kind: 'cve', ref: 'CVE-2026-1234', urgency: 'high' },
      at,
    },
    {
      field: 'image',
      declared: 'nginx:1.27.2',
      observed: 'nginx:1.27.3',
      claim: claim({
        actor: 'ops-bot',
        decision: 'accept',
        field: 'image',
        value: 'nginx:1.27.2',
        motivation: { kind: 'stability' },
      }),
      now,
    },
  );

const scenarios: Case[] = [
  {
    name: 'autoscaler vs cost optimiser',
    reason: 'an active traffic claim outranks a budget change: the claim is enforced',
    policy: SCALING,
    facts: facts(optimiser, { observed: 3, claim: HPA }),
    want: { decision: 'enforce', rule: 'precedence', restore: 'claim' },
  },
  {
    name: 'autoscaler vs cost optimiser after the spike',
    reason: "traffic expired: the cost optimiser's rule decides",
    policy: SCALING,
    facts: facts(optimiser, { observed: 3, claim: HPA, now: '2026-11-24T15:00:00Z' }),
    want: { decision: 'accept', rule: 'scaling#2' },
  },
  {
    name: 'CVE patch vs stability',
    reason: 'cve outranks stability, so no precedence: the cve rule decides (yield)',
    policy: SECURITY,
    facts: patch(AT, NOW),
    want: { decision: 'yield', rule: 'security#1' },
    reasonIs: 'kept image=nginx:1.27.3 from scanner: rule security#1 yields to cve CVE-2026-1234',
  },
  {
    name: 'CVE patch inside the freeze',
    reason: 'the freeze rule placed first escalates a patch made during the freeze',
    policy: SECURITY,
    facts: patch('2026-11-28T10:00:00Z', '2026-11-28T10:01:00Z'),
    want: { decision: 'escalate', rule: 'freeze#1' },
    reasonIs:
      'kept image=nginx:1.27.3 from scanner (cve CVE-2026-1234) for a human to decide: rule freeze#1 escalate (inside window freeze)',
  },
  {
    name: 'incident hotfix: held for its TTL',
    reason: 'a human hotfix for an incident holds until the incident expires',
    policy: INCIDENT_RULES(),
    facts: facts({ ...alice, motivation: INCIDENT }),
    want: { decision: 'hold', rule: 'ops#1', until: INCIDENT.expiresAt, then: undefined },
  },
  {
    name: 'incident hotfix: re-decided as enforce',
    reason: 'after the TTL the rules decide again; the next rule enforces',
    policy: INCIDENT_RULES(),
    facts: facts(
      { ...alice, motivation: INCIDENT },
      {
        claim: { ...ALICE_HOLD, rule: 'ops#1', then: undefined, until: INCIDENT.expiresAt },
        now: '2026-11-24T15:00:00Z',
      },
    ),
    want: { decision: 'enforce', rule: 'ops#2' },
  },
  {
    name: 'incident hotfix: re-decided as accept',
    reason: 'with then: accept the hotfix becomes the intent',
    policy: INCIDENT_RULES('accept'),
    facts: facts(
      { ...alice, motivation: INCIDENT },
      {
        claim: { ...ALICE_HOLD, rule: 'ops#1', then: 'accept', until: INCIDENT.expiresAt },
        now: '2026-11-24T15:00:00Z',
      },
    ),
    want: { decision: 'accept', rule: 'ops#1' },
  },
];

describe('decide', () => {
  const groups: [string, Case[]][] = [
    ['conditions', conditions],
    ['decisions', decisions],
    ['the default policy', defaults],
    ['precedence', precedence],
    ['holds that end', holds],
    ['scenarios', scenarios],
  ];
  for (const [group, cases] of groups) {
    describe(group, () => {
      it.each(cases)('$name: $reason', (c) => {
        const got = decide(c.policy, c.facts);
        // `undefined` in `want` means the decision does not carry the member at all.
        const present = Object.entries(c.want).filter(([, v]) => v !== undefined);
        expect(got).toMatchObject(Object.fromEntries(present));
        for (const [k, v] of Object.entries(c.want)) {
          if (v === undefined) expect(got).not.toHaveProperty(k);
        }
        if (c.reasonIs !== undefined) expect(got.reason).toBe(c.reasonIs);
        for (const part of c.reasonHas ?? []) expect(got.reason).toContain(part);
        expect(got.reason).not.toMatch(/\n/);
        // Deterministic: the same inputs, the same decision.
        expect(decide(c.policy, c.facts)).toEqual(got);
      });
    });
  }
});

describe('inWindow', () => {
  const nights: TimeWindow = { name: 'nights', hours: '22:00-06:00' };
  const fridayNights: TimeWindow = { ...nights, days: ['fri'] };
  // 2026-11-27 is a Friday.
  const cases: { name: string; reason: string; window: TimeWindow; at: string; want: boolean }[] = [
    {
      name: 'from inclusive',
      reason: 'the first instant is inside',
      window: FREEZE,
      at: '2026-11-24T00:00:00Z',
      want: true,
    },
    {
      name: 'to exclusive',
      reason: 'the end instant is outside',
      window: FREEZE,
      at: '2026-11-27T00:00:00Z',
      want: false,
    },
    {
      name: 'before from',
      reason: 'before the start',
      window: FREEZE,
      at: '2026-11-23T23:59:59Z',
      want: false,
    },
    {
      name: 'only from',
      reason: 'open-ended',
      window: { name: 'w', from: '2026-01-01T00:00:00Z' },
      at: '2099-01-01T00:00:00Z',
      want: true,
    },
    {
      name: 'only to',
      reason: 'open start',
      window: { name: 'w', to: '2026-01-01T00:00:00Z' },
      at: '2025-06-01T00:00:00Z',
      want: true,
    },
    {
      name: 'days: weekend, Saturday',
      reason: 'listed day',
      window: { name: 'weekend', days: ['sat', 'sun'] },
      at: '2026-11-28T12:00:00Z',
      want: true,
    },
    {
      name: 'days: weekend, Friday',
      reason: 'unlisted day',
      window: { name: 'weekend', days: ['sat', 'sun'] },
      at: '2026-11-27T23:59:00Z',
      want: false,
    },
    {
      name: 'hours inside',
      reason: 'within the hours',
      window: { name: 'office', hours: '09:00-17:00' },
      at: '2026-11-24T09:00:00Z',
      want: true,
    },
    {
      name: 'hours end exclusive',
      reason: '17:00 is past 09:00-17:00',
      window: { name: 'office', hours: '09:00-17:00' },
      at: '2026-11-24T17:00:00Z',
      want: false,
    },
    {
      name: 'wrapping, before midnight',
      reason: '23:00 is a night hour',
      window: nights,
      at: '2026-11-24T23:00:00Z',
      want: true,
    },
    {
      name: 'wrapping, after midnight',
      reason: '05:59 is a night hour',
      window: nights,
      at: '2026-11-24T05:59:00Z',
      want: true,
    },
    {
      name: 'wrapping, daytime',
      reason: '06:00 ends the night',
      window: nights,
      at: '2026-11-24T06:00:00Z',
      want: false,
    },
    {
      name: 'Friday night, Friday 23:00',
      reason: 'the night starts on a Friday',
      window: fridayNights,
      at: '2026-11-27T23:00:00Z',
      want: true,
    },
    {
      name: 'Friday night, Saturday 02:00',
      reason: 'after midnight belongs to the night that started Friday',
      window: fridayNights,
      at: '2026-11-28T02:00:00Z',
      want: true,
    },
    {
      name: 'Friday night, Friday 02:00',
      reason: "that is Thursday's night",
      window: fridayNights,
      at: '2026-11-27T02:00:00Z',
      want: false,
    },
    {
      name: 'Friday night, Saturday 23:00',
      reason: "Saturday's night is not listed",
      window: fridayNights,
      at: '2026-11-28T23:00:00Z',
      want: false,
    },
    {
      name: 'whole day',
      reason: '00:00-24:00 is every minute',
      window: { name: 'w', hours: '00:00-24:00' },
      at: '2026-11-24T23:59:59Z',
      want: true,
    },
    {
      name: 'all parts',
      reason: 'from/to and hours together',
      window: { ...FREEZE, hours: '10:00-11:00' },
      at: '2026-11-25T10:30:00Z',
      want: true,
    },
    {
      name: 'all parts, wrong hour',
      reason: 'inside the dates, outside the hours',
      window: { ...FREEZE, hours: '10:00-11:00' },
      at: '2026-11-25T11:30:00Z',
      want: false,
    },
    {
      name: 'no parts',
      reason: 'a window with only a name always holds',
      window: { name: 'always' },
      at: NOW,
      want: true,
    },
    {
      name: 'unreadable hours',
      reason: 'a window built by hand with bad hours never holds',
      window: { name: 'w', hours: 'soon' },
      at: NOW,
      want: false,
    },
    {
      name: 'invalid time',
      reason: 'an invalid date is inside nothing',
      window: { name: 'always' },
      at: 'not a time',
      want: false,
    },
  ];
  it.each(cases)('$name: $reason', ({ window, at, want }) => {
    expect(inWindow(window, new Date(at))).toBe(want);
  });
});

describe('matchGlob', () => {
  const cases: [string, string, boolean, string][] = [
    ['replicas', 'replicas', true, 'a literal matches itself'],
    ['replicas', 'replica', false, 'and nothing shorter'],
    ['tags.*', 'tags.team', true, '* matches a segment'],
    ['tags.*', 'tags.a.b', false, '* stops at dots'],
    ['tags.**', 'tags.a.b', true, '** crosses dots'],
    ['**', '', true, '** matches nothing too'],
    ['*', '', true, '* matches nothing too'],
    ['', '', true, 'the empty pattern matches the empty text'],
    ['', 'x', false, 'and nothing else'],
    ['sb.*', 'sb.instances', true, 'a provider glob'],
    ['*.instances', 'sb.instances', true, 'a type glob'],
    ['INC-*', 'INC-42', true, 'a ref glob'],
    ['a+b', 'a+b', true, 'regular-expression characters are literal'],
    ['a+b', 'aab', false, 'not quantifiers'],
    ['(x)|y', '(x)|y', true, 'groups and alternation are literal'],
    ['a.b', 'axb', false, 'a dot is a dot'],
    ['**.cpu', 'resources.limits.cpu', true, 'any depth then a name'],
    ['r*s.*.cpu', 'resources.limits.cpu', true, 'stars inside a segment'],
    ['team-😀', 'team-😀', true, 'characters outside the BMP match themselves'],
    ['team-?', 'team-😀', false, '? is not special'],
  ];
  it.each(cases)('%s ~ %s → %s: %s', (pattern, text, want) => {
    expect(matchGlob(pattern, text)).toBe(want);
  });

  it('agrees with a regular-expression reading of the glob', () => {
    const reference = (p: string, t: string) => {
      const re = p
        .split(/(\*\*|\*)/)
        .map((part) =>
          part === '**'
            ? '.*'
            : part === '*'
              ? '[^.]*'
              : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
        )
        .join('');
      return new RegExp(`^${re}$`, 's').test(t);
    };
    const text = fc.string({ unit: fc.constantFrom('a', 'b', '.'), maxLength: 10 });
    const glob = fc.string({ unit: fc.constantFrom('a', 'b', '.', '*', '**'), maxLength: 8 });
    fc.assert(fc.property(glob, text, (p, t) => matchGlob(p, t) === reference(p, t)));
  });

  it('costs no backtracking on a hostile pattern', () => {
    const started = performance.now();
    expect(matchGlob(`${'**a'.repeat(40)}c`, 'a'.repeat(200))).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('fieldPath', () => {
  it.each([
    ['spec.replicas', 'replicas', 'the spec. prefix is stripped'],
    ['replicas', 'replicas', 'a path without it is kept'],
    ['spec.tags.team', 'tags.team', 'only the first segment'],
    ['specs.x', 'specs.x', 'a field called specs is not the spec'],
  ])('%s → %s: %s', (text, want) => {
    expect(fieldPath(text)).toBe(want);
  });
});

describe('policyOf', () => {
  const doc = (name: string, rules: string[], extra: Partial<ArbitrationDecl> = {}) =>
    ({
      kind: 'Arbitration',
      name,
      rules: rules.map((id) => ({ id, when: {}, decide: 'enforce' })),
      windows: [],
      source: { file: `${name}.yaml`, line: 1, column: 1 },
      ...extra,
    }) as ArbitrationDecl;

  it('is the default policy without documents', () => {
    expect(policyOf([])).toBe(DEFAULT_POLICY);
    expect(DEFAULT_POLICY.rules.map((r) => r.id)).toEqual(['default#1', 'default#2']);
    expect(DEFAULT_POLICY.precedence).toEqual(DEFAULT_PRECEDENCE);
    expect([...DEFAULT_PRECEDENCE]).toEqual([...MOTIVATION_KINDS]);
  });

  it('concatenates rules in load order, takes the one precedence, merges windows', () => {
    const p = policyOf([
      doc('a', ['a#1', 'a#2'], { windows: [{ name: 'freeze' }] }),
      doc('b', ['b#1'], { precedence: ['cve', 'incident'], windows: [{ name: 'nights' }] }),
    ]);
    expect(p.rules.map((r) => r.id)).toEqual(['a#1', 'a#2', 'b#1']);
    expect(p.precedence).toEqual(['cve', 'incident']);
    expect(p.windows.map((w) => w.name)).toEqual(['freeze', 'nights']);
    expect(p.isDefault).toBe(false);
  });

  it('keeps the default precedence and rules when the documents set none', () => {
    const p = policyOf([doc('only-windows', [], { windows: [{ name: 'freeze' }] })]);
    expect(p.precedence).toEqual(DEFAULT_PRECEDENCE);
    expect(p.rules).toBe(DEFAULT_POLICY.rules);
    expect(p.windows).toHaveLength(1);
    expect(p.isDefault).toBe(false);
  });
});

describe('parsing', () => {
  it.each([
    ['2026-11-27T14:00:00Z', '2026-11-27T14:00:00.000Z'],
    ['2026-11-27T15:00:00+01:00', '2026-11-27T14:00:00.000Z'],
    ['2026-11-27T14:00Z', '2026-11-27T14:00:00.000Z'],
    ['2026-11-27', '2026-11-27T00:00:00.000Z'],
  ])('parseTime(%s) = %s', (text, want) => {
    expect(parseTime(text)).toEqual({ ok: true, value: want });
  });
  it.each([
    ['2026-11-27T14:00:00', 'without a zone it means something else on every machine'],
    ['2026-02-30', 'no such day'],
    ['tomorrow', 'not a time'],
    ['2026-11-27T25:00:00Z', 'no such hour'],
  ])('parseTime(%s) fails: %s', (text) => {
    expect(parseTime(text).ok).toBe(false);
  });

  it.each([
    ['09:00-17:00', { start: 540, end: 1020 }],
    ['22:00-06:00', { start: 1320, end: 360 }],
    ['00:00-24:00', { start: 0, end: 1440 }],
  ])('parseHours(%s)', (text, want) => {
    expect(parseHours(text)).toEqual({ ok: true, value: want });
  });
  it.each(['9-17', '10:00-10:00', '24:00-01:00', '10:60-11:00', '00:00-24:30'])(
    'parseHours(%s) fails',
    (text) => {
      expect(parseHours(text).ok).toBe(false);
    },
  );

  it.each([
    ['ttl', { kind: 'ttl' }],
    ['30m', { kind: 'duration', ms: 1_800_000 }],
    ['1h30m', { kind: 'duration', ms: 5_400_000 }],
    ['2026-11-27T14:00:00Z', { kind: 'time', at: '2026-11-27T14:00:00.000Z' }],
  ])('parseHoldUntil(%s)', (text, want) => {
    expect(parseHoldUntil(text)).toEqual({ ok: true, value: want });
  });
  it.each(['forever', '30x', '0m', '2026-11-27T14:00:00'])('parseHoldUntil(%s) fails', (text) => {
    expect(parseHoldUntil(text).ok).toBe(false);
  });
});

describe('shortValue', () => {
  it.each([
    ['nginx:1.27.3', 'nginx:1.27.3'],
    [5, '5'],
    ['', '""'],
    [undefined, '(absent)'],
    [{ a: [1, 2] }, '{"a":[1,2]}'],
    ['x'.repeat(41), `${'x'.repeat(39)}…`],
    ['a\n\tb', 'a b'],
  ])('%j → %s', (value, want) => {
    expect(shortValue(value)).toBe(want);
  });
  it('never throws', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(shortValue(cyclic)).toBe('(a value)');
    expect(shortValue(10n)).toBe('(a value)');
  });
});

describe('decide, for any facts', () => {
  const time = fc.oneof(
    fc
      .date({
        min: new Date('2026-01-01T00:00:00Z'),
        max: new Date('2027-01-01T00:00:00Z'),
        noInvalidDate: true,
      })
      .map((d) => d.toISOString()),
    fc.constantFrom('', 'soon', '2026-13-45T99:99:99Z'),
  );
  const word = fc.constantFrom('incident', 'cve', 'traffic', 'budget', 'whim', 'stability');
  const motivation = fc.record(
    {
      kind: word,
      ref: fc.string({ maxLength: 60 }),
      urgency: fc.constantFrom(...URGENCIES),
      expiresAt: time,
    },
    { requiredKeys: ['kind'] },
  );
  const actor = fc.constantFrom('alice', 'hpa', 'kubecost', 'unknown', '');
  const attribution = {
    actor,
    actorKind: fc.constantFrom(...ACTOR_KINDS),
    intent: fc.constantFrom('cost', 'availability', 'security'),
    motivation,
  };
  const value = fc.oneof(fc.anything(), fc.string({ maxLength: 80 }));
  const change = fc.record(
    {
      ...attribution,
      source: fc.constantFrom('tend', 'audit', 'announcement', 'unknown'),
      at: time,
    },
    { requiredKeys: ['actor', 'source', 'at'] },
  );
  const fieldClaim = fc.record(
    {
      ...attribution,
      address: fc.constant('k8s.deployments/web'),
      field: fc.constant('replicas'),
      value,
      decision: fc.constantFrom(...DECISIONS),
      rule: fc.string({ maxLength: 20 }),
      since: time,
      until: time,
      then: fc.constantFrom('enforce', 'accept', 'yield', 'escalate'),
    },
    { requiredKeys: ['actor', 'address', 'field', 'value', 'decision', 'rule', 'since'] },
  ) as fc.Arbitrary<FieldClaim>;
  const driftFacts = fc.record(
    {
      address: fc.constant('k8s.deployments/web'),
      type: fc.constantFrom('k8s.deployments', 'sb.instances'),
      labels: fc.dictionary(
        fc.constantFrom('tier', 'team', '__proto__', 'toString'),
        fc.string({ maxLength: 5 }),
      ),
      field: fc.constantFrom('replicas', 'spec.replicas', 'tags.team', 'image', ''),
      declared: value,
      observed: value,
      change,
      claim: fieldClaim,
      now: time,
    },
    {
      requiredKeys: ['address', 'type', 'labels', 'field', 'declared', 'observed', 'change', 'now'],
    },
  ) as fc.Arbitrary<DriftFacts>;
  const list = <T>(a: fc.Arbitrary<T>) => fc.array(a, { minLength: 1, maxLength: 3 });
  const rule = fc.record(
    {
      id: fc.string({ maxLength: 12 }),
      when: fc.record(
        {
          actor: list(actor),
          actorKind: list(fc.constantFrom(...ACTOR_KINDS)),
          motivation: list(word),
          ref: list(fc.string({ maxLength: 6 })),
          urgency: fc.constantFrom(...URGENCIES),
          field: list(fc.constantFrom('replicas', 'tags', '*', '**', 'spec.image')),
          type: list(fc.constantFrom('k8s.*', '**', 'sb.instances')),
          labels: fc.dictionary(fc.constantFrom('tier', 'team'), fc.string({ maxLength: 3 })),
          window: list(fc.constantFrom('freeze', 'nights', 'missing')),
        },
        { requiredKeys: [] },
      ),
      decide: fc.constantFrom(...DECISIONS),
      until: fc.oneof(
        fc.constant({ kind: 'ttl' as const }),
        fc.integer({ min: -1e16, max: 1e16 }).map((ms) => ({ kind: 'duration' as const, ms })),
        time.map((at) => ({ kind: 'time' as const, at })),
      ),
      then: fc.constantFrom('enforce', 'accept', 'yield', 'escalate'),
    },
    { requiredKeys: ['id', 'when', 'decide'] },
  ) as fc.Arbitrary<ArbitrationRule>;
  const anyPolicy = fc.record({
    rules: fc.array(rule, { maxLength: 5 }),
    precedence: fc.array(word, { maxLength: 6 }),
    windows: fc.constant([
      FREEZE,
      { name: 'nights', hours: '22:00-06:00', days: ['fri' as const] },
    ]),
    isDefault: fc.boolean(),
  });

  it('never throws, is deterministic, and gives one known decision with a one-line reason', () => {
    fc.assert(
      fc.property(anyPolicy, driftFacts, (p, f) => {
        const got = decide(p, f);
        expect(DECISIONS).toContain(got.decision);
        expect(got.reason.length).toBeGreaterThan(0);
        expect(got.reason).not.toMatch(/[\n\r]/);
        expect(decide(p, f)).toEqual(got);
        if (got.decision === 'hold') expect(got.until).toBeDefined();
        if (got.decision === 'enforce') expect(got.restore).toBeDefined();
      }),
      { numRuns: 500 },
    );
  });

  it('with no rules enforces, unless an ended hold says what comes next', () => {
    fc.assert(
      fc.property(driftFacts, fc.array(word), (f, order) => {
        const got = decide({ rules: [], precedence: order, windows: [], isDefault: false }, f);
        const c = f.claim;
        const endedHold =
          c?.decision === 'hold' &&
          c.until !== undefined &&
          c.then !== undefined &&
          c.actor === f.change.actor &&
          Date.parse(c.until) <= Date.parse(f.now);
        if (endedHold) expect(got.decision).toBe(c.then);
        else expect(got.decision).toBe('enforce');
        if (c === undefined) expect(got.rule).toBe('default');
      }),
      { numRuns: 500 },
    );
  });
});
