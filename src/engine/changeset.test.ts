import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address, Changeset, StaleObject } from '../core/index.js';
import {
  markerTags,
  parseChangeset,
  REDACTED,
  Redactor,
  serializeChangeset,
} from '../core/index.js';
import type { RunningSandbox } from '../sandbox/index.js';
import { startSandbox } from '../sandbox/index.js';
import {
  changesetRefusal,
  checkChangeset,
  makeChangeset,
  staleChangesetError,
  staleSteps,
  unexpectedSteps,
} from './changeset.js';
import { isChangesetPath, readChangeset, writeChangeset } from './changeset-file.js';
import type { Observation } from './observe.js';
import { observe } from './observe.js';
import { planPass } from './planner.js';
import type { Workspace } from './workspace.js';
import { openWorkspaceAt as openWorkspace } from '../app/index.js';

// Changesets against the real sandbox through the real OpenAPI provider: plan, save, let another
// actor change the platform, observe again, and ask which pinned objects moved.

const SPEC = resolve(import.meta.dirname, '../sandbox/openapi.json');
const WS = 'cs';

let sb: RunningSandbox;
let root: string;

beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
  root = mkdtempSync(join(tmpdir(), 'tend-changeset-'));
});
afterAll(async () => {
  await sb.close();
  rmSync(root, { recursive: true, force: true });
});

/** The intent: a network read by an instance (created), a volume on that instance, buckets. */
function intentText(opts: { team?: string } = {}): string {
  return `kind: Provider
name: sb
type: openapi
spec: ${SPEC}
endpoint: ${sb.url}
---
kind: Resource
type: sb.networks
name: main
spec:
  name: main
  cidr: 10.0.0.0/16
  tags: { team: ${opts.team ?? 'core'} }
---
kind: Resource
type: sb.networks
name: spare
spec:
  name: spare
  cidr: 10.1.0.0/16
---
kind: Resource
type: sb.instances
name: web
spec:
  name: web
  network_id: \${sb.networks/main.id}
  image: debian-12
---
kind: Resource
type: sb.volumes
name: data
spec:
  name: data
  instance_id: \${sb.instances/web.id}
  size: 10
---
kind: Resource
type: sb.buckets
name: assets
spec:
  name: assets
  versioning: true
---
kind: Resource
type: sb.buckets
name: logs
spec:
  name: logs
`;
}

async function workspace(text = intentText()): Promise<Workspace> {
  const dir = mkdtempSync(join(root, 'intent-'));
  writeFileSync(join(dir, 'intent.yaml'), text);
  return openWorkspace({ dir, name: WS, env: { TEND_SPEC_DIRS: dirname(SPEC) } });
}

const look = (ws: Workspace): Promise<Observation> =>
  observe(ws, { visibilityWindowMs: 0, now: new Date() });

/** What exists before planning: main and spare as declared, assets without versioning. */
async function seed(ws: Workspace): Promise<{ main: string; spare: string }> {
  sb.sandbox.reset();
  const { provider } = ws.typeOf('sb.networks');
  const ctx = (address: string) => ({
    actor: { actor: 'tend' },
    marker: { workspace: WS, address: address as Address },
  });
  const main = await provider.create(
    'networks',
    { name: 'main', cidr: '10.0.0.0/16', tags: { team: 'core' } },
    ctx('sb.networks/main'),
  );
  const spare = await provider.create(
    'networks',
    { name: 'spare', cidr: '10.1.0.0/16' },
    ctx('sb.networks/spare'),
  );
  const assets = await provider.create(
    'buckets',
    { name: 'assets', versioning: false },
    ctx('sb.buckets/assets'),
  );
  // Tend made them (its store remembers each), so the plan adopts nothing: each step is its own.
  for (const [address, o] of [
    ['sb.networks/main', main],
    ['sb.networks/spare', spare],
    ['sb.buckets/assets', assets],
  ] as const) {
    await ws.store.putTwin({
      address,
      type: `sb.${o.type}`,
      objectId: o.id,
      fields: o.fields,
      stateful: false,
      dependsOn: [],
      observedAt: '2026-11-25T00:00:00.000Z',
    });
  }
  return { main: main.id, spare: spare.id };
}

