// The fleet torture's judge (test/torture/fleet.test.ts): from the exact history of the lease rows
// (a trigger on tend.leases logs every insert, update and delete with the database's clock), the
// intervals during which each worker's lease on each workspace was valid; then which mutations in the
// platforms' request logs came from a worker outside those intervals, which takeovers took a live
// lease, and what a worker continued after SIGSTOP sent for a workspace taken over meanwhile. Times
// are epoch milliseconds of one host: PostgreSQL, the sandboxes and the test share its clock.

/** One row change of tend.leases as the test's trigger logged it (NEW for insert/update, OLD for delete). */
export interface LeaseEvent {
  /** Log order (a sequence), to order events of the same instant. */
  readonly seq: number;
  /** When the row changed (clock_timestamp() in the trigger). */
  readonly at: number;
  readonly op: 'INSERT' | 'UPDATE' | 'DELETE';
  readonly workspace: string;
  readonly epoch: number;
  /** The worker holding it; null for a plain `tend run`/`apply`. */
  readonly worker: string | null;
  readonly acquiredAt: number;
  readonly expiresAt: number;
}

/** A span during which one epoch of a workspace's lease was valid (acquired or renewed, unexpired, not released). */
export interface Held {
  readonly workspace: string;
  readonly epoch: number;
  readonly worker: string | null;
  readonly from: number;
  readonly to: number;
}

/** A takeover of a lease that had not expired, from a holder not known to be dead. */
export interface Steal {
  readonly workspace: string;
  readonly at: number;
  readonly from: { epoch: number; worker: string | null; expiresAt: number };
  readonly to: { epoch: number; worker: string | null };
}

interface Open {
  epoch: number;
  worker: string | null;
  from: number;
  to: number;
}

/**
 * The validity spans of every lease, and the takeovers of unexpired leases whose holder was not
 * killed before (`killedAt`: worker → when it got SIGKILL; a worker on the same host whose pid is
 * gone may be taken over at once, docs/fleet.md).
 */
export function leaseHistory(
  events: readonly LeaseEvent[],
  killedAt: ReadonlyMap<string, number> = new Map(),
): { held: Held[]; steals: Steal[] } {
  const held: Held[] = [];
  const steals: Steal[] = [];
  const byWorkspace = new Map<string, LeaseEvent[]>();
  for (const e of events) {
    const list = byWorkspace.get(e.workspace) ?? [];
    list.push(e);
    byWorkspace.set(e.workspace, list);
  }
  for (const [workspace, list] of byWorkspace) {
    list.sort((a, b) => a.seq - b.seq);
    let open: Open | undefined;
    const close = (end: number) => {
      if (open && end > open.from) held.push({ workspace, ...open, to: Math.min(open.to, end) });
      open = undefined;
    };
    for (const e of list) {
      if (e.op === 'DELETE') {
        if (open?.epoch === e.epoch) close(e.at);
      } else if (open === undefined || open.epoch !== e.epoch) {
        if (open && open.to > e.at) {
          const killed = open.worker === null ? undefined : killedAt.get(open.worker);
          if (killed === undefined || killed > e.at) {
            steals.push({
              workspace,
              at: e.at,
              from: { epoch: open.epoch, worker: open.worker, expiresAt: open.to },
              to: { epoch: e.epoch, worker: e.worker },
            });
          }
        }
        close(e.at);
        open = { epoch: e.epoch, worker: e.worker, from: e.acquiredAt, to: e.expiresAt };
      } else if (e.at <= open.to) {
        open.to = Math.max(open.to, e.expiresAt); // renewed in time
      } else {
        // Renewed after it had expired (nobody took it meanwhile): not valid in the gap.
        const gapStart = open.to;
        close(gapStart);
        open = { epoch: e.epoch, worker: e.worker, from: e.at, to: e.expiresAt };
      }
    }
    close(Number.POSITIVE_INFINITY);
  }
  return { held, steals };
}

/** A mutation a platform received, attributed to the workspace that owns its path. */
export interface Mutation {
  readonly time: number;
  readonly workspace: string;
  /** The worker its User-Agent names, null when it names none. */
  readonly worker: string | null;
  readonly method: string;
  readonly path: string;
}

/** A mutation that arrived more than the slack after its sender's last valid lease on the workspace. */
export interface Unleased {
  readonly mutation: Mutation;
  /** Arrival minus the end of the sender's last valid span before it (Infinity: none before). */
  readonly lagMs: number;
}

/**
 * How long after its sender's lease ended each mutation arrived (0 when inside a valid span), and the
 * ones later than `slackMs`: the time between the send fence's last check and the request's arrival
 * at the platform (docs/decisions/0043: the window it does not close).
 */
