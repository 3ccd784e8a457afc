import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TendError } from '../core/index.js';
import {
  checkGitPath,
  checkGitRef,
  checkGitUrl,
  defaultGitCacheDir,
  GitCheckout,
  gitSource,
} from './git-source.js';

/** The error `fn` throws (it must throw a TendError). */
function thrown(fn: () => unknown): TendError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(TendError);
    return e as TendError;
  }
  throw new Error('did not throw');
}

describe('checkGitUrl', () => {
  it.each([
    'https://github.com/acme/infra.git',
    'ssh://git@github.com/acme/infra.git',
    'ssh://github.com:2222/acme/infra.git',
    'git@github.com:acme/infra.git',
    'github.com:acme/infra.git',
    'file:///srv/git/infra.git',
    '/srv/git/infra.git',
  ])('accepts %s', (url) => {
    expect(() => checkGitUrl(url)).not.toThrow();
  });

  it.each([
    [
      'https://alice:s3cret@github.com/acme/infra.git',
      '--git "https://alice:s3cret@github.com/acme/infra.git" carries credentials (a password before the host)',
    ],
    [
      'https://ghp_0123456789abcdef@github.com/acme/infra.git',
      '--git "https://ghp_0123456789abcdef@github.com/acme/infra.git" carries credentials (a user or token before the host)',
    ],
    [
      'ssh://git:pw@github.com/acme/infra.git',
      '--git "ssh://git:pw@github.com/acme/infra.git" carries credentials (a password before the host)',
    ],
    [
      'git:pw@github.com:acme/infra.git',
      '--git "git:pw@github.com:acme/infra.git" carries credentials (a password before the host)',
    ],
  ])('refuses credentials in %s, with a hint to keep them elsewhere', (url, message) => {
    const e = thrown(() => checkGitUrl(url));
    expect(e.code).toBe('workspace.git_url');
    expect(e.message).toBe(message);
    expect(e.hint).toMatch(/credential helper.*GIT_ASKPASS.*SSH key/);
  });

  it.each([
    ['', '--git "" is not a repository URL (empty, or with spaces or control characters)'],
    [
      ' https://h/r.git',
      '--git " https://h/r.git" is not a repository URL (empty, or with spaces or control characters)',
    ],
    [
      '--upload-pack=touch /tmp/x',
      `--git "--upload-pack=touch /tmp/x" is not a repository URL (empty, or with spaces or control characters)`,
    ],
    ['-oProxyCommand=x', `--git "-oProxyCommand=x" starts with '-'`],
    [
      'http://github.com/acme/infra.git',
      '--git "http://github.com/acme/infra.git": the scheme http:// is not accepted',
    ],
    [
      'git://github.com/acme/infra.git',
      '--git "git://github.com/acme/infra.git": the scheme git:// is not accepted',
    ],
    [
      'ext::sh -c touch% /tmp/pwned',
      '--git "ext::sh -c touch% /tmp/pwned" is not a repository URL (empty, or with spaces or control characters)',
    ],
    [
      'ext::true',
      '--git "ext::true" is neither a URL (scheme://…), an scp-like git@host:path, nor an absolute path',
    ],
    [
      'infra.git',
      '--git "infra.git" is neither a URL (scheme://…), an scp-like git@host:path, nor an absolute path',
    ],
    ['file://relative/repo', '--git "file://relative/repo": a file:// URL needs an absolute path'],
    ['https:///acme/infra.git', '--git "https:///acme/infra.git" names no host'],
  ])('refuses %j', (url, message) => {
    const e = thrown(() => checkGitUrl(url));
    expect(e.code).toBe('workspace.git_url');
    expect(e.message).toBe(message);
    expect(e.hint).toBeTruthy();
  });

  it('says to use https for http', () => {
    expect(thrown(() => checkGitUrl('http://h/r.git')).hint).toMatch(/use https:\/\//);
  });
});

describe('checkGitRef', () => {
  it.each(['main', 'release/2026-11', 'v1.2.0', 'feature_x', 'refs/heads/main'])(
    'accepts %s',
    (ref) => expect(() => checkGitRef(ref)).not.toThrow(),
  );
  it.each([
    ['', 'is empty'],
    ['@', 'is @'],
    ['my branch', 'has a space, a control character or one of ~ ^ : ? * [ \\'],
    ['main~1', 'has a space, a control character or one of ~ ^ : ? * [ \\'],
    ['HEAD^', 'has a space, a control character or one of ~ ^ : ? * [ \\'],
    ['a:b', 'has a space, a control character or one of ~ ^ : ? * [ \\'],
    ['a..b', "has '..', '@{' or '//'"],
    ['main@{1}', "has '..', '@{' or '//'"],
    ['a//b', "has '..', '@{' or '//'"],
    ['-main', "starts with '-' or '/', or ends with '/'"],
    ['/main', "starts with '-' or '/', or ends with '/'"],
    ['main/', "starts with '-' or '/', or ends with '/'"],
    ['main.', "ends with '.' or '.lock', or has a part starting with '.'"],
    ['main.lock', "ends with '.' or '.lock', or has a part starting with '.'"],
    ['a/.hidden', "ends with '.' or '.lock', or has a part starting with '.'"],
  ])('refuses %j', (ref, why) => {
    const e = thrown(() => checkGitRef(ref));
    expect(e.code).toBe('workspace.git_ref');
    expect(e.message).toBe(`--ref ${JSON.stringify(ref)} ${why}`);
    expect(e.hint).toMatch(/branch or a tag/);
  });
});

describe('checkGitPath', () => {
  it.each([
    ['infra/prod', 'infra/prod'],
    ['./infra/prod/', 'infra/prod'],
    ['infra//prod', 'infra/prod'],
    ['.', undefined],
    ['', undefined],
  ])('normalises %j to %j', (path, normal) => expect(checkGitPath(path)).toBe(normal));
  it.each([
    ['/etc', 'is absolute'],
    ['../other', "leaves the repository ('..')"],
    ['infra/../../x', "leaves the repository ('..')"],
    ['infra\\prod', 'has a backslash or a control character'],
  ])('refuses %j', (path, why) => {
    const e = thrown(() => checkGitPath(path));
    expect(e.code).toBe('workspace.git_path');
    expect(e.message).toBe(`--path ${JSON.stringify(path)} ${why}`);
    expect(e.hint).toMatch(/relative to the repository root/);
  });
});

describe('gitSource', () => {
  it('defaults the ref to main and drops a root path', () => {
    expect(gitSource({ url: '/srv/r.git', path: '.' })).toEqual({
      kind: 'git',
      url: '/srv/r.git',
      ref: 'main',
    });
    expect(gitSource({ url: '/srv/r.git', ref: 'prod', path: 'a/b/' })).toEqual({
      kind: 'git',
      url: '/srv/r.git',
      ref: 'prod',
      path: 'a/b',
    });
  });
});

describe('defaultGitCacheDir', () => {
  it('is under XDG_CACHE_HOME when it is absolute, else ~/.cache', () => {
    expect(defaultGitCacheDir({ XDG_CACHE_HOME: '/var/cache/x', HOME: '/home/a' })).toBe(
      '/var/cache/x/tend/git',
    );
    expect(defaultGitCacheDir({ XDG_CACHE_HOME: 'relative', HOME: '/home/a' })).toBe(
      '/home/a/.cache/tend/git',
    );
  });
});

// A real repository (git init --bare) pushed to from a work clone, fetched over file://.
describe('GitCheckout', () => {
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'Tend Test',
    GIT_AUTHOR_EMAIL: 'tend@example.test',
    GIT_COMMITTER_NAME: 'Tend Test',
    GIT_COMMITTER_EMAIL: 'tend@example.test',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
  };
  let root: string;
  let bare: string;
  let work: string;
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, env, stdio: 'pipe' }).toString().trim();
  const commit = (file: string, text: string) => {
    mkdirSync(join(work, file, '..'), { recursive: true });
    writeFileSync(join(work, file), text);
    git(work, 'add', '.');
    git(work, 'commit', '--quiet', '-m', `edit ${file}`);
    git(work, 'push', '--quiet', 'origin', 'HEAD:main');
    return git(work, 'rev-parse', 'HEAD');
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'tend-git-source-'));
    bare = join(root, 'remote.git');
    work = join(root, 'work');
    git(root, 'init', '--quiet', '--bare', '--initial-branch', 'main', bare);
    git(root, 'clone', '--quiet', bare, work);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('lays out the commit the ref points to, in a folder named by it, and a new one after a push', async () => {
    const first = commit('infra/main.yaml', 'replicas: 2\n');
    const checkout = new GitCheckout(
      { kind: 'git', url: `file://${bare}`, ref: 'main', path: 'infra' },
      join(root, 'cache', 'ws'),
      env,
    );
    const a = await checkout.snapshot();
    expect(a.origin).toEqual({
      kind: 'git',
      url: `file://${bare}`,
      ref: 'main',
      commit: first,
      path: 'infra',
    });
    expect(a.dir).toBe(join(root, 'cache', 'ws', 'commits', first, 'infra'));
    expect(readFileSync(join(a.dir, 'main.yaml'), 'utf8')).toBe('replicas: 2\n');
    // The same commit again: the same tree, nothing laid out again.
    expect(await checkout.snapshot()).toEqual(a);

    const second = commit('infra/main.yaml', 'replicas: 5\n');
    const b = await checkout.snapshot();
    expect(b.origin.commit).toBe(second);
    expect(readFileSync(join(b.dir, 'main.yaml'), 'utf8')).toBe('replicas: 5\n');
    // The first commit's tree is untouched (a run may still read it until it switches).
    expect(readFileSync(join(a.dir, 'main.yaml'), 'utf8')).toBe('replicas: 2\n');
    // No temporary folder is left behind.
    expect(readdirSync(join(root, 'cache', 'ws', 'commits')).sort()).toEqual(
      [first, second].sort(),
    );
  });

  it('keeps the three newest trees', async () => {
    const checkout = new GitCheckout({ kind: 'git', url: bare, ref: 'main' }, join(root, 'c'), env);
    const shas: string[] = [];
    for (let i = 0; i < 5; i++) {
      shas.push(commit('main.yaml', `replicas: ${i}\n`));
      await checkout.snapshot();
      await new Promise((r) => setTimeout(r, 20)); // distinct modification times
    }
    const kept = readdirSync(join(root, 'c', 'commits'));
    expect(kept).toHaveLength(3);
    expect(kept).toContain(shas[4]);
    expect(existsSync(join(root, 'c', 'commits', shas[0]!))).toBe(false);
  });

  it('fails with git.fetch_failed when the ref does not exist, naming it', async () => {
    commit('main.yaml', 'x: 1\n');
    const checkout = new GitCheckout({ kind: 'git', url: bare, ref: 'nope' }, join(root, 'c'), env);
    const e = (await checkout.snapshot().catch((x: unknown) => x)) as TendError;
    expect(e).toBeInstanceOf(TendError);
    expect(e.code).toBe('git.fetch_failed');
    expect(e.message).toMatch(new RegExp(`^cannot fetch nope from ${bare}: .*nope`));
    expect(e.hint).toMatch(/no branch or tag nope/);
  });

  it('fails with git.fetch_failed when the repository is not there', async () => {
    const checkout = new GitCheckout(
      { kind: 'git', url: join(root, 'missing.git'), ref: 'main' },
      join(root, 'c'),
      env,
    );
    const e = (await checkout.snapshot().catch((x: unknown) => x)) as TendError;
    expect(e.code).toBe('git.fetch_failed');
    expect(e.message).toContain(`cannot fetch main from ${join(root, 'missing.git')}`);
    expect(e.hint).toMatch(/reach the repository/);
  });

  it('fails with git.path_not_found when the commit has no such folder', async () => {
    const sha = commit('main.yaml', 'x: 1\n');
    const checkout = new GitCheckout(
      { kind: 'git', url: bare, ref: 'main', path: 'infra/prod' },
      join(root, 'c'),
      env,
    );
    const e = (await checkout.snapshot().catch((x: unknown) => x)) as TendError;
    expect(e.code).toBe('git.path_not_found');
    expect(e.message).toBe(`commit ${sha.slice(0, 12)} of ${bare} (main) has no folder infra/prod`);
  });
});
