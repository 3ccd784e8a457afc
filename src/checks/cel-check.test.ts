import { describe, expect, it } from 'vitest';
import type { CelCheckDecl } from '../core/index.js';
import type { CheckContext } from './index.js';
import { parseCel, runCheck } from './index.js';

const NOW = new Date('2024-05-01T12:00:00.000Z');

function cel(expr: string): CelCheckDecl {
  return { kind: 'cel', name: 'rule', expr, source: { file: 'main.yaml', line: 1, column: 1 } };
}

const ctx: CheckContext = {
  observed: { status: 'running', size: 10, tags: { team: 'web' }, ports: [80, 443] },
  desired: { size: 10, image: 'debian-12' },
  resolve: (text) => text.replace('${sb.networks/main.id}', 'net-1'),
  now: () => NOW,
};

describe('cel check', () => {
  const cases: { name: string; reason: string; expr: string; ok: boolean; message: string }[] = [
    {
      name: 'true',
      reason: 'a true expression passes',
      expr: "observed.status == 'running' && observed.size == desired.size",
      ok: true,
      message: "`observed.status == 'running' && observed.size == desired.size` is true",
    },
    {
      name: 'false',
      reason: 'a false expression fails and says so',
      expr: 'observed.size > 10',
      ok: false,
      message: '`observed.size > 10` is false',
    },
    {
      name: 'non-boolean',
      reason: 'only exactly true passes; another value is named',
      expr: 'observed.size',
      ok: false,
      message: '`observed.size` returned double 10, not a boolean',
    },
    {
      name: 'non-boolean string',
      reason: 'strings are not truthy',
      expr: 'observed.status',
      ok: false,
      message: '`observed.status` returned string "running", not a boolean',
    },
    {
      name: 'missing field',
      reason: 'evaluation errors fail the check with the evaluator message',
      expr: "observed.missing == 'x'",
      ok: false,
      message: "`observed.missing == 'x'` failed to evaluate: No such key: missing (at column 10)",
    },
    {
      name: 'has() on a missing field',
      reason: 'the usual CEL way to test presence works',
      expr: '!has(observed.missing) && 443 in observed.ports',
      ok: true,
      message: '`!has(observed.missing) && 443 in observed.ports` is true',
    },
    {
      name: 'syntax error',
      reason: 'an expression that does not parse fails (intent validation catches it earlier)',
      expr: 'observed.size ==',
      ok: false,
      message: '`observed.size ==` failed to evaluate: Unexpected token: EOF (at column 17)',
    },
    {
      name: 'references substituted',
      reason: 'references are text substitutions before evaluation',
      expr: "'${sb.networks/main.id}' == 'net-1'",
      ok: true,
      message: "`'net-1' == 'net-1'` is true",
    },
  ];
  it.each(cases)('$name', async (c) => {
    expect(await runCheck(cel(c.expr), ctx), c.reason).toEqual({
      name: 'rule',
      kind: 'cel',
      ok: c.ok,
      message: c.message,
      at: NOW.toISOString(),
    });
  });

  it('fails when a reference cannot be resolved yet', async () => {
    const result = await runCheck(cel("'${sb.a/b.c}' == 'x'"), {
      ...ctx,
      resolve: () => undefined,
    });
    expect(result).toMatchObject({
      ok: false,
      message: "references in `'${sb.a/b.c}' == 'x'` cannot be resolved yet",
    });
  });
});

describe('parseCel', () => {
  it.each([
    { expr: "observed.status == 'running'", want: undefined },
    { expr: 'observed.size >= desired.size', want: undefined },
    { expr: 'observed.size ==', want: 'Unexpected token: EOF (at column 17)' },
    { expr: 'a.b(', want: 'Unexpected token: EOF (at column 5)' },
    { expr: '1 +* 2', want: 'Unexpected token: MULTIPLY (at column 4)' },
    { expr: '', want: 'Unexpected token: EOF (at column 1)' },
  ])('$expr', ({ expr, want }) => {
    expect(parseCel(expr)).toEqual(want);
  });
});
