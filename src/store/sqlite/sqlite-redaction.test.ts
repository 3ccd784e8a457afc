import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REDACTED, Redactor } from '../../core/index.js';
import { ledgerKey } from '../ledger-key.js';
import { openSqliteStore } from './sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'tend-sqlite-redaction-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SECRET = 'pl4tform-echoed-s3cret';

/** The raw bytes of the database and its write-ahead log, as anyone with the files could read. */
function rawFiles(path: string): string {
  return [path, `${path}-wal`]
    .filter((p) => existsSync(p))
    .map((p) => readFileSync(p).toString('latin1'))
    .join('\n');
}

describe('SQLite store with a redactor: the last line of defence', () => {
  it('writes no registered secret to any table, whatever the caller hands it', async () => {
    const path = join(dir, 'redacted.db');
    const redactor = new Redactor();
    redactor.add(SECRET);
    const store = await openSqliteStore(path, {
      redactor,
      ledgerKey: ledgerKey('redaction-test-ledger-key-0123456789abcdef'),
    });
    const said = `POST /instances was rejected as invalid (400 invalid): admin_password "${SECRET}" is too long`;
    await store.putTwin({
      address: 'sb.instances/web',
      type: 'sb.instances',
      objectId: 'i-1',
      fields: { name: 'web', note: SECRET, [SECRET]: 1 },
      stateful: false,
      dependsOn: [],
      observedAt: '2026-01-01T00:00:00.000Z',
    });
    await store.journal({
      id: 'op-1',
      address: 'sb.instances/web',
      type: 'sb.instances',
      action: 'create',
      desiredHash: 'abc',
      marker: { workspace: 'test', address: 'sb.instances/web' },
      state: 'pending',
      createdAt: '2026-01-01T00:00:00.000Z',
      error: said,
    });
    await store.settle('op-1', { state: 'failed', at: '2026-01-01T00:00:01.000Z', error: said });
    const entry = await store.appendChange({
      time: '2026-01-01T00:00:02.000Z',
      actor: 'tend',
      source: 'tend',
      address: 'sb.instances/web',
      type: 'sb.instances',
      objectId: 'i-1',
      action: 'update',
      fields: ['note'],
      before: { note: 'old' },
      after: { note: `x${SECRET}x` },
    });
    await store.putStatus({
      address: 'sb.instances/web',
      state: 'error',
      message: said,
      checks: [
        { name: 'c', kind: 'cel', ok: false, message: SECRET, at: '2026-01-01T00:00:03.000Z' },
      ],
      updatedAt: '2026-01-01T00:00:03.000Z',
    });
    await store.setCursor('sb', SECRET);
    await store.setMeta('note', SECRET);
    await store.putAnnouncement({
      id: 'a1',
      address: 'sb.instances/web',
      field: 'note',
      value: { note: SECRET },
      actor: `bot ${SECRET}`,
      motivation: { kind: 'incident', ref: SECRET },
      createdAt: '2026-01-01T00:00:04.000Z',
      expiresAt: '2026-01-01T01:00:04.000Z',
      note: SECRET,
    });
    await store.putClaim({
      address: 'sb.instances/web',
      field: 'note',
      value: SECRET,
      actor: 'alice',
      motivation: { kind: 'incident', ref: SECRET },
      decision: 'hold',
      rule: 'r',
      since: '2026-01-01T00:00:05.000Z',
    });

    // Every write is committed (reads flush the queue) and nothing has been checkpointed yet.
    expect(await store.listStatus()).toHaveLength(1);
    const bytes = rawFiles(path);
    expect(bytes.length).toBeGreaterThan(0);
    expect(bytes.includes(SECRET)).toBe(false);

    // What reads back says where the secret was; the ledger still verifies.
    expect((await store.getOperation('op-1'))?.error).toContain(REDACTED);
    expect(entry.after).toEqual({ note: `x${REDACTED}x` });
    expect(await store.verifyLedger()).toMatchObject({ ok: true, entries: 1, unchecked: 0 });
    expect((await store.getTwin('sb.instances/web'))?.fields).toEqual({
      name: 'web',
      note: REDACTED,
      [REDACTED]: 1,
    });
    await store.close();
    expect(rawFiles(path).includes(SECRET)).toBe(false);
  });

  it('without a redactor writes what it is given (the composition root always passes one)', async () => {
    const path = join(dir, 'plain.db');
    const store = await openSqliteStore(path);
    await store.setMeta('note', SECRET);
    expect(await store.getMeta('note')).toBe(SECRET);
    expect(rawFiles(path).includes(SECRET)).toBe(true);
    await store.close();
  });
});
