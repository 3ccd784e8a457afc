import { watch } from 'node:fs';
import type { FSWatcher } from 'node:fs';
import type { Diagnostic, IntentOrigin } from '../core/index.js';
import { TendError, toTendError } from '../core/index.js';
import type { CrashHook, PassReport, Workspace } from '../engine/index.js';
import { closeProviders, createWorkspace, runContinuously, tendActor } from '../engine/index.js';
import { intentContentHash, readIntentFiles } from '../intent/index.js';
import type { AppContext } from './context.js';
import type { AppReporter } from './events.js';
import { sqlRunner } from './sql-runner.js';
import type { HeldLease, LeaseOptions } from './lease.js';
import { acquireWorkspaceLease } from './lease.js';
import type { ApplyVerdict } from './outcomes.js';
import { summarizeOutcomes, verdictOf } from './outcomes.js';
import type { LeasedWorkspace } from './with-workspace.js';
import { processUserAgent } from './user-agent.js';
import type { WorkspaceNameSource, WorkspaceSelection } from './workspace.js';
import {
  intentCacheFor,
  storeLocation,
  loadIntentWithProviders,
  openWorkspace,
  rememberWorkspaceName,
} from './workspace.js';

/** What `run` is asked. */
export interface RunRequest extends WorkspaceSelection {
  readonly intervalMs: number;
  readonly approveDestroy: boolean;
  readonly prune: boolean;
  readonly verifyTimeoutMs: number;
  /** Stop after this many passes (with or without an audit feed); unlimited when absent. */
  readonly maxPasses?: number;
  readonly lockTimeoutMs: number;
  /** How long one audit-feed read may wait for news. */
  readonly feedWaitMs?: number;
  readonly report?: AppReporter;
  /** Aborting it stops the loop after the operations in flight settle. */
  readonly signal: AbortSignal;
  readonly crash?: CrashHook;
  /** Watch the intent directory for changes (default true; a content hash is checked every pass too). */
  readonly watch?: boolean;
  /**
   * Follow edits of the intent (default true). False: the intent loaded when the run started stays
   * in force until it ends (`tend serve --no-follow`: edits take effect through a saved plan).
   */
  readonly follow?: boolean;
  /** Called once the lease is held and the loop is about to start (the workspace's name and size). */
  readonly onStart?: (info: { workspace: string; resources: number; auditFeed: boolean }) => void;
  /**
   * How the lease is held (default: `tend run`, no worker, LEASE_TTL_MS): `tend worker` names itself
   * and its id, and its `--lease-ttl`.
   */
  readonly lease?: Pick<LeaseOptions, 'command' | 'worker' | 'ttlMs' | 'onRenew'>;
  /** Back off failing passes up to this long (`RunOptions.failureBackoffMaxMs`; `tend worker`). */
  readonly failureBackoffMaxMs?: number;
  /** Called after every pass with the journal's unsettled operations (metrics). */
  readonly onPassDone?: (info: { pass: number; unsettled: number }) => void;
  /**
   * Where the intent comes from when it is not `dir` itself (a git workspace, `tend worker`): asked
   * before every pass (`RunOptions.beforePass`; before the first, to open the workspace), it returns the directory holding one
   * commit's intent and that commit. `dir` is then ignored. A new commit is loaded like an edit of
   * the files (valid: it takes over at once; invalid: reported, the last good commit stays in force);
   * a failure to fetch is reported (`error`) and the commit in force stays.
   */
  readonly source?: RunSource;
  /**
   * Work done between passes under this run's lease (`tend worker`: the jobs the fleet's API queued,
   * docs/fleet.md): `run` is handed the workspace as the run holds it — its intent in force, its
   * lease and fence — after every pass and whenever the wake `subscribe` hands out is called.
   */
  readonly between?: {
    run(held: LeasedWorkspace): Promise<void>;
    subscribe(wake: () => void): () => void;
  };
}

/** One commit of a run's intent source (see `RunRequest.source`). */
export interface RunSource {
  snapshot(): Promise<{ readonly dir: string; readonly origin: IntentOrigin }>;
}

