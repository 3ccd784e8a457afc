import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TendError } from '../core/index.js';
import { defaultContext } from './context.js';
import { addWorkspace, fleetStatus, listWorkspaces, removeWorkspace } from './fleet.js';

// What `tend workspace add/list/remove` and `tend fleet status` refuse before they reach a database:
// a bad name, a directory without an intent or naming another workspace, a store that is not shared.
// Each message says what is wrong and what to do. (The registry itself: postgres-registry.test.ts;
// the commands end to end: test/e2e/fleet.test.ts.)

const root = mkdtempSync(join(tmpdir(), 'tend-fleet-app-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
// No TEND_STORE_URL: the default store is a SQLite file, which has no registry.
const ctx = defaultContext({ env: {} });

async function refusal(promise: Promise<unknown>): Promise<TendError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TendError);
  return error as TendError;
}

function dir(name: string, files: Record<string, string> = {}): string {
  const d = join(root, name);
  mkdirSync(d, { recursive: true });
  for (const [f, text] of Object.entries(files)) writeFileSync(join(d, f), text);
  return d;
}

describe('the fleet registry’s use cases refuse bad input', () => {
  it('refuses a workspace name that breaks the rule of workspace names', async () => {
    for (const name of ['Shop', '-shop', 'shop_', 'a/b', '', 'x'.repeat(65)]) {
      const e = await refusal(addWorkspace(ctx, { name, dir: root }));
      expect({ code: e.code, message: e.message }).toEqual({
        code: 'workspace.invalid_name',
        message: `workspace name ${JSON.stringify(name)} is not valid`,
      });
      expect(e.hint).toContain("lower-case letters, digits, '.', '_' or '-', at most 64");
    }
  });

  it('refuses a directory that is missing or holds no intent', async () => {
    const missing = join(root, 'nowhere');
    const e1 = await refusal(addWorkspace(ctx, { name: 'shop', dir: missing }));
    expect({ code: e1.code, message: e1.message }).toEqual({
      code: 'workspace.no-intent',
      message: `${missing} is not a directory`,
    });
    const empty = dir('empty', { 'README.md': '# not an intent' });
    const e2 = await refusal(addWorkspace(ctx, { name: 'shop', dir: empty }));
    expect({ code: e2.code, message: e2.message }).toEqual({
      code: 'workspace.no-intent',
      message: `${empty} holds no intent: no *.yaml file in it`,
    });
    expect(e2.hint).toContain('every worker must be able to read it at this path');
  });

  it('refuses an intent whose Workspace document names another workspace', async () => {
    const d = dir('named', { 'ws.yaml': 'kind: Workspace\nname: billing\n' });
    const e = await refusal(addWorkspace(ctx, { name: 'shop', dir: d }));
    expect({ code: e.code, message: e.message, hint: e.hint }).toEqual({
      code: 'workspace.name-mismatch',
      message: `the intent in ${d} names workspace billing (ws.yaml), not shop`,
      hint: 'register it as billing, or change its Workspace document',
    });
  });

  it('refuses a source that is both a directory and a repository, or neither', async () => {
    const d = dir('both', { 'main.yaml': 'kind: Workspace\nname: shop\n' });
    const both = await refusal(
      addWorkspace(ctx, { name: 'shop', dir: d, git: { url: 'file:///srv/i.git' } }),
    );
    expect({ code: both.code, message: both.message, hint: both.hint }).toEqual({
      code: 'workspace.source',
      message: '--dir and --git cannot be given together',
      hint: 'a workspace reads its intent from one directory or one git repository',
    });
    const neither = await refusal(addWorkspace(ctx, { name: 'shop' }));
    expect(neither.message).toBe('give where the intent is: --dir <path> or --git <url>');
  });

  it('refuses a git source with credentials, a bad ref or a path leaving the repository, before any database', async () => {
    const cases: [Parameters<typeof addWorkspace>[1]['git'], string][] = [
      [{ url: 'https://u:p4ss@h/r.git' }, 'workspace.git_url'],
      [{ url: 'file:///srv/r.git', ref: 'a..b' }, 'workspace.git_ref'],
      [{ url: 'file:///srv/r.git', path: '../up' }, 'workspace.git_path'],
    ];
    for (const [git, code] of cases) {
      // The store is SQLite (no registry): the source is refused first, for what it is.
      expect((await refusal(addWorkspace(ctx, { name: 'shop', git }))).code).toBe(code);
    }
  });

  it('refuses every registry command on a store that is not shared', async () => {
    const d = dir('ok', { 'main.yaml': 'kind: Workspace\nname: shop\n' });
    const attempts = [
      () => addWorkspace(ctx, { name: 'shop', dir: d }),
      () => addWorkspace(ctx, { name: 'shop', git: { url: 'file:///srv/r.git' } }),
      () => listWorkspaces(ctx, {}),
      () => removeWorkspace(ctx, { name: 'shop' }),
      () => fleetStatus(ctx, { store: join(root, 'state.db') }),
    ];
    for (const attempt of attempts) {
      const e = await refusal(attempt());
      expect({ code: e.code, message: e.message }).toEqual({
        code: 'fleet.shared-store-required',
        message:
          'a workspace registry needs a shared store: --store postgres://… or TEND_STORE_URL',
      });
    }
  });
});
