import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join, posix } from 'node:path';
import type { IntentOrigin } from '../core/index.js';
import { TendError } from '../core/index.js';
import type { GitSource } from '../store/index.js';
import { ProgramFailure, runProgram } from './run-program.js';

// Git workspaces (docs/fleet.md, decision 0044): what `tend workspace add --git` accepts, and how the
// worker holding such a workspace fetches its ref with the system `git` and lays out the tree of
// exactly one commit per pass.

/** Whether text holds a control character (U+0000–U+001F, U+007F). */
function hasControl(text: string): boolean {
  return [...text].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
}

const CREDENTIALS_HINT =
  'keep credentials out of the URL (it is stored and shown): use a credential helper (git config credential.helper), GIT_ASKPASS, or an SSH key with an ssh:// or git@host:path URL';

function badUrl(message: string, hint: string): TendError {
  return new TendError('workspace.git_url', message, { hint, phase: 'load' });
}

/**
 * Checks a repository URL for `--git`: `https://`, `ssh://`, `git@host:path` (scp-like), `file://`
 * or an absolute path. Refused: a URL carrying credentials (a password, or a token as the user of an
 * https URL), other schemes (`http://`, `git://`, `ext::` — which runs a command), and anything git
 * would read as an option.
 */
export function checkGitUrl(url: string): void {
  const shown = JSON.stringify(url);
  if (url.trim() === '' || url !== url.trim() || /\s/.test(url) || hasControl(url)) {
    throw badUrl(
      `--git ${shown} is not a repository URL (empty, or with spaces or control characters)`,
      'give https://host/repo.git, ssh://host/repo.git, git@host:repo.git, file:///path or /path',
    );
  }
  if (url.startsWith('-')) {
    throw badUrl(`--git ${shown} starts with '-'`, 'give the repository URL, not an option');
  }
  if (isAbsolute(url)) return;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined) {
    if (/^[^/@]*:[^/@]*@/.test(url)) {
      throw badUrl(
        `--git ${shown} carries credentials (a password before the host)`,
        CREDENTIALS_HINT,
      );
    }
    // scp-like: [user@]host:path (no scheme, a colon before any slash).
    const scp = /^(?:([^@/:]+)@)?([^@/:]+):(.+)$/.exec(url);
    if (scp && !url.includes('::')) return;
    throw badUrl(
      `--git ${shown} is neither a URL (scheme://…), an scp-like git@host:path, nor an absolute path`,
      'give https://host/repo.git, ssh://host/repo.git, git@host:repo.git, file:///path or /path',
    );
  }
  if (!['https', 'ssh', 'file'].includes(scheme)) {
    throw badUrl(
      `--git ${shown}: the scheme ${scheme}:// is not accepted`,
      scheme === 'http'
        ? 'use https:// (http sends the repository and any credentials in clear)'
        : 'use https://, ssh://, git@host:path, file:// or an absolute path',
    );
  }
  const rest = url.slice(scheme.length + 3);
  if (scheme === 'file') {
    if (!rest.startsWith('/')) {
      throw badUrl(
        `--git ${shown}: a file:// URL needs an absolute path`,
        'write file:///path/to/repo',
      );
    }
    return;
  }
  const authority = rest.split('/')[0] ?? '';
  const at = authority.lastIndexOf('@');
  const user = at < 0 ? undefined : authority.slice(0, at);
  if (authority.slice(at + 1) === '') {
    throw badUrl(
      `--git ${shown} names no host`,
      'write the host after the scheme: https://host/repo.git',
    );
  }
  if (user !== undefined && (user.includes(':') || scheme === 'https')) {
    throw badUrl(
      `--git ${shown} carries credentials (${user.includes(':') ? 'a password' : 'a user or token'} before the host)`,
      CREDENTIALS_HINT,
    );
  }
}

/**
 * Checks a branch or tag name for `--ref` (git check-ref-format's rules for a name): not empty, no
 * `..`, `@{`, `//`, space, control character or any of `~^:?*[\`, not starting with `-` or `/`, not
 * ending with `/`, `.` or `.lock`, no part starting with `.`.
 */
