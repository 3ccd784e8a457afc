import { describe, expect, it } from 'vitest';
import type { Upsert } from './postgres-upserts.js';
import { lastPerKey, upsertSql } from './postgres-upserts.js';

const status = (address: string, state: string): Upsert => ({
  kind: 'statuses',
  values: ['ws', address, state, null, null, '[]', null, '2026-01-01T00:00:00.000Z'],
});

describe('merged upserts', () => {
  it.each([
    [1, '($1, $2, $3, $4, $5, $6, $7, $8)'],
    [2, '($1, $2, $3, $4, $5, $6, $7, $8), ($9, $10, $11, $12, $13, $14, $15, $16)'],
  ])('numbers %i rows’ parameters in order, every column but the key updated', (rows, tuples) => {
    const sql = upsertSql('statuses', rows);
    expect(sql).toContain(
      `INSERT INTO tend.statuses (workspace, address, state, object_id, message, checks, compliance, updated_at) VALUES ${tuples}`,
    );
    expect(sql).toContain('ON CONFLICT (workspace, address) DO UPDATE SET state = excluded.state,');
    expect(sql).not.toContain('address = excluded.address');
    expect(sql).not.toContain('workspace = excluded.workspace');
  });

  it('keys the twin by workspace and address too', () => {
    expect(upsertSql('twin', 1)).toMatch(
      /^INSERT INTO tend\.twin \(workspace, address, type, object_id, fields, stateful, depends_on, observed_at, sent\) VALUES \(\$1, .*\$9\)\s+ON CONFLICT \(workspace, address\) DO UPDATE SET type = excluded\.type, .* sent = excluded\.sent$/,
    );
  });

  it.each<[string, Upsert[], string[]]>([
    ['distinct keys keep their order', [status('a', '1'), status('b', '2')], ['a:1', 'b:2']],
    ['a key written twice keeps its last row', [status('a', '1'), status('a', '2')], ['a:2']],
    [
      'a rewritten key moves to where it was last written',
      [status('a', '1'), status('b', '2'), status('a', '3')],
      ['b:2', 'a:3'],
    ],
    [
      'the same address in two workspaces is two rows',
      [
        status('a', '1'),
        { ...status('a', '2'), values: ['other', ...status('a', '2').values.slice(1)] },
      ],
      ['a:1', 'a:2'],
    ],
  ])('sends one row per key, as sending them in order would leave: %s', (_, upserts, expected) => {
    expect(lastPerKey(upserts).map((u) => `${String(u.values[1])}:${String(u.values[2])}`)).toEqual(
      expected,
    );
  });

  it('refuses a row whose width is not its table’s', () => {
    expect(() => lastPerKey([{ kind: 'statuses', values: ['ws', 'a'] }])).toThrow(
      'an upsert of statuses has 2 values, not 8',
    );
  });
});
