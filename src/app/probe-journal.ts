import Database from 'better-sqlite3';
import { TendError } from '../core/index.js';

/** One object a probe meant to create, as journaled before its create was sent. */
export interface ProbeJournalEntry {
  readonly seq: number;
  readonly run: string;
  readonly endpoint: string;
  readonly type: string;
  /** The name it was created with (what a list is searched for when the id is unknown). */
  readonly name: string;
  /** The values of the type's scope (`{"zone_id": "scratch.example."}`). */
  readonly scope: Readonly<Record<string, string>>;
  /** Known once the create answered; absent when the probe stopped before that. */
  readonly id?: string;
}

/**
 * The probe's own journal: a small SQLite file, not a workspace store. Every object the probe
 * creates is written here before its create is sent, given its id once the platform answers, and
 * struck off once it is deleted; whatever is still open when a probe starts was left by a run that
 * was killed, and is removed first. Durable before the request goes out (`synchronous = FULL`).
 */
export class ProbeJournal {
  private readonly db: Database.Database;

  constructor(readonly file: string) {
    try {
      this.db = new Database(file);
    } catch (e) {
      throw new TendError(
        'probe.journal_unreadable',
        `cannot open the probe journal ${file}: ${e instanceof Error ? e.message : String(e)}`,
        { hint: 'pass --journal <file> with a writable location, or check the file' },
      );
    }
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.exec(`CREATE TABLE IF NOT EXISTS probe_objects (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      run TEXT NOT NULL,
      endpoint TEXT NOT NULL,
      type TEXT NOT NULL,
      name TEXT NOT NULL,
      scope TEXT NOT NULL,
      id TEXT,
      done INTEGER NOT NULL DEFAULT 0
    )`);
  }

  /** Journals an object about to be created; returns its entry number. */
  intend(e: Omit<ProbeJournalEntry, 'seq' | 'id'>): number {
    const r = this.db
      .prepare(
        'INSERT INTO probe_objects (run, endpoint, type, name, scope) VALUES (?, ?, ?, ?, ?)',
      )
      .run(e.run, e.endpoint, e.type, e.name, JSON.stringify(e.scope));
    return Number(r.lastInsertRowid);
  }

  /** Records the id the platform gave the object. */
  created(seq: number, id: string): void {
    this.db.prepare('UPDATE probe_objects SET id = ? WHERE seq = ?').run(id, seq);
  }

  /** Strikes an object off: deleted, or known never to have been created. */
  done(seq: number): void {
    this.db.prepare('UPDATE probe_objects SET done = 1 WHERE seq = ?').run(seq);
  }

  /** The objects of an endpoint not yet struck off, oldest first. */
  open(endpoint: string): ProbeJournalEntry[] {
    const rows = this.db
      .prepare(
        'SELECT seq, run, endpoint, type, name, scope, id FROM probe_objects WHERE done = 0 AND endpoint = ? ORDER BY seq',
      )
      .all(endpoint) as {
      seq: number;
      run: string;
      endpoint: string;
      type: string;
      name: string;
      scope: string;
      id: string | null;
    }[];
    return rows.map((r) => ({
      seq: r.seq,
      run: r.run,
      endpoint: r.endpoint,
      type: r.type,
      name: r.name,
      scope: JSON.parse(r.scope) as Record<string, string>,
      ...(r.id !== null ? { id: r.id } : {}),
    }));
  }

  close(): void {
    this.db.close();
  }
}
