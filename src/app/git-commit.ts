import { realpath } from 'node:fs/promises';
import { dirname, relative, sep } from 'node:path';
import { TendError } from '../core/index.js';
import { runProgram } from './run-program.js';

/** What committing one file's new content on a new branch needs. */
export interface BranchCommitRequest {
  /** The file (absolute); it must be tracked and unmodified in its git work tree. */
  readonly file: string;
  /** Its new content. */
  readonly text: string;
  readonly branch: string;
  readonly message: string;
  /** Writes a file's content (atomically); called on the new branch only. */
  readonly write: (file: string, text: string) => Promise<void>;
  /** The environment git runs with (its identity, its configuration). */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** Where the commit went. */
export interface BranchCommit {
  readonly branch: string;
  readonly commit: string;
  /** The branch checked out before, and again after. */
  readonly returnedTo: string;
}

/** Runs git without a shell in `cwd`; a failure is `accept.git` with what git said. */
async function git(
  cwd: string,
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Promise<string> {
  try {
    return await runProgram('git', args, { cwd, env });
  } catch (e) {
    throw new TendError('accept.git', `git ${args[0] ?? ''} failed: ${(e as Error).message}`, {
      cause: e,
    });
  }
}

/**
 * Commits a file's new content on a new branch and returns to the branch that was checked out: the
 * working tree ends as it started, and the change waits on the branch for review. Refused, with
 * nothing changed, when the file is not in a git work tree, is untracked or has uncommitted
 * changes, when HEAD is detached, or when the branch exists. Should the write or the commit fail,
 * the file, the checked-out branch and the branch list are put back as they were.
 */
export async function commitOnNewBranch(request: BranchCommitRequest): Promise<BranchCommit> {
  const { env } = request;
  const file = await realpath(request.file);
  const cwd = dirname(file);
  let top: string;
  try {
    top = await realpath(await git(cwd, ['rev-parse', '--show-toplevel'], env));
  } catch {
    throw new TendError('accept.git', `${request.file} is not inside a git work tree`, {
      hint: 'run without --git to print the patch, or with --write to write it',
    });
  }
  const path = relative(top, file).split(sep).join('/');
  try {
    await git(top, ['ls-files', '--error-unmatch', '--', path], env);
  } catch {
    throw new TendError('accept.git', `${path} is not tracked by git`, {
      hint: `commit it first (git add ${path} && git commit), or use --write`,
    });
  }
  if ((await git(top, ['status', '--porcelain', '--', path], env)) !== '') {
    throw new TendError('accept.git', `${path} has uncommitted changes`, {
      hint: 'commit or stash them first: --git commits the accepted change alone',
    });
  }
  let returnTo: string;
  try {
    returnTo = await git(top, ['symbolic-ref', '--quiet', '--short', 'HEAD'], env);
  } catch {
    throw new TendError('accept.git', 'HEAD is detached: there is no branch to return to', {
      hint: 'check out a branch first',
    });
  }
  const exists = await git(
    top,
    ['rev-parse', '--verify', '--quiet', `refs/heads/${request.branch}`],
    env,
  )
    .then(() => true)
    .catch(() => false);
  if (exists) {
    throw new TendError('accept.git', `branch ${request.branch} already exists`, {
      hint: 'the same change was already committed there; delete the branch to commit it again',
    });
  }
  await git(top, ['switch', '--quiet', '-c', request.branch], env);
  let commit: string;
  try {
    await request.write(file, request.text);
    await git(top, ['add', '--', path], env);
    await git(top, ['commit', '--quiet', '-m', request.message, '--', path], env);
    commit = await git(top, ['rev-parse', 'HEAD'], env);
  } catch (e) {
    // Back to where we started: the file as committed, the old branch, no new branch.
    await git(top, ['checkout', '--quiet', 'HEAD', '--', path], env).catch(() => undefined);
    await git(top, ['switch', '--quiet', returnTo], env).catch(() => undefined);
    await git(top, ['branch', '--quiet', '-D', request.branch], env).catch(() => undefined);
    throw e;
  }
  await git(top, ['switch', '--quiet', returnTo], env);
  return { branch: request.branch, commit, returnedTo: returnTo };
}
