import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { TendError } from '../core/index.js';
import type { GitSource } from '../store/index.js';
import type { AcceptReport, AcceptRequest } from './accept.js';
import { acceptIn } from './accept.js';
import type { AppContext } from './context.js';
import { withRegistry } from './fleet.js';
import { defaultGitCacheDir, GIT_TIMEOUT_MS } from './git-source.js';
import { isSharedStore, openWorkspace, storeLocation } from './workspace.js';
import { runProgram } from './run-program.js';

// `tend accept --git` on a git workspace of a fleet (docs/fleet.md, decision 0044): the workspace has
// no work tree of its own to commit in, so the patch is committed in a fresh clone of its repository
// (in the git cache) on a new branch, and that branch is pushed. The ref the workspace follows is
// never pushed to: the change waits on its branch for review.

/** The git source of the workspace `request` names, when it is registered in a shared store. */
export async function registeredGitSource(
  ctx: AppContext,
  request: AcceptRequest,
): Promise<GitSource | undefined> {
  const location = storeLocation(ctx, request);
  const name = request.workspace ?? ctx.env['TEND_WORKSPACE'];
  if (!isSharedStore(location) || name === undefined) return undefined;
  const found = await withRegistry(ctx, { store: location }, async (registry) =>
    (await registry.listWorkspaces()).find((w) => w.name === name),
  );
  return found?.source.kind === 'git' ? found.source : undefined;
}

/** Runs git without a shell in `cwd`; a failure is `accept.git` with what git said. */
async function git(
  cwd: string,
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Promise<string> {
  try {
    return await runProgram('git', args, { cwd, env, timeoutMs: GIT_TIMEOUT_MS });
  } catch (e) {
    throw new TendError('accept.git', `git ${args[0] ?? ''} failed: ${(e as Error).message}`, {
      cause: e,
      hint: 'check that you can read and push to the repository (its credential helper, GIT_ASKPASS or SSH key) and that git knows who you are (user.name, user.email)',
    });
  }
}

/**
 * Clones the repository at the workspace's ref into the cache, accepts the value there (committing it
 * on a new branch `tend/accept-…`), pushes that branch to `origin`, and removes the clone.
 */
export async function acceptInRepository(
  ctx: AppContext,
  request: AcceptRequest,
  source: GitSource,
): Promise<AcceptReport> {
  const name = request.workspace ?? ctx.env['TEND_WORKSPACE'] ?? '';
  const parent = join(defaultGitCacheDir(ctx.env), name);
  await mkdir(parent, { recursive: true, mode: 0o700 });
  const clone = join(parent, `accept-${randomBytes(4).toString('hex')}`);
  try {
    await git(
      parent,
      ['clone', '--quiet', '--branch', source.ref, '--', source.url, clone],
      ctx.env,
    );
    // A tag is checked out detached: a local branch at it, to return to after the commit.
    await git(clone, ['checkout', '--quiet', '-B', 'tend-accept-base'], ctx.env);
    const dir = source.path ? join(clone, ...source.path.split('/')) : clone;
    const { ws } = await openWorkspace(ctx, { ...request, dir });
    let report: AcceptReport;
    try {
      report = await acceptIn(ctx, ws, { ...request, git: true, write: false });
    } finally {
      await ws.close();
    }
    if (!report.branch || !report.commit) return report;
    if (report.branch === source.ref) {
      throw new TendError(
        'accept.git',
        `the branch ${report.branch} is the ref the workspace follows: not pushed`,
        { hint: 'the workspace must follow another branch than tend/accept-…' },
      );
    }
    await git(
      clone,
      ['push', '--quiet', 'origin', `${report.commit}:refs/heads/${report.branch}`],
      ctx.env,
    );
    const { returnedTo: _, ...rest } = report;
    return { ...rest, pushedTo: source.url };
  } finally {
    await rm(clone, { recursive: true, force: true });
  }
}
