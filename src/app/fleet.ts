import { relative, resolve } from 'node:path';
import { TendError, WORKSPACE_NAME } from '../core/index.js';
import { parseDocuments, readIntentFiles } from '../intent/index.js';
import type {
  FleetRegistry,
  RegisteredWorkspace,
  StateCounts,
  WorkerRecord,
  WorkspaceSource,
} from '../store/index.js';
import { openRegistry } from '../store/index.js';
import type { AppContext } from './context.js';
import { gitSource } from './git-source.js';
import { storeLocation } from './workspace.js';

// The fleet's registry as use cases (docs/fleet.md): `tend workspace add/list/remove` and
// `tend fleet status`. The registry lives in a store shared by the fleet (PostgreSQL).

/** Where the fleet's store is: `--store`, else TEND_STORE_URL (nothing else has a registry). */
export interface FleetSelection {
  readonly store?: string;
}

/**
 * Opens the registry of the fleet's store, runs `fn`, closes it. A location that is not a shared
 * database is refused (`fleet.shared-store-required`).
 */
export async function withRegistry<T>(
  ctx: AppContext,
  selection: FleetSelection,
  fn: (registry: FleetRegistry) => Promise<T>,
): Promise<T> {
  // The directory only matters for the SQLite default, which the registry refuses anyway.
  const location = storeLocation(ctx, { dir: '.', ...selection });
  ctx.redactor.addUrlCredentials(location);
  const registry = await openRegistry(location, { env: ctx.env, redactor: ctx.redactor });
  try {
    return await fn(registry);
  } finally {
    await registry.close();
  }
}

/** A name a registered workspace may have: the rule of every workspace name. */
export function checkWorkspaceName(name: string): void {
  if (!WORKSPACE_NAME.test(name)) {
    throw new TendError(
      'workspace.invalid_name',
      `workspace name ${JSON.stringify(name)} is not valid`,
      {
        hint: "use lower-case letters, digits, '.', '_' or '-', at most 64, starting and ending with a letter or digit",
      },
    );
  }
}

/**
 * Checks that a directory holds an intent (at least one YAML file) whose Workspace document, if it
 * has one, names this workspace; the intent itself is validated by the worker that runs it.
 */
async function checkIntentDir(dir: string, name: string): Promise<void> {
  const { files, diagnostics } = await readIntentFiles(dir);
  const missing = diagnostics.find((d) => d.code === 'intent.dir_missing');
  if (missing || files.length === 0) {
    throw new TendError(
      'workspace.no-intent',
      missing ? `${dir} is not a directory` : `${dir} holds no intent: no *.yaml file in it`,
      {
        hint: 'give --dir the intent directory of the workspace (the folder you would run `tend plan` on); every worker must be able to read it at this path',
      },
    );
  }
  for (const file of files) {
    for (const doc of parseDocuments(file.path, file.text).documents) {
      const value = doc.value as { kind?: unknown; name?: unknown } | null;
      if (value?.kind !== 'Workspace' || typeof value.name !== 'string' || value.name === name) {
        continue;
      }
      throw new TendError(
        'workspace.name-mismatch',
        `the intent in ${dir} names workspace ${value.name} (${relative(dir, file.path) || file.path}), not ${name}`,
        { hint: `register it as ${value.name}, or change its Workspace document` },
      );
    }
  }
}

/** What `tend workspace add` is asked: a directory, or a git repository (exactly one). */
export interface AddWorkspaceRequest extends FleetSelection {
  readonly name: string;
  readonly dir?: string;
  /** The repository (`--git`), its branch or tag (`--ref`, default main), the intent folder in it. */
  readonly git?: { readonly url: string; readonly ref?: string; readonly path?: string };
}

/** What `tend workspace add` did: `added: false` when it was registered with this source already. */
export interface AddWorkspaceReport {
  readonly added: boolean;
  readonly workspace: RegisteredWorkspace;
}

/**
 * `tend workspace add <name> --dir <path>`: registers a directory workspace for the fleet. The name
 * follows the rule of every workspace name; the directory is made absolute and must hold an intent.
 * Adding a registered name again with the same source changes nothing; with another source it is
 * refused (`workspace.exists`).
 */
export async function addWorkspace(
  ctx: AppContext,
  request: AddWorkspaceRequest,
): Promise<AddWorkspaceReport> {
  checkWorkspaceName(request.name);
  const source = await sourceOf(request);
  const addedBy = `${ctx.env['USER'] ?? ctx.env['LOGNAME'] ?? 'unknown'}@${ctx.process.host}`;
  return withRegistry(ctx, request, (registry) =>
    registry.addWorkspace({ name: request.name, source, addedBy }),
  );
}

