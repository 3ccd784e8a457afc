import { describe, expect, it } from 'vitest';
import { getPath } from './refs.js';
import { valueAtKeyPath } from './key-path.js';
import { valueAt } from './value-at.js';

describe('valueAt', () => {
  const data = { spec: { name: 'web', ports: [80, { port: 443 }] }, 'a.b': 1, n: null };
  it.each([
    { path: ['spec', 'name'], want: 'web', reason: 'keys of mappings' },
    { path: ['spec', 'ports', 1, 'port'], want: 443, reason: 'a list index as a number' },
    { path: ['spec', 'ports', '0'], want: 80, reason: 'a list index as a text of digits' },
    { path: ['spec', 'ports', '01'], want: undefined, reason: 'not an index: no leading zero' },
    {
      path: ['spec', 'ports', 'length'],
      want: undefined,
      reason: "a list's own length is not data",
    },
    { path: ['spec', 'ports', 5], want: undefined, reason: 'past the end' },
    { path: ['spec', 'constructor'], want: undefined, reason: 'own properties only' },
    { path: ['spec', '__proto__'], want: undefined, reason: 'never the prototype' },
    { path: ['spec', 'name', 'x'], want: undefined, reason: 'below a scalar there is nothing' },
    { path: ['n', 'x'], want: undefined, reason: 'below null there is nothing' },
    { path: ['a.b'], want: 1, reason: 'a key with a dot is one segment' },
    { path: [], want: data, reason: 'the empty path is the value itself' },
  ])('$path: $reason', ({ path, want }) => {
    expect(valueAt(data, path)).toBe(want);
  });

  it.each([
    { reader: 'getPath', read: (v: unknown) => getPath(v, 'spec.ports.1.port') },
    { reader: 'valueAtKeyPath', read: (v: unknown) => valueAtKeyPath(v, 'spec.ports.1.port') },
  ])('$reader reads what valueAt reads (one definition)', ({ read }) => {
    expect(read(data)).toBe(valueAt(data, ['spec', 'ports', 1, 'port']));
    expect(read({ spec: Object.create({ ports: [0, { port: 1 }] }) as object })).toBeUndefined();
  });
});
