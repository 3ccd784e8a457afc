import { describe, expect, it } from 'vitest';
import type { ObservedObject, Provider, WriteContext } from '../core/index.js';
import { TendError } from '../core/index.js';
import { createSendFence, fencedProvider } from './send-fence.js';

// The fence a workspace puts around its providers: every create, update and delete passes it before
// the call and hands it on for the provider to pass again right before it sends.

/** A provider written as a class with private state, as real ones may be: `this` must stay intact. */
class Recording implements Provider {
  readonly name = 'rec';
  #calls: string[] = [];
  readonly seen: WriteContext[] = [];
  calls(): readonly string[] {
    return this.#calls;
  }
  describe() {
    return { types: [], auditFeed: false, warnings: [] };
  }
  list(): Promise<ObservedObject[]> {
    this.#calls.push('list');
    return Promise.resolve([]);
  }
  read(): Promise<ObservedObject | undefined> {
    this.#calls.push('read');
    return Promise.resolve(undefined);
  }
  create(type: string, _desired: Record<string, unknown>, ctx: WriteContext) {
    this.#calls.push(`create ${type}`);
    this.seen.push(ctx);
    ctx.fence?.();
    return Promise.resolve({ type, id: 'o-1', fields: {} });
  }
  update(
    type: string,
    id: string,
    _d: Record<string, unknown>,
    _c: ObservedObject,
    ctx: WriteContext,
  ) {
    this.#calls.push(`update ${type} ${id}`);
    this.seen.push(ctx);
    return Promise.resolve({ type, id, fields: {} });
  }
  delete(type: string, id: string, ctx: WriteContext) {
    this.#calls.push(`delete ${type} ${id}`);
    this.seen.push(ctx);
    return Promise.resolve();
  }
  evaluate() {
    return Promise.resolve({ action: 'none', fields: [], source: 'default' } as const);
  }
}

const lost = () => {
  throw new TendError('store.lease-lost', 'not sent: the lease may be lost', { phase: 'lease' });
};
const actor = { actor: 'tend' };
const object: ObservedObject = { type: 't', id: 'o-1', fields: {} };

describe('fencedProvider', () => {
  it('passes every call through while no lease check is installed', async () => {
    const real = new Recording();
    const p = fencedProvider(real, createSendFence());
    await p.list('t');
    await p.read('t', 'o-1');
    await p.create('t', {}, { actor });
    await p.update('t', 'o-1', {}, object, { actor });
    await p.delete('t', 'o-1', { actor });
    expect(real.calls()).toEqual(['list', 'read', 'create t', 'update t o-1', 'delete t o-1']);
    expect(p.name).toBe('rec');
  });

  it('refuses every mutation before it reaches the provider once the check throws; reads go on', async () => {
    const real = new Recording();
    const fence = createSendFence();
    const p = fencedProvider(real, fence);
    fence.hold(lost);
    await expect(p.create('t', {}, { actor })).rejects.toThrow(/not sent/);
    await expect(p.update('t', 'o-1', {}, object, { actor })).rejects.toThrow(/not sent/);
    await expect(p.delete('t', 'o-1', { actor })).rejects.toThrow(/not sent/);
    await p.list('t');
    expect(real.calls()).toEqual(['list']);
  });

  it('hands the fence to the provider, combined with the caller’s own', async () => {
    const real = new Recording();
    const fence = createSendFence();
    const p = fencedProvider(real, fence);
    let callers = 0;
    let open = true;
    fence.hold(() => {
      if (!open) lost();
    });
    await p.create('t', {}, { actor, fence: () => void callers++ });
    expect(callers).toBe(2); // once before the call, once by the provider itself
    // The lease is lost between the call and the provider's send: the provider's pass refuses it.
    const late = new Recording();
    const q = fencedProvider(
      Object.assign(late, {
        create: (type: string, d: Record<string, unknown>, ctx: WriteContext) => {
          open = false;
          return Recording.prototype.create.call(late, type, d, ctx);
        },
      }),
      fence,
    );
    await expect(q.create('t', {}, { actor })).rejects.toThrow(/not sent/);
  });

  it('removes only the check it installed', () => {
    const fence = createSendFence();
    const removeFirst = fence.hold(lost);
    fence.hold(() => {});
    removeFirst(); // a stale holder's removal does not remove the current holder's check
    expect(() => fence.check()).not.toThrow();
    const removeThird = fence.hold(lost);
    expect(() => fence.check()).toThrow(/not sent/);
    removeThird();
    expect(() => fence.check()).not.toThrow();
  });
});