/** Another actor changes the platform behind Tend's back, over plain HTTP. */
async function outOfBand(method: string, path: string, body?: unknown): Promise<void> {
  const r = await fetch(`${sb.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', 'x-tend-actor': 'alice' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  expect(r.ok, `${method} ${path}: ${r.status} ${await r.text()}`).toBe(true);
}

async function planned(ws: Workspace): Promise<Changeset> {
  const options = { approveDestroy: false, prune: true, targets: [] };
  const pass = await planPass(ws, await look(ws), options);
  return makeChangeset(ws, pass, options, new Date('2026-11-25T01:00:00Z'));
}

const markerOf = (address: string) => markerTags({ workspace: WS, address: address as Address });

const brief = (s: StaleObject) => ({ kind: s.kind, address: s.address, fields: s.fields });

interface Case {
  readonly name: string;
  readonly reason: string;
  readonly meanwhile: (ids: { main: string; spare: string }, ws: Workspace) => Promise<void>;
  readonly want: ReturnType<typeof brief>[];
}

const CASES: Case[] = [
  {
    name: 'nothing moved',
    reason: 'the saved plan may run as it is',
    meanwhile: async () => {},
    want: [],
  },
  {
    name: 'a declared field of an updated object',
    reason: 'someone set versioning the plan was about to set: the update was computed from false',
    meanwhile: () => outOfBand('PATCH', '/buckets/assets', { versioning: true }),
    want: [{ kind: 'changed', address: 'sb.buckets/assets', fields: ['versioning'] }],
  },
  {
    name: 'a declared tag of an object only read through a reference',
    reason: 'main is a noop, but the instance create reads it: it is pinned too',
    // Tags are replaced as a whole: the other actor keeps Tend's marker, so main is still found.
    meanwhile: ({ main }) =>
      outOfBand('PATCH', `/networks/${main}`, {
        tags: { ...markerOf('sb.networks/main'), team: 'edge' },
      }),
    want: [{ kind: 'changed', address: 'sb.networks/main', fields: ['tags.team'] }],
  },
  {
    name: 'an undeclared tag',
    reason: 'fields the intent does not declare are not what the plan was computed from',
    meanwhile: ({ main }) =>
      outOfBand('PATCH', `/networks/${main}`, {
        tags: { ...markerOf('sb.networks/main'), team: 'core', owner: 'alice' },
      }),
    want: [],
  },
  {
    name: 'an object the plan does not touch',
    reason: 'spare has no step and nothing reads it: its change cannot make the plan wrong',
    meanwhile: ({ spare }) => outOfBand('PATCH', `/networks/${spare}`, { tags: { x: 'y' } }),
    want: [],
  },
  {
    name: 'a read object deleted',
    reason: 'the instance create would reference a network that is gone',
    meanwhile: ({ main }) => outOfBand('DELETE', `/networks/${main}`),
    want: [{ kind: 'deleted', address: 'sb.networks/main', fields: [] }],
  },
  {
    name: 'a natural-key object appeared where the plan creates one',
    reason: 'a bucket named logs exists now: creating it again would fail or adopt blindly',
    meanwhile: () => outOfBand('POST', '/buckets', { name: 'logs' }),
    want: [{ kind: 'appeared', address: 'sb.buckets/logs', fields: [] }],
  },
  {
    name: 'a marked object appeared where the plan creates one',
    reason: 'another apply of this workspace created the instance meanwhile',
    meanwhile: async ({ main }, ws) => {
      await ws
        .typeOf('sb.instances')
        .provider.create(
          'instances',
          { name: 'web', network_id: main, image: 'debian-12' },
          { actor: { actor: 'tend' }, marker: { workspace: WS, address: 'sb.instances/web' } },
        );
    },
    want: [{ kind: 'appeared', address: 'sb.instances/web', fields: [] }],
  },
];

describe('staleSteps: what moved since the plan, observed on the sandbox', () => {
  it.each(CASES)('$name: $reason', async ({ meanwhile, want }) => {
    const ws = await workspace();
    try {
      const ids = await seed(ws);
      const changeset = await planned(ws);
      // Through the file, as `tend apply p.json` reads it.
      const parsed = parseChangeset(serializeChangeset(changeset), 'p.json');
      if (parsed.kind !== 'ok') throw new Error(JSON.stringify(parsed.diagnostics));
      await meanwhile(ids, ws);
      const stale = staleSteps(ws, parsed.changeset, await look(ws));
      expect(stale.map(brief)).toEqual(want);
      for (const s of stale) expect(s.message).toContain(s.address);
    } finally {
      await ws.close();
    }
  });

  it('pins exactly what the plan touches, and keeps Unknown placeholders through the file', async () => {
    const ws = await workspace();
    try {
      await seed(ws);
      const changeset = await planned(ws);
      expect(changeset.pins.map((p) => [p.address, p.kind])).toEqual([
        ['sb.buckets/assets', 'present'],
        ['sb.buckets/logs', 'absent'],
        ['sb.instances/web', 'absent'],
        ['sb.networks/main', 'present'],
        ['sb.volumes/data', 'absent'],
      ]);
      const main = changeset.pins.find((p) => p.address === 'sb.networks/main');
      // Declared leaves plus the field the instance reads (`id`); never created_at or status.
      expect(main?.kind === 'present' && Object.keys(main.fields)).toEqual([
        'cidr',
        'id',
        'name',
        'tags.team',
      ]);
      const volume = changeset.plan.steps.find((s) => s.address === 'sb.volumes/data');
      expect(volume).toMatchObject({
        kind: 'create',
        desired: { instance_id: { $unknown: '${sb.instances/web.id}' } },
      });
      const parsed = parseChangeset(serializeChangeset(changeset), 'p.json');
      expect(parsed).toEqual({ kind: 'ok', changeset });
      expect(serializeChangeset(changeset)).toBe(serializeChangeset(changeset));
    } finally {
      await ws.close();
    }
  });

  it('names every moved object in the error apply exits with', () => {
    const err = staleChangesetError([
      {
        kind: 'changed',
        address: 'sb.buckets/assets',
        type: 'sb.buckets',
        fields: ['versioning'],
        message: 'sb.buckets/assets: changed since the plan was made: versioning',
      },
      {
        kind: 'deleted',
        address: 'sb.networks/main',
        type: 'sb.networks',
        fields: [],
        message: 'sb.networks/main: the object net-1 was deleted since the plan was made',
      },
    ]);
    expect(err.code).toBe('changeset.stale');
    expect(err.message).toBe(
      '2 objects changed since the plan was made; nothing was sent:\n' +
        '  sb.buckets/assets: changed since the plan was made: versioning\n' +
        '  sb.networks/main: the object net-1 was deleted since the plan was made',
    );
  });
});

describe('a targeted changeset', () => {
  it('pins only what the targeted plan touches, and is the plan its saved targets give', async () => {
    const ws = await workspace();
    try {
      await seed(ws);
      const options = {
        approveDestroy: false,
        prune: true,
        targets: ['sb.volumes/data' as Address],
      };
      const pass = await planPass(ws, await look(ws), options);
      const changeset = makeChangeset(ws, pass, options, new Date('2026-11-25T01:00:00Z'));
      expect(changeset.options.targets).toEqual(['sb.volumes/data']);
      expect(changeset.plan.steps.map((s) => `${s.kind} ${s.address}`)).toEqual([
        'noop sb.networks/main',
        'create sb.instances/web',
        'create sb.volumes/data',
      ]);
      expect(changeset.pins.map((p) => p.address)).toEqual([
        'sb.instances/web',
        'sb.networks/main',
        'sb.volumes/data',
      ]);
      // Out-of-band changes outside the targeted part do not make it stale.
      await outOfBand('PATCH', '/buckets/assets', { versioning: true });
      const now = await look(ws);
      expect(staleSteps(ws, changeset, now)).toEqual([]);
      expect(await unexpectedSteps(ws, changeset, now)).toEqual([]);
    } finally {
      await ws.close();
    }
  });
});

describe('a changeset belongs to one workspace and one intent', () => {
  it('refuses a changeset whose intent changed since, or made for another workspace', async () => {
    const ws = await workspace();
    const edited = await workspace(intentText({ team: 'platform' }));
    const same = await workspace();
    try {
      await seed(ws);
      const changeset = await planned(ws);
      expect(changesetRefusal(same, changeset)).toBeUndefined();
      const changed = changesetRefusal(edited, changeset);
      expect(changed?.code).toBe('changeset.intent_changed');
      expect(changed?.message).toBe(
        'the intent changed since the plan was made; run tend plan again',
      );
      expect(() => staleSteps(edited, changeset, {} as Observation)).toThrow(
        'the intent changed since the plan was made; run tend plan again',
      );
      const other = changesetRefusal(same, { ...changeset, workspace: 'prod' });
      expect(other?.code).toBe('changeset.other_workspace');
      expect(other?.message).toBe(
        `the changeset was made for workspace prod, not ${WS}; run tend plan again for this one`,
      );
    } finally {
      await Promise.all([ws.close(), edited.close(), same.close()]);
    }
  });
});

describe('unexpectedSteps: a saved plan is run only when it is the plan the intent gives', () => {
  it('finds nothing in a plan as written, and the step edited by hand', async () => {
    const ws = await workspace();
    try {
      await seed(ws);
      const changeset = await planned(ws);
      expect(await unexpectedSteps(ws, changeset, await look(ws))).toEqual([]);
      const raw = JSON.parse(serializeChangeset(changeset)) as {
        plan: { steps: { address: string; changes?: { after: unknown }[] }[] };
      };
      const assets = raw.plan.steps.find((s) => s.address === 'sb.buckets/assets')!;
      assets.changes![0]!.after = false;
      const parsed = parseChangeset(JSON.stringify(raw), 'p.json');
      if (parsed.kind !== 'ok') throw new Error(JSON.stringify(parsed.diagnostics));
      expect(staleSteps(ws, parsed.changeset, await look(ws))).toEqual([]);
      expect(await unexpectedSteps(ws, parsed.changeset, await look(ws))).toEqual([
        'sb.buckets/assets',
      ]);
    } finally {
      await ws.close();
    }
  });
});

describe('checkChangeset: everything apply checks, in order', () => {
  it('runs the saved plan when nothing moved, and refuses with the reason otherwise', async () => {
    const ws = await workspace();
    const edited = await workspace(intentText({ team: 'platform' }));
    try {
      const ids = await seed(ws);
      const changeset = await planned(ws);
      const mutations = () => {
        const { creates, updates, deletes } = sb.sandbox.stats();
        return { creates, updates, deletes };
      };
      const seeded = mutations();
      const fresh = await checkChangeset(ws, changeset, await look(ws));
      expect(fresh).toEqual({ kind: 'run', plan: changeset.plan });
      expect(mutations()).toEqual(seeded);

      const foreign = await checkChangeset(edited, changeset, await look(edited));
      expect(foreign.kind === 'refused' && foreign.error.code).toBe('changeset.intent_changed');

      const raw = JSON.parse(serializeChangeset(changeset)) as {
        plan: { steps: { address: string; desired?: Record<string, unknown> }[] };
      };
      raw.plan.steps.find((s) => s.address === 'sb.buckets/logs')!.desired!['versioning'] = true;
      const edit = parseChangeset(JSON.stringify(raw), 'p.json');
      if (edit.kind !== 'ok') throw new Error(JSON.stringify(edit.diagnostics));
      const handEdited = await checkChangeset(ws, edit.changeset, await look(ws));
      expect(handEdited).toMatchObject({
        kind: 'refused',
        stale: [],
        unexpected: ['sb.buckets/logs'],
      });
      expect(handEdited.kind === 'refused' && handEdited.error.code).toBe('changeset.unexpected');

      await outOfBand('PATCH', `/networks/${ids.main}`, {
        tags: { ...markerOf('sb.networks/main'), team: 'edge' },
      });
      const before = mutations();
      const moved = await checkChangeset(ws, changeset, await look(ws));
      // Observing, checking and planning again send nothing that changes the platform.
      expect(mutations()).toEqual(before);
      expect(moved.kind === 'refused' && moved.error.code).toBe('changeset.stale');
      expect(moved.kind === 'refused' && moved.stale.map(brief)).toEqual([
        { kind: 'changed', address: 'sb.networks/main', fields: ['tags.team'] },
      ]);
      expect(moved.kind === 'refused' && moved.error.message).toContain(
        'sb.networks/main: changed since the plan was made: tags.team',
      );
    } finally {
      await Promise.all([ws.close(), edited.close()]);
    }
  });
});

describe('changeset files', () => {
  it('writes, recognises and reads back a changeset; a bad file names each problem', async () => {
    const ws = await workspace();
    try {
      await seed(ws);
      const changeset = await planned(ws);
      const file = join(root, 'p.json');
      await writeChangeset(file, changeset, new Redactor());
      expect(await isChangesetPath(file)).toBe(true);
      expect(await isChangesetPath(root)).toBe(false);
      expect(await isChangesetPath(join(root, 'missing.json'))).toBe(false);
      expect(await readChangeset(file)).toEqual(changeset);

      const bad = join(root, 'bad.json');
      writeFileSync(bad, JSON.stringify({ ...changeset, workspace: 7, extra: true }));
      await expect(readChangeset(bad)).rejects.toThrow(
        `${bad} is not a valid changeset (2 problems):\n` +
          `  ${bad}: $.extra: is not a member this format knows (expected format, workspace, intent, policyVerdicts, options, createdAt, plan, pins)\n` +
          `  ${bad}: $.workspace: must be a non-empty string, not number 7`,
      );
      await expect(readChangeset(join(root, 'missing.json'))).rejects.toMatchObject({
        code: 'changeset.unreadable',
      });
    } finally {
      await ws.close();
    }
  });

  it('is written whole: a reader during many concurrent writes reads a complete plan, and no temporary file stays', async () => {
    const ws = await workspace();
    try {
      await seed(ws);
      const changeset = await planned(ws);
      const file = join(root, 'busy.json');
      await writeChangeset(file, changeset, new Redactor());
      // Replaced by a rename, never truncated and rewritten in place: a new file each time.
      const before = statSync(file).ino;
      await writeChangeset(file, changeset, new Redactor());
      expect(statSync(file).ino).not.toBe(before);
      const variants = Array.from({ length: 20 }, (_, i) => ({
        ...changeset,
        createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      }));
      const whole = [changeset, ...variants].map((v) => v.createdAt);
      let writing = true;
      let reads = 0;
      const reader = (async () => {
        while (writing) {
          // Before this was written through a temporary file, a read here could see a truncated file.
          expect(whole).toContain((await readChangeset(file)).createdAt);
          reads++;
        }
      })();
      await Promise.all(variants.map((v) => writeChangeset(file, v, new Redactor())));
      writing = false;
      await reader;
      expect(reads).toBeGreaterThan(0);
      expect(readdirSync(root).filter((f) => f.startsWith('busy.json.'))).toEqual([]);
    } finally {
      await ws.close();
    }
  });

  it('never writes a registered secret; a file it had to redact is refused when read', async () => {
    const ws = await workspace();
    try {
      await seed(ws);
      const changeset = await planned(ws);
      // Any value the file holds stands in for a secret: here the intent's hash.
      const secret = changeset.intent.hash;
      const redactor = new Redactor();
      redactor.add(secret);
      const file = join(root, 'redacted.json');
      await writeChangeset(file, changeset, redactor);
      const text = readFileSync(file, 'utf8');
      expect(text).not.toContain(secret);
      expect(text).toContain(REDACTED);
      await expect(readChangeset(file)).rejects.toMatchObject({ code: 'changeset.invalid' });
    } finally {
      await ws.close();
    }
  });
});
