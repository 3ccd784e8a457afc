// The fleet's job table (docs/fleet.md "The API over the fleet", decision 0045): writes that need a
// workspace's lease, asked on any `tend serve --fleet` node and carried out once by the worker that
// holds the workspace; and the fleet's event channel (LISTEN/NOTIFY). Only a database shared by a
// fleet (PostgreSQL) has them. Every time is the database's.

/** Where a job stands. `interrupted`: its worker lost the lease while running it; never run again. */
export type JobState = 'queued' | 'running' | 'done' | 'failed' | 'interrupted';

/** A job's error: what went wrong and what to do. */
export interface JobError {
  readonly code: string;
  readonly message: string;
  readonly hint?: string;
}

/** A job as stored. */
export interface Job {
  readonly id: string;
  readonly workspace: string;
  /** What to do: `apply` (a saved plan), `action` (a Day-2 action). */
  readonly kind: string;
  readonly input: unknown;
  /** Who asked: `api:<token name> (<role>)`. */
  readonly requestedBy: string;
  readonly state: JobState;
  readonly result?: unknown;
  readonly error?: JobError;
  /** ISO, database time. */
  readonly createdAt: string;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  /** The epoch of the lease it ran under, and the worker that ran it. */
  readonly epoch?: number;
  readonly worker?: string;
}

/** A job to queue. */
export interface NewJob {
  readonly id: string;
  readonly workspace: string;
  readonly kind: string;
  readonly input: unknown;
  readonly requestedBy: string;
}

/** How a job ended. */
export type JobEnd =
  | { readonly state: 'done'; readonly result: unknown }
  | { readonly state: 'failed'; readonly error: JobError; readonly result?: unknown };

/** What a worker publishes on the fleet's event channel: one workspace's event, small. */
export interface FleetNotice {
  readonly workspace: string;
  readonly worker: string;
  /** An application event (`kind` first), or a job's state (`kind: 'job'`). */
  readonly event: { readonly kind: string } & Readonly<Record<string, unknown>>;
}

/** A subscription to the fleet's channels; it reconnects by itself until closed. */
export interface FleetListener {
  close(): Promise<void>;
}

/** What a listener is told. */
export interface FleetListenerHandlers {
  /** An event a worker published. */
  readonly onEvent?: (notice: FleetNotice) => void;
  /** A job was queued for this workspace. */
  readonly onJob?: (workspace: string) => void;
  /** The connection dropped (it reconnects) or came back. */
  readonly onConnection?: (state: 'lost' | 'listening', message?: string) => void;
}

/** The job table and the event channel of a fleet's store. */
export interface FleetJobs {
  /** Queues a job (state `queued`) and wakes the workers (NOTIFY). */
  submit(job: NewJob): Promise<Job>;
  /** A job by id; undefined when there is none. */
  job(id: string): Promise<Job | undefined>;
  /**
   * Marks `interrupted` every job of `workspace` left running under an epoch older than `epoch` (its
   * worker lost the lease: whatever it sent is settled by the journal's recovery, not by running it
   * again); returns them.
   */
  interruptStale(workspace: string, epoch: number): Promise<Job[]>;
  /**
   * Claims the oldest queued job of `workspace` (FOR UPDATE SKIP LOCKED: two claimers never get the
   * same one) for `worker`, only while its lease with `epoch` is live (database time); records the
   * epoch and worker. Undefined when there is none (or the lease is gone).
   */
  claim(workspace: string, epoch: number, worker: string): Promise<Job | undefined>;
  /** Records how a running job ended (only while it is still running under `epoch`). */
  finish(id: string, epoch: number, end: JobEnd): Promise<Job | undefined>;
  /** How many jobs of each workspace are queued. */
  queued(): Promise<Map<string, number>>;
  /** Publishes an event on the fleet's channel (payload kept under PostgreSQL's 8000 bytes). */
  publish(notice: FleetNotice): Promise<void>;
  /** Listens to the fleet's channels on a connection of its own, reconnecting when it drops. */
  listen(handlers: FleetListenerHandlers): Promise<FleetListener>;
  close(): Promise<void>;
}
