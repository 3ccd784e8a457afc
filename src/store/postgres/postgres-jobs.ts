import type { Redactor } from '../../core/index.js';
import { TendError } from '../../core/index.js';
import type {
  FleetJobs,
  FleetListener,
  FleetListenerHandlers,
  FleetNotice,
  Job,
  JobEnd,
  JobError,
  JobState,
  NewJob,
} from '../jobs.js';
import type { PgClient, PgPool, PgQueryable } from './postgres-client.js';
import { run } from './postgres-client.js';
import { parsePostgresLocation } from './postgres-location.js';
import type { PostgresLocation } from './postgres-location.js';
import {
  POSTGRES_MIGRATIONS,
  schemaState,
  schemaTooNew,
  schemaTooOld,
} from './postgres-migrations.js';
import { connectPool, openError, storeError } from './postgres-store.js';

// The fleet's job table (schema version 3) and event channel on PostgreSQL (docs/fleet.md, decision
// 0045): our own table with FOR UPDATE SKIP LOCKED, NOTIFY to wake the holders and to carry events.

/** The channel workers publish their events on (a small JSON each). */
export const EVENTS_CHANNEL = 'tend_events';
/** The channel a new job is announced on (its workspace's name). */
export const JOBS_CHANNEL = 'tend_jobs';
/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more: ours stay under this. */
export const MAX_NOTICE_BYTES = 7_500;

interface JobRow {
  readonly id: string;
  readonly workspace: string;
  readonly kind: string;
  readonly input: string;
  readonly requested_by: string;
  readonly state: JobState;
  readonly result: string | null;
  readonly error: string | null;
  readonly created_at: Date;
  readonly started_at: Date | null;
  readonly finished_at: Date | null;
  readonly epoch: number | null;
  readonly worker: string | null;
}

function jobFromRow(row: JobRow): Job {
  return {
    id: row.id,
    workspace: row.workspace,
    kind: row.kind,
    input: JSON.parse(row.input) as unknown,
    requestedBy: row.requested_by,
    state: row.state,
    ...(row.result !== null ? { result: JSON.parse(row.result) as unknown } : {}),
    ...(row.error !== null ? { error: JSON.parse(row.error) as JobError } : {}),
    createdAt: row.created_at.toISOString(),
    ...(row.started_at ? { startedAt: row.started_at.toISOString() } : {}),
    ...(row.finished_at ? { finishedAt: row.finished_at.toISOString() } : {}),
    ...(row.epoch !== null ? { epoch: row.epoch } : {}),
    ...(row.worker !== null ? { worker: row.worker } : {}),
  };
}

/**
 * Claims the oldest queued job of `workspace` for `worker` while its lease with `epoch` is live (one
 * statement: the lease's row is checked with the database's clock in it). SKIP LOCKED: a job another
 * transaction is claiming is passed over, never waited for nor claimed twice. Exported for the test
 * that holds one claim open while another runs.
 */
export async function claimJob(
  db: PgQueryable,
  workspace: string,
  epoch: number,
  worker: string,
): Promise<Job | undefined> {
  const { rows } = await run<JobRow>(
    db,
    `UPDATE tend.jobs SET state = 'running', started_at = clock_timestamp(), epoch = $2, worker = $3
     WHERE id = (
       SELECT id FROM tend.jobs WHERE workspace = $1 AND state = 'queued'
       ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED
     )
     AND EXISTS (
       SELECT 1 FROM tend.leases
       WHERE workspace = $1 AND epoch = $2 AND expires_at > clock_timestamp()
     )
     RETURNING *`,
    [workspace, epoch, worker],
  );
  return rows[0] ? jobFromRow(rows[0]) : undefined;
}

/** A notice as a NOTIFY payload: the event cut down to its kind (and a message) when too long. */
export function noticePayload(notice: FleetNotice, redactor?: Redactor): string {
  const text = (v: unknown) => (redactor ? redactor.json(v) : JSON.stringify(v));
  const full = text(notice);
  if (Buffer.byteLength(full) <= MAX_NOTICE_BYTES) return full;
  const message = notice.event['message'];
  const short = {
    ...notice,
    event: {
      kind: notice.event.kind,
      truncated: true,
      ...(typeof message === 'string' ? { message: message.slice(0, 1_000) } : {}),
    },
  };
  return text(short);
}

