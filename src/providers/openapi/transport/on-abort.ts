// One 'abort' listener per signal, however many wait on it. A pass hands one signal to every
// operation it starts (up to the engine's 512 in flight), and each of them may wait on it at once:
// for a concurrency slot, a rate-limit permit, a shared read. A listener per waiter made hundreds on
// one signal (Node warns past 10: MaxListenersExceededWarning); these share one, removed with the
// last of them.

interface Subscribers {
  readonly fns: Set<() => void>;
  readonly listener: () => void;
}

const bySignal = new WeakMap<AbortSignal, Subscribers>();

/**
 * Calls `fn` once when `signal` (not aborted yet) aborts. The function returned unsubscribes: call it
 * when the wait ends otherwise, so that nothing stays attached to a signal that outlives the wait.
 */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  let subs = bySignal.get(signal);
  if (!subs) {
    const fns = new Set<() => void>();
    const listener = () => {
      bySignal.delete(signal);
      for (const f of fns) f();
    };
    subs = { fns, listener };
    bySignal.set(signal, subs);
    signal.addEventListener('abort', listener, { once: true });
  }
  const own = subs;
  // A closure of its own: the same `fn` subscribed twice is called twice.
  const entry = () => fn();
  own.fns.add(entry);
  return () => {
    own.fns.delete(entry);
    if (own.fns.size > 0 || bySignal.get(signal) !== own) return;
    bySignal.delete(signal);
    signal.removeEventListener('abort', own.listener);
  };
}
