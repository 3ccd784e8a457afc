import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// Issue 25, item 7: no engine module but the recorder writes to the store. Read from the source, so
// that a write added anywhere (even one no test's pass reaches) fails here; pass-recorder.test.ts
// proves the same of whole passes at run time.

const ENGINE = import.meta.dirname;

/**
 * A call of a Store method that writes (store-writer.ts sorts every method into reads and writes) on
 * a store (`ws.store.putTwin(`, `store.setMeta(`); the recorder's methods of the same names
 * (`operator.settle(`) are what the others call instead. A store reached under another name is
 * caught at run time by pass-recorder.test.ts.
 */
const WRITES =
  /\bstore\??\.(putTwin|deleteTwin|journal|settle|appendChange|setCursor|putStatus|deleteStatus|putAnnouncement|putClaim|deleteClaim|acquireLease|renewLease|releaseLease|setMeta|putActionRun)\(/;

/** Modules that may write, and why. */
const ALLOWED: Readonly<Record<string, string>> = {
  'recorder.ts': 'the recorder: every write of a pass',
  'operator.ts': 'the journaled mutations the recorder extends',
  'store-writer.ts': 'the guard and the writer the recorder asks for',
  'actions/run-action.ts':
    'a Day-2 action run is its own durable workflow with its own crash points (ACTION_CRASH_POINTS), not a pass',
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sources(join(dir, e.name))
      : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')
        ? [join(dir, e.name)]
        : [],
  );
}

describe('only the recorder writes to the store', () => {
  const files = sources(ENGINE).map((f) => relative(ENGINE, f));

  it.each(files.filter((f) => ALLOWED[f] === undefined))('%s makes no store write', (file) => {
    const text = readFileSync(join(ENGINE, file), 'utf8');
    const lines = text.split('\n');
    const writes = lines
      .map((line, i) => ({ line: i + 1, text: line.trim() }))
      .filter((l) => !l.text.startsWith('*') && !l.text.startsWith('//'))
      .filter((l) => WRITES.test(l.text) || /\bwriterOf\(/.test(l.text));
    expect(writes, `${file} writes to the store: go through the Recorder (recorder.ts)`).toEqual(
      [],
    );
  });

  it('the test sees the writes it is meant to catch', () => {
    expect(WRITES.test('await ws.store.putTwin({')).toBe(true);
    expect(WRITES.test('await this.store.deleteClaim(address, field)')).toBe(true);
    expect(WRITES.test('await operator.settle(op, op.objectId);')).toBe(false);
    expect(WRITES.test('const twin = await ws.store.getTwin(address);')).toBe(false);
    expect(files).toEqual(expect.arrayContaining(['arbitrate.ts', 'executor.ts', 'observe.ts']));
  });
});
