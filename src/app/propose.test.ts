import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyPatch } from 'diff';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { copyExample } from '../../test/support/cli.js';
import type { SandboxHandle } from '../../test/support/sandbox-process.js';
import { startSandboxInProcess } from '../../test/support/sandbox-process.js';
import { TendError } from '../core/index.js';
import { readChangeset } from '../engine/index.js';
import { apply } from './apply.js';
import type { AppContext } from './context.js';
import { history } from './history.js';
import { defaultContext } from './context.js';
import type { ProposeRequest } from './propose.js';
import { propose } from './propose.js';
import { acquireWorkspaceLease } from './lease.js';
import { IntentError, openWorkspace } from './workspace.js';

// The propose use case (the MCP server's propose_change) against the quickstart intent and an
// in-process sandbox: what it writes, what it never touches, and what it refuses.

const env = { QUICKSTART_ADMIN_PASSWORD: 'propose-secret-value' };
let sandbox: SandboxHandle;
let ex: ReturnType<typeof copyExample>;
let ctx: AppContext;

beforeAll(async () => {
  sandbox = await startSandboxInProcess();
});
afterAll(async () => {
  ex?.cleanup();
  await sandbox?.stop();
});
beforeEach(async () => {
  ex?.cleanup();
  await sandbox.reset();
  ex = copyExample('quickstart', sandbox.url);
  ctx = defaultContext({ env, notice: () => {} });
  const r = await apply(ctx, {
    dir: ex.dir,
    approveDestroy: false,
    prune: true,
    runChecks: false,
    verifyTimeoutMs: 5_000,
    lockTimeoutMs: 0,
  });
  expect(r.verdict).toBe('ok');
});

const run = (request: Omit<ProposeRequest, 'dir'>) => propose(ctx, { dir: ex.dir, ...request });

async function refusal(p: Promise<unknown>): Promise<TendError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(TendError);
  return e as TendError;
}

