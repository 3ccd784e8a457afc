import type { FleetStatus } from '../../app/index.js';
import { TendError } from '../../core/index.js';
import {
  addWorkspace,
  describeSource,
  fleetStatus,
  listWorkspaces,
  removeWorkspace,
  storeFlag,
} from '../../app/index.js';
import type { FleetOptions, WorkspaceAddOptions } from '../commands/workspace.js';
import type { Output } from '../common.js';
import { cliContext, fail, output } from '../common.js';
import { EXIT } from '../exit-codes.js';

function selection(o: FleetOptions): { store?: string } {
  return o.store ? { store: storeFlag(o.store) } : {};
}

/** `tend workspace add <name> --dir <path>`: exit 0 registered (or already so), 1 refused. */
export async function workspaceAddHandler(name: string, o: WorkspaceAddOptions): Promise<void> {
  const out = output(o.json);
  try {
    if (o.git === undefined && (o.ref !== undefined || o.path !== undefined)) {
      throw new TendError('workspace.source', '--ref and --path go with --git', {
        hint: 'tend workspace add <name> --git <url> [--ref main] [--path sub/dir]',
      });
    }
    const r = await addWorkspace(cliContext(), {
      ...selection(o),
      name,
      ...(o.dir !== undefined ? { dir: o.dir } : {}),
      ...(o.git !== undefined
        ? {
            git: {
              url: o.git,
              ...(o.ref !== undefined ? { ref: o.ref } : {}),
              ...(o.path !== undefined ? { path: o.path } : {}),
            },
          }
        : {}),
    });
    const where = describeSource(r.workspace.source);
    if (out.json) out.data({ ok: true, ...r });
    else if (r.added) out.line(out.style.green(`registered workspace ${name}: ${where}`));
    else out.line(`workspace ${name} is already registered with ${where}`);
    process.exitCode = EXIT.ok;
  } catch (e) {
    fail(out, e);
  }
}

/** `tend workspace list`: exit 0. */
export async function workspaceListHandler(o: FleetOptions): Promise<void> {
  const out = output(o.json);
  try {
    const list = await listWorkspaces(cliContext(), selection(o));
    if (out.json) out.data({ workspaces: list });
    else if (list.length === 0) out.line('no workspace is registered (tend workspace add)');
    else {
      const rows = list.map((w) => [w.name, describeSource(w.source), w.addedAt, w.addedBy]);
      printTable(out, ['WORKSPACE', 'SOURCE', 'ADDED', 'BY'], rows);
    }
    process.exitCode = EXIT.ok;
  } catch (e) {
    fail(out, e);
  }
}

/** `tend workspace remove <name>`: exit 0 removed, 1 not registered or refused. */
export async function workspaceRemoveHandler(name: string, o: FleetOptions): Promise<void> {
  const out = output(o.json);
  try {
    await removeWorkspace(cliContext(), { ...selection(o), name });
    const kept =
      'its memory (twin, journal, ledger) stays in the store; the worker running it releases it at its next tick';
    if (out.json) out.data({ ok: true, removed: name, memoryKept: true });
    else out.line(`removed workspace ${name} from the fleet; ${kept}`);
    process.exitCode = EXIT.ok;
  } catch (e) {
    fail(out, e);
  }
}

/** `tend fleet status [--json]`: exit 0. */
export async function fleetStatusHandler(o: FleetOptions): Promise<void> {
  const out = output(o.json);
  try {
    const status = await fleetStatus(cliContext(), selection(o));
    if (out.json) out.data(status);
    else renderFleet(out, status);
    process.exitCode = EXIT.ok;
  } catch (e) {
    fail(out, e);
  }
}

function renderFleet(out: Output, status: FleetStatus): void {
  if (status.workers.length === 0) out.line('no live worker');
  else {
    printTable(
      out,
      ['WORKER', 'HOST', 'PID', 'VERSION', 'HEARTBEAT'],
      status.workers.map((w) => [w.id, w.host, String(w.pid), w.version, w.heartbeatAt]),
    );
  }
  for (const w of status.deadWorkers) {
    out.line(
      out.style.yellow(
        `dead worker ${w.id} (pid ${w.pid} on ${w.host}, ${w.version}): last heartbeat ${w.heartbeatAt}`,
      ),
    );
  }
  out.line('');
  if (status.workspaces.length === 0) {
    out.line('no workspace is registered (tend workspace add)');
    return;
  }
  printTable(
    out,
    ['WORKSPACE', 'HOLDER', 'EPOCH', 'LAST PASS', 'STATES'],
    status.workspaces.map((w) => [
      w.name,
      w.holder ? (w.holder.worker ?? `pid ${w.holder.pid} on ${w.holder.host}`) : '-',
      w.epoch === null ? '-' : String(w.epoch),
      w.lastPassAt ?? '-',
      Object.entries(w.states)
        .filter(([, n]) => n > 0)
        .map(([state, n]) => `${n} ${state}`)
        .join(', ') || '-',
    ]),
  );
}

function printTable(out: Output, head: string[], rows: string[][]): void {
  const widths = head.map((h, i) => rows.reduce((w, r) => Math.max(w, r[i]!.length), h.length));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  out.line(out.style.bold(line(head)));
  for (const r of rows) out.line(line(r));
}
