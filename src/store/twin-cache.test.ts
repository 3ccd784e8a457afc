import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Address } from '../core/index.js';
import { Redactor } from '../core/index.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { Store, TwinEntry } from './store.js';
import { compactTwinEntry, withTwinCache } from './twin-cache.js';

// The twin kept in memory between passes: it must always say what the database says — after this
// store's own writes (as stored: redacted), after another connection's, after any write it does not
// know — while reading the database only when something changed.

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tend-twin-cache-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function entry(name: string, fields: Record<string, unknown> = { size: 1 }): TwinEntry {
  return {
    address: `sb.volumes/${name}` as Address,
    type: 'sb.volumes',
    objectId: `vol-${name}`,
    fields: { name, ...fields },
    stateful: false,
    dependsOn: [],
    observedAt: '2026-01-01T00:00:00.000Z',
  };
}

const names = (entries: readonly TwinEntry[]) => entries.map((e) => e.address);

describe('withTwinCache', () => {
  it('reads the twin once while nothing changes', async () => {
    const real = await openSqliteStore(join(dir, 'a.db'));
    await real.putTwin(entry('b'));
    await real.putTwin(entry('a'));
    const list = vi.spyOn(real, 'listTwin');
    const store = withTwinCache(real);
    expect(names(await store.listTwin())).toEqual(['sb.volumes/a', 'sb.volumes/b']);
    expect(names(await store.listTwin())).toEqual(['sb.volumes/a', 'sb.volumes/b']);
    expect(await store.getTwin('sb.volumes/a')).toEqual(entry('a'));
    // Reads that cannot change the twin keep the copy.
    await store.putStatus({
      address: 'sb.volumes/a',
      state: 'converged',
      checks: [],
      updatedAt: 'x',
    });
    await store.listTwin();
    expect(list).toHaveBeenCalledTimes(1);
    await store.close();
  });

  it('sees its own writes as the store keeps them (secrets redacted), in address order', async () => {
    const redactor = new Redactor();
    redactor.add('hunter2-secret-value');
    const store = withTwinCache(await openSqliteStore(join(dir, 'b.db'), { redactor }));
    await store.putTwin(entry('m'));
    expect(names(await store.listTwin())).toEqual(['sb.volumes/m']);
    await store.putTwin(entry('c', { note: 'the password is hunter2-secret-value' }));
    await store.putTwin(entry('z'));
    await store.deleteTwin('sb.volumes/m');
    const listed = await store.listTwin();
    expect(names(listed)).toEqual(['sb.volumes/c', 'sb.volumes/z']);
    expect(JSON.stringify(listed)).not.toContain('hunter2-secret-value');
    expect(listed[0]).toEqual(await store.getTwin('sb.volumes/c'));
    // What it returns cannot change the copy.
    listed.pop();
    expect(names(await store.listTwin())).toEqual(['sb.volumes/c', 'sb.volumes/z']);
    await store.close();
  });

  it("sees another connection's writes (another process on the same database)", async () => {
    const path = join(dir, 'c.db');
    const store = withTwinCache(await openSqliteStore(path));
    const other = await openSqliteStore(path);
    await store.putTwin(entry('a'));
    expect(names(await store.listTwin())).toEqual(['sb.volumes/a']);
    await other.putTwin(entry('b'));
    await other.putTwin(entry('a', { size: 99 }));
    const listed = await store.listTwin();
    expect(names(listed)).toEqual(['sb.volumes/a', 'sb.volumes/b']);
    expect(listed[0]!.fields['size']).toBe(99);
    await other.deleteTwin('sb.volumes/b');
    expect(await store.getTwin('sb.volumes/b')).toBeUndefined();
    expect(names(await store.listTwin())).toEqual(['sb.volumes/a']);
    await other.close();
    await store.close();
  });

  it('reads back what it wrote in one read, however many entries (a recovery writes thousands)', async () => {
    const real = await openSqliteStore(join(dir, 'e.db'));
    await real.putTwin(entry('gone'));
    const store = withTwinCache(real);
    await store.listTwin();
    const one = vi.spyOn(real, 'getTwin');
    const many = vi.spyOn(real, 'getTwins');
    const list = vi.spyOn(real, 'listTwin');
    const written = Array.from({ length: 500 }, (_, i) => entry(`n${String(i).padStart(3, '0')}`));
    await Promise.all(written.map((e) => store.putTwin(e)));
    await store.deleteTwin('sb.volumes/gone');
    expect(await store.listTwin()).toEqual(written);
    expect(many).toHaveBeenCalledTimes(1);
    expect(one).not.toHaveBeenCalled();
    expect(list).not.toHaveBeenCalled();
    // From the copy: in address order, each once, missing ones left out.
    expect(
      names(
        await store.getTwins([
          'sb.volumes/n002',
          'sb.volumes/gone',
          'sb.volumes/n001',
          'sb.volumes/n002',
        ]),
      ),
    ).toEqual(['sb.volumes/n001', 'sb.volumes/n002']);
    expect(many).toHaveBeenCalledTimes(1);
    await store.close();
  });

  it('drops the copy when a method it does not know is called', async () => {
    const real = await openSqliteStore(join(dir, 'd.db'));
    await real.putTwin(entry('a'));
    const list = vi.spyOn(real, 'listTwin');
    // A batched writer added later, unknown to the cache, that writes the twin itself.
    const extended = Object.assign(real, {
      putTwinsAtOnce: (entries: TwinEntry[]) => Promise.all(entries.map((e) => real.putTwin(e))),
    }) as Store & { putTwinsAtOnce(entries: TwinEntry[]): Promise<unknown> };
    const store = withTwinCache(extended) as typeof extended;
    await store.listTwin();
    await store.putTwinsAtOnce([entry('b')]);
    expect(names(await store.listTwin())).toEqual(['sb.volumes/a', 'sb.volumes/b']);
    expect(list).toHaveBeenCalledTimes(2);
    await store.close();
  });
});

