import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { onAbort } from './on-abort.js';

const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

describe('onAbort', () => {
  it('shares one listener among every subscriber of a signal and removes it with the last', () => {
    const ctl = new AbortController();
    const offs = Array.from({ length: 50 }, () => onAbort(ctl.signal, () => undefined));
    expect(listeners(ctl.signal)).toBe(1);
    for (const off of offs) off();
    expect(listeners(ctl.signal)).toBe(0);
    // Unsubscribing twice is harmless; a new subscriber adds the listener again.
    offs[0]!();
    const off = onAbort(ctl.signal, () => undefined);
    expect(listeners(ctl.signal)).toBe(1);
    off();
    expect(listeners(ctl.signal)).toBe(0);
  });

  it('calls each subscriber still subscribed once when the signal aborts', () => {
    const ctl = new AbortController();
    const calls: string[] = [];
    const fn = () => calls.push('same');
    onAbort(ctl.signal, fn);
    onAbort(ctl.signal, fn);
    const off = onAbort(ctl.signal, () => calls.push('gone'));
    onAbort(ctl.signal, () => calls.push('last'));
    off();
    ctl.abort();
    ctl.abort();
    expect(calls).toEqual(['same', 'same', 'last']);
    expect(listeners(ctl.signal)).toBe(0);
  });
});
