import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitOnNewBranch } from './git-commit.js';
import { writeFileAtomic } from './write-file-atomic.js';

const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Tend Test',
  GIT_AUTHOR_EMAIL: 'tend@example.test',
  GIT_COMMITTER_NAME: 'Tend Test',
  GIT_COMMITTER_EMAIL: 'tend@example.test',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

describe('commitOnNewBranch', () => {
  let dir: string;
  let file: string;
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env }).toString().trim();
  const request = (over: Partial<Parameters<typeof commitOnNewBranch>[0]> = {}) => ({
    file,
    text: 'replicas: 5\n',
    branch: 'tend/accept-api-replicas-abc1234',
    message: 'accept sb.services/api replicas=5 (observed)',
    write: (f: string, t: string) => writeFileAtomic(f, t),
    env,
    ...over,
  });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tend-git-'));
    file = join(dir, 'app.yaml');
    writeFileSync(file, 'replicas: 2\n');
    writeFileSync(join(dir, 'other.yaml'), 'x: 1\n');
    git('init', '--quiet', '--initial-branch', 'main');
    git('add', '.');
    git('commit', '--quiet', '-m', 'intent');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('commits the file alone on a new branch and returns to the branch it was on', async () => {
    writeFileSync(join(dir, 'other.yaml'), 'x: 2\n'); // someone's unrelated work in progress
    const done = await commitOnNewBranch(request());
    expect(done).toMatchObject({ branch: 'tend/accept-api-replicas-abc1234', returnedTo: 'main' });
    expect(git('symbolic-ref', '--short', 'HEAD')).toBe('main');
    expect(readFileSync(file, 'utf8')).toBe('replicas: 2\n');
    expect(readFileSync(join(dir, 'other.yaml'), 'utf8')).toBe('x: 2\n');
    expect(git('show', `${done.branch}:app.yaml`)).toBe('replicas: 5');
    expect(git('show', `${done.branch}:other.yaml`)).toBe('x: 1');
    expect(git('log', '-1', '--format=%H %s', done.branch)).toBe(
      `${done.commit} accept sb.services/api replicas=5 (observed)`,
    );
  });

  it.each([
    ['a modified file', () => writeFileSync(file, 'replicas: 3\n'), /uncommitted changes/],
    ['a detached HEAD', () => git('checkout', '--quiet', '--detach'), /HEAD is detached/],
    [
      'an existing branch',
      () => git('branch', 'tend/accept-api-replicas-abc1234'),
      /already exists/,
    ],
    [
      'an untracked file',
      () => {
        git('rm', '--quiet', '--cached', 'app.yaml');
        git('commit', '--quiet', '-m', 'untrack');
      },
      /not tracked/,
    ],
  ])('refuses %s and changes nothing', async (_name, arrange, message) => {
    arrange();
    const head = git('rev-parse', 'HEAD');
    const before = readFileSync(file, 'utf8');
    await expect(commitOnNewBranch(request())).rejects.toThrow(message);
    expect(git('rev-parse', 'HEAD')).toBe(head);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('refuses a file outside any work tree', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'tend-nogit-'));
    try {
      writeFileSync(join(outside, 'a.yaml'), 'a: 1\n');
      await expect(
        commitOnNewBranch({
          ...request(),
          file: join(outside, 'a.yaml'),
          env: { ...env, GIT_CEILING_DIRECTORIES: tmpdir() },
        }),
      ).rejects.toThrow(/not inside a git work tree/);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('puts everything back when the write fails', async () => {
    const failing = request({
      write: () => Promise.reject(new Error('disk full')),
    });
    await expect(commitOnNewBranch(failing)).rejects.toThrow('disk full');
    expect(git('symbolic-ref', '--short', 'HEAD')).toBe('main');
    expect(git('branch', '--list', 'tend/*')).toBe('');
    expect(git('status', '--porcelain')).toBe('');
  });

  it('puts everything back when the commit fails (a hook refuses it)', async () => {
    writeFileSync(join(dir, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    await expect(commitOnNewBranch(request())).rejects.toThrow(/git commit failed/);
    expect(git('symbolic-ref', '--short', 'HEAD')).toBe('main');
    expect(git('branch', '--list', 'tend/*')).toBe('');
    expect(git('status', '--porcelain')).toBe('');
    expect(readFileSync(file, 'utf8')).toBe('replicas: 2\n');
  });
});
