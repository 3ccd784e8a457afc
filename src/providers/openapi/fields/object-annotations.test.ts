import { describe, expect, it } from 'vitest';
import { isAbsent, readAbsentWhen, readIdField } from './object-annotations.js';
import { objectView } from './schema-view.js';

// x-tend-absent-when (objects in a state that means gone) and x-tend-id-field (where the id is):
// every malformed statement is a warning that says what to write, and is ignored.

const READ = objectView({
  type: 'object',
  properties: {
    id: { type: 'string' },
    status: { type: 'object' },
    gone: { type: 'boolean' },
    user: { type: 'object', properties: { login: { type: 'string' } } },
  },
});

describe('readAbsentWhen', () => {
  it.each([
    [
      'one rule on a dotted path',
      { field: 'status.state', in: ['expired'] },
      [{ field: 'status.state', in: ['expired'] }],
      [],
    ],
    [
      'a list of rules, booleans allowed',
      [{ field: 'gone', in: [true] }],
      [{ field: 'gone', in: [true] }],
      [],
    ],
    [
      'no field',
      { in: ['x'] },
      [],
      ['t: x-tend-absent-when must be {field: <name or dotted path>, in: [values]}; ignored'],
    ],
    [
      'an empty list of values',
      { field: 'gone', in: [] },
      [],
      [
        't: x-tend-absent-when: in must be a non-empty list of strings, numbers or booleans; ignored',
      ],
    ],
    [
      'values that are objects',
      [{ field: 'gone', in: [{}] }],
      [],
      [
        't: x-tend-absent-when[0]: in must be a non-empty list of strings, numbers or booleans; ignored',
      ],
    ],
    [
      'a field the read schema lacks',
      { field: 'state.name', in: ['x'] },
      [],
      ['t: x-tend-absent-when names state.name, but the read schema has no field state; ignored'],
    ],
  ])('%s', (_name, value, want, warnings) => {
    const got: string[] = [];
    expect(readAbsentWhen('t', [{ 'x-tend-absent-when': value }], READ, got)).toEqual(want);
    expect(got).toEqual(warnings);
  });

  it.each([
    [{ status: { state: 'expired' } }, true],
    [{ status: { state: 'active' } }, false],
    [{ status: 'expired' }, false],
    [{}, false],
    [null, false],
  ])('%j is absent: %s', (fields, want) => {
    expect(isAbsent([{ field: 'status.state', in: ['expired'] }], fields)).toBe(want);
  });
});

describe('readIdField', () => {
  it.each([
    ['a field of the schema', 'id', 'id', []],
    [
      'a dotted path to a nested field (a membership names its user)',
      'user.login',
      'user.login',
      [],
    ],
    [
      'a dotted path the schema lacks',
      'a.b',
      undefined,
      ['t: x-tend-id-field on the read schema names a.b, which is not a field of it; ignored'],
    ],
    [
      'a path below a field that has no fields',
      'id.value',
      undefined,
      ['t: x-tend-id-field on the read schema names id.value, which is not a field of it; ignored'],
    ],
    [
      'an empty step',
      'user..login',
      undefined,
      [
        't: x-tend-id-field on the read schema must be a field name or a dotted path to one (user.login), not "user..login"; ignored',
      ],
    ],
    [
      'a number',
      3,
      undefined,
      [
        't: x-tend-id-field on the read schema must be a field name or a dotted path to one (user.login), not 3; ignored',
      ],
    ],
    [
      'a field the schema lacks',
      'silenceID',
      undefined,
      [
        't: x-tend-id-field on the read schema names silenceID, which is not a field of it; ignored',
      ],
    ],
  ])('%s', (_name, value, want, warnings) => {
    const got: string[] = [];
    expect(readIdField('t', [{ 'x-tend-id-field': value }], READ, 'the read schema', got)).toBe(
      want,
    );
    expect(got).toEqual(warnings);
  });

  it('accepts any field name where the answer schema is unknown', () => {
    expect(readIdField('t', [{ 'x-tend-id-field': 'silenceID' }], undefined, 'POST /s', [])).toBe(
      'silenceID',
    );
  });
});
