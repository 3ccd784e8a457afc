import { closeSync, fsync, openSync } from 'node:fs';

/** Syncs one file to disk, calling back when done (node's `fs.fsync`, or a test's stand-in). */
export type SyncFile = (fd: number, done: (error: Error | null) => void) => void;

/**
 * Makes a SQLite database's write-ahead log durable off the main thread: `after(done)` calls `done`
 * once a sync of the log that began after the call has finished, so it covers every commit made
 * before the call. The sync runs in libuv's thread pool (`fs.fsync`), so the thread that sends
 * requests keeps running meanwhile; requests made while a sync runs share the next one.
 *
 * SQLite's WAL is written in commit order and a sync covers everything written before it, so one
 * sync after a commit makes it, and every commit before it, durable: what `synchronous = FULL`
 * does inside the commit (docs/decisions/0028-relaxed-settles.md).
 */
export class WalSync {
  readonly #walPath: string;
  /** The log, opened at the first sync (SQLite creates it at the first commit in WAL mode). */
  #fd: number | undefined;
  readonly #sync: SyncFile;
  /** Callers waiting for the next sync to begin. */
  #waiting: ((error: Error | null) => void)[] = [];
  /** Callers of the sync running now; undefined when none runs. */
  #running: ((error: Error | null) => void)[] | undefined;
  #idle: (() => void)[] = [];
  #closed = false;

  /** Syncs the log at `walPath` (the database's path and `-wal`) with `sync`. */
  constructor(walPath: string, sync: SyncFile = fsync) {
    this.#walPath = walPath;
    this.#sync = sync;
  }

  /** Calls `done` after a sync that began after this call (with its error, if it failed). */
  after(done: (error: Error | null) => void): void {
    if (this.#closed) {
      done(new Error('the write-ahead log sync is closed'));
      return;
    }
    this.#waiting.push(done);
    if (this.#running === undefined) this.#start();
  }

  /** Waits for the syncs asked for so far, then closes the file; later calls to `after` fail. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      const finish = () => {
        if (!this.#closed) {
          this.#closed = true;
          if (this.#fd !== undefined) closeSync(this.#fd);
        }
        resolve();
      };
      if (this.#running === undefined) finish();
      else this.#idle.push(finish);
    });
  }

  #start(): void {
    const callers = this.#waiting;
    this.#waiting = [];
    this.#running = callers;
    try {
      this.#fd ??= openSync(this.#walPath, 'r');
    } catch (e) {
      this.#running = undefined;
      const error = e instanceof Error ? e : new Error(String(e));
      for (const done of callers) done(error);
      if (this.#running === undefined) for (const idle of this.#idle.splice(0)) idle();
      return;
    }
    this.#sync(this.#fd, (error) => {
      this.#running = undefined;
      // The next sync starts first: a caller asking again from its callback waits for the one after.
      if (this.#waiting.length > 0) this.#start();
      for (const done of callers) done(error);
      if (this.#running === undefined) for (const idle of this.#idle.splice(0)) idle();
    });
  }
}
