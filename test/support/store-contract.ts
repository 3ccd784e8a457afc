// The Store contract's promises (src/store/store.ts) as one suite every store runs: SQLite today
// (src/store/sqlite/sqlite-store.test.ts), a PostgreSQL store next. Beside it, provider-contract.ts
// does the same for providers.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type {
  Address,
  Announcement,
  FieldClaim,
  NewChange,
  Operation,
  ResourceStatus,
} from '../../src/core/index.js';
import { TendError } from '../../src/core/index.js';
import type {
  LeaseHolder,
  LedgerKey,
  LedgerVerification,
  Store,
  TwinEntry,
} from '../../src/store/index.js';
import { GENESIS_HASH, keyedHash, ledgerKey } from '../../src/store/index.js';

/** How the suite opens a store: with the key its ledger is signed with, or none. */
export interface SuiteStoreOptions {
  readonly ledgerKey?: LedgerKey;
}

/** A fresh, empty store. */
export type OpenStoreForSuite = (options: SuiteStoreOptions) => Promise<Store>;

/**
 * Two handles on one storage, as two processes would open it, sharing a clock the test moves; each
 * handle opened with its own options (default: the suite's key for both).
 */
export type OpenTwoHandles = (
  now: () => Date,
  options?: readonly [SuiteStoreOptions, SuiteStoreOptions],
) => Promise<[Store, Store]>;

/** The ledger key the suite signs with, and another one. */
export const SUITE_LEDGER_KEY = ledgerKey('suite-ledger-key-0123456789abcdef');
const OTHER_LEDGER_KEY = ledgerKey('another-ledger-key-0123456789abcdef');

/**
 * The conformance suite every Store implementation runs (like hono's shared router cases): it states
 * the contract of `Store` as tests. `open` must return a fresh, empty store each time it is called,
 * signing its ledger with the key it is given; the suite closes every store it opens.
 */