/** How the last pass of a run ended. */
export interface LastPass {
  readonly pass: number;
  /** The pass's verdict; `error` when it could not run (platform down, unauthorised). */
  readonly verdict: ApplyVerdict | 'error';
  readonly message?: string;
}

/** What a run did when it stopped. */
export interface RunReport {
  readonly workspace: { readonly name: string; readonly source: WorkspaceNameSource };
  readonly passes: number;
  readonly last?: LastPass;
  readonly stoppedBy: 'signal' | 'max-passes' | 'lease-lost';
  /** Intent reloads that took effect. */
  readonly reloads: number;
}

function lastPassOf(p: PassReport): LastPass {
  if (!p.ok) return { pass: p.pass, verdict: 'error', message: p.error.message };
  return { pass: p.pass, verdict: verdictOf(summarizeOutcomes(p.result.outcomes)) };
}

/**
 * The continuous loop as a service: holds the workspace lease for as long as it runs (renewed in the
 * background), reconciles on audit-feed events and every interval, and follows the intent: when the
 * files change (a watch, plus a content hash every pass) it loads them again; a valid new intent takes
 * over at once, an invalid one is reported at every pass while the last valid intent stays in force
 * (so a broken file never causes a prune).
 */
export async function run(ctx: AppContext, given: RunRequest): Promise<RunReport> {
  const report: AppReporter = given.report ?? (() => {});
  // A git workspace: the first pass plans from the commit its ref points to now.
  const first = given.source ? await given.source.snapshot() : undefined;
  const request: RunRequest = first ? { ...given, dir: first.dir } : given;
  const opened = await openWorkspace(ctx, request, 'write', first ? { origin: first.origin } : {});
  // A changed intent is loaded again with the store's cache: only the files that changed are parsed.
  const cache = intentCacheFor(storeLocation(ctx, request), request.dir);
  let current: Workspace = opened.ws;
  let lease;
  try {
    lease = await acquireWorkspaceLease(ctx, current, {
      command: 'tend run',
      ...request.lease,
      waitMs: request.lockTimeoutMs,
      signal: request.signal,
    });
  } catch (e) {
    await current.close();
    throw e;
  }
  reportLease(report, current.name, lease);

  let reloads = 0;
  let passes = 0;
  let last: LastPass | undefined;
  let restart = new AbortController();
  const intent = followIntent(ctx, {
    current: () => current,
    cache,
    report,
    watch: request.watch !== false && request.follow !== false && !request.source,
    onValid: () => restart.abort(),
    ...(request.source ? { source: request.source } : {}),
  });

  let stoppedBy: RunReport['stoppedBy'] = 'signal';
  let trigger = 'start';
  const between = request.between;
  try {
    await rememberWorkspaceName(current, opened.nameSource);
    request.onStart?.({
      workspace: current.name,
      resources: current.intent.resources.length,
      auditFeed: [...current.providers.values()].some((p) => p.changes !== undefined),
    });
    for (;;) {
      const remaining =
        request.maxPasses === undefined ? undefined : Math.max(0, request.maxPasses - passes);
      if (remaining === 0) {
        stoppedBy = 'max-passes';
        break;
      }
      const outcome = await runContinuously(
        current,
        {
          approveDestroy: request.approveDestroy,
          prune: request.prune,
          actor: tendActor('drift'),
          clock: ctx.clock,
          report,
          verifyTimeoutMs: request.verifyTimeoutMs,
          runChecks: true,
          intervalMs: request.intervalMs,
          feedWaitMs: request.feedWaitMs ?? 1000,
          firstPass: passes + 1,
          firstTrigger: trigger,
          ...(remaining !== undefined ? { maxPasses: remaining } : {}),
          ...(request.crash ? { crash: request.crash } : {}),
          ...(request.failureBackoffMaxMs !== undefined
            ? { failureBackoffMaxMs: request.failureBackoffMaxMs }
            : {}),
          ...(between
            ? {
                between: {
                  run: () =>
                    between.run({
                      ws: current,
                      nameSource: opened.nameSource,
                      lease,
                      signal: AbortSignal.any([request.signal, lease.signal]),
                    }),
                  subscribe: (wake: () => void) => between.subscribe(wake),
                },
              }
            : {}),
          onPass: async (p) => {
            last = lastPassOf(p);
            if (request.onPassDone) {
              const unsettled = (await current.store.unsettled().catch(() => [])).length;
              request.onPassDone({ pass: p.pass, unsettled });
            }
            // A source is asked before each pass instead (beforePass): the pass plans from its commit.
            if (request.follow !== false && !request.source) await intent.check();
            intent.reportInvalid();
          },
          ...(request.source && request.follow !== false
            ? { beforePass: () => intent.check() }
            : {}),
        },
        AbortSignal.any([request.signal, lease.signal, restart.signal]),
      );
      passes += outcome.passes;
      if (lease.signal.aborted) {
        stoppedBy = 'lease-lost';
        break;
      }
      if (request.signal.aborted) break;
      const next = intent.takeNext();
      if (next) {
        await closeProviders(current.providers.values());
        current = next;
        restart = new AbortController();
        reloads++;
        trigger = 'intent changed';
        report({
          kind: 'intent-reloaded',
          resources: current.intent.resources.length,
          contentHash: current.intent.contentHash,
        });
        continue;
      }
      stoppedBy = 'max-passes';
      break;
    }
  } finally {
    await intent.close();
    // Stopped while its lease was already gone (a zombie resuming): lost, not released.
    if (!(await lease.release())) stoppedBy = 'lease-lost';
    await current.close();
  }
  return {
    workspace: { name: current.name, source: opened.nameSource },
    passes,
    ...(last ? { last } : {}),
    stoppedBy,
    reloads,
  };
}

