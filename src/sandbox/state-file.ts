import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { StateSnapshot } from './store.js';

/**
 * Reads a state file written by `StateFileWriter`; undefined when the file does not exist. Throws an
 * Error that names the file when it exists but is not a sandbox state.
 */
export function readStateFile(path: string): StateSnapshot | undefined {
  if (!existsSync(path)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(
      `sandbox state file ${path} is not valid JSON (${(error as Error).message}): fix or delete it`,
    );
  }
  const s = parsed as Partial<StateSnapshot> | null;
  if (
    s === null ||
    typeof s !== 'object' ||
    s.version !== 1 ||
    typeof s.seq !== 'number' ||
    !Array.isArray(s.objects) ||
    !Array.isArray(s.audit) ||
    s.idempotency === null ||
    typeof s.idempotency !== 'object'
  ) {
    throw new Error(
      `sandbox state file ${path} is not a version 1 sandbox state: fix or delete it`,
    );
  }
  return s as StateSnapshot;
}

/**
 * Saves snapshots to a file atomically (a temporary file renamed over the old one, so a crash leaves
 * the old state or the new, never half of one). Saves are debounced; `flush` saves now.
 */
export class StateFileWriter {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly path: string,
    private readonly snapshot: () => StateSnapshot,
    private readonly debounceMs = 20,
  ) {}

  /** Saves soon (coalescing the changes made meanwhile). */
  schedule(): void {
    this.timer ??= setTimeout(() => this.flush(), this.debounceMs);
  }

  /** Saves now if a save is pending. */
  flush(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.write();
  }

  /** Saves now, pending or not. */
  write(): void {
    mkdirSync(dirname(this.path), { recursive: true });
    const temporary = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(this.snapshot()));
    renameSync(temporary, this.path);
  }
}
