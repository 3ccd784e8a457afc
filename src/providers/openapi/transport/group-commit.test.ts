import { describe, expect, it } from 'vitest';
import { GroupCommit, SharedCalls } from './group-commit.js';

/** A schedule the test runs by hand: `turn()` runs what was scheduled so far. */
function manual() {
  const queue: (() => void)[] = [];
  return {
    schedule: (run: () => void) => void queue.push(run),
    turn: async () => {
      for (const run of queue.splice(0)) run();
      // Let the sends and their settlements run.
      for (let i = 0; i < 10; i++) await Promise.resolve();
    },
    pending: () => queue.length,
  };
}

describe('GroupCommit', () => {
  it('sends what was submitted before its turn as one batch per destination', async () => {
    const clock = manual();
    const sent: [string, string[]][] = [];
    const g = new GroupCommit<string>((d, changes) => {
      sent.push([d, [...changes]]);
      return Promise.resolve();
    }, clock.schedule);
    const done = [
      g.submit('z1', 'a', 'a'),
      g.submit('z1', 'b', 'b'),
      g.submit('z2', 'c', 'c'),
      g.submit('z1', 'd', 'd'),
    ];
    expect(sent).toEqual([]);
    await clock.turn();
    await Promise.all(done);
    expect(sent).toEqual([
      ['z1', ['a', 'b', 'd']],
      ['z2', ['c']],
    ]);
  });

  it('holds back what arrives while a batch is in flight, then sends it together', async () => {
    const clock = manual();
    const sent: string[][] = [];
    let release: () => void = () => {};
    const g = new GroupCommit<string>(async (_d, changes) => {
      sent.push([...changes]);
      if (sent.length === 1) await new Promise<void>((r) => (release = r));
    }, clock.schedule);
    const first = g.submit('z', 'a', 'a');
    await clock.turn();
    const later = [g.submit('z', 'b', 'b'), g.submit('z', 'c', 'c')];
    expect(clock.pending()).toBe(0); // nothing scheduled while the first is out
    expect(g.waiting('z')).toBe(2);
    release();
    await first;
    await clock.turn();
    await Promise.all(later);
    expect(sent).toEqual([['a'], ['b', 'c']]);
  });

  it('puts two changes with one conflict key in successive batches, in order', async () => {
    const clock = manual();
    const sent: string[][] = [];
    const g = new GroupCommit<string>((_d, changes) => {
      sent.push([...changes]);
      return Promise.resolve();
    }, clock.schedule);
    const all = [g.submit('z', 'x1', 'x'), g.submit('z', 'y', 'y'), g.submit('z', 'x2', 'x')];
    await clock.turn();
    await clock.turn();
    await Promise.all(all);
    expect(sent).toEqual([['x1', 'y'], ['x2']]);
  });

  it('fails every change of a failed batch with its error, and goes on with the next', async () => {
    const clock = manual();
    let calls = 0;
    const g = new GroupCommit<string>(
      () => (++calls === 1 ? Promise.reject(new Error('refused')) : Promise.resolve()),
      clock.schedule,
    );
    const a = g.submit('z', 'a', 'a');
    const b = g.submit('z', 'b', 'b');
    await clock.turn();
    await expect(a).rejects.toThrow('refused');
    await expect(b).rejects.toThrow('refused');
    const c = g.submit('z', 'c', 'c');
    await clock.turn();
    await expect(c).resolves.toBeUndefined();
  });

  it('drops a change whose signal aborted before its batch left', async () => {
    const clock = manual();
    const sent: string[][] = [];
    const g = new GroupCommit<string>((_d, changes) => {
      sent.push([...changes]);
      return Promise.resolve();
    }, clock.schedule);
    const stop = new AbortController();
    const a = g.submit('z', 'a', 'a', stop.signal);
    const b = g.submit('z', 'b', 'b');
    stop.abort(new Error('stopping'));
    await clock.turn();
    await expect(a).rejects.toThrow('stopping');
    await b;
    expect(sent).toEqual([['b']]);
    await expect(g.submit('z', 'c', 'c', stop.signal)).rejects.toThrow('stopping');
  });
});

describe('SharedCalls', () => {
  it('shares a call among those asked for before it starts, never with one under way', async () => {
    const clock = manual();
    let calls = 0;
    const shared = new SharedCalls<number>(clock.schedule);
    const call = () => Promise.resolve(++calls);
    const a = shared.run('k', call);
    const b = shared.run('k', call);
    const other = shared.run('other', call);
    await clock.turn();
    expect([await a, await b]).toEqual([1, 1]);
    expect(await other).toBe(2);
    // Asked for after the first one started: a call of its own.
    const c = shared.run('k', call);
    await clock.turn();
    expect(await c).toBe(3);
  });

  it('gives every caller the failure of a shared call', async () => {
    const clock = manual();
    const shared = new SharedCalls<number>(clock.schedule);
    const fail = () => Promise.reject(new Error('down'));
    const a = shared.run('k', fail);
    const b = shared.run('k', fail);
    await clock.turn();
    await expect(a).rejects.toThrow('down');
    await expect(b).rejects.toThrow('down');
  });
});