/** Opens the job table of a `postgres://` location (schema version 3 required; a pool of 2). */
export async function openPostgresJobs(
  location: string,
  options: {
    readonly env?: Readonly<Record<string, string | undefined>>;
    readonly redactor?: Redactor;
  } = {},
): Promise<PostgresJobs> {
  const where = parsePostgresLocation(location, options.env ?? process.env);
  if (where.password !== undefined) options.redactor?.add(where.password);
  const pool = await connectPool(where, 2);
  try {
    const state = await schemaState(pool, POSTGRES_MIGRATIONS);
    if (state.version > state.latest) throw schemaTooNew(state);
    if (state.version < state.latest) throw schemaTooOld(state);
  } catch (e) {
    await pool.end().catch(() => undefined);
    throw openError(e, where, options.redactor);
  }
  return new PostgresJobs(pool, where, options.redactor);
}

/** The job table and event channel on PostgreSQL. */
export class PostgresJobs implements FleetJobs {
  readonly #pool: PgPool;
  readonly #where: PostgresLocation;
  readonly #redactor: Redactor | undefined;
  readonly #listeners = new Set<FleetListener>();
  /** Publishes go out one after another, in order. */
  #publishing: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(pool: PgPool, where: PostgresLocation, redactor?: Redactor) {
    this.#pool = pool;
    this.#where = where;
    this.#redactor = redactor;
  }

  #clean<T>(value: T): T {
    return this.#redactor ? this.#redactor.value(value) : value;
  }

  submit(job: NewJob): Promise<Job> {
    return this.#run(async (db) => {
      const { rows } = await run<JobRow>(
        db,
        `INSERT INTO tend.jobs (id, workspace, kind, input, requested_by, state)
         VALUES ($1, $2, $3, $4, $5, 'queued') RETURNING *`,
        [job.id, job.workspace, job.kind, JSON.stringify(this.#clean(job.input)), job.requestedBy],
      );
      await db.query('SELECT pg_notify($1, $2)', [JOBS_CHANNEL, job.workspace]);
      return jobFromRow(rows[0]!);
    });
  }

  job(id: string): Promise<Job | undefined> {
    return this.#run(async (db) => {
      const { rows } = await run<JobRow>(db, 'SELECT * FROM tend.jobs WHERE id = $1', [id]);
      return rows[0] ? jobFromRow(rows[0]) : undefined;
    });
  }

  interruptStale(workspace: string, epoch: number): Promise<Job[]> {
    const error: JobError = {
      code: 'job.interrupted',
      message:
        'the worker running this job lost the workspace (it stopped or died) before recording how it ended; it is not run again: the journal’s recovery settles whatever it sent',
      hint: 'look at the workspace (GET …/status, …/history) and ask again if it is still wanted',
    };
    return this.#run(async (db) => {
      const { rows } = await run<JobRow>(
        db,
        `UPDATE tend.jobs SET state = 'interrupted', error = $3, finished_at = clock_timestamp()
         WHERE workspace = $1 AND state = 'running' AND epoch < $2 RETURNING *`,
        [workspace, epoch, JSON.stringify(error)],
      );
      return rows.map(jobFromRow);
    });
  }

  claim(workspace: string, epoch: number, worker: string): Promise<Job | undefined> {
    return this.#run((db) => claimJob(db, workspace, epoch, worker));
  }

  finish(id: string, epoch: number, end: JobEnd): Promise<Job | undefined> {
    return this.#run(async (db) => {
      const result = 'result' in end && end.result !== undefined ? end.result : null;
      const { rows } = await run<JobRow>(
        db,
        `UPDATE tend.jobs SET state = $3, result = $4, error = $5, finished_at = clock_timestamp()
         WHERE id = $1 AND state = 'running' AND epoch = $2 RETURNING *`,
        [
          id,
          epoch,
          end.state,
          result === null ? null : JSON.stringify(this.#clean(result)),
          end.state === 'failed' ? JSON.stringify(this.#clean(end.error)) : null,
        ],
      );
      return rows[0] ? jobFromRow(rows[0]) : undefined;
    });
  }

  queued(): Promise<Map<string, number>> {
    return this.#run(async (db) => {
      const { rows } = await run<{ workspace: string; n: number }>(
        db,
        `SELECT workspace, count(*)::int AS n FROM tend.jobs WHERE state = 'queued'
         GROUP BY workspace ORDER BY workspace`,
      );
      return new Map(rows.map((r) => [r.workspace, r.n]));
    });
  }

  publish(notice: FleetNotice): Promise<void> {
    const payload = noticePayload(notice, this.#redactor);
    const sent = this.#publishing.then(() =>
      this.#run(async (db) => {
        await db.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, payload]);
      }),
    );
    this.#publishing = sent.catch(() => undefined);
    return sent;
  }

  async listen(handlers: FleetListenerHandlers): Promise<FleetListener> {
    if (this.#closed) throw closedError();
    const listener = new ChannelListener(this.#where, handlers);
    await listener.start();
    this.#listeners.add(listener);
    return {
      close: async () => {
        this.#listeners.delete(listener);
        await listener.close();
      },
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([...this.#listeners].map((l) => l.close()));
    await this.#publishing;
    await this.#pool.end();
  }

  async #run<T>(body: (db: PgQueryable) => Promise<T>): Promise<T> {
    if (this.#closed) throw closedError();
    try {
      return await body(this.#pool);
    } catch (e) {
      throw storeError(e);
    }
  }
}

function closedError(): TendError {
  return new TendError('store.closed', 'the fleet job table is closed', { phase: 'store' });
}

/** The first wait before listening again after the connection dropped; doubled, capped. */
const RECONNECT_MS = 500;
const MAX_RECONNECT_MS = 10_000;

interface Notification {
  readonly channel: string;
  readonly payload?: string;
}

/**
 * One connection of its own that LISTENs to the fleet's channels (a pooled one would be given to
 * others). When it drops (a restart, a terminated backend) it is discarded and a new one listens
 * again after a back-off; events published meanwhile are not seen (NOTIFY is not stored).
 */
class ChannelListener implements FleetListener {
  #pool: PgPool | undefined;
  #client: PgClient | undefined;
  #timer: NodeJS.Timeout | undefined;
  #backoff = RECONNECT_MS;
  #closed = false;

  constructor(
    private readonly where: PostgresLocation,
    private readonly handlers: FleetListenerHandlers,
  ) {}

  async start(): Promise<void> {
    this.#pool = await connectPool(this.where, 1);
    await this.#connect();
  }

  async #connect(): Promise<void> {
    const client = await new Promise<PgClient>((resolve, reject) => {
      const pool = this.#pool as unknown as {
        connect(cb: (e: Error | undefined, c: PgClient | undefined) => void): void;
      };
      pool.connect((e, c) => {
        if (e || !c) return reject(e ?? new Error('no connection'));
        // At once, inside the driver's callback: the server may end the connection in the same burst
        // of packets as the handshake (a backend terminated as it starts), and an `error` with no
        // listener would end the process.
        c.on('error', (err) => this.#lost(c, err));
        resolve(c);
      });
    });
    (client as unknown as { on(e: 'end', l: () => void): void }).on('end', () =>
      this.#lost(client),
    );
    (client as unknown as { on(e: 'notification', l: (n: Notification) => void): void }).on(
      'notification',
      (n) => this.#deliver(n),
    );
    this.#client = client;
    try {
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
      await client.query(`LISTEN ${JOBS_CHANNEL}`);
    } catch (e) {
      this.#lost(client, e instanceof Error ? e : new Error(String(e)));
      throw e;
    }
    this.#backoff = RECONNECT_MS;
    this.handlers.onConnection?.('listening');
  }

  /** The connection dropped: discarded (once), and listened again after a back-off. */
  #lost(client: PgClient, e?: Error): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    client.release(e ?? true);
    if (this.#closed) return;
    this.handlers.onConnection?.('lost', e?.message ?? 'the connection ended');
    this.#retry();
  }

  #retry(): void {
    const wait = this.#backoff;
    this.#backoff = Math.min(MAX_RECONNECT_MS, this.#backoff * 2);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#closed) return;
      this.#connect().catch((e: unknown) => {
        if (this.#client === undefined && !this.#closed && this.#timer === undefined) {
          this.handlers.onConnection?.('lost', e instanceof Error ? e.message : String(e));
          this.#retry();
        }
      });
    }, wait);
    this.#timer.unref();
  }

  #deliver(n: Notification): void {
    if (n.channel === JOBS_CHANNEL && n.payload) this.handlers.onJob?.(n.payload);
    else if (n.channel === EVENTS_CHANNEL && n.payload) {
      try {
        const notice = JSON.parse(n.payload) as FleetNotice;
        if (typeof notice.workspace === 'string' && typeof notice.event?.kind === 'string') {
          this.handlers.onEvent?.(notice);
        }
      } catch {
        // Not ours: ignored.
      }
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    if (client) {
      await client.query(`UNLISTEN *`).catch(() => undefined);
      client.release(true);
    }
    await this.#pool?.end().catch(() => undefined);
  }
}
