// An intent directory holding one PowerDNS-like zone whose `checks:` are given line by line, for the
// tests of how each check kind is read from intent (src/intent/checks-doc*.test.ts).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import type { ProviderDescription } from '../../src/core/index.js';

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

/** The provider's description, as `loadIntent`'s `describe` option wants it. */
export const describeProvider = () => Promise.resolve(DESCRIPTION);

const PROVIDER = [
  'kind: Provider',
  'name: pdns',
  'type: openapi',
  'spec: ./spec.json',
  'endpoint: http://127.0.0.1:9/api/v1',
  '',
].join('\n');

/**
 * A maker of intent directories with one zone whose `checks:` are the given lines (line 6 is the
 * first); the directories are removed after the calling file's tests.
 */
export function zoneDirs(prefix: string): (...checks: string[]) => Promise<string> {
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });
  return async (...checks) => {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    dirs.push(dir);
    await writeFile(join(dir, 'spec.json'), '{}');
    await writeFile(join(dir, 'providers.yaml'), PROVIDER);
    const main = [
      'kind: Resource',
      'type: pdns.zones',
      'name: example',
      'spec: { name: example.org. }',
      'checks:',
      ...checks,
      '',
    ];
    await writeFile(join(dir, 'main.yaml'), main.join('\n'));
    return dir;
  };
}