describe('propose', () => {
  it('sets several fields of one file, keeping comments, and plans them without touching anything', async () => {
    const before = ex.read('app.yaml');
    const stats = await sandbox.stats();
    const r = await run({
      set: [
        { address: 'sb.services/api', field: 'replicas', value: 3 },
        { address: 'sb.services/api', field: 'image', value: 'nginx:1.28' },
        { address: 'sb.buckets/assets', field: 'versioning', value: false },
      ],
    });
    expect(r.files).toEqual(['app.yaml']);
    expect(r.diff).toContain('+  replicas: 3');
    expect(r.diff).toContain('+  image: nginx:1.28');
    expect(r.diff).toContain('+  versioning: false');
    expect(readFileSync(r.patchFile!, 'utf8')).toBe(r.diff);
    // The patched file keeps every comment of the original.
    const patched = applyPatch(before, r.diff);
    expect(patched).not.toBe(false);
    const comments = (t: string) => t.split('\n').filter((l) => l.includes('#'));
    expect(comments(patched as string)).toEqual(comments(before));
    expect(r.plan.steps.filter((s) => s.kind === 'update').map((s) => s.address)).toEqual([
      'sb.buckets/assets',
      'sb.services/api',
    ]);
    expect(r.destructive).toEqual([]);
    expect(r.applied).toBeUndefined();
    expect(ex.read('app.yaml')).toBe(before);
    const after = await sandbox.stats();
    expect([after.creates, after.updates, after.deletes]).toEqual([
      stats.creates,
      stats.updates,
      stats.deletes,
    ]);
    const saved = await readChangeset(r.planFile);
    expect(saved.intent.dir).toBe(ex.dir);
    expect(saved.workspace).toBe(r.workspace.name);
  });

  it('gives the same id and files for the same proposal, another for another', async () => {
    const a = await run({ set: [{ address: 'sb.services/api', field: 'replicas', value: 3 }] });
    const b = await run({ set: [{ address: 'sb.services/api', field: 'replicas', value: 3 }] });
    const c = await run({ set: [{ address: 'sb.services/api', field: 'replicas', value: 4 }] });
    expect(b.id).toBe(a.id);
    expect(b.planFile).toBe(a.planFile);
    expect(c.id).not.toBe(a.id);
  });

  it('shows a replace with its blast radius and never applies it', async () => {
    const before = ex.read('app.yaml');
    const proposal = {
      set: [{ address: 'sb.networks/main', field: 'cidr', value: '10.20.0.0/16' }],
    };
    const r = await run(proposal);
    expect(r.destructive).toContain('sb.networks/main');
    expect(r.plan.blastRadius).toEqual(
      expect.arrayContaining(['sb.instances/web', 'sb.services/api', 'sb.volumes/data']),
    );
    const e = await refusal(
      run({
        ...proposal,
        apply: {
          actor: { actor: 'agent-7', actorKind: 'agent' },
          lockTimeoutMs: 0,
          verifyTimeoutMs: 5_000,
        },
      }),
    );
    expect(e.code).toBe('propose.destructive');
    expect(e.hint).toContain('--approve-destroy');
    expect(ex.read('app.yaml')).toBe(before);
  });

  it('applies a proposal without destructive steps as the given actor', async () => {
    const r = await run({
      set: [{ address: 'sb.services/api', field: 'replicas', value: 5 }],
      apply: {
        actor: { actor: 'agent-7', actorKind: 'agent', intent: 'availability' },
        lockTimeoutMs: 0,
        verifyTimeoutMs: 5_000,
      },
    });
    expect(r.applied?.verdict).toBe('ok');
    expect(ex.read('app.yaml')).toContain('replicas: 5');
    const service = (await sandbox.objects()).find((o) => o.type === 'services')!;
    expect(service.fields['replicas']).toBe(5);
    const h = await history(ctx, { dir: ex.dir, limit: 10, actor: ['agent-7'] });
    expect(h.changes).toEqual([
      expect.objectContaining({
        actor: 'agent-7',
        intent: 'availability',
        address: 'sb.services/api',
        fields: ['replicas'],
      }),
    ]);
  });

  it('puts the intent back when the workspace is held by another writer', async () => {
    const before = ex.read('app.yaml');
    const { ws } = await openWorkspace(ctx, { dir: ex.dir });
    const held = await acquireWorkspaceLease(ctx, ws, { command: 'tend run', waitMs: 0 });
    try {
      const e = await refusal(
        run({
          set: [{ address: 'sb.services/api', field: 'replicas', value: 6 }],
          apply: { actor: { actor: 'agent-7' }, lockTimeoutMs: 0, verifyTimeoutMs: 5_000 },
        }),
      );
      expect(e.code).toBe('workspace.locked');
      expect(e.message).toContain('tend run');
      expect(ex.read('app.yaml')).toBe(before);
    } finally {
      await held.release();
      await ws.close();
    }
  });

  it('reports an invalid proposed intent at the file of the real directory', async () => {
    const e = await refusal(
      run({ set: [{ address: 'sb.services/api', field: 'replicas', value: 'many' }] }),
    );
    expect(e).toBeInstanceOf(IntentError);
    const [d] = (e as IntentError).diagnostics.filter((x) => x.severity === 'error');
    expect(d?.file).toBe(join(ex.dir, 'app.yaml'));
    expect(d?.message).toContain('spec.replicas');
  });

  it('applies a diff that adds a file, and refuses diffs that do not fit', async () => {
    const r = await run({
      patch:
        '--- /dev/null\n+++ b/more.yml\n@@ -0,0 +1,5 @@\n+kind: Resource\n+type: sb.buckets\n+name: logs\n+spec:\n+  name: tend-propose-logs\n',
    });
    expect(r.files).toEqual(['more.yml']);
    expect(r.plan.steps.find((s) => s.address === 'sb.buckets/logs')?.kind).toBe('create');
    expect(existsSync(join(ex.dir, 'more.yml'))).toBe(false);
    const cases = [
      {
        reason: 'a hunk whose context is not in the file',
        patch: '--- a/app.yaml\n+++ b/app.yaml\n@@ -1,1 +1,1 @@\n-no such line\n+x\n',
        message: 'app.yaml: the patch does not apply',
      },
      {
        reason: 'a file outside the intent directory',
        patch: '--- a/../../etc/x.yaml\n+++ b/../../etc/x.yaml\n@@ -1,1 +1,1 @@\n-a\n+b\n',
        message: 'is outside the intent directory',
      },
      {
        reason: "a file in Tend's own directory",
        patch: '--- /dev/null\n+++ b/.tend/x.yaml\n@@ -0,0 +1,1 @@\n+a: 1\n',
        message: 'is outside the intent directory',
      },
      {
        reason: 'a file that is not YAML',
        patch: '--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1,1 @@\n+hello\n',
        message: 'is not an intent file (.yaml or .yml)',
      },
      {
        reason: 'a file that does not exist',
        patch: '--- a/gone.yaml\n+++ b/gone.yaml\n@@ -1,1 +1,1 @@\n-a\n+b\n',
        message: 'gone.yaml: no such intent file',
      },
      {
        reason: 'a new file that exists',
        patch: '--- /dev/null\n+++ b/app.yaml\n@@ -0,0 +1,1 @@\n+a: 1\n',
        message: 'app.yaml: already exists',
      },
      { reason: 'no hunk at all', patch: 'just text\n', message: 'the patch changes nothing' },
    ];
    for (const c of cases) {
      const e = await refusal(run({ patch: c.patch }));
      expect(e.code, c.reason).toBe('propose.bad_patch');
      expect(e.message, c.reason).toContain(c.message);
    }
  });

  it.each([
    {
      reason: 'an address the intent does not declare, with near matches',
      set: { address: 'sb.services/apj', field: 'replicas', value: 1 },
      code: 'propose.unknown_address',
      message: 'sb.services/apj is not a resource of the intent',
      hint: 'did you mean sb.services/api?',
    },
    {
      reason: 'a field path that cannot be read',
      set: { address: 'sb.services/api', field: 'a..b', value: 1 },
      code: 'propose.invalid_field',
      message: '`a..b` is not a field path',
    },
    {
      reason: 'a field that holds a reference to another resource',
      set: { address: 'sb.services/api', field: 'network_id', value: 'net-1' },
      code: 'propose.field_elsewhere',
      message: 'sb.services/api network_id',
    },
  ])('refuses $reason', async ({ set, code, message, hint }) => {
    const e = await refusal(run({ set: [set] }));
    expect(e.code).toBe(code);
    expect(e.message).toContain(message);
    if (hint) expect(e.hint).toContain(hint);
  });
});