/** The `lease` event: this run holds the workspace (and whom it took it over from). */
function reportLease(report: AppReporter, workspace: string, lease: HeldLease): void {
  report({
    kind: 'lease',
    workspace,
    epoch: lease.lease.epoch,
    ...(lease.tookOver
      ? {
          tookOver: {
            command: lease.tookOver.holder.command,
            pid: lease.tookOver.holder.pid,
            host: lease.tookOver.holder.host,
          },
        }
      : {}),
  });
}

/** How `run` follows its intent files (see `followIntent`). */
interface IntentFollower {
  /** Compares the files with the intent in force; loads a changed intent (once per change). */
  check(): Promise<void>;
  /** Reports the invalid intent again, while the files stay invalid (every pass). */
  reportInvalid(): void;
  /** The workspace of a valid new intent, once (undefined when there is none). */
  takeNext(): Workspace | undefined;
  /** Stops watching, waits for a check in progress, closes a new intent's providers not taken. */
  close(): Promise<void>;
}

/**
 * Follows the intent of a run: a watch of its directory (when asked and the file system allows) and
 * a content hash compared on every check. A valid changed intent becomes a new workspace on the same
 * store (`onValid` then stops the passes in progress); an invalid one is reported and the intent in
 * force stays.
 */
function followIntent(
  ctx: AppContext,
  options: {
    readonly current: () => Workspace;
    readonly cache: ReturnType<typeof intentCacheFor>;
    readonly report: AppReporter;
    readonly watch: boolean;
    readonly onValid: () => void;
    readonly source?: RunSource;
  },
): IntentFollower {
  const { report } = options;
  let watcher: FSWatcher | undefined;
  let next: Workspace | undefined;
  // The content hash (or, from a source, the commit) of an intent that does not load.
  let badHash: string | undefined;
  let badDiagnostics: readonly Diagnostic[] = [];
  let badError: TendError | undefined;
  let checking: Promise<void> | undefined;
  const inForce = () => next ?? options.current();

  /** The files in the intent directory, when their content changed since the intent in force. */
  const changedFiles = async (): Promise<Candidate | undefined> => {
    const files = await readIntentFiles(options.current().intent.dir);
    const hash = intentContentHash(files.files);
    if (hash === inForce().intent.contentHash) {
      badHash = undefined;
      return undefined;
    }
    return hash === badHash ? undefined : { dir: options.current().intent.dir, key: hash };
  };

  /** The source's commit now, when it is not the one in force (a fetch failure is reported). */
  const newCommit = async (source: RunSource): Promise<Candidate | undefined> => {
    let snap: Awaited<ReturnType<RunSource['snapshot']>>;
    try {
      snap = await source.snapshot();
    } catch (e) {
      report({ kind: 'error', error: toTendError(e, 'git.fetch_failed') });
      return undefined;
    }
    const commit = snap.origin.commit;
    if (commit === inForce().origin?.commit) {
      badHash = undefined;
      return undefined;
    }
    return commit === badHash ? undefined : { dir: snap.dir, key: commit, origin: snap.origin };
  };

  const load = async (found: Candidate): Promise<void> => {
    const current = options.current();
    const loaded = await loadIntentWithProviders(ctx, found.dir, current.name, options.cache);
    const problems: Diagnostic[] = [...loaded.diagnostics];
    if (loaded.intent && (loaded.intent.workspace?.name ?? current.name) !== current.name) {
      problems.push({
        code: 'workspace.renamed',
        severity: 'error',
        message: `the intent now names workspace ${loaded.intent.workspace?.name}, but this run holds ${current.name}`,
        hint: 'stop tend run and start it again to manage the other workspace',
      });
    }
    if (!loaded.intent || problems.some((d) => d.severity === 'error')) {
      await closeProviders(loaded.providers.values());
      badHash = found.key;
      badDiagnostics = problems;
      badError = found.origin ? invalidCommit(found.origin, problems, inForce().origin) : undefined;
      reportBad();
      return;
    }
    badHash = undefined;
    badError = undefined;
    if (next) await closeProviders(next.providers.values());
    next = createWorkspace({
      name: current.name,
      intent: loaded.intent,
      providers: loaded.providers,
      store: current.store,
      // The same lease holds the new intent's workspace: its sends pass the same fence.
      fence: current.fence,
      env: ctx.env,
      secrets: ctx.redactor,
      sql: sqlRunner({ env: ctx.env, dir: loaded.intent.dir, secrets: ctx.redactor }),
      userAgent: processUserAgent(ctx.env, ctx.process.pid),
      ...(found.origin ? { origin: found.origin } : {}),
    });
    options.onValid();
  };

  const reportBad = (): void => {
    if (badHash === undefined) return;
    report({ kind: 'intent-invalid', diagnostics: badDiagnostics, contentHash: badHash });
    if (badError) report({ kind: 'error', error: badError });
  };

  const checkIntent = (): Promise<void> =>
    (checking ??= (async () => {
      try {
        const found = options.source ? await newCommit(options.source) : await changedFiles();
        if (found) await load(found);
      } catch (e) {
        report({ kind: 'warning', message: `cannot check the intent: ${toTendError(e).message}` });
      }
    })().finally(() => (checking = undefined)));

  if (options.watch) {
    try {
      let timer: NodeJS.Timeout | undefined;
      watcher = watch(options.current().intent.dir, () => {
        // Editors write in several steps: wait for the burst to end.
        clearTimeout(timer);
        timer = setTimeout(() => void checkIntent(), 150);
      });
      watcher.on('error', () => watcher?.close());
    } catch {
      // No watch (some file systems): the content hash checked every pass still follows the intent.
    }
  }

  return {
    check: checkIntent,
    reportInvalid: reportBad,
    takeNext: () => {
      const n = next;
      next = undefined;
      return n;
    },
    close: async () => {
      watcher?.close();
      await checking;
      if (next) await closeProviders(next.providers.values());
    },
  };
}

/** An intent to load: its directory, what identifies it (content hash or commit), its commit. */
interface Candidate {
  readonly dir: string;
  readonly key: string;
  readonly origin?: IntentOrigin;
}

/** `git.intent_invalid`: the commit does not load, the one in force stays. */
function invalidCommit(
  origin: IntentOrigin,
  problems: readonly Diagnostic[],
  kept: IntentOrigin | undefined,
): TendError {
  const first = problems.find((d) => d.severity === 'error');
  const where = first?.file ? `${first.file}: ` : '';
  return new TendError(
    'git.intent_invalid',
    `commit ${origin.commit.slice(0, 12)} of ${origin.url} (${origin.ref}) does not load: ${where}${first?.message ?? 'no intent'}${kept ? `; commit ${kept.commit.slice(0, 12)} stays in force` : ''}`,
    {
      hint: `fix the intent on ${origin.ref} and push again (\`tend validate\` on a checkout says what is wrong)`,
      phase: 'load',
    },
  );
}