export function unleasedMutations(
  mutations: readonly Mutation[],
  held: readonly Held[],
  slackMs: number,
): { late: Unleased[]; maxLagMs: number; inside: number } {
  const late: Unleased[] = [];
  let maxLagMs = 0;
  let inside = 0;
  for (const m of mutations) {
    const spans = held.filter(
      (h) => h.workspace === m.workspace && h.worker !== null && h.worker === m.worker,
    );
    if (spans.some((h) => h.from <= m.time && m.time <= h.to)) {
      inside++;
      continue;
    }
    const before = spans.filter((h) => h.from <= m.time).map((h) => h.to);
    const lagMs = before.length === 0 ? Number.POSITIVE_INFINITY : m.time - Math.max(...before);
    maxLagMs = Math.max(maxLagMs, lagMs);
    if (lagMs > slackMs) late.push({ mutation: m, lagMs });
  }
  return { late, maxLagMs, inside };
}

/** A worker stopped with SIGSTOP and continued with SIGCONT. */
export interface Pause {
  readonly worker: string;
  readonly stoppedAt: number;
  readonly continuedAt: number;
}

/**
 * For each pause, the workspaces the worker held when stopped and another worker took over before it
 * was continued; and every mutation the worker sent for such a workspace after SIGCONT and before it
 * took that workspace again (if ever). The second list must be empty (issue 26: a zombie sends nothing).
 */
export function zombieMutations(
  mutations: readonly Mutation[],
  held: readonly Held[],
  pauses: readonly Pause[],
): { takenOver: { pause: Pause; workspace: string }[]; sent: Mutation[] } {
  const takenOver: { pause: Pause; workspace: string }[] = [];
  const sent: Mutation[] = [];
  for (const pause of pauses) {
    const atStop = held.filter(
      (h) => h.worker === pause.worker && h.from <= pause.stoppedAt && pause.stoppedAt <= h.to,
    );
    for (const mine of atStop) {
      const taken = held.some(
        (h) =>
          h.workspace === mine.workspace &&
          h.epoch > mine.epoch &&
          h.from > pause.stoppedAt &&
          h.from < pause.continuedAt,
      );
      if (!taken) continue;
      takenOver.push({ pause, workspace: mine.workspace });
      const again = held
        .filter(
          (h) =>
            h.workspace === mine.workspace &&
            h.worker === pause.worker &&
            h.from > pause.continuedAt,
        )
        .map((h) => h.from);
      const until = again.length === 0 ? Number.POSITIVE_INFINITY : Math.min(...again);
      for (const m of mutations) {
        if (
          m.worker === pause.worker &&
          m.workspace === mine.workspace &&
          m.time >= pause.continuedAt &&
          m.time < until
        ) {
          sent.push(m);
        }
      }
    }
  }
  return { takenOver, sent };
}

/** The worker a User-Agent names (`tend/0.1.0 (worker w-1; pid 42)`), or null. */
export function workerOf(userAgent: string | null): string | null {
  const m = /\(worker ([^;)]+);/.exec(userAgent ?? '');
  return m ? m[1]! : null;
}

/** The SQL that logs every change of tend.leases into tend_test.lease_log (test instrumentation only). */
export const LEASE_LOG_SQL = `
CREATE SCHEMA IF NOT EXISTS tend_test;
CREATE TABLE IF NOT EXISTS tend_test.lease_log (
  seq         BIGSERIAL PRIMARY KEY,
  at          TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  op          TEXT NOT NULL,
  workspace   TEXT NOT NULL,
  epoch       INTEGER NOT NULL,
  worker      TEXT,
  acquired_at TIMESTAMPTZ NOT NULL,
  expires_at  TIMESTAMPTZ NOT NULL
);
CREATE OR REPLACE FUNCTION tend_test.log_lease() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO tend_test.lease_log (op, workspace, epoch, worker, acquired_at, expires_at)
    VALUES (TG_OP, OLD.workspace, OLD.epoch, OLD.worker, OLD.acquired_at, OLD.expires_at);
    RETURN OLD;
  END IF;
  INSERT INTO tend_test.lease_log (op, workspace, epoch, worker, acquired_at, expires_at)
  VALUES (TG_OP, NEW.workspace, NEW.epoch, NEW.worker, NEW.acquired_at, NEW.expires_at);
  RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS lease_log ON tend.leases;
CREATE TRIGGER lease_log AFTER INSERT OR UPDATE OR DELETE ON tend.leases
  FOR EACH ROW EXECUTE FUNCTION tend_test.log_lease();
`;

/** The trigger's rows as events. */
export const LEASE_LOG_QUERY = `SELECT seq::int AS seq, (extract(epoch FROM at) * 1000)::float8 AS at, op, workspace, epoch, worker,
  (extract(epoch FROM acquired_at) * 1000)::float8 AS "acquiredAt",
  (extract(epoch FROM expires_at) * 1000)::float8 AS "expiresAt"
  FROM tend_test.lease_log ORDER BY seq`;
