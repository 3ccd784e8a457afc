import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { NewChange } from '../core/index.js';
import { Redactor, TendError } from '../core/index.js';
import { GENESIS_HASH, ledgerKey, openSqliteStore } from '../store/index.js';
import type { AppContext } from './context.js';
import { defaultContext } from './context.js';
import type { LedgerCheckpoint } from './ledger.js';
import { checkpointLedger, readCheckpoint, verifyLedger, writeCheckpoint } from './ledger.js';

// The application side of `tend ledger`: which key, which workspace, which checkpoint — and every
// bad checkpoint refused with a message that names the file and the field.

const root = mkdtempSync(join(tmpdir(), 'tend-ledger-app-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

const MATERIAL = 'ledger-app-test-key-0123456789abcdef';
const KEY = ledgerKey(MATERIAL);

function change(i: number): NewChange {
  return {
    time: `2026-01-01T00:00:0${i}.000Z`,
    actor: 'tend',
    actorKind: 'tend',
    source: 'tend',
    type: 'sb.volumes',
    objectId: `vol-${i}`,
    action: 'create',
    fields: [],
  };
}

/** An intent directory naming workspace `prod`, with a store of `entries` entries signed by KEY. */
async function workspace(entries: number): Promise<string> {
  const dir = join(root, `ws${++n}`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'workspace.yaml'), 'kind: Workspace\nname: prod\n');
  const store = await openSqliteStore(join(dir, '.tend', 'tend.db'), { ledgerKey: KEY });
  for (let i = 1; i <= entries; i++) await store.appendChange(change(i));
  await store.close();
  return dir;
}

function context(material = MATERIAL): AppContext {
  return defaultContext({
    env: { TEND_LEDGER_KEY: material },
    clock: { now: () => new Date('2026-02-03T04:05:06.000Z') } as AppContext['clock'],
    notice: () => {},
  });
}

async function rejection(p: Promise<unknown>): Promise<TendError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(TendError);
  return e as TendError;
}

