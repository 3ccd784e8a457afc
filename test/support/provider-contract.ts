// The provider contract's promises that hold for every provider (src/core/provider.ts), as one
// suite each provider runs against its real platform: the OpenAPI provider on the sandbox, the
// PostgreSQL provider on a real cluster. A provider's own tests cover what only it does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address, Marker, Provider, WriteContext } from '../../src/core/index.js';

/** One type of the provider to exercise, with specs for a fresh object and a change to it. */
export interface ContractCase {
  /** The type within the provider. */
  readonly type: string;
  /** A spec for a new object; `n` makes names unique between cases. */
  create(n: number): Record<string, unknown>;
  /** A spec changing one updatable field of the object `create(n)` made. */
  update(n: number): Record<string, unknown>;
  /** What the updated object's fields must contain. */
  updated(n: number): Record<string, unknown>;
  /** True when the type's objects carry Tend's marker (false: grants, which have no comment). */
  readonly carriesMarker: boolean;
}

/** What a provider's contract run needs. */
export interface ContractSubject {
  /** Shown in test names (`postgres`, `openapi on the sandbox`). */
  readonly name: string;
  /** Starts the platform and returns the provider; `stop` undoes it. */
  start(): Promise<Provider>;
  stop(): Promise<void>;
  readonly cases: readonly ContractCase[];
  /** Skips the suite, with the reason in its name (never in CI: the harness throws there). */
  readonly skip?: string;
}

const ACTOR = { actor: 'contract-test', intent: 'contract', motivation: 'provider contract' };

function marker(type: string, n: number): Marker {
  return { workspace: 'contract', address: `p.${type}/c${n}` as Address, op: `op-${type}-${n}` };
}

function ctx(m?: Marker): WriteContext {
  // The op doubles as the idempotency key, as the journal does: a provider whose platform takes
  // one replays a repeated create instead of making a second object.
  return { actor: ACTOR, ...(m ? { marker: m, idempotencyKey: m.op } : {}) };
}

/** Runs the shared contract suite against a provider. */
export function describeProvider(subject: ContractSubject): void {
  describe.skipIf(subject.skip !== undefined)(
    `provider contract: ${subject.name}${subject.skip !== undefined ? ` (skipped: ${subject.skip})` : ''}`,
    () => {
      let provider: Provider;
      let n = 0;
      beforeAll(async () => {
        provider = await subject.start();
      }, 120_000);
      afterAll(async () => {
        await provider?.close?.();
        await subject.stop();
      });

      for (const c of subject.cases) {
        describe(c.type, () => {
          it('create, then read and list find it; update changes it; delete removes it', async () => {
            const i = ++n;
            const m = marker(c.type, i);
            const created = await provider.create(c.type, c.create(i), ctx(m));
            expect(created.type).toBe(c.type);
            expect(await provider.read(c.type, created.id)).toEqual(created);
            expect((await provider.list(c.type)).find((o) => o.id === created.id)).toEqual(created);
            if (c.carriesMarker) expect(created.marker).toEqual(m);

            const updated = await provider.update(c.type, created.id, c.update(i), created, ctx(m));
            expect(updated.id).toBe(created.id);
            expect(updated.fields).toMatchObject(c.updated(i));
            expect(await provider.read(c.type, created.id)).toEqual(updated);
            if (c.carriesMarker) expect(updated.marker).toEqual(m);

            await provider.delete(c.type, created.id, ctx());
            expect(await provider.read(c.type, created.id)).toBeUndefined();
            expect((await provider.list(c.type)).some((o) => o.id === created.id)).toBe(false);
          });

          it('deleting an object that does not exist succeeds', async () => {
            const i = ++n;
            const created = await provider.create(c.type, c.create(i), ctx(marker(c.type, i)));
            await provider.delete(c.type, created.id, ctx());
            await expect(provider.delete(c.type, created.id, ctx())).resolves.toBeUndefined();
          });

          it('list and read never mutate', async () => {
            const i = ++n;
            const created = await provider.create(c.type, c.create(i), ctx(marker(c.type, i)));
            const before = await provider.list(c.type);
            await provider.read(c.type, created.id);
            await provider.read(c.type, `${created.id}-missing`);
            await provider.list(c.type);
            expect(await provider.list(c.type)).toEqual(before);
            await provider.delete(c.type, created.id, ctx());
          });

          it('a second create with the same natural key does not make two objects', async () => {
            const i = ++n;
            const spec = c.create(i);
            const first = await provider.create(c.type, spec, ctx(marker(c.type, i)));
            const second = await provider.create(c.type, spec, ctx(marker(c.type, i))).then(
              (o) => o,
              (e: unknown) => e,
            );
            // Either refused (the name is taken) or the same object again (an idempotent replay).
            if (!(second instanceof Error)) expect((second as { id: string }).id).toBe(first.id);
            const same = (await provider.list(c.type)).filter((o) => o.id === first.id);
            expect(same).toHaveLength(1);
            await provider.delete(c.type, first.id, ctx());
          });
        });
      }
    },
  );
}