describe('compactTwinEntry', () => {
  const arbEntry = fc.record(
    {
      address: fc.stringMatching(/^[a-z]{1,3}\.[a-z]{1,4}\/[a-z0-9-]{1,8}$/),
      type: fc.constantFrom('sb.networks', 'sb.buckets', 'pg.role'),
      objectId: fc.string({ minLength: 1, maxLength: 12 }),
      fields: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 })),
      stateful: fc.boolean(),
      dependsOn: fc.array(fc.stringMatching(/^sb\.[a-z]{1,4}\/[a-z]{1,4}$/), { maxLength: 3 }),
      observedAt: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      sent: fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 8 })),
    },
    {
      requiredKeys: [
        'address',
        'type',
        'objectId',
        'fields',
        'stateful',
        'dependsOn',
        'observedAt',
      ],
    },
  ) as fc.Arbitrary<TwinEntry>;

  it('keeps every entry equal to what the store read, with the same keys', () => {
    fc.assert(
      fc.property(fc.array(arbEntry, { maxLength: 20 }), (entries) => {
        const types = new Map<string, string>();
        const compact = entries.map((e) => compactTwinEntry(e, types));
        expect(compact).toEqual(entries);
        expect(compact.map((e) => Object.keys(e).sort())).toEqual(
          entries.map((e) => Object.keys(e).sort()),
        );
        // One type string kept per type, whatever the number of entries.
        expect([...types.keys()].sort()).toEqual([...new Set(entries.map((e) => e.type))].sort());
      }),
    );
  });

  it('shares one frozen empty dependsOn and keeps a non-empty one as read', () => {
    const types = new Map<string, string>();
    const a = compactTwinEntry(entry('a'), types);
    const b = compactTwinEntry(entry('b'), types);
    expect(a.dependsOn).toBe(b.dependsOn);
    expect(Object.isFrozen(a.dependsOn)).toBe(true);
    const refs = ['sb.networks/n' as Address];
    expect(compactTwinEntry({ ...entry('c'), dependsOn: refs }, types).dependsOn).toBe(refs);
  });

  it('the cache holds compact entries: empty reference lists shared, after a load and a write', async () => {
    const store = withTwinCache(await openSqliteStore(join(dir, 'compact.db')));
    await store.putTwin(entry('a'));
    await store.putTwin(entry('b'));
    const [a, b] = await store.listTwin();
    expect(a!.dependsOn).toBe(b!.dependsOn);
    // Read back after this store's own write (the dirty path).
    await store.putTwin(entry('c'));
    const listed = await store.listTwin();
    expect(listed.map((e) => e.dependsOn === a!.dependsOn)).toEqual([true, true, true]);
    expect(listed[2]).toEqual(entry('c'));
    await store.close();
  });
});
