import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { OpenApiProviderDecl, ProviderDescription } from '../core/index.js';
import { loadIntent } from './index.js';

// The Provider document's `maxResponseBytes`: the most bytes of one answer Tend reads from the
// platform; a whole number from 1 to 256 MiB, 16 MiB when absent. Anything else is a diagnostic at
// its position (decision 0040).

const DESCRIPTION: ProviderDescription = { auditFeed: false, warnings: [], types: [] };

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function write(...lines: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tend-max-bytes-'));
  dirs.push(dir);
  await writeFile(join(dir, 'spec.json'), '{}');
  await writeFile(
    join(dir, 'providers.yaml'),
    [
      'kind: Provider',
      'name: sb',
      'type: openapi',
      'spec: ./spec.json',
      'endpoint: http://127.0.0.1:9/',
      ...lines,
      '',
    ].join('\n'),
  );
  return dir;
}

const load = (dir: string) => loadIntent(dir, { describe: () => Promise.resolve(DESCRIPTION) });
const declOf = (intent: { providers: readonly unknown[] } | undefined) =>
  intent?.providers[0] as OpenApiProviderDecl | undefined;

describe('Provider maxResponseBytes', () => {
  it('is 16 MiB when absent', async () => {
    const { intent, diagnostics } = await load(await write());
    expect(diagnostics).toEqual([]);
    expect(declOf(intent)?.maxResponseBytes).toBe(16 * 1024 * 1024);
  });

  it('takes a whole number of bytes, 256 MiB at most', async () => {
    for (const n of [1, 1048576, 268435456]) {
      const { intent, diagnostics } = await load(await write(`maxResponseBytes: ${n}`));
      expect(diagnostics).toEqual([]);
      expect(declOf(intent)?.maxResponseBytes).toBe(n);
    }
  });

  const bad: [string, string, [string, number, number], string, string?][] = [
    [
      'a negative number',
      'maxResponseBytes: -5',
      ['field.type', 6, 19],
      '`maxResponseBytes` must be an integer >= 1, got integer -5',
    ],
    [
      'zero',
      'maxResponseBytes: 0',
      ['field.type', 6, 19],
      '`maxResponseBytes` must be an integer >= 1, got integer 0',
    ],
    [
      'not a number',
      'maxResponseBytes: 16MiB',
      ['field.type', 6, 19],
      '`maxResponseBytes` must be an integer >= 1, got string "16MiB"',
    ],
    [
      'a fraction',
      'maxResponseBytes: 1.5',
      ['field.type', 6, 19],
      '`maxResponseBytes` must be an integer >= 1, got number 1.5',
    ],
    [
      'an absurdly large number',
      'maxResponseBytes: 1099511627776',
      ['field.invalid', 6, 19],
      '`maxResponseBytes` is 1099511627776, more than Tend reads of one answer (256 MiB, 268435456 bytes)',
      'the default is 16 MiB; an API whose answers are larger should be read page by page',
    ],
  ];
  it.each(bad)('refuses %s, at its position', async (_what, line, where, message, hint) => {
    const { intent, diagnostics } = await load(await write(line));
    expect(intent).toBeUndefined();
    expect(diagnostics.map((d) => [d.code, d.line, d.column])).toEqual([where]);
    expect(diagnostics[0]!.path).toBe('maxResponseBytes');
    expect(diagnostics[0]!.message).toBe(message);
    if (hint !== undefined) expect(diagnostics[0]!.hint).toBe(hint);
  });
});
