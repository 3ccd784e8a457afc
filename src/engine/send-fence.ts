// The last check before a mutation leaves this process. The store refuses every write of a writer
// whose lease was taken over (its epoch is checked in the same transaction), so a lost lease stops the
// next journal entry; but an operation journaled just before the process was paused (SIGSTOP, a long
// GC, a frozen VM) would still be sent when it resumes. The fence closes that gap: the holder of the
// lease installs a check that fails once it can no longer be sure the lease is still its own, and
// every mutating call of a workspace's providers passes it right before it is sent.
import type { Provider, WriteContext } from '../core/index.js';

/** The check every mutation of a workspace passes right before it is sent. */
export interface SendFence {
  /** Throws (`store.lease-lost`) when this process may no longer hold the workspace's lease. */
  check(): void;
  /**
   * Installs the check of a held lease (the application layer, when it takes the lease); returns a
   * function that removes it. Without one installed every check passes: a process that holds no lease
   * sends no mutation (plans, reads), and tests that build a workspace by hand need none.
   */
  hold(check: () => void): () => void;
}

/** A fence with no check installed yet. */
export function createSendFence(): SendFence {
  let current: (() => void) | undefined;
  return {
    check() {
      current?.();
    },
    hold(check) {
      current = check;
      return () => {
        if (current === check) current = undefined;
      };
    },
  };
}

/** The write context of a call, with the fence added for the provider to pass at the last moment. */
function fenced(ctx: WriteContext, fence: SendFence): WriteContext & { fence: () => void } {
  const check = (): void => {
    fence.check();
    ctx.fence?.();
  };
  return { ...ctx, fence: check };
}

/**
 * The provider as a workspace uses it: every create, update and delete passes the fence before the
 * call and hands it to the provider, which passes it again right before each request it sends (a
 * retry included), so a pause between the two cannot let a mutation through.
 */
export function fencedProvider(provider: Provider, fence: SendFence): Provider {
  const create: Provider['create'] = async (type, desired, ctx) => {
    const passed = fenced(ctx, fence);
    passed.fence();
    return provider.create(type, desired, passed);
  };
  const update: Provider['update'] = async (type, id, desired, current, ctx) => {
    const passed = fenced(ctx, fence);
    passed.fence();
    return provider.update(type, id, desired, current, passed);
  };
  const remove: Provider['delete'] = async (type, id, ctx) => {
    const passed = fenced(ctx, fence);
    passed.fence();
    return provider.delete(type, id, passed);
  };
  const mutations: Readonly<Record<string, unknown>> = { create, update, delete: remove };
  return new Proxy(provider, {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && Object.hasOwn(mutations, prop)) return mutations[prop];
      const value: unknown = Reflect.get(target, prop, receiver);
      // Methods run on the provider itself (a class's private fields need `this` to be it).
      return typeof value === 'function'
        ? (value as (...a: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}
