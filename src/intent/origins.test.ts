import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { HttpCheckDecl, OpenApiProviderDecl, ProviderDescription } from '../core/index.js';
import { loadIntent } from './index.js';

// `allowRedirectsTo` on a Provider and on an http check: origins only, normalised; anything else is
// a diagnostic at the entry.

const DESCRIPTION: ProviderDescription = {
  auditFeed: false,
  warnings: [],
  types: [
    {
      name: 'zones',
      schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      identity: 'natural-key',
      naturalKey: 'name',
      idField: 'id',
      createOnly: ['name'],
      outputOnly: [],
      sensitive: [],
      lifecycle: 'annotations',
      idempotencyKey: false,
    },
  ],
};

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/** An intent directory: a provider with `providerLine` and one zone with an http check line. */
async function write(providerLine: string, checkLine: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tend-origins-'));
  dirs.push(dir);
  await writeFile(join(dir, 'spec.json'), '{}');
  await writeFile(
    join(dir, 'providers.yaml'),
    [
      'kind: Provider',
      'name: pdns',
      'type: openapi',
      'spec: ./spec.json',
      'endpoint: http://127.0.0.1:9/api/v1',
      providerLine,
      '',
    ].join('\n'),
  );
  await writeFile(
    join(dir, 'main.yaml'),
    [
      'kind: Resource',
      'type: pdns.zones',
      'name: example',
      'spec: { name: example.org. }',
      'checks:',
      `  - http: { url: 'http://127.0.0.1:8080/', ${checkLine} }`,
      '',
    ].join('\n'),
  );
  return dir;
}

const load = (dir: string) => loadIntent(dir, { describe: () => Promise.resolve(DESCRIPTION) });

describe('allowRedirectsTo', () => {
  it('is read on a Provider and an http check, normalised to origins', async () => {
    const dir = await write(
      'allowRedirectsTo: [https://Docs.Example.com:443/, http://127.0.0.1:8081]',
      "allowRedirectsTo: ['*']",
    );
    const { intent, diagnostics } = await load(dir);
    expect(diagnostics).toEqual([]);
    expect((intent?.providers[0] as OpenApiProviderDecl | undefined)?.allowRedirectsTo).toEqual([
      'https://docs.example.com',
      'http://127.0.0.1:8081',
    ]);
    const check = intent?.resources[0]?.checks[0] as HttpCheckDecl;
    expect(check.allowRedirectsTo).toEqual(['*']);
  });

  it('is absent by default: redirects stay within the origin', async () => {
    const { intent } = await load(await write('', 'expectStatus: 200'));
    expect(
      (intent?.providers[0] as OpenApiProviderDecl | undefined)?.allowRedirectsTo,
    ).toBeUndefined();
    expect((intent?.resources[0]?.checks[0] as HttpCheckDecl).allowRedirectsTo).toBeUndefined();
  });

  it('refuses anything but an origin, at the entry', async () => {
    const dir = await write(
      'allowRedirectsTo: [https://example.com/api, "ftp://x", "https://u:p@example.com", 3]',
      'expectStatus: 200',
    );
    const { intent, diagnostics } = await load(dir);
    expect(intent).toBeUndefined();
    expect(diagnostics.map((d) => [d.code, d.path, d.line, d.column])).toEqual([
      ['field.invalid', 'allowRedirectsTo[0]', 6, 20],
      ['field.invalid', 'allowRedirectsTo[1]', 6, 45],
      ['field.invalid', 'allowRedirectsTo[2]', 6, 56],
      ['field.invalid', 'allowRedirectsTo[3]', 6, 83],
    ]);
    expect(diagnostics[0]!.message).toBe(
      '`allowRedirectsTo[0]` must be an http(s) origin such as https://api.example.com:8443, or *; got https://example.com/api',
    );
  });

  it('on a check, must be a list', async () => {
    const { diagnostics } = await load(await write('', 'allowRedirectsTo: https://example.com'));
    expect(diagnostics.map((d) => [d.code, d.path, d.line])).toEqual([
      ['field.type', 'checks[0].http.allowRedirectsTo', 6],
    ]);
  });
});
