import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { OpenApiProviderDecl, ProviderDescription } from '../core/index.js';
import { loadIntent } from './index.js';

// The Provider document's `parameters:`: values of path parameters no managed parent gives, read as
// strings; anything else is a diagnostic at its position.

const DESCRIPTION: ProviderDescription = { auditFeed: false, warnings: [], types: [] };

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/** An intent directory holding one provider with `lines` added at the end. */
async function write(...lines: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tend-parameters-'));
  dirs.push(dir);
  await writeFile(join(dir, 'spec.json'), '{}');
  await writeFile(
    join(dir, 'providers.yaml'),
    [
      'kind: Provider',
      'name: kc',
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

describe('Provider parameters', () => {
  it('are read as strings (numbers as their decimal text)', async () => {
    const { intent, diagnostics } = await load(
      await write('parameters:', '  realm: master', '  projectId: 42'),
    );
    expect(diagnostics).toEqual([]);
    expect((intent?.providers[0] as OpenApiProviderDecl | undefined)?.parameters).toEqual({
      realm: 'master',
      projectId: '42',
    });
  });

  it('are absent by default', async () => {
    const { intent } = await load(await write());
    expect((intent?.providers[0] as OpenApiProviderDecl | undefined)?.parameters).toBeUndefined();
  });

  const bad: [string, string[], [string, string, number, number], string][] = [
    [
      'not a mapping',
      ['parameters: [realm]'],
      ['field.type', 'parameters', 6, 13],
      '`parameters` must be a mapping, got list',
    ],
    [
      'an empty value',
      ['parameters: { realm: "" }'],
      ['field.type', 'parameters.realm', 6, 22],
      "`parameters.realm` must be a non-empty string or a number: the value of {realm} in the API's paths",
    ],
    [
      'a mapping as a value',
      ['parameters:', '  realm: { name: master }'],
      ['field.type', 'parameters.realm', 7, 10],
      "`parameters.realm` must be a non-empty string or a number: the value of {realm} in the API's paths",
    ],
    [
      'a name that cannot be a path parameter',
      ['parameters:', '  "a/b": x'],
      ['field.invalid', 'parameters.a/b', 7, 3],
      '`parameters.a/b` is not a path parameter name (letters, digits, _, . and -)',
    ],
  ];
  it.each(bad)('refuses %s, at its position', async (_what, lines, where, message) => {
    const { intent, diagnostics } = await load(await write(...lines));
    expect(intent).toBeUndefined();
    expect(diagnostics.map((d) => [d.code, d.path, d.line, d.column])).toEqual([where]);
    expect(diagnostics[0]!.message).toBe(message);
  });
});
