import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { Change, NewChange } from '../../core/index.js';
import { Redactor } from '../../core/index.js';
import type { KeyedRecord } from '../ledger-chain.js';
import { keyedHash } from '../ledger-chain.js';
import { ledgerKey } from '../ledger-key.js';
import { changeToRow, recordFromRow } from '../rows.js';
import { openSqliteStore } from './sqlite-store.js';

const KEY = ledgerKey('one-pass-ledger-hash-test-key-0123456789');
const SECRET = 'hunter2-in-the-platform-answer';

/**
 * The hash an entry got before the store wrote each member's canonical JSON once: the row built by
 * `changeToRow`, read back by `recordFromRow`, hashed by `keyedHash`.
 */
function hashAsBefore(change: NewChange, seq: number, prevHash: string): string {
  const draft = changeToRow({ ...change, seq, keyId: KEY.id, prevHash, hash: '' });
  const { hash: _, ...unhashed } = recordFromRow(draft) as KeyedRecord;
  return keyedHash(KEY, unhashed);
}

/** Values JSON treats specially: dropped, nulled, converted. */
const odd = fc.oneof(
  fc.constant(undefined),
  fc.constant(Number.NaN),
  fc.constant(-0),
  fc.constant(() => 1),
  fc.date({ noInvalidDate: true }),
  fc.constant({ toJSON: () => ({ z: 1, a: [undefined] }) }),
  fc.constant(SECRET),
);

const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 2 }),
    odd,
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 5 }), fc.nat(20).map(String)), tie('v'), {
      maxKeys: 4,
    }),
  ),
})).v;

const object = fc.dictionary(fc.oneof(fc.string({ maxLength: 5 }), fc.nat(9).map(String)), value, {
  maxKeys: 5,
});

const text = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constant(SECRET),
  fc.constant('é\u{1F600}"\\'),
);

const newChange: fc.Arbitrary<NewChange> = fc.record(
  {
    time: text,
    actor: text,
    actorKind: fc.constantFrom('tend', 'human', 'automation', 'unknown'),
    intent: text,
    motivation: fc.record({ kind: text, ref: fc.option(text, { nil: undefined }) }),
    source: fc.constantFrom('tend', 'audit', 'announcement', 'unknown'),
    address: text,
    type: text,
    objectId: text,
    action: fc.constantFrom('create', 'update', 'delete', 'replace', 'observed'),
    fields: fc.array(text, { maxLength: 3 }),
    before: object,
    after: object,
    decision: fc.record({ outcome: text, fields: fc.array(text, { maxLength: 2 }), extra: value }),
  },
  { requiredKeys: ['time', 'actor', 'source', 'type', 'objectId', 'action', 'fields'] },
) as unknown as fc.Arbitrary<NewChange>;

const stores: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const store of stores) await store.close();
});

describe('a ledger entry written in one pass (each member serialised once, canonically)', () => {
  it('hashes exactly as the entry built, read back and hashed did, and verifies', async () => {
    const redactor = new Redactor();
    redactor.add(SECRET);
    const store = await openSqliteStore(':memory:', { ledgerKey: KEY, redactor });
    stores.push(store);
    let prev: Change | undefined;
    await fc.assert(
      fc.asyncProperty(newChange, async (change) => {
        const stored = await store.appendChange(change);
        const seq = (prev?.seq ?? 0) + 1;
        expect(stored.seq).toBe(seq);
        // The store hashes what it writes: the change after redaction.
        expect(stored.hash).toBe(hashAsBefore(redactor.value(change), seq, stored.prevHash));
        const [read] = await store.changes({ afterSeq: seq - 1 });
        expect(read?.hash).toBe(stored.hash);
        expect(JSON.stringify(read)).not.toContain(SECRET);
        prev = stored;
      }),
      { numRuns: 300 },
    );
    expect(await store.verifyLedger()).toMatchObject({ ok: true });
  });

  it('returns the entry as it reads back (JSON-shaped members)', async () => {
    const store = await openSqliteStore(':memory:', { ledgerKey: KEY });
    stores.push(store);
    // Plain objects, as JSON.parse makes them (the caller's objects are returned, not copies), and
    // without -0: the caller's -0 is returned as given, and reads back as 0 (the same JSON).
    const json = fc.dictionary(
      fc.string({ maxLength: 5 }),
      fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown),
      {
        maxKeys: 4,
        noNullPrototype: true,
      },
    );
    await fc.assert(
      fc.asyncProperty(json, json, async (before, after) => {
        const stored = await store.appendChange({
          time: '2026-11-26T00:00:00.000Z',
          actor: 'tend',
          actorKind: 'tend',
          intent: 'consistency',
          motivation: { kind: 'drift' },
          source: 'tend',
          address: 'sb.buckets/a',
          type: 'sb.buckets',
          objectId: 'a',
          action: 'update',
          fields: Object.keys(after),
          before,
          after,
        });
        const [read] = await store.changes({ afterSeq: stored.seq - 1 });
        expect(stored).toStrictEqual(read);
      }),
      { numRuns: 200 },
    );
  });
});
