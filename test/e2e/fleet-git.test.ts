import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliProcess, CliResult } from '../support/cli.js';
import { runCli, startCli } from '../support/cli.js';
import type { PostgresHandle } from '../support/postgres.js';
import { POSTGRES, startPostgres } from '../support/postgres.js';
import type { WorkerLine } from '../support/fleet.js';
import { serviceIntent, sleep } from '../support/fleet.js';
import type { SandboxHandle } from '../support/sandbox-process.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// Issue 26, "What it must show": a git workspace. One PostgreSQL cluster, one sandbox process, a
// bare repository made by the test (`git init --bare`) and a work clone pushing to it over file://,
// one `tend worker` (the built CLI). The workspace `shop` is registered with `--git file://… --ref
// main --path infra`; the worker converges it; a pushed commit that changes `replicas` is on the
// platform within two passes and named on the ledger entries (`tend history --json`) and by `tend
// status --json`; a pushed commit whose intent does not load leaves the last good one in force with
// a clear failure in the worker's log; `tend accept --git` pushes a branch to the repository (never
// to main); `tend ledger verify` is intact at the end. With CI=true a missing PostgreSQL fails.

const LEDGER_KEY = 'fleet-git-ledger-key-0123456789abcdef0123';
const WORKER = 'w-git';
const NAME = 'shop';
const INTERVAL_S = 2;
const GIT_ENV = {
  GIT_AUTHOR_NAME: 'Tend Test',
  GIT_AUTHOR_EMAIL: 'tend@example.test',
  GIT_COMMITTER_NAME: 'Tend Test',
  GIT_COMMITTER_EMAIL: 'tend@example.test',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

interface HistoryJson {
  changes: {
    seq: number;
    action: string;
    address?: string;
    after?: Record<string, unknown>;
    origin?: { kind: string; url: string; ref: string; commit: string; path?: string };
  }[];
  ledger: { ok: boolean };
}

interface StatusJson {
  resources: { address: string; state: string }[];
  gitSource?: { url: string; ref: string; path?: string; commit?: string; lastPassAt?: string };
}

describe.skipIf(POSTGRES.skip)(`a git workspace in a fleet${POSTGRES.note}`, () => {
  let server: PostgresHandle;
  let sandbox: SandboxHandle;
  let url: string;
  let root: string;
  let bare: string;
  let work: string;
  let repoUrl: string;
  let worker: CliProcess | undefined;
  const env = () => ({
    TEND_STORE_URL: url,
    TEND_LEDGER_KEY: LEDGER_KEY,
    XDG_CACHE_HOME: join(root, 'cache-cli'),
    ...GIT_ENV,
  });
  const tend = (args: string[]): Promise<CliResult> => runCli(args, { env: env() });
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, stdio: 'pipe' })
      .toString()
      .trim();
  /** Commits the intent with `replicas` (or `text` as it is) and pushes it to main; its SHA. */
  const push = (replicas: number, text?: string): string => {
    writeFileSync(
      join(work, 'infra', 'main.yaml'),
      text ?? serviceIntent(sandbox.url, NAME, replicas),
    );
    git(work, 'add', '.');
    git(work, 'commit', '--quiet', '-m', `replicas ${replicas}`);
    git(work, 'push', '--quiet', 'origin', 'HEAD:main');
    return git(work, 'rev-parse', 'HEAD');
  };
  const lines = (): WorkerLine[] =>
    worker!
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as WorkerLine);
  const replicas = async (): Promise<unknown> =>
    (await sandbox.objects()).find(
      (o) => o.type === 'services' && o.fields['name'] === `api-${NAME}`,
    )?.fields['replicas'];
  const passes = () =>
    lines().filter((l) => l.kind === 'pass' && l.workspace === NAME) as (WorkerLine & {
      commit?: string;
    })[];
  /**
   * A copy of a good intent of the workspace, for the commands that read one besides the store
   * (history, status): the work clone may hold a bad one.
   */
  const goodIntent = (): string => {
    const dir = join(root, 'good-intent');
    execFileSync('mkdir', ['-p', dir]);
    writeFileSync(join(dir, 'main.yaml'), serviceIntent(sandbox.url, NAME, 2));
    return dir;
  };
  const history = async (): Promise<HistoryJson> => {
    const r = await tend([
      'history',
      goodIntent(),
      '--workspace',
      NAME,
      '--json',
      '--limit',
      '100',
    ]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    return JSON.parse(r.stdout) as HistoryJson;
  };
  const status = async (): Promise<StatusJson> => {
    const r = await tend(['status', goodIntent(), '--workspace', NAME, '--offline', '--json']);
    expect([0, 1], r.stdout + r.stderr).toContain(r.code);
    return JSON.parse(r.stdout) as StatusJson;
  };
  const waitFor = async (what: string, ok: () => Promise<boolean> | boolean, ms: number) => {
    const until = Date.now() + ms;
    while (!(await ok())) {
      if (Date.now() > until) throw new Error(`${what}: not within ${ms} ms\n${worker?.output()}`);
      await sleep(250);
    }
  };

  beforeAll(async () => {
    server = await startPostgres();
    await server.createDatabase('fleet_git');
    url = server.url('fleet_git');
    sandbox = await startSandboxProcess();
    root = mkdtempSync(join(tmpdir(), 'tend-fleet-git-'));
    bare = join(root, 'infra.git');
    work = join(root, 'work');
    repoUrl = `file://${bare}`;
    git(root, 'init', '--quiet', '--bare', '--initial-branch', 'main', bare);
    git(root, 'clone', '--quiet', bare, work);
    execFileSync('mkdir', [join(work, 'infra')]);
    writeFileSync(join(work, 'README.md'), 'the shop\n');
    push(2);
  }, 120_000);
  afterAll(async () => {
    await worker?.stop('SIGKILL');
    await sandbox?.stop();
    await server?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('refuses a URL with credentials, with a hint, and --dir with --git', async () => {
    const withPassword = await tend([
      'workspace',
      'add',
      'x',
      '--git',
      'https://alice:s3cret@git.example.test/infra.git',
    ]);
    expect(withPassword.code).toBe(1);
    expect(withPassword.stdout + withPassword.stderr).toContain('carries credentials');
    expect(withPassword.stdout + withPassword.stderr).toContain('credential helper');
    expect(withPassword.stdout + withPassword.stderr).not.toContain('s3cret');
    const both = await tend(['workspace', 'add', 'x', '--git', repoUrl, '--dir', root]);
    expect(both.code).toBe(1);
    expect(both.stdout + both.stderr).toContain('--dir and --git cannot be given together');
    const refAlone = await tend(['workspace', 'add', 'x', '--dir', root, '--ref', 'main']);
    expect(refAlone.code).toBe(1);
    expect(refAlone.stdout + refAlone.stderr).toContain('--ref and --path go with --git');
  });

  it('converges, follows a pushed commit within two passes, records it everywhere, keeps the last good commit, pushes an accepted change on a branch', async () => {
    const add = await tend([
      'workspace',
      'add',
      NAME,
      '--git',
      repoUrl,
      '--path',
      'infra',
      '--json',
    ]);
    expect(add.code, add.stdout + add.stderr).toBe(0);
    expect(JSON.parse(add.stdout)).toMatchObject({
      ok: true,
      added: true,
      workspace: { name: NAME, source: { kind: 'git', url: repoUrl, ref: 'main', path: 'infra' } },
    });
    const list = await tend(['workspace', 'list']);
    expect(list.stdout).toContain(`git ${repoUrl} main path infra`);

    const first = git(work, 'rev-parse', 'HEAD');
    worker = startCli(
      [
        'worker',
        '--id',
        WORKER,
        '--lease-ttl',
        '6',
        '--interval',
        String(INTERVAL_S),
        '--cache-dir',
        join(root, 'cache-worker'),
        '--json',
      ],
      { env: env() },
    );

    // 1. The first commit converges; its entries name it.
    await waitFor('converged at replicas 2', async () => (await replicas()) === 2, 60_000);
    let h = await history();
    const created = h.changes.filter((c) => c.address === 'sb.services/api');
    expect(created.length).toBeGreaterThan(0);
    for (const c of h.changes) {
      expect(c.origin).toEqual({
        kind: 'git',
        url: repoUrl,
        ref: 'main',
        commit: first,
        path: 'infra',
      });
    }

    // 2. A pushed commit changing replicas: on the platform within two passes after the push.
    const passesBefore = passes().length;
    const second = push(5);
    const pushedAt = Date.now();
    await waitFor('replicas 5', async () => (await replicas()) === 5, 60_000);
    // The passes that ended after the push, up to the first planned from the new commit.
    await waitFor(
      'a pass from the new commit',
      () => passes().some((p) => p.commit === second),
      30_000,
    );
    const passesTaken = passes().findIndex((p) => p.commit === second) - passesBefore + 1;
    console.log(
      `fleet-git: commit ${second.slice(0, 12)} applied ${Date.now() - pushedAt} ms after the push, ${passesTaken} pass(es) later`,
    );
    expect(passesTaken).toBeGreaterThanOrEqual(1);
    expect(passesTaken).toBeLessThanOrEqual(2);
    expect(passes().find((p) => p.commit === second)!.states).toMatchObject({
      converged: 1,
      pending: 0,
      failing: 0,
      error: 0,
    });
    h = await history();
    const update = h.changes.filter((c) => c.action === 'update' && c.after?.['replicas'] === 5);
    expect(update).toHaveLength(1);
    expect(update[0]!.origin).toEqual({
      kind: 'git',
      url: repoUrl,
      ref: 'main',
      commit: second,
      path: 'infra',
    });
    await waitFor(
      'status names the second commit',
      async () => (await status()).gitSource?.commit === second,
      30_000,
    );
    const s = await status();
    expect(s.gitSource).toMatchObject({ url: repoUrl, ref: 'main', path: 'infra', commit: second });

    // 3. A commit whose intent does not load: a clear failure, the second commit stays in force.
    const bad = push(7, 'kind: Resource\ntype: sb.services\nname: api\nspec: [not, a, mapping\n');
    await waitFor(
      'the bad commit reported',
      () =>
        lines().some(
          (l) =>
            l.kind === 'failed' &&
            l.code === 'git.intent_invalid' &&
            (l.message ?? '').includes(bad.slice(0, 12)),
        ),
      60_000,
    );
    const failed = lines().find((l) => l.kind === 'failed' && l.code === 'git.intent_invalid')!;
    expect(failed.message).toContain(
      `commit ${bad.slice(0, 12)} of ${repoUrl} (main) does not load`,
    );
    expect(failed.message).toContain(`commit ${second.slice(0, 12)} stays in force`);
    expect(failed.hint).toMatch(/fix the intent on main/);
    // Passes go on, from the second commit: still 5, and status still names it.
    const after = passes().length;
    await waitFor('two more passes', () => passes().length >= after + 2, 30_000);
    expect(await replicas()).toBe(5);
    expect((await status()).gitSource?.commit).toBe(second);

    // 4. Fix it: the next good commit takes over.
    const third = push(3);
    await waitFor('replicas 3', async () => (await replicas()) === 3, 60_000);
    h = await history();
    expect(h.changes.at(-1)!.origin?.commit).toBe(third);

    // 5. accept --git of another value commits it on a new branch of the repository and pushes it.
    const acc = await tend([
      'accept',
      'sb.services/api',
      'replicas',
      '--value',
      '4',
      '--workspace',
      NAME,
      '--git',
      '--json',
    ]);
    expect(acc.code, acc.stdout + acc.stderr).toBe(0);
    const report = JSON.parse(acc.stdout) as { branch: string; commit: string; pushedTo: string };
    expect(report.branch).toMatch(/^tend\/accept-api-replicas-/);
    expect(report.pushedTo).toBe(repoUrl);
    const remoteBranches = git(
      bare,
      'for-each-ref',
      '--format=%(refname:short) %(objectname)',
      'refs/heads',
    );
    expect(remoteBranches).toContain(`${report.branch} ${report.commit}`);
    expect(git(bare, 'rev-parse', 'main')).toBe(third); // the followed ref is untouched
    expect(git(bare, 'show', `${report.branch}:infra/main.yaml`)).toContain('replicas: 4');
    expect(git(bare, 'rev-parse', `${report.branch}^`)).toBe(third);

    // 6. The ledger, old entries and new, verifies with the key.
    const verify = await tend(['ledger', 'verify', '--workspace', NAME]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);

    const stopped = await worker.stop('SIGTERM');
    expect(stopped).toBe(0);
  }, 300_000);
});