export function checkGitRef(ref: string): void {
  const problem =
    ref === ''
      ? 'is empty'
      : ref === '@'
        ? 'is @'
        : hasControl(ref) || /[ ~^:?*[\\]/.test(ref)
          ? 'has a space, a control character or one of ~ ^ : ? * [ \\'
          : ref.includes('..') || ref.includes('@{') || ref.includes('//')
            ? "has '..', '@{' or '//'"
            : ref.startsWith('-') || ref.startsWith('/') || ref.endsWith('/')
              ? "starts with '-' or '/', or ends with '/'"
              : ref.endsWith('.') ||
                  ref.endsWith('.lock') ||
                  ref.split('/').some((p) => p.startsWith('.'))
                ? "ends with '.' or '.lock', or has a part starting with '.'"
                : undefined;
  if (problem !== undefined) {
    throw new TendError('workspace.git_ref', `--ref ${JSON.stringify(ref)} ${problem}`, {
      hint: 'give the name of a branch or a tag of the repository, e.g. main or v1.2.0',
      phase: 'load',
    });
  }
}

/**
 * Checks `--path` (the intent's folder inside the repository) and returns it normalised (`a/b`, no
 * `./` or trailing `/`), or undefined for the repository's root. Refused: an absolute path, a `..`
 * part (it must stay inside the repository), a backslash.
 */
export function checkGitPath(path: string): string | undefined {
  const bad = (why: string) =>
    new TendError('workspace.git_path', `--path ${JSON.stringify(path)} ${why}`, {
      hint: 'give the intent folder relative to the repository root, e.g. infra/prod',
      phase: 'load',
    });
  if (path.startsWith('/') || isAbsolute(path)) throw bad('is absolute');
  if (path.includes('\\') || hasControl(path)) {
    throw bad('has a backslash or a control character');
  }
  if (path.split('/').includes('..')) throw bad("leaves the repository ('..')");
  const normal = posix.normalize(path).replace(/\/+$/, '');
  return normal === '.' || normal === '' ? undefined : normal;
}

/** A git source as given on the command line, checked; `ref` defaults to `main`. */
export function gitSource(given: { url: string; ref?: string; path?: string }): GitSource {
  checkGitUrl(given.url);
  const ref = given.ref ?? 'main';
  checkGitRef(ref);
  const path = given.path === undefined ? undefined : checkGitPath(given.path);
  return { kind: 'git', url: given.url, ref, ...(path ? { path } : {}) };
}

/** The default root of the workers' git caches: `$XDG_CACHE_HOME/tend/git`, else `~/.cache/tend/git`. */
export function defaultGitCacheDir(env: Readonly<Record<string, string | undefined>>): string {
  const xdg = env['XDG_CACHE_HOME'];
  const base = xdg && isAbsolute(xdg) ? xdg : join(env['HOME'] ?? homedir(), '.cache');
  return join(base, 'tend', 'git');
}

/** One commit of a git workspace laid out on disk. */
export interface GitSnapshot {
  /** The intent directory: the commit's tree (at `path` inside it). */
  readonly dir: string;
  readonly origin: IntentOrigin;
}

/** How long one fetch (or one archive) may take before it is killed. */
export const GIT_TIMEOUT_MS = 120_000;

/** Commit trees kept on disk per workspace (the one in force, the newest, one before). */
const KEPT_TREES = 3;

/**
 * The git cache of one workspace: `<cacheDir>/repo.git` (a bare repository that each fetch updates)
 * and `<cacheDir>/commits/<sha>/` (the tree of one commit, written under a temporary name and renamed
 * into place: a directory named by a SHA is always whole). `snapshot` fetches the ref, resolves it to
 * a commit and lays that commit out, once per commit.
 */
export class GitCheckout {
  readonly #repo: string;
  readonly #commits: string;

  constructor(
    readonly source: GitSource,
    readonly cacheDir: string,
    private readonly env: Readonly<Record<string, string | undefined>>,
    private readonly timeoutMs: number = GIT_TIMEOUT_MS,
  ) {
    this.#repo = join(cacheDir, 'repo.git');
    this.#commits = join(cacheDir, 'commits');
  }

  /** The bare repository of the cache (made on first use). */
  get repository(): string {
    return this.#repo;
  }

  #git(args: readonly string[]): Promise<string> {
    return runProgram('git', ['--git-dir', this.#repo, ...args], {
      env: this.env,
      timeoutMs: this.timeoutMs,
    });
  }

  /**
   * Fetches the ref and lays out the commit it points to: `{dir, origin}`. Fails with
   * `git.fetch_failed` (network, authentication, a ref that does not exist) or `git.path_not_found`
   * (the commit has no `path`); the cache keeps what it had.
   */
  async snapshot(): Promise<GitSnapshot> {
    const { url, ref, path } = this.source;
    await mkdir(this.#commits, { recursive: true, mode: 0o700 });
    if (!(await exists(join(this.#repo, 'HEAD')))) {
      await runProgram('git', ['init', '--quiet', '--bare', this.#repo], {
        env: this.env,
        timeoutMs: this.timeoutMs,
      });
    }
    try {
      await this.#git([
        'fetch',
        '--quiet',
        '--no-tags',
        '--force',
        '--',
        url,
        `+${ref}:refs/tend/fetched`,
      ]);
    } catch (e) {
      throw fetchFailed(this.source, e);
    }
    const commit = await this.#git([
      'rev-parse',
      '--verify',
      '--quiet',
      'refs/tend/fetched^{commit}',
    ]);
    const origin: IntentOrigin = { kind: 'git', url, ref, commit, ...(path ? { path } : {}) };
    const tree = join(this.#commits, commit);
    if (!(await exists(tree))) await this.#layOut(commit, tree);
    const dir = path ? join(tree, ...path.split('/')) : tree;
    const kind = await stat(dir).then(
      (s) => (s.isDirectory() ? 'dir' : 'file'),
      () => 'none',
    );
    if (kind !== 'dir') {
      throw new TendError(
        'git.path_not_found',
        `commit ${commit.slice(0, 12)} of ${url} (${ref}) has no folder ${path ?? '.'}`,
        { hint: 'check --path: the intent folder relative to the repository root', phase: 'load' },
      );
    }
    await this.#prune(commit);
    return { dir, origin };
  }

  /** Writes the commit's tree under a temporary name, then renames it to `tree`. */
  async #layOut(commit: string, tree: string): Promise<void> {
    const tmp = join(this.#commits, `.${commit}.${randomBytes(4).toString('hex')}.tmp`);
    const tar = `${tmp}.tar`;
    await mkdir(tmp, { mode: 0o700 });
    try {
      await this.#git(['archive', '--format=tar', `--output=${tar}`, commit]);
      await runProgram('tar', ['-xf', tar, '-C', tmp], {
        env: this.env,
        timeoutMs: this.timeoutMs,
      });
      await rename(tmp, tree);
    } catch (e) {
      await rm(tmp, { recursive: true, force: true });
      if (await exists(tree)) return; // laid out meanwhile by another process
      throw new TendError(
        'git.checkout_failed',
        `cannot lay out commit ${commit.slice(0, 12)} of ${this.source.url}: ${e instanceof Error ? e.message : String(e)}`,
        { hint: `check the disk under ${this.cacheDir}`, phase: 'load' },
      );
    } finally {
      await rm(tar, { force: true });
    }
  }

  /** Keeps the newest trees (and `keep`); a tree a run still reads is never the oldest. */
  async #prune(keep: string): Promise<void> {
    const names = (await readdir(this.#commits)).filter((n) => /^[0-9a-f]{40,64}$/.test(n));
    if (names.length <= KEPT_TREES) return;
    const dated = await Promise.all(
      names.map(async (n) => ({ n, t: (await stat(join(this.#commits, n))).mtimeMs })),
    );
    dated.sort((a, b) => b.t - a.t);
    for (const { n } of dated.slice(KEPT_TREES)) {
      if (n !== keep) await rm(join(this.#commits, n), { recursive: true, force: true });
    }
  }
}

function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** `git.fetch_failed`, saying what git said and what to check. */
function fetchFailed(source: GitSource, e: unknown): TendError {
  const failure = e instanceof ProgramFailure ? e : undefined;
  const said = failure?.stderr ?? (e instanceof Error ? e.message : String(e));
  const missing = /couldn't find remote ref|not our ref|no such ref/i.test(said);
  const hint = failure?.timedOut
    ? `the fetch took longer than ${GIT_TIMEOUT_MS / 1000} s: check the network to the repository`
    : missing
      ? `the repository has no branch or tag ${source.ref}: check --ref (tend workspace list shows it)`
      : 'check that this worker can reach the repository and is allowed to read it (its credential helper, GIT_ASKPASS or SSH key)';
  return new TendError(
    'git.fetch_failed',
    `cannot fetch ${source.ref} from ${source.url}: ${failure?.timedOut ? 'timed out' : said.split('\n').slice(-3).join(' ')}`,
    { hint, phase: 'load' },
  );
}
