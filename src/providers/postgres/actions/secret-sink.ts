// Where a rotated password goes: a file the consumer reads (mode 0600), or a line `NAME=value` of an
// env file. The sink keeps, besides the current value, the *pending* one (written before the role's
// password changes) and the *previous* one (kept until it is proven dead): so at every instant one of
// them is the password that works, and nothing is lost. Every write replaces a whole file at once
// (a temporary file beside it, flushed, renamed): a reader sees the old file or the new one.
import { randomBytes } from 'node:crypto';
import { open, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { TendError } from '../../../core/index.js';

/** The values a sink holds now (absent: not there). */
export interface SinkValues {
  readonly current?: string;
  readonly pending?: string;
  readonly previous?: string;
}

/** A secret sink (file or env file). */
export interface SecretSink {
  /** Where it is, for messages (never a value). */
  readonly where: string;
  read(): Promise<SinkValues>;
  /** Writes the pending value; the current one is untouched. */
  setPending(value: string): Promise<void>;
  /**
   * Makes the pending value current and keeps the one it replaces as previous; idempotent (a second
   * call after a crash finishes what the first began, never overwriting previous with the new value).
   */
  promote(): Promise<void>;
  /** Forgets the previous value. */
  dropPrevious(): Promise<void>;
}

/** Writes `text` to `file` all at once with mode 0600 (created when missing). */
export async function writePrivateAtomic(file: string, text: string): Promise<void> {
  const tmp = join(dirname(file), `.${basename(file)}.tend-${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(tmp, 'wx', 0o600);
  try {
    try {
      await handle.writeFile(text, 'utf8');
      await handle.chmod(0o600);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, file);
    // The rename is durable once the directory is.
    const d = await open(dirname(file), 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

async function readOrUndefined(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new TendError('sink.unreadable', `cannot read ${file}: ${(e as Error).message}`, {
      hint: 'check the path and that Tend may read and write it',
    });
  }
}

/** A value as a file holds it: the first line, without the line end; empty is none. */
function firstLine(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const line = text.split(/\r?\n/)[0] ?? '';
  return line === '' ? undefined : line;
}

/**
 * A file holding the password alone (as `fromFile` secrets and `PGPASSFILE`-style consumers read
 * it); the pending and previous values live beside it in `<file>.pending` and `<file>.previous`.
 */
export function fileSink(file: string): SecretSink {
  const pending = `${file}.pending`;
  const previous = `${file}.previous`;
  const read = async (): Promise<SinkValues> => {
    const [c, p, o] = await Promise.all([file, pending, previous].map(readOrUndefined));
    const current = firstLine(c);
    const next = firstLine(p);
    const old = firstLine(o);
    return {
      ...(current !== undefined ? { current } : {}),
      ...(next !== undefined ? { pending: next } : {}),
      ...(old !== undefined ? { previous: old } : {}),
    };
  };
  return {
    where: file,
    read,
    setPending: (value) => writePrivateAtomic(pending, `${value}\n`),
    async promote() {
      const v = await read();
      if (v.pending === undefined) return;
      if (v.current !== v.pending) {
        if (v.current !== undefined) await writePrivateAtomic(previous, `${v.current}\n`);
        await writePrivateAtomic(file, `${v.pending}\n`);
      }
      await rm(pending, { force: true });
    },
    dropPrevious: () => rm(previous, { force: true }),
  };
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Whether `name` can be a variable of an env file. */
export function validEnvName(name: string): boolean {
  return ENV_NAME.test(name);
}

/** A value of an env-file line, without surrounding quotes. */
function unquote(v: string): string {
  const t = v.trim();
  if (t.length >= 2 && (t[0] === '"' || t[0] === "'") && t.endsWith(t[0])) return t.slice(1, -1);
  return t;
}

/**
 * A line `NAME=value` of an env file (other lines are kept as they are); the pending and previous
 * values are the lines `NAME_PENDING=` and `NAME_PREVIOUS=` of the same file, so promoting is one
 * atomic write of the whole file.
 */
export function envFileSink(file: string, name: string): SecretSink {
  const keys = { current: name, pending: `${name}_PENDING`, previous: `${name}_PREVIOUS` };
  const load = async (): Promise<{ lines: string[]; values: Map<string, string> }> => {
    const text = (await readOrUndefined(file)) ?? '';
    const lines = text === '' ? [] : text.replace(/\r?\n$/, '').split(/\r?\n/);
    const values = new Map<string, string>();
    for (const line of lines) {
      const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)$/.exec(line);
      if (m) values.set(m[1]!, unquote(m[2]!));
    }
    return { lines, values };
  };
  /** Rewrites the file with `set` (undefined removes the line), other lines untouched. */
  const save = async (set: Readonly<Record<string, string | undefined>>): Promise<void> => {
    const { lines } = await load();
    const done = new Set<string>();
    const out: string[] = [];
    for (const line of lines) {
      const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line);
      const key = m?.[1];
      if (key !== undefined && Object.prototype.hasOwnProperty.call(set, key)) {
        if (done.has(key)) continue;
        done.add(key);
        const v = set[key];
        if (v !== undefined) out.push(`${key}=${v}`);
      } else out.push(line);
    }
    for (const [key, v] of Object.entries(set)) {
      if (!done.has(key) && v !== undefined) out.push(`${key}=${v}`);
    }
    await writePrivateAtomic(file, out.length === 0 ? '' : `${out.join('\n')}\n`);
  };
  const read = async (): Promise<SinkValues> => {
    const { values } = await load();
    const get = (k: string) => {
      const v = values.get(k);
      return v === undefined || v === '' ? undefined : v;
    };
    const current = get(keys.current);
    const pending = get(keys.pending);
    const previous = get(keys.previous);
    return {
      ...(current !== undefined ? { current } : {}),
      ...(pending !== undefined ? { pending } : {}),
      ...(previous !== undefined ? { previous } : {}),
    };
  };
  return {
    where: `${file} (${name})`,
    read,
    setPending: (value) => save({ [keys.pending]: value }),
    async promote() {
      const v = await read();
      if (v.pending === undefined) return;
      await save({
        [keys.current]: v.pending,
        [keys.pending]: undefined,
        ...(v.current !== undefined && v.current !== v.pending
          ? { [keys.previous]: v.current }
          : {}),
      });
    },
    dropPrevious: () => save({ [keys.previous]: undefined }),
  };
}
