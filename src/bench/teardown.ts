// What the benchmark started that would outlive it if it were killed: a PostgreSQL cluster (pg_ctl
// detaches it), `tend worker` and other `tend` processes, sandboxes. Each is registered here while
// it runs (`onTeardown`) and unregistered once stopped the ordinary way (a `finally`). On SIGINT or
// SIGTERM, or an error nothing caught, `installTeardown`'s handlers stop what is still registered,
// the newest first (the workers before the cluster they use), then exit 130, 143 or 1.

type Task = () => unknown;

const tasks = new Set<Task>();
let stopping = false;

/** How long one task may take before the teardown goes on to the next. */
const TASK_TIMEOUT_MS = 30_000;

/** Registers something to stop if the benchmark is killed; returns its unregistration. */
export function onTeardown(task: Task): () => void {
  tasks.add(task);
  return () => {
    tasks.delete(task);
  };
}

/** Runs every registered task, newest first, each for at most `TASK_TIMEOUT_MS`. */
export async function runTeardown(): Promise<void> {
  const all = [...tasks].reverse();
  tasks.clear();
  for (const task of all) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.resolve()
        .then(task)
        .catch(() => undefined),
      new Promise<void>((r) => (timer = setTimeout(r, TASK_TIMEOUT_MS))),
    ]);
    clearTimeout(timer);
  }
}

/** The exit code of a process ended by a signal, as a shell reports it: 128 + the signal's number. */
export const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;

/**
 * Stops what is registered on SIGINT and SIGTERM (then exits 130 or 143; a second signal meanwhile
 * is only reported) and on an uncaught exception or unhandled rejection (then exits 1).
 */
export function installTeardown(say: (text: string) => void): void {
  const stop = (why: string, code: number) => {
    if (stopping) {
      say(`${why}: still stopping what the benchmark started…`);
      return;
    }
    stopping = true;
    say(`${why}: stopping what the benchmark started (${tasks.size} left running)…`);
    void runTeardown().finally(() => process.exit(code));
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => stop(signal, SIGNAL_EXIT[signal]));
  }
  const failed = (e: unknown) => {
    say(`uncaught: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    stop('an uncaught error', 1);
  };
  process.on('uncaughtException', failed);
  process.on('unhandledRejection', failed);
}