describe('checkpointLedger and verifyLedger', () => {
  it('checkpoints an intact ledger with the workspace the intent names, and verifies against it', async () => {
    const dir = await workspace(3);
    const out = join(dir, 'ledger.checkpoint.json');
    const made = await checkpointLedger(context(), { dir, out });
    expect(made).toMatchObject({
      workspace: 'prod',
      keyId: KEY.id,
      verdict: 'intact',
      written: out,
      checkpoint: { workspace: 'prod', seq: 3, keyId: KEY.id, time: '2026-02-03T04:05:06.000Z' },
    });
    expect(made.checkpoint?.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(made.checkpoint);
    const checked = await verifyLedger(context(), { dir, checkpointFile: out });
    expect(checked).toMatchObject({ verdict: 'intact', ledger: { ok: true, entries: 3 } });
    expect(checked.checkpoint).toEqual(made.checkpoint);
  });

  it('checkpoints an empty ledger as entry 0 with 64 zeros', async () => {
    const dir = await workspace(0);
    const made = await checkpointLedger(context(), { dir });
    expect(made.checkpoint).toMatchObject({ seq: 0, hash: GENESIS_HASH });
    expect(made.written).toBeUndefined();
  });

  it('reports another key as wrong-key, with what to do', async () => {
    const dir = await workspace(2);
    const r = await verifyLedger(context('another-key-0123456789abcdef-0123456789'), { dir });
    expect(r.verdict).toBe('wrong-key');
    expect(r.advice).toBe(
      'verify with the key that wrote the ledger (TEND_LEDGER_KEY_FILE or TEND_LEDGER_KEY); if no key of yours has that id, the keyed entries were replaced',
    );
  });

  it('makes no checkpoint of a broken ledger', async () => {
    const dir = await workspace(2);
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(join(dir, '.tend', 'tend.db'));
    db.exec(
      `DROP TRIGGER changes_append_only_update; UPDATE changes SET actor = 'x' WHERE seq = 1`,
    );
    db.close();
    const r = await checkpointLedger(context(), { dir, out: join(dir, 'cp.json') });
    expect(r).toMatchObject({ verdict: 'tampered', ledger: { ok: false, brokenAt: 1 } });
    expect(r.checkpoint).toBeUndefined();
    expect(r.advice).toMatch(/^do not trust the ledger from that entry on/);
  });

  it('refuses a checkpoint of another workspace or made with another key', async () => {
    const dir = await workspace(1);
    const cp = (over: Partial<LedgerCheckpoint>) => {
      const path = join(dir, `cp-${++n}.json`);
      writeCheckpoint(path, {
        workspace: 'prod',
        seq: 0,
        hash: GENESIS_HASH,
        keyId: KEY.id,
        time: '2026-01-01T00:00:00.000Z',
        ...over,
      });
      return path;
    };
    const other = await rejection(
      verifyLedger(context(), { dir, checkpointFile: cp({ workspace: 'staging' }) }),
    );
    expect(other.code).toBe('ledger.checkpoint-workspace');
    expect(other.message).toBe(
      'the checkpoint is of workspace staging; this ledger is workspace prod',
    );
    const key = await rejection(
      verifyLedger(context(), { dir, checkpointFile: cp({ keyId: '0123456789abcdef' }) }),
    );
    expect(key.code).toBe('ledger.checkpoint-key');
    expect(key.message).toBe(
      `the checkpoint was made with key id 0123456789abcdef; you gave key id ${KEY.id}`,
    );
  });

  it('refuses a directory without a store rather than verifying an empty one it would create', async () => {
    const dir = join(root, `empty${++n}`);
    mkdirSync(dir);
    const e = await rejection(verifyLedger(context(), { dir }));
    expect(e.code).toBe('ledger.no-store');
    expect(e.message).toBe(
      `there is no store at ${join(dir, '.tend', 'tend.db')}: no ledger to verify`,
    );
  });

  it('never prints the key: it is registered with the redactor', async () => {
    const dir = await workspace(1);
    const redactor = new Redactor();
    const ctx = defaultContext({ env: { TEND_LEDGER_KEY: MATERIAL }, redactor, notice: () => {} });
    await verifyLedger(ctx, { dir });
    expect(redactor.text(`key ${MATERIAL}`)).not.toContain(MATERIAL);
  });
});

describe('readCheckpoint', () => {
  const good: LedgerCheckpoint = {
    workspace: 'prod',
    seq: 4,
    hash: 'a'.repeat(64),
    keyId: 'b'.repeat(16),
    time: '2026-01-01T00:00:00.000Z',
  };
  const file = (text: string) => {
    const path = join(root, `checkpoint-${++n}.json`);
    writeFileSync(path, text);
    return path;
  };

  it('reads what writeCheckpoint wrote', () => {
    const path = join(root, `written-${++n}.json`);
    writeCheckpoint(path, good);
    writeCheckpoint(path, { ...good, seq: 5 }); // replaced whole
    expect(readCheckpoint(path)).toEqual({ ...good, seq: 5 });
  });

  it.each([
    { name: 'not JSON', text: '{', why: 'it is not JSON' },
    { name: 'an array', text: '[]', why: 'it is not a JSON object' },
    {
      name: 'no workspace',
      text: JSON.stringify({ ...good, workspace: undefined }),
      why: 'workspace must be a workspace name, got nothing',
    },
    {
      name: 'a negative seq',
      text: JSON.stringify({ ...good, seq: -1 }),
      why: 'seq must be a non-negative integer, got -1',
    },
    {
      name: 'a short hash',
      text: JSON.stringify({ ...good, hash: 'abc' }),
      why: 'hash must be 64 lower-case hex digits, got "abc"',
    },
    {
      name: 'seq 0 with another hash',
      text: JSON.stringify({ ...good, seq: 0 }),
      why: 'the checkpoint of an empty ledger (seq 0) has the hash 64 zeros',
    },
    {
      name: 'a bad key id',
      text: JSON.stringify({ ...good, keyId: 'KEY' }),
      why: 'keyId must be 16 lower-case hex digits, got "KEY"',
    },
    {
      name: 'a bad time',
      text: JSON.stringify({ ...good, time: 'yesterday' }),
      why: 'time must be an ISO time, got "yesterday"',
    },
  ])('refuses $name', ({ text, why }) => {
    const path = file(text);
    let error: unknown;
    try {
      readCheckpoint(path);
    } catch (e) {
      error = e;
    }
    expect((error as TendError).code).toBe('ledger.checkpoint-invalid');
    expect((error as TendError).message).toBe(`the checkpoint ${path} is not valid: ${why}`);
  });

  it.each([
    { name: 'a missing file', path: () => join(root, 'absent.json'), why: 'it does not exist' },
    { name: 'a directory', path: () => root, why: 'it is not a regular file' },
    {
      name: 'a file over 64 KiB',
      path: () => file(' '.repeat(64 * 1024 + 1)),
      why: 'it is 65537 bytes; a checkpoint is at most 65536',
    },
  ])('cannot read $name', ({ path, why }) => {
    const p = path();
    let error: unknown;
    try {
      readCheckpoint(p);
    } catch (e) {
      error = e;
    }
    expect((error as TendError).code).toBe('ledger.checkpoint-unreadable');
    expect((error as TendError).message).toBe(`cannot read the checkpoint ${p}: ${why}`);
  });
});