export function describeStore(
  name: string,
  open: OpenStoreForSuite,
  twoHandles?: OpenTwoHandles,
): void {
  describe(`Store conformance: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await open({ ledgerKey: SUITE_LEDGER_KEY });
    });
    afterEach(async () => {
      await store.close();
    });

    describe('twin', () => {
      it('returns undefined for an address it never stored', async () => {
        expect(await store.getTwin('sb.volumes/none')).toBeUndefined();
        expect(await store.listTwin()).toEqual([]);
      });

      it('returns exactly the entry it stored', async () => {
        const entry = twin('data');
        await store.putTwin(entry);
        expect(await store.getTwin('sb.volumes/data')).toStrictEqual(entry);
      });

      it('keeps the hashes of the write-only values sent, and their absence', async () => {
        const entry = twin('data', { sent: { nameservers: 'h1' } });
        await store.putTwin(entry);
        expect(await store.getTwin('sb.volumes/data')).toStrictEqual(entry);
        const without = twin('data');
        await store.putTwin(without);
        expect(await store.getTwin('sb.volumes/data')).toStrictEqual(without);
      });

      it('overwrites the entry of the same address', async () => {
        await store.putTwin(twin('data'));
        const newer = twin('data', {
          objectId: 'vol-2',
          fields: { size: 20 },
          stateful: false,
          dependsOn: [],
          observedAt: '2026-01-02T00:00:00.000Z',
        });
        await store.putTwin(newer);
        expect(await store.getTwin('sb.volumes/data')).toStrictEqual(newer);
        expect(await store.listTwin()).toHaveLength(1);
      });

      it('lists every entry ordered by address', async () => {
        await store.putTwin(twin('zeta'));
        await store.putTwin(twin('alpha'));
        await store.putTwin(twin('mid', { type: 'sb.networks', address: 'sb.networks/mid' }));
        expect((await store.listTwin()).map((e) => e.address)).toEqual([
          'sb.networks/mid',
          'sb.volumes/alpha',
          'sb.volumes/zeta',
        ]);
      });

      it('reads many entries in one call: those it has, once each, in address order', async () => {
        const odd = twin('it\'s "odd" ü', { address: 'sb.volumes/it\'s "odd" ü' });
        await store.putTwin(twin('zeta'));
        await store.putTwin(odd);
        await store.putTwin(twin('alpha'));
        await store.putTwin(twin('other'));
        const got = await store.getTwins([
          'sb.volumes/zeta',
          'sb.volumes/never',
          'sb.volumes/alpha',
          'sb.volumes/zeta',
          'sb.volumes/it\'s "odd" ü',
        ]);
        expect(got.map((e) => e.address)).toEqual([
          'sb.volumes/alpha',
          'sb.volumes/it\'s "odd" ü',
          'sb.volumes/zeta',
        ]);
        expect(got[1]).toStrictEqual(odd);
        expect(got[2]).toStrictEqual(await store.getTwin('sb.volumes/zeta'));
        expect(await store.getTwins([])).toEqual([]);
        expect(await store.getTwins(['sb.volumes/never'])).toEqual([]);
      });

      it('deletes an entry, and deleting a missing one is a no-op', async () => {
        await store.putTwin(twin('data'));
        await store.putTwin(twin('logs'));
        await store.deleteTwin('sb.volumes/data');
        await store.deleteTwin('sb.volumes/never');
        expect(await store.getTwin('sb.volumes/data')).toBeUndefined();
        expect((await store.listTwin()).map((e) => e.address)).toEqual(['sb.volumes/logs']);
      });
    });

    describe('journal', () => {
      it('keeps a journaled operation pending until it is settled', async () => {
        const op = operation(1);
        await store.journal(op);
        expect(await store.getOperation(op.id)).toStrictEqual(op);
        expect(await store.unsettled()).toStrictEqual([op]);

        await store.settle(op.id, { state: 'settled', objectId: 'vol-9', at: T(5) });
        expect(await store.getOperation(op.id)).toStrictEqual({
          ...op,
          state: 'settled',
          objectId: 'vol-9',
          settledAt: T(5),
        });
        expect(await store.unsettled()).toEqual([]);
      });

      it('records a failure with its error', async () => {
        await store.journal(operation(1));
        await store.settle('op-1', { state: 'failed', error: 'quota exceeded', at: T(5) });
        const got = await store.getOperation('op-1');
        expect(got).toMatchObject({ state: 'failed', error: 'quota exceeded', settledAt: T(5) });
        expect(got?.objectId).toBeUndefined();
        expect(await store.unsettled()).toEqual([]);
      });

      it('keeps the object id an operation was journaled with when the settlement has none', async () => {
        await store.journal(operation(1, { action: 'update', objectId: 'vol-1' }));
        await store.settle('op-1', { state: 'settled', at: T(5) });
        expect((await store.getOperation('op-1'))?.objectId).toBe('vol-1');
      });

      it('ignores a second settlement: the first result stands', async () => {
        await store.journal(operation(1));
        await store.settle('op-1', { state: 'settled', objectId: 'vol-1', at: T(5) });
        const first = await store.getOperation('op-1');
        await store.settle('op-1', { state: 'failed', error: 'late timeout', at: T(9) });
        await store.settle('op-1', { state: 'settled', objectId: 'vol-2', at: T(10) });
        expect(await store.getOperation('op-1')).toStrictEqual(first);
      });

      it('does not overwrite a failed operation either', async () => {
        await store.journal(operation(1));
        await store.settle('op-1', { state: 'failed', error: 'refused', at: T(5) });
        await store.settle('op-1', { state: 'settled', objectId: 'vol-1', at: T(6) });
        expect(await store.getOperation('op-1')).toMatchObject({
          state: 'failed',
          error: 'refused',
          settledAt: T(5),
        });
      });

      it('refuses to settle an operation that was never journaled', async () => {
        await expectTendError(
          store.settle('op-missing', { state: 'settled', at: T(1) }),
          'store.operation-not-found',
          'operation op-missing was never journaled; journal an operation before settling it',
        );
      });

      it('refuses a settlement whose state is not settled or failed', async () => {
        await store.journal(operation(1));
        await expectTendError(
          store.settle('op-1', { state: 'pending' as 'settled', at: T(1) }),
          'store.invalid-settlement',
          "cannot settle operation op-1 as pending; use 'settled' or 'failed'",
        );
        expect((await store.getOperation('op-1'))?.state).toBe('pending');
      });

      it('refuses to journal the same operation id twice and keeps the first', async () => {
        const op = operation(1);
        await store.journal(op);
        await expectTendError(
          store.journal({ ...op, desiredHash: 'other' }),
          'store.operation-exists',
          'operation op-1 is already journaled; resolve the existing one instead of journaling it again',
        );
        expect(await store.getOperation('op-1')).toStrictEqual(op);
      });

      it('refuses to journal an operation that is not pending', async () => {
        await expectTendError(
          store.journal(operation(1, { state: 'settled' })),
          'store.invalid-operation',
          'operation op-1 is settled; journal() takes a pending operation, settle() settles it',
        );
        expect(await store.getOperation('op-1')).toBeUndefined();
      });

      it('round-trips every optional field of an operation', async () => {
        const op = operation(1, {
          action: 'delete',
          objectId: 'vol-1',
          group: 'replace-1',
          step: 2,
          marker: { workspace: 'prod', address: 'sb.volumes/v1', op: 'op-0' },
        });
        await store.journal(op);
        expect(await store.getOperation('op-1')).toStrictEqual(op);
      });

      it('round-trips the object a replace replaces, and keeps it when the step settles', async () => {
        const op = operation(1, { group: 'replace-1', step: 1, replaces: 'vol-old' });
        await store.journal(op);
        expect(await store.getOperation('op-1')).toStrictEqual(op);
        await store.settle('op-1', { state: 'settled', objectId: 'vol-new', at: T(5) });
        expect(await store.getOperation('op-1')).toMatchObject({
          objectId: 'vol-new',
          replaces: 'vol-old',
          state: 'settled',
        });
      });

      it('lists unsettled operations oldest first, then in journaling order', async () => {
        await store.journal(operation(1, { createdAt: T(3) }));
        await store.journal(operation(2, { createdAt: T(1) }));
        await store.journal(operation(3, { createdAt: T(2) }));
        await store.journal(operation(4, { createdAt: T(2) }));
        await store.journal(operation(5, { createdAt: T(0) }));
        await store.settle('op-5', { state: 'settled', at: T(4) });
        expect((await store.unsettled()).map((o) => o.id)).toEqual([
          'op-2',
          'op-3',
          'op-4',
          'op-1',
        ]);
      });

      it('lists operations newest last, filtered by address and limited to the most recent', async () => {
        for (let i = 1; i <= 5; i++) {
          await store.journal(
            operation(i, { address: i % 2 ? 'sb.volumes/odd' : 'sb.volumes/even' }),
          );
        }
        await store.settle('op-2', { state: 'settled', at: T(9) });
        const ids = (ops: Operation[]): string[] => ops.map((o) => o.id);
        expect(ids(await store.operations())).toEqual(['op-1', 'op-2', 'op-3', 'op-4', 'op-5']);
        expect(ids(await store.operations({}))).toEqual(['op-1', 'op-2', 'op-3', 'op-4', 'op-5']);
        expect(ids(await store.operations({ limit: 2 }))).toEqual(['op-4', 'op-5']);
        expect(ids(await store.operations({ address: 'sb.volumes/odd' }))).toEqual([
          'op-1',
          'op-3',
          'op-5',
        ]);
        expect(ids(await store.operations({ address: 'sb.volumes/odd', limit: 2 }))).toEqual([
          'op-3',
          'op-5',
        ]);
        expect(ids(await store.operations({ limit: 0 }))).toEqual([]);
        expect(ids(await store.operations({ address: 'sb.volumes/none' }))).toEqual([]);
      });

      it('orders operations by creation time, not by journaling order', async () => {
        await store.journal(operation(1, { createdAt: T(2) }));
        await store.journal(operation(2, { createdAt: T(1) }));
        expect((await store.operations()).map((o) => o.id)).toEqual(['op-2', 'op-1']);
        expect((await store.operations({ limit: 1 })).map((o) => o.id)).toEqual(['op-1']);
      });

      it.each([
        { limit: -1, shown: '-1' },
        { limit: 1.5, shown: '1.5' },
        { limit: Number.NaN, shown: 'NaN' },
      ])('refuses an operations limit of $shown', async ({ limit, shown }) => {
        await expectTendError(
          store.operations({ limit }),
          'store.invalid-query',
          `limit must be a non-negative integer, got ${shown}`,
        );
      });
    });

    describe('ledger', () => {
      it('is empty and valid before anything is appended', async () => {
        expect(await store.changes()).toEqual([]);
        expect(await store.verifyLedger()).toEqual(intact(0, GENESIS_HASH));
      });

      it('numbers entries from 1, chains each hash to the previous one and signs it with the key', async () => {
        const a = await store.appendChange(change(1));
        const b = await store.appendChange(change(2));
        const c = await store.appendChange(change(3));
        expect([a.seq, b.seq, c.seq]).toEqual([1, 2, 3]);
        expect(a.prevHash).toBe(GENESIS_HASH);
        expect(b.prevHash).toBe(a.hash);
        expect(c.prevHash).toBe(b.hash);
        for (const e of [a, b, c]) {
          const { hash, ...rest } = e;
          expect(hash).toMatch(/^[0-9a-f]{64}$/);
          expect(rest.keyId).toBe(SUITE_LEDGER_KEY.id);
          expect(hash).toBe(
            keyedHash(SUITE_LEDGER_KEY, { ...rest, format: 2, keyId: SUITE_LEDGER_KEY.id }),
          );
        }
        expect(new Set([a.hash, b.hash, c.hash]).size).toBe(3);
        expect(await store.verifyLedger()).toEqual(intact(3, c.hash));
      });

      it('returns the stored entry: the change plus seq, keyId, prevHash and hash', async () => {
        const input = change(1);
        const stored = await store.appendChange(input);
        expect(stored).toStrictEqual({
          ...input,
          seq: 1,
          keyId: SUITE_LEDGER_KEY.id,
          prevHash: GENESIS_HASH,
          hash: stored.hash,
        });
        expect(await store.changes()).toStrictEqual([stored]);
      });

      it('round-trips the actor kind, a structured motivation, a decision and a move', async () => {
        const input = change(1, {
          actor: 'autoscaler',
          actorKind: 'controller',
          intent: 'availability',
          motivation: {
            kind: 'traffic',
            ref: 'spike 2026-11-24',
            urgency: 'high',
            expiresAt: '2026-11-24T14:00:00.000Z',
          },
          source: 'audit',
          action: 'move',
          decision: {
            decision: 'hold',
            rule: 'traffic-holds#1',
            reason: 'autoscaler raised replicas for traffic: held until the spike ends',
            until: '2026-11-24T14:00:00.000Z',
            then: 'enforce',
            restore: 'declared',
            fields: ['replicas', 'tags.team'],
          },
        });
        const stored = await store.appendChange(input);
        expect(stored).toStrictEqual({
          ...input,
          seq: 1,
          keyId: SUITE_LEDGER_KEY.id,
          prevHash: GENESIS_HASH,
          hash: stored.hash,
        });
        expect(await store.changes()).toStrictEqual([stored]);
        expect(await store.verifyLedger()).toEqual(intact(1, stored.hash));
      });

      it('round-trips the commit a git workspace planned from, hashed with the entry; entries without one unchanged', async () => {
        const plain = await store.appendChange(change(1));
        const origin = {
          kind: 'git' as const,
          url: 'file:///srv/git/infra.git',
          ref: 'main',
          commit: '0123456789abcdef0123456789abcdef01234567',
          path: 'prod',
        };
        const input = change(2, { origin });
        const stored = await store.appendChange(input);
        expect(stored).toStrictEqual({
          ...input,
          seq: 2,
          keyId: SUITE_LEDGER_KEY.id,
          prevHash: plain.hash,
          hash: stored.hash,
        });
        expect(await store.changes()).toStrictEqual([plain, stored]);
        const { hash, ...rest } = stored;
        const signed = { ...rest, format: 2 as const, keyId: SUITE_LEDGER_KEY.id };
        expect(hash).toBe(keyedHash(SUITE_LEDGER_KEY, signed));
        // The commit is part of what is signed: the same entry without it (or with another) differs.
        const { origin: _, ...without } = signed;
        expect(keyedHash(SUITE_LEDGER_KEY, without)).not.toBe(hash);
        expect(
          keyedHash(SUITE_LEDGER_KEY, { ...signed, origin: { ...origin, commit: 'f'.repeat(40) } }),
        ).not.toBe(hash);
        // An entry without one is hashed exactly as before the member existed.
        const { hash: plainHash, ...plainRest } = plain;
        expect(plain).not.toHaveProperty('origin');
        expect(plainHash).toBe(
          keyedHash(SUITE_LEDGER_KEY, { ...plainRest, format: 2, keyId: SUITE_LEDGER_KEY.id }),
        );
        expect(await store.verifyLedger()).toEqual(intact(2, stored.hash));
      });

      it('round-trips a verdict with its compliance record, hashed with the entry', async () => {
        const cause = change(1, { motivation: { kind: 'incident', ref: 'INC-9' } });
        const found = await store.appendChange(cause);
        const compliance = {
          policy: 'buckets-keep-versioning',
          rule: 0,
          result: 'fail' as const,
          message: 'buckets keep versioning on',
          actions: ['deny' as const],
          severity: 'high' as const,
          cause: {
            seq: found.seq,
            time: found.time,
            actor: found.actor,
            motivation: { kind: 'incident', ref: 'INC-9' },
            source: found.source,
          },
        };
        const input = change(2, { action: 'verdict', fields: ['versioning'], compliance });
        const stored = await store.appendChange(input);
        expect(stored.compliance).toStrictEqual(compliance);
        expect(await store.changes()).toStrictEqual([found, stored]);
        const { hash, ...rest } = stored;
        const signed = { ...rest, format: 2 as const, keyId: SUITE_LEDGER_KEY.id };
        expect(hash).toBe(keyedHash(SUITE_LEDGER_KEY, signed));
        // The record is signed: another result under the same hash does not verify.
        expect(
          keyedHash(SUITE_LEDGER_KEY, { ...signed, compliance: { ...compliance, result: 'pass' } }),
        ).not.toBe(hash);
        expect(found).not.toHaveProperty('compliance');
        expect(await store.verifyLedger()).toEqual(intact(2, stored.hash));
      });

      it('ignores seq, keyId, prevHash and hash passed in by the caller', async () => {
        const forged = {
          ...change(1),
          seq: 42,
          keyId: OTHER_LEDGER_KEY.id,
          prevHash: 'f'.repeat(64),
          hash: 'e'.repeat(64),
        };
        const stored = await store.appendChange(forged);
        expect(stored.seq).toBe(1);
        expect(stored.keyId).toBe(SUITE_LEDGER_KEY.id);
        expect(stored.prevHash).toBe(GENESIS_HASH);
        expect(stored.hash).not.toBe(forged.hash);
        expect(await store.verifyLedger()).toEqual(intact(1, stored.hash));
      });

      it('refuses to append without a ledger key, and appends nothing', async () => {
        const keyless = await open({});
        try {
          await expectTendError(
            keyless.appendChange(change(1)),
            'store.ledger-read-only',
            'cannot append to the change ledger: this store was opened without the ledger key, so it can read the ledger but not sign new entries',
          );
          expect(await keyless.changes()).toEqual([]);
          expect(await keyless.verifyLedger()).toEqual({
            ok: true,
            entries: 0,
            head: GENESIS_HASH,
            unkeyed: 0,
            unchecked: 0,
            warnings: [],
          });
        } finally {
          await keyless.close();
        }
      });

      it('verifies against a checkpoint it still holds, and reports one it no longer does', async () => {
        const a = await store.appendChange(change(1));
        const b = await store.appendChange(change(2));
        await store.appendChange(change(3));
        expect(await store.verifyLedger({ checkpoint: { seq: 2, hash: b.hash } })).toMatchObject({
          ok: true,
          entries: 3,
        });
        expect(await store.verifyLedger({ checkpoint: { seq: 2, hash: a.hash } })).toEqual({
          ok: false,
          brokenAt: 2,
          problem: 'checkpoint',
          reason:
            'entry 2 differs from the checkpoint: the checkpoint records another hash for it (the ledger was rewritten up to there)',
        });
        expect(await store.verifyLedger({ checkpoint: { seq: 5, hash: b.hash } })).toEqual({
          ok: false,
          brokenAt: 4,
          problem: 'missing',
          reason:
            'entries 4–5 are missing: the ledger ends at 3 but the checkpoint records 5 (entries were deleted)',
        });
      });

      it('reads entries in append order, filtered by address and seq, limited to the most recent', async () => {
        const all = [];
        for (let i = 1; i <= 6; i++) {
          all.push(
            await store.appendChange(
              change(i, { address: i % 2 ? 'sb.volumes/odd' : 'sb.volumes/even' }),
            ),
          );
        }
        const seqs = async (q?: Parameters<Store['changes']>[0]): Promise<number[]> =>
          (await store.changes(q)).map((c) => c.seq);
        expect(await store.changes()).toStrictEqual(all);
        expect(await seqs({ address: 'sb.volumes/odd' })).toEqual([1, 3, 5]);
        expect(await seqs({ afterSeq: 4 })).toEqual([5, 6]);
        expect(await seqs({ afterSeq: 0 })).toEqual([1, 2, 3, 4, 5, 6]);
        expect(await seqs({ afterSeq: 6 })).toEqual([]);
        expect(await seqs({ limit: 2 })).toEqual([5, 6]);
        expect(await seqs({ limit: 0 })).toEqual([]);
        expect(await seqs({ limit: 100 })).toEqual([1, 2, 3, 4, 5, 6]);
        expect(await seqs({ address: 'sb.volumes/even', afterSeq: 2 })).toEqual([4, 6]);
        expect(await seqs({ address: 'sb.volumes/even', limit: 1 })).toEqual([6]);
        expect(await seqs({ address: 'sb.volumes/odd', afterSeq: 1, limit: 1 })).toEqual([5]);
        expect(await seqs({ address: 'sb.volumes/none' })).toEqual([]);
      });

      it.each([
        { query: { limit: -2 }, message: 'limit must be a non-negative integer, got -2' },
        { query: { afterSeq: -1 }, message: 'afterSeq must be a non-negative integer, got -1' },
        { query: { afterSeq: 0.5 }, message: 'afterSeq must be a non-negative integer, got 0.5' },
      ])('refuses the query $query', async ({ query, message }) => {
        await expectTendError(store.changes(query), 'store.invalid-query', message);
      });

      it('verifies a chain it wrote', async () => {
        for (let i = 1; i <= 5; i++) await store.appendChange(change(i));
        const [last] = await store.changes({ limit: 1 });
        expect(await store.verifyLedger()).toEqual(intact(5, last!.hash));
      });

      it('keeps a valid chain when 200 callers append at once', async () => {
        const stored = await Promise.all(
          Array.from({ length: 200 }, (_, i) => store.appendChange(change(i + 1))),
        );
        expect(stored.map((c) => c.seq).sort((x, y) => x - y)).toEqual(
          Array.from({ length: 200 }, (_, i) => i + 1),
        );
        const read = await store.changes();
        expect(read.map((c) => c.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
        expect(new Set(read.map((c) => c.objectId)).size).toBe(200);
        expect(await store.verifyLedger()).toEqual(intact(200, read[199]!.hash));
      });

      it('round-trips an entry with only the required fields', async () => {
        const minimal: NewChange = {
          time: T(1),
          actor: 'unknown',
          source: 'unknown',
          type: 'sb.volumes',
          objectId: 'vol-1',
          action: 'delete',
          fields: [],
        };
        const stored = await store.appendChange(minimal);
        expect(await store.changes()).toStrictEqual([stored]);
        expect(stored).toStrictEqual({
          ...minimal,
          seq: 1,
          keyId: SUITE_LEDGER_KEY.id,
          prevHash: GENESIS_HASH,
          hash: stored.hash,
        });
      });
    });

    // A ledger written with one key and read with none, or with another: two handles on one storage.
    describe.skipIf(twoHandles === undefined)('ledger keys (two handles on one storage)', () => {
      const now = () => new Date(Date.UTC(2026, 0, 1));
      const handles: Store[] = [];
      afterEach(async () => {
        for (const h of handles.splice(0)) await h.close();
      });
      async function pair(reader: SuiteStoreOptions): Promise<[Store, Store]> {
        const opened = await twoHandles!(now, [{ ledgerKey: SUITE_LEDGER_KEY }, reader]);
        for (const h of opened) handles.push(h);
        return opened;
      }

      it('reads a keyed ledger without the key: entries, links and head are checked, signatures are not', async () => {
        const [writer, reader] = await pair({});
        for (let i = 1; i <= 3; i++) await writer.appendChange(change(i));
        expect(await reader.changes()).toStrictEqual(await writer.changes());
        const last = (await writer.changes({ limit: 1 }))[0]!;
        expect(await reader.verifyLedger()).toEqual({
          ok: true,
          entries: 3,
          head: last.hash,
          unkeyed: 0,
          unchecked: 3,
          warnings: [
            'entries 1–3 were not checked against the ledger key (none was given): the links hold, but an edit re-hashed without the key would not show',
          ],
        });
      });

      it('says which key wrote the ledger when verified with another', async () => {
        const [writer, reader] = await pair({ ledgerKey: OTHER_LEDGER_KEY });
        await writer.appendChange(change(1));
        expect(await reader.verifyLedger()).toEqual({
          ok: false,
          brokenAt: 1,
          problem: 'wrong-key',
          reason: `the keyed entries, from entry 1, were written with key id ${SUITE_LEDGER_KEY.id}; you gave key id ${OTHER_LEDGER_KEY.id}`,
        });
      });
    });

    describe('cursors', () => {
      it('keeps one cursor per provider and overwrites it', async () => {
        expect(await store.getCursor('sb')).toBeUndefined();
        await store.setCursor('sb', '10');
        await store.setCursor('pdns', 'a:b/c');
        await store.setCursor('sb', '12');
        expect(await store.getCursor('sb')).toBe('12');
        expect(await store.getCursor('pdns')).toBe('a:b/c');
      });
    });

    describe('statuses', () => {
      it('stores, overwrites, lists by address and deletes statuses', async () => {
        const b = status('b', { state: 'failing', message: 'probe failed' });
        await store.putStatus(status('c'));
        await store.putStatus(status('a', { state: 'drifted' }));
        await store.putStatus(b);
        await store.putStatus(status('a'));
        expect((await store.listStatus()).map((s) => [s.address, s.state])).toEqual([
          ['sb.volumes/a', 'converged'],
          ['sb.volumes/b', 'failing'],
          ['sb.volumes/c', 'converged'],
        ]);
        expect((await store.listStatus())[1]).toStrictEqual(b);
        await store.deleteStatus('sb.volumes/c');
        await store.deleteStatus('sb.volumes/never');
        expect((await store.listStatus()).map((s) => s.address)).toEqual([
          'sb.volumes/a',
          'sb.volumes/b',
        ]);
      });

      it("keeps a check's severity and evidence, and leaves them absent where they were", async () => {
        const s = status('cert', {
          state: 'failing',
          checks: [
            {
              name: 'cert',
              kind: 'tls',
              ok: false,
              severity: 'warning',
              message: 'certificate for db.example expires in 9 days',
              evidence: 'subject CN=db.example; 9 days left',
              at: T(1),
            },
            {
              name: 'down',
              kind: 'tls',
              ok: false,
              severity: 'error',
              message: 'refused',
              at: T(1),
            },
            { name: 'size', kind: 'cel', ok: false, message: 'false', at: T(1) },
          ],
        });
        await store.putStatus(s);
        const [got] = await store.listStatus();
        expect(got).toStrictEqual(s);
        expect(got!.checks[2]).not.toHaveProperty('severity');
      });
    });

    describe('statuses with compliance', () => {
      it('round-trips the compliance state of a status; a status without one has none', async () => {
        const compliance = {
          key: 'k1',
          evaluatedAt: T(3),
          passed: 2,
          undecidable: 1,
          findings: [
            {
              policy: 'keep-tags',
              rule: 1,
              result: 'fail' as const,
              message: 'tags.owner is required',
              reason: 'Invalid',
              actions: ['warn' as const],
              severity: 'medium' as const,
              fields: ['tags'],
              source: { file: 'policies.yaml', line: 9, column: 7 },
              since: T(3),
              cause: {
                seq: 4,
                time: T(2),
                actor: 'alice',
                actorKind: 'human' as const,
                source: 'audit' as const,
              },
              recorded: 5,
            },
          ],
        };
        const a = status('a', { compliance });
        await store.putStatus(a);
        await store.putStatus(status('b'));
        const [ra, rb] = await store.listStatus();
        expect(ra).toStrictEqual(a);
        expect(rb).not.toHaveProperty('compliance');
      });
    });

    describe('values', () => {
      it('round-trips nested JSON and unicode exactly', async () => {
        const entry = twin('data', { fields: AWKWARD, objectId: 'vol-ü-名前-🚀' });
        await store.putTwin(entry);
        expect(await store.getTwin('sb.volumes/data')).toStrictEqual(entry);

        const c = change(1, {
          actor: 'Zoë 🤖',
          intent: 'コスト',
          motivation: { kind: 'incident', ref: 'line one\nline two\t"quoted"' },
          before: AWKWARD,
          after: { ...AWKWARD, size: 20 },
        });
        const stored = await store.appendChange(c);
        expect(await store.changes()).toStrictEqual([stored]);
        expect(stored).toMatchObject(c);
        expect(await store.verifyLedger()).toEqual(intact(1, stored.hash));

        const s = status('data', {
          message: 'réponse: ✓',
          checks: [{ name: 'dns-ü', kind: 'dns', ok: false, message: '名前 🚫', at: T(1) }],
        });
        await store.putStatus(s);
        expect(await store.listStatus()).toStrictEqual([s]);

        await store.setCursor('sb', 'ü🚀');
        expect(await store.getCursor('sb')).toBe('ü🚀');
      });
    });

    describe('announcements', () => {
      it('is empty before anything is announced', async () => {
        expect(await store.announcements()).toEqual([]);
        expect(await store.announcements({ activeAt: T(0) })).toEqual([]);
      });

      it('returns exactly the announcement it stored, with and without optional members', async () => {
        const full = announcement(1, {
          actorKind: 'controller',
          intent: 'availability',
          motivation: { kind: 'traffic', ref: 'spike', urgency: 'high', expiresAt: T(3600) },
          note: 'Black Friday',
        });
        const minimal = announcement(2);
        await store.putAnnouncement(full);
        await store.putAnnouncement(minimal);
        expect(await store.announcements()).toStrictEqual([full, minimal]);
      });

      it('stores the same id once: announcing it again is a no-op', async () => {
        const a = announcement(1);
        await store.putAnnouncement(a);
        await store.putAnnouncement({ ...a });
        expect(await store.announcements()).toStrictEqual([a]);
      });

      it('lists oldest first by the time they were made, then in storing order', async () => {
        await store.putAnnouncement(announcement(1, { createdAt: T(30) }));
        await store.putAnnouncement(announcement(2, { createdAt: T(10) }));
        await store.putAnnouncement(announcement(3, { createdAt: T(20) }));
        await store.putAnnouncement(announcement(4, { createdAt: T(20) }));
        expect((await store.announcements()).map((a) => a.id)).toEqual(['a2', 'a3', 'a4', 'a1']);
      });

      it('orders by time, not by how the time is spelt', async () => {
        await store.putAnnouncement(announcement(1, { createdAt: '2026-01-01T00:00:01Z' }));
        await store.putAnnouncement(announcement(2, { createdAt: '2026-01-01T00:00:00.500Z' }));
        expect((await store.announcements()).map((a) => a.id)).toEqual(['a2', 'a1']);
      });

      it('filters by address and by what is still active at a time', async () => {
        await store.putAnnouncement(announcement(1, { expiresAt: T(100) }));
        await store.putAnnouncement(
          announcement(2, { address: 'sb.services/web', expiresAt: T(200) }),
        );
        await store.putAnnouncement(announcement(3, { expiresAt: T(300) }));
        const ids = async (q: Parameters<Store['announcements']>[0]) =>
          (await store.announcements(q)).map((a) => a.id);
        expect(await ids({ address: 'sb.services/api' })).toEqual(['a1', 'a3']);
        expect(await ids({ activeAt: T(99) })).toEqual(['a1', 'a2', 'a3']);
        // An announcement has expired at its expiry.
        expect(await ids({ activeAt: T(100) })).toEqual(['a2', 'a3']);
        expect(await ids({ activeAt: T(250), address: 'sb.services/api' })).toEqual(['a3']);
        expect(await ids({ activeAt: T(300) })).toEqual([]);
        expect(await ids({ address: 'sb.services/none' })).toEqual([]);
      });

      it('refuses an activeAt that is not a time', async () => {
        await expectTendError(
          store.announcements({ activeAt: 'soon' }),
          'store.invalid-query',
          'activeAt must be an ISO time, got "soon"',
        );
      });

      it('round-trips awkward values and text exactly', async () => {
        const a = announcement(1, {
          field: 'tags.名前 "quoted"',
          value: AWKWARD,
          actor: "Zoë 🤖 'o'brien\" \\",
          intent: 'コスト',
          motivation: { kind: 'incident', ref: 'line one\nline two\t"quoted"' },
          note: 'multi\nline\r\nnote with nul \u0000 and 🚀',
        });
        const values = [null, '', 'text', 0, -1.5, false, [], {}, ['a', { b: null }]];
        await store.putAnnouncement(a);
        for (const [i, value] of values.entries()) {
          await store.putAnnouncement(announcement(10 + i, { value }));
        }
        const read = await store.announcements();
        expect(read[0]).toStrictEqual(a);
        expect(read.slice(1).map((x) => x.value)).toStrictEqual(values);
      });
    });

    describe('field claims', () => {
      it('is empty before anything is claimed', async () => {
        expect(await store.claims()).toEqual([]);
        expect(await store.claims('sb.services/api')).toEqual([]);
      });

      it('returns exactly the claim it stored, with and without optional members', async () => {
        const full = claim('sb.services/api', 'replicas', {
          actorKind: 'controller',
          intent: 'availability',
          motivation: { kind: 'traffic', urgency: 'high', expiresAt: T(3600) },
          decision: 'hold',
          until: T(3600),
          then: 'enforce',
          seq: 42,
        });
        const minimal = claim('sb.services/api', 'image');
        await store.putClaim(full);
        await store.putClaim(minimal);
        expect(await store.claims()).toStrictEqual([minimal, full]);
      });

      it('keeps one claim per address and field: putting one replaces it', async () => {
        await store.putClaim(claim('sb.services/api', 'replicas', { value: 5 }));
        const newer = claim('sb.services/api', 'replicas', {
          value: 7,
          actor: 'alice',
          decision: 'accept',
        });
        await store.putClaim(newer);
        await store.putClaim(claim('sb.services/web', 'replicas'));
        expect(await store.claims('sb.services/api')).toStrictEqual([newer]);
        expect(await store.claims()).toHaveLength(2);
      });

      it('lists by address, then field, and filters by address', async () => {
        await store.putClaim(claim('sb.services/web', 'replicas'));
        await store.putClaim(claim('sb.services/api', 'tags.team'));
        await store.putClaim(claim('sb.networks/main', 'cidr'));
        await store.putClaim(claim('sb.services/api', 'image'));
        const keys = (cs: FieldClaim[]) => cs.map((c) => `${c.address} ${c.field}`);
        expect(keys(await store.claims())).toEqual([
          'sb.networks/main cidr',
          'sb.services/api image',
          'sb.services/api tags.team',
          'sb.services/web replicas',
        ]);
        expect(keys(await store.claims('sb.services/api'))).toEqual([
          'sb.services/api image',
          'sb.services/api tags.team',
        ]);
      });

      it('deletes a claim, and deleting a missing one is a no-op', async () => {
        await store.putClaim(claim('sb.services/api', 'replicas'));
        await store.putClaim(claim('sb.services/api', 'image'));
        await store.deleteClaim('sb.services/api', 'replicas');
        await store.deleteClaim('sb.services/api', 'never');
        await store.deleteClaim('sb.services/none', 'replicas');
        expect((await store.claims()).map((c) => c.field)).toEqual(['image']);
      });

      it('round-trips awkward values and text, null and undefined apart', async () => {
        const awkward = claim('sb.services/api', 'tags.ключ "x"\ny', {
          value: AWKWARD,
          actor: 'Zoë 🤖 "quoted" \\ \'single\'',
          rule: 'hotfix#1 — “on call”',
          motivation: { kind: 'incident', ref: 'line one\nline two\t"quoted"' },
        });
        const nothing = claim('sb.services/api', 'gone', { value: undefined });
        const nul = claim('sb.services/api', 'nulled', { value: null });
        await store.putClaim(awkward);
        await store.putClaim(nothing);
        await store.putClaim(nul);
        expect(await store.claims()).toStrictEqual([nothing, nul, awkward]);
      });
    });

    describe('meta', () => {
      it('keeps a setting and overwrites it', async () => {
        expect(await store.getMeta('workspace')).toBeUndefined();
        await store.setMeta('workspace', 'prod');
        await store.setMeta('workspace', 'staging');
        expect(await store.getMeta('workspace')).toBe('staging');
      });
    });

    // Leases are about several processes: they need two handles on one storage.
    describe.skipIf(twoHandles === undefined)('leases (two handles on one storage)', () => {
      let now = Date.UTC(2026, 0, 1);
      let a: Store;
      let b: Store;
      beforeEach(async () => {
        now = Date.UTC(2026, 0, 1);
        [a, b] = await twoHandles!(() => new Date(now));
      });
      afterEach(async () => {
        await a.close();
        await b.close();
      });
      const holder = (command: string, pid: number): LeaseHolder => ({
        command,
        pid,
        host: 'build-7',
        startedAt: T(0),
      });

      it('gives a free workspace to the first writer and refuses a second, naming the holder', async () => {
        const first = await a.acquireLease({
          workspace: 'prod',
          holder: holder('tend run', 1),
          ttlMs: 30_000,
        });
        expect(first).toMatchObject({ acquired: true, lease: { epoch: 1, workspace: 'prod' } });
        const second = await b.acquireLease({
          workspace: 'prod',
          holder: holder('tend apply', 2),
          ttlMs: 30_000,
        });
        expect(second).toMatchObject({
          acquired: false,
          current: { epoch: 1, holder: { command: 'tend run', pid: 1, host: 'build-7' } },
        });
      });

      it('leases workspaces independently', async () => {
        await a.acquireLease({ workspace: 'prod', holder: holder('tend run', 1), ttlMs: 30_000 });
        const other = await b.acquireLease({
          workspace: 'dev',
          holder: holder('tend run', 2),
          ttlMs: 30_000,
        });
        expect(other).toMatchObject({ acquired: true, lease: { epoch: 1 } });
      });

      it('hands an expired lease over with the next epoch, and fences the old holder’s writes', async () => {
        await a.acquireLease({ workspace: 'prod', holder: holder('tend run', 1), ttlMs: 30_000 });
        await a.putTwin(twin('before'));
        now += 30_001;
        const taken = await b.acquireLease({
          workspace: 'prod',
          holder: holder('tend apply', 2),
          ttlMs: 30_000,
        });
        expect(taken).toMatchObject({
          acquired: true,
          lease: { epoch: 2 },
          tookOver: { epoch: 1 },
        });
        await expectTendError(a.journal(operation(1, { id: 'op-late' })), 'store.lease-lost');
        await expectTendError(a.putTwin(twin('late')), 'store.lease-lost');
        expect(await b.getOperation('op-late')).toBeUndefined();
        expect(await a.renewLease('prod', 1, 30_000)).toBe(false);
        await b.journal(operation(2, { id: 'op-new' }));
        expect(await b.getOperation('op-new')).toMatchObject({ epoch: 2 });
      });

      it('fences announcements and claims like every other write', async () => {
        await a.acquireLease({ workspace: 'prod', holder: holder('tend run', 1), ttlMs: 30_000 });
        await a.putClaim(claim('sb.services/api', 'replicas'));
        now += 30_001;
        await b.acquireLease({
          workspace: 'prod',
          holder: holder('tend announce', 2),
          ttlMs: 30_000,
        });
        await expectTendError(a.putAnnouncement(announcement(1)), 'store.lease-lost');
        await expectTendError(a.putClaim(claim('sb.services/api', 'image')), 'store.lease-lost');
        await expectTendError(a.deleteClaim('sb.services/api', 'replicas'), 'store.lease-lost');
        expect(await b.announcements()).toEqual([]);
        expect((await b.claims()).map((c) => c.field)).toEqual(['replicas']);
        await b.putAnnouncement(announcement(2));
        expect((await b.announcements()).map((x) => x.id)).toEqual(['a2']);
      });

      it('fences the ledger, settles, deletes, cursors, statuses, settings and action runs too: nothing commits', async () => {
        await a.acquireLease({ workspace: 'prod', holder: holder('tend run', 1), ttlMs: 30_000 });
        await a.journal(operation(1));
        await a.putTwin(twin('kept'));
        const first = await a.appendChange(change(1));
        now += 30_001;
        await b.acquireLease({ workspace: 'prod', holder: holder('tend apply', 2), ttlMs: 30_000 });
        const run = {
          id: 'run-1',
          address: 'sb.volumes/v1' as Address,
          type: 'sb.volumes',
          action: 'snapshot',
          params: {},
          actor: { actor: 'tend' },
          state: 'running' as const,
          createdAt: T(1),
          steps: [],
        };
        const late: [string, Promise<unknown>][] = [
          ['appendChange', a.appendChange(change(2))],
          ['settle', a.settle('op-1', { state: 'settled', at: T(2) })],
          ['deleteTwin', a.deleteTwin('sb.volumes/kept')],
          ['setCursor', a.setCursor('sb', '42')],
          ['putStatus', a.putStatus(status('late'))],
          ['deleteStatus', a.deleteStatus('sb.volumes/late')],
          ['setMeta', a.setMeta('workspace', 'stolen')],
          ['putActionRun', a.putActionRun(run)],
        ];
        for (const [, write] of late) await expectTendError(write, 'store.lease-lost');
        // The new holder reads what the old one wrote before it lost the lease, and nothing after.
        expect(await b.changes()).toStrictEqual([first]);
        expect(await b.verifyLedger()).toEqual(intact(1, first.hash));
        expect(await b.getOperation('op-1')).toMatchObject({ state: 'pending', epoch: 1 });
        expect(await b.getTwin('sb.volumes/kept')).toBeDefined();
        expect(await b.getCursor('sb')).toBeUndefined();
        expect(await b.listStatus()).toEqual([]);
        expect(await b.getMeta('workspace')).toBeUndefined();
        expect(await b.getActionRun('run-1')).toBeUndefined();
        // The new holder appends after the last entry the old one committed.
        expect((await b.appendChange(change(3))).seq).toBe(2);
      });

      it('keeps a renewed lease past its first expiry', async () => {
        await a.acquireLease({ workspace: 'prod', holder: holder('tend run', 1), ttlMs: 30_000 });
        now += 20_000;
        expect(await a.renewLease('prod', 1, 30_000)).toBe(true);
        now += 20_000;
        expect(
          await b.acquireLease({
            workspace: 'prod',
            holder: holder('tend apply', 2),
            ttlMs: 30_000,
          }),
        ).toMatchObject({ acquired: false });
      });

      it('takes an unexpired lease over only when asked to (a dead holder)', async () => {
        await a.acquireLease({ workspace: 'prod', holder: holder('tend run', 1), ttlMs: 30_000 });
        const asked: number[] = [];
        const r = await b.acquireLease({
          workspace: 'prod',
          holder: holder('tend apply', 2),
          ttlMs: 30_000,
          takeOver: (current) => {
            asked.push(current.holder.pid);
            return true;
          },
        });
        expect(asked).toEqual([1]);
        expect(r).toMatchObject({ acquired: true, lease: { epoch: 2 } });
      });

      it('frees a released lease; the epoch keeps growing', async () => {
        const r = await a.acquireLease({
          workspace: 'prod',
          holder: holder('tend apply', 1),
          ttlMs: 30_000,
        });
        expect(r.acquired).toBe(true);
        await a.releaseLease('prod', 1);
        expect(await a.getLease('prod')).toBeUndefined();
        await a.putTwin(twin('unfenced'));
        const again = await b.acquireLease({
          workspace: 'prod',
          holder: holder('tend apply', 2),
          ttlMs: 30_000,
        });
        expect(again).toMatchObject({ acquired: true, lease: { epoch: 2 } });
        expect(again.acquired && again.tookOver).toBeFalsy();
      });

      it('never gives one workspace to two writers that race', async () => {
        const results = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            (i % 2 === 0 ? a : b).acquireLease({
              workspace: 'prod',
              holder: holder('tend apply', i),
              ttlMs: 30_000,
            }),
          ),
        );
        expect(results.filter((r) => r.acquired)).toHaveLength(1);
      });

      it('refuses a lease of no duration', async () => {
        await expectTendError(
          a.acquireLease({ workspace: 'prod', holder: holder('tend run', 1), ttlMs: 0 }),
          'store.invalid-lease',
          'ttlMs must be a positive integer, got 0',
        );
      });
    });

    describe('close', () => {
      it('can be closed twice, and refuses calls once closed', async () => {
        const other = await open({ ledgerKey: SUITE_LEDGER_KEY });
        await other.close();
        await other.close();
        await expectTendError(
          other.getTwin('sb.volumes/data'),
          'store.closed',
          'the store is closed; open it again to use it',
        );
        await expectTendError(other.appendChange(change(1)), 'store.closed');
      });
    });
  });
}

/** The verification of an intact ledger of `entries` keyed entries ending in `head`. */
function intact(entries: number, head: string): LedgerVerification {
  return {
    ok: true,
    entries,
    head,
    unkeyed: 0,
    unchecked: 0,
    keyId: SUITE_LEDGER_KEY.id,
    warnings: [],
  };
}

/** A fixed instant `n` seconds into 2026. */
function T(n: number): string {
  return new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString();
}

/** Values that trip up naive storage: nesting, unicode, escapes, nulls, big and small numbers. */
const AWKWARD: Record<string, unknown> = {
  size: 10,
  name: 'données-名前-🚀',
  escaped: 'quote " backslash \\ newline \n tab \t nul \u0000 end',
  combining: 'e\u0301',
  empty: '',
  nothing: null,
  flags: [true, false],
  numbers: [0, -1, 1.5, 1e-9, Number.MAX_SAFE_INTEGER],
  nested: { list: [{ a: [[]] }, {}], 'key with spaces': { ключ: 'значение' } },
};

function twin(name: string, overrides: Partial<TwinEntry> = {}): TwinEntry {
  return {
    address: `sb.volumes/${name}`,
    type: 'sb.volumes',
    objectId: `vol-${name}`,
    fields: { name, size: 10, tags: { team: 'core' } },
    stateful: true,
    dependsOn: ['sb.networks/main'],
    observedAt: T(0),
    ...overrides,
  };
}

function operation(n: number, overrides: Partial<Operation> = {}): Operation {
  const address: Address = overrides.address ?? `sb.volumes/v${n}`;
  return {
    id: `op-${n}`,
    address,
    type: 'sb.volumes',
    action: 'create',
    desiredHash: `hash-${n}`,
    marker: { workspace: 'test', address },
    state: 'pending',
    createdAt: T(n),
    ...overrides,
  };
}

/** A ledger change of resource `sb.volumes/v<n>` at second `n` (tests of stores build on it). */
export function change(n: number, overrides: Partial<NewChange> = {}): NewChange {
  return {
    time: T(n),
    actor: 'tend',
    intent: 'consistency',
    motivation: { kind: 'scheduled' },
    source: 'tend',
    address: `sb.volumes/v${n}`,
    type: 'sb.volumes',
    objectId: `vol-${n}`,
    action: 'update',
    fields: ['size'],
    before: { size: n },
    after: { size: n + 1 },
    ...overrides,
  };
}

function announcement(n: number, overrides: Partial<Announcement> = {}): Announcement {
  return {
    id: `a${n}`,
    address: 'sb.services/api',
    field: 'replicas',
    value: n,
    actor: 'hpa',
    createdAt: T(n),
    expiresAt: T(n + 3600),
    ...overrides,
  };
}

function claim(address: Address, field: string, overrides: Partial<FieldClaim> = {}): FieldClaim {
  return {
    address,
    field,
    value: 5,
    actor: 'hpa',
    decision: 'yield',
    rule: 'default#1',
    since: T(1),
    ...overrides,
  };
}

function status(name: string, overrides: Partial<ResourceStatus> = {}): ResourceStatus {
  return {
    address: `sb.volumes/${name}`,
    state: 'converged',
    objectId: `vol-${name}`,
    checks: [{ name: 'size', kind: 'cel', ok: true, message: 'ok', at: T(1) }],
    updatedAt: T(2),
    ...overrides,
  };
}

/** Asserts that `promise` rejects with a TendError of `code` (and `message`, when given). */
async function expectTendError(
  promise: Promise<unknown>,
  code: string,
  message?: string,
): Promise<void> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TendError);
  expect((error as TendError).code).toBe(code);
  if (message !== undefined) expect((error as TendError).message).toBe(message);
}