/**
 * The source a request names: `--dir` (made absolute, holding an intent) or `--git` (its URL, ref and
 * path checked; the repository is read by the worker that holds the workspace, with its credentials).
 */
async function sourceOf(request: AddWorkspaceRequest): Promise<WorkspaceSource> {
  if ((request.dir === undefined) === (request.git === undefined)) {
    throw new TendError(
      'workspace.source',
      request.dir === undefined
        ? 'give where the intent is: --dir <path> or --git <url>'
        : '--dir and --git cannot be given together',
      { hint: 'a workspace reads its intent from one directory or one git repository' },
    );
  }
  if (request.git) return gitSource(request.git);
  const dir = resolve(request.dir!);
  await checkIntentDir(dir, request.name);
  return { kind: 'dir', dir };
}

/** `tend workspace list`: every registered workspace, by name. */
export function listWorkspaces(
  ctx: AppContext,
  request: FleetSelection,
): Promise<RegisteredWorkspace[]> {
  return withRegistry(ctx, request, (registry) => registry.listWorkspaces());
}

/**
 * `tend workspace remove <name>`: forgets the registration. The workspace's memory (twin, journal,
 * ledger) stays in the store; a worker running it stops at its next scheduling tick and releases it.
 * An unknown name is refused (`workspace.not-registered`).
 */
export async function removeWorkspace(
  ctx: AppContext,
  request: FleetSelection & { readonly name: string },
): Promise<{ readonly name: string }> {
  checkWorkspaceName(request.name);
  const removed = await withRegistry(ctx, request, (registry) =>
    registry.removeWorkspace(request.name),
  );
  if (!removed) {
    throw new TendError('workspace.not-registered', `workspace ${request.name} is not registered`, {
      hint: '`tend workspace list` shows the registered workspaces',
    });
  }
  return { name: request.name };
}

/** A worker in `tend fleet status` (its JSON, which scripts rely on). */
export interface FleetWorkerView {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly version: string;
  readonly heartbeatAt: string;
}

/** A registered workspace in `tend fleet status`. */
export interface FleetWorkspaceView {
  readonly name: string;
  /** The worker holding its lease; null when nobody holds it or the lease expired. */
  readonly holder: {
    readonly worker: string | null;
    readonly host: string;
    readonly pid: number;
  } | null;
  /** The epoch of its lease (the last one while nobody holds it), null when never leased. */
  readonly epoch: number | null;
  /** When its holder last finished a pass (ISO, database time), null before any. */
  readonly lastPassAt: string | null;
  /** How many of its resources are in each state. */
  readonly states: StateCounts;
}

/** `tend fleet status --json`. */
export interface FleetStatus {
  /** The live workers. */
  readonly workers: FleetWorkerView[];
  /**
   * The dead workers not forgotten yet: no heartbeat for longer than their TTL (database time); a
   * worker deletes their rows once that is DEAD_WORKER_TTLS of their TTLs (`worker.ts`).
   */
  readonly deadWorkers: FleetWorkerView[];
  readonly workspaces: FleetWorkspaceView[];
}

/**
 * `tend fleet status`: the live workers (heartbeat younger than their TTL, by the database's clock),
 * the dead ones whose rows are not deleted yet, and every registered workspace with its holder (null when its lease expired), epoch, last pass and
 * state counts.
 */
export function fleetStatus(ctx: AppContext, request: FleetSelection): Promise<FleetStatus> {
  return withRegistry(ctx, request, readFleetStatus);
}

/** `tend fleet status` from an open registry (also `GET /workspaces` of `tend serve --fleet`). */
export async function readFleetStatus(registry: FleetRegistry): Promise<FleetStatus> {
  const [workers, workspaces, leases, epochs, states] = await Promise.all([
    registry.listWorkers(),
    registry.listWorkspaces(),
    registry.fleetLeases(),
    registry.leaseEpochs(),
    registry.stateCounts(),
  ]);
  const leaseOf = new Map(leases.map((l) => [l.workspace, l]));
  const view = (w: WorkerRecord): FleetWorkerView => ({
    id: w.id,
    host: w.host,
    pid: w.pid,
    version: w.version,
    heartbeatAt: w.heartbeatAt,
  });
  return {
    workers: workers.filter((w) => w.alive).map(view),
    deadWorkers: workers.filter((w) => !w.alive).map(view),
    workspaces: workspaces.map((w) => {
      const lease = leaseOf.get(w.name);
      const held = lease && !lease.expired ? lease.holder : undefined;
      return {
        name: w.name,
        holder: held ? { worker: held.worker ?? null, host: held.host, pid: held.pid } : null,
        epoch: lease?.epoch ?? epochs.get(w.name) ?? null,
        lastPassAt: w.lastPassAt ?? null,
        states: states.get(w.name) ?? {},
      };
    }),
  };
}
