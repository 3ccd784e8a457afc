import { describe, expect, it } from 'vitest';
import { parseChangeset } from './changeset.js';

// Issue 10, item 7: a hostile changeset file with 130,000 bad entries is refused with its problems,
// not with a stack overflow (the shape check gathered problems by spreading lists into calls).
describe('parseChangeset on a large file', () => {
  it('refuses 130,000 bad keys without overflowing the stack, naming the first 20', () => {
    const entries = Array.from({ length: 130_000 }, () => '{"constructor":1}').join(',');
    const parsed = parseChangeset(`{"version":1,"x":[${entries}]}`, 'plan.json');
    expect(parsed.kind).toBe('invalid');
    if (parsed.kind !== 'invalid') return;
    expect(parsed.diagnostics).toHaveLength(20);
    expect(parsed.diagnostics[0]!.message).toBe(
      'plan.json: $.x[0].constructor: the key "constructor" is refused',
    );
  });
});
